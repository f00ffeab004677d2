import { describe, expect, it } from 'vitest';
import { recordsOf, topicName, topics } from '../../topics/index.js';
import { MemoryBatch, memoryRecord } from '../support/memory-topics.js';

const PREFIX = 't.';

describe('recordsOf', () => {
  it('gives the records of a batch of the topic it is asked for, and none of a batch of another topic', () => {
    const events = new MemoryBatch([memoryRecord(topicName(topics.events, PREFIX), 0, 7, { event_id: 'e1' })], PREFIX);
    expect(recordsOf(events, topics.events).map((r) => r.offset)).toEqual([7]);
    expect(recordsOf(events, topics.config)).toEqual([]);
  });

  it('tells topics apart by their name under the prefix, not by the bare name', () => {
    const unprefixed = new MemoryBatch([memoryRecord(topics.events.name, 0, 0, null)], PREFIX);
    expect(recordsOf(unprefixed, topics.events)).toEqual([]);
  });
});
