import { EventEmitter } from 'node:events';
import type { Consumer } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { GroupInstances } from '../../topics/group-instances.js';

/** The part of a kafkajs consumer `GroupInstances` listens to: its instrumentation events. */
function consumer(): Consumer & { emit(event: string, payload?: unknown): boolean } {
  const emitter = new EventEmitter();
  const events = { DISCONNECT: 'consumer.disconnect', CRASH: 'consumer.crash' };
  return Object.assign(emitter, { events }) as never;
}

describe('GroupInstances', () => {
  it("gives a group's consumers of one process the id, then numbered ids, and takes a stopped one's again", () => {
    const instances = new GroupInstances('dispatcher-0');
    const first = consumer();
    const second = consumer();
    expect(instances.take('events')).toBe('dispatcher-0');
    instances.follow(first, 'events', 'dispatcher-0');
    expect(instances.take('events')).toBe('dispatcher-0.2');
    instances.follow(second, 'events', 'dispatcher-0.2');
    expect(instances.take('retry'), 'another group starts again at the id').toBe('dispatcher-0');
    first.emit('consumer.disconnect', {});
    expect(instances.take('events')).toBe('dispatcher-0');
  });

  it('tells when a broker fenced a member, under the errors kafkajs wraps it in', async () => {
    const instances = new GroupInstances('processor-1');
    const member = consumer();
    instances.follow(member, 'views', 'processor-1');
    member.emit('consumer.crash', { payload: { error: new Error('The group is rebalancing'), restart: true } });
    const answer = { type: 'FENCED_INSTANCE_ID', message: 'another consumer with the same group instance id' };
    member.emit('consumer.crash', { payload: { error: Object.assign(new Error('wrapped'), { cause: Object.assign(new Error('retried'), { cause: answer }) }), restart: false } });
    await expect(instances.fenced).resolves.toEqual({ groupId: 'views', groupInstanceId: 'processor-1' });
  });
});
