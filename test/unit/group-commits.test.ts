import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { groupCommits, type GroupPosition } from '../../topics/index.js';

const at = (partition: number, nextOffset: number): GroupPosition => ({ topic: 't', partition, nextOffset });

describe('group commits: at most one a second, nothing lost', () => {
  let committed: GroupPosition[][];
  let errors: unknown[];
  let failNext: boolean;
  const commits = () =>
    groupCommits(
      async (positions) => {
        if (failNext) {
          failNext = false;
          throw new Error('rebalance in progress');
        }
        committed.push([...positions]);
      },
      { everyMs: 1_000, onError: (error) => errors.push(error) },
    );

  beforeEach(() => {
    vi.useFakeTimers();
    committed = [];
    errors = [];
    failNext = false;
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
    failNext = true;
    await group.add([at(0, 5)]);
    expect(errors).toHaveLength(1);
    await group.add([at(1, 1)]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(committed).toEqual([[at(0, 5), at(1, 1)]]);
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
