import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { groupCommits, type GroupPosition } from '../../topics/index.js';

const at = (partition: number, nextOffset: number): GroupPosition => ({ topic: 't', partition, nextOffset });

describe('group commits: at most one a second, nothing lost', () => {
  let committed: GroupPosition[][];
  let logged: { level: 'warn' | 'debug'; err: unknown }[];
  let failNext: Error | undefined;
  const logger = {
    warn: (fields: { err: unknown }) => void logged.push({ level: 'warn', err: fields.err }),
    debug: (fields: { err: unknown }) => void logged.push({ level: 'debug', err: fields.err }),
  };
  const commits = () =>
    groupCommits(
      async (positions) => {
        const failure = failNext;
        failNext = undefined;
        if (failure) throw failure;
        committed.push([...positions]);
      },
      { everyMs: 1_000, logger: logger as never, failed: 'commit failed' },
    );
  /** As kafkajs rejects the commit of a member whose generation the group has left behind. */
  const staleGeneration = () => Object.assign(new Error('Specified group generation id is not valid'), { type: 'ILLEGAL_GENERATION' });

  beforeEach(() => {
    vi.useFakeTimers();
    committed = [];
    logged = [];
    failNext = undefined;
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('commits the first positions at once, then the latest of each partition once the interval has passed', async () => {
    const group = commits();
    await group.add([at(0, 5)]);
    expect(committed).toEqual([[at(0, 5)]]);
    await group.add([at(0, 6)]);
    await group.add([at(1, 2), at(0, 7)]);
    expect(committed).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(committed).toEqual([[at(0, 5)], [at(0, 7), at(1, 2)]]);
  });

  it('keeps positions whose commit failed for the next one', async () => {
    const group = commits();
    failNext = new Error('broker unreachable');
    await group.add([at(0, 5)]);
    expect(logged.map((l) => l.level)).toEqual(['warn']);
    await group.add([at(1, 1)]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(committed).toEqual([[at(0, 5), at(1, 1)]]);
  });

  it('logs a commit refused because the group is rebalancing at debug level, and commits it with the next', async () => {
    const group = commits();
    failNext = staleGeneration();
    await group.add([at(0, 5)]);
    expect(logged.map((l) => [l.level, (l.err as { type?: string }).type])).toEqual([['debug', 'ILLEGAL_GENERATION']]);
    await vi.advanceTimersByTimeAsync(1_000);
    await group.add([at(0, 6)]);
    expect(committed).toEqual([[at(0, 6)]]);
  });

  it('commits what waits when the member leaves, and each later position at once', async () => {
    const group = commits();
    await group.add([at(0, 5)]);
    await group.add([at(0, 6)]);
    await group.leaving();
    expect(committed).toEqual([[at(0, 5)], [at(0, 6)]]);
    await group.add([at(0, 7)]);
    expect(committed.at(-1)).toEqual([at(0, 7)]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(committed).toHaveLength(3);
  });
});
