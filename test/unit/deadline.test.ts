import { describe, expect, it } from 'vitest';
import { withDeadline } from '../../api/deadline.js';
import { GatewayError } from '../../api/errors.js';

describe('a write with a deadline', () => {
  it('answers what the work answers when it finishes in time', async () => {
    await expect(withDeadline(Promise.resolve('written'), 1_000)).resolves.toBe('written');
  });

  it('gives 503 service_unavailable when the log does not take the write in time', async () => {
    const error = await withDeadline(new Promise(() => undefined), 20).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ code: 'service_unavailable', statusCode: 503 });
  });
});
