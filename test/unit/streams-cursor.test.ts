import { describe, expect, it } from 'vitest';
import { formatCursor, parseCursor } from '../../api/streams/index.js';
import { coversPartitions } from '../../api/streams/cursor.js';
import { RecentEvents } from '../../api/streams/recent-events.js';
import { StreamedEvent } from '../../api/streams/streamed-event.js';
import { envelopeBody } from '../../events/envelope.js';
import { asAccountId, asEventId, asProjectId } from '../../schemas/ids.js';
import type { PublicEvent } from '../../schemas/records.js';
import { partitionOf } from '../../topics/index.js';

describe('stream cursors', () => {
  it('writes partitions lowest first and reads back what it wrote', () => {
    const text = formatCursor(new Map([[7, 345], [2, 88]]));
    expect(text).toBe('2-88.7-345');
    expect(parseCursor(text)).toEqual(new Map([[2, 88], [7, 345]]));
    expect(parseCursor('0-0')).toEqual(new Map([[0, 0]]));
  });

  it('refuses what is not a cursor', () => {
    for (const bad of ['', '7', '7-', '-3', '7-3.', '7-3..2-1', 'a-1', '1-2-3', '7-3.7-4', '1-99999999999999999', ' 1-2 3-4', '1-2;3-4']) {
      expect(parseCursor(bad), bad).toBeUndefined();
    }
  });

  it('checks a cursor names exactly the partitions of a stream', () => {
    const cursor = parseCursor('2-88.7-345')!;
    expect(coversPartitions(cursor, [2, 7])).toBe(true);
    expect(coversPartitions(cursor, [2])).toBe(false);
    expect(coversPartitions(cursor, [2, 7, 9])).toBe(false);
    expect(coversPartitions(cursor, [3, 7])).toBe(false);
  });
});

describe('the partition of a key', () => {
  // Murmur2 values from the Java client's own tests (org.apache.kafka.common.utils.UtilsTest).
  const java: [string, number][] = [
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ['abc', 479470107],
  ];

  it('is where the Java client puts it: positive murmur2 modulo the partition count', () => {
    for (const [key, hash] of java) {
      for (const partitions of [1, 6, 12, 7]) expect(partitionOf(key, partitions), `${key} of ${partitions}`).toBe((hash & 0x7fffffff) % partitions);
    }
  });
});

describe('recent events of a partition', () => {
  const event = (n: number): PublicEvent => ({
    event_id: asEventId(`evt_${n}`), occurred_at: 0, account_id: asAccountId('acc_1'), project_id: asProjectId('prj_1'), instance_id: null,
    event_type: 'message.received', scope: 'project', client_reference: null, group: null, sender: null, mentions: [],
    payload_json: `{"n":${n}}`, connection: null, trigger: 'scheduled', webhook_id: null,
  });
  const entry = (offset: number) => new StreamedEvent(3, offset, event(offset));

  it('holds the last events; the floor moves past each one it lets go', () => {
    const recent = new RecentEvents(3, 10);
    expect(recent.floor).toBe(10);
    for (const offset of [10, 12, 13]) recent.push(entry(offset));
    expect(recent.floor).toBe(10);
    expect(recent.from(11).map((e) => e.offset)).toEqual([12, 13]);
    recent.push(entry(17));
    expect(recent.floor).toBe(11);
    recent.push(entry(18));
    expect(recent.floor).toBe(13);
    expect(recent.from(0).map((e) => e.offset)).toEqual([13, 17, 18]);
    expect(recent.from(19)).toEqual([]);
  });

  it('keeps its bound over many pushes, and holds nothing with no room', () => {
    const recent = new RecentEvents(5, 0);
    for (let offset = 0; offset < 5_000; offset++) recent.push(entry(offset));
    expect(recent.from(0).map((e) => e.offset)).toEqual([4995, 4996, 4997, 4998, 4999]);
    expect(recent.floor).toBe(4995);
    const none = new RecentEvents(0, 0);
    none.push(entry(0));
    expect(none.from(0)).toEqual([]);
    expect(none.floor).toBe(1);
  });

  it('renders an event the way webhooks receive it, once', () => {
    const streamed = entry(1);
    expect(streamed.body).toBe(envelopeBody(event(1), 'account'));
    expect(streamed.body).toBe(streamed.body);
  });
});
