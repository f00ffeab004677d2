import { describe, expect, it } from 'vitest';
import { DeadlineExceeded, withDeadline } from '../../shared/deadline.js';

describe('a write with a deadline', () => {
  it('answers what the work answers when it finishes in time', async () => {
    await expect(withDeadline(Promise.resolve('written'), 1_000)).resolves.toBe('written');
  });

  it('throws DeadlineExceeded (the API answers 503) when the log does not take the write in time', async () => {
    const error = await withDeadline(new Promise(() => undefined), 20).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlineExceeded);
    expect(error).toMatchObject({ ms: 20 });
  });
});
