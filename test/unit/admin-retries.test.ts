import type { Admin } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { readWatermarks } from '../../topics/admin.js';

/** kafkajs' shapes: a retriable protocol error, and the final error its retries end with. */
function unknownPartition(): Error {
  return Object.assign(new Error('This server does not host this topic-partition'), { name: 'KafkaJSProtocolError', type: 'UNKNOWN_TOPIC_OR_PARTITION', code: 3, retriable: true });
}
function retriesExceeded(cause: Error): Error {
  return Object.assign(new Error(cause.message, { cause }), { name: 'KafkaJSNumberOfRetriesExceeded', retriable: false });
}

/** An admin whose offsets requests fail with the given errors, then answer. */
function adminFailing(...failures: Error[]): { admin: Admin; calls: () => number } {
  let calls = 0;
  const admin = {
    fetchTopicOffsets: async () => {
      const failure = failures[calls++];
      if (failure) throw failure;
      return [{ partition: 0, offset: '7', high: '7', low: '2' }];
    },
  } as unknown as Admin;
  return { admin, calls: () => calls };
}

describe('readWatermarks', () => {
  it("asks again once kafkajs' own retries of a retriable error ran out (a broker slow to learn of a new topic)", async () => {
    const { admin, calls } = adminFailing(retriesExceeded(unknownPartition()), unknownPartition());
    expect(await readWatermarks(admin, 'gw.events')).toEqual(new Map([[0, { low: 2, high: 7 }]]));
    expect(calls()).toBe(3);
  });

  it('gives up at once on an error that retrying cannot mend', async () => {
    const denied = Object.assign(new Error('Topic authorization failed'), { name: 'KafkaJSProtocolError', type: 'TOPIC_AUTHORIZATION_FAILED', retriable: false });
    const { admin, calls } = adminFailing(retriesExceeded(denied));
    await expect(readWatermarks(admin, 'gw.events')).rejects.toThrow('Topic authorization failed');
    expect(calls()).toBe(1);
  });
});
