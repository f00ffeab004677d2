import { describe, expect, it } from 'vitest';
import { gathering } from '../../processors/runtime/gathering.js';

describe('gathering: what comes in one turn goes together, one flush at a time', () => {
  it('passes the items of one turn to one flush, and those that come during it to the next', async () => {
    const flushed: number[][] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const gather = gathering(async (items: readonly number[]) => {
      flushed.push([...items]);
      if (flushed.length === 1) await gate;
    });
    const first = [gather(1), gather(2), gather(3)];
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    const later = [gather(4), gather(5)];
    expect(flushed).toEqual([[1, 2, 3]]);
    release();
    await Promise.all([...first, ...later]);
    expect(flushed).toEqual([[1, 2, 3], [4, 5]]);
  });

  it('fails every item of a failed flush, and goes on with the next', async () => {
    const gather = gathering(async (items: readonly number[]) => {
      if (items.includes(0)) throw new Error('refused');
    });
    const failed = await Promise.allSettled([gather(0), gather(1)]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await expect(gather(2)).resolves.toBeUndefined();
  });
});
