import { describe, expect, it } from 'vitest';
import { registerAgain } from '../../schemas/serde.js';

/** A registry error as the client raises it: an Error with the HTTP status. */
const answered = (status: number) => Object.assign(new Error(`Error, status ${status}`), { status });

describe('registering a schema', () => {
  it('registers again after the registry answers 5xx (a registration racing another process)', async () => {
    const answers = [answered(500), answered(503), { id: 7 }];
    const register = async () => {
      const next = answers.shift()!;
      if (next instanceof Error) throw next;
      return next;
    };
    await expect(registerAgain(register, 6, () => 0)).resolves.toEqual({ id: 7 });
    expect(answers).toHaveLength(0);
  });

  it('gives up after its tries, and never repeats a refusal (an incompatible schema, 409) or an error without a status', async () => {
    let calls = 0;
    const failing = (error: Error) => async () => {
      calls++;
      throw error;
    };
    await expect(registerAgain(failing(answered(500)), 3, () => 0)).rejects.toThrow('status 500');
    expect(calls).toBe(3);
    calls = 0;
    await expect(registerAgain(failing(answered(409)), 3, () => 0)).rejects.toThrow('status 409');
    await expect(registerAgain(failing(new Error('no status')), 3, () => 0)).rejects.toThrow('no status');
    expect(calls).toBe(2);
  });
});
