import { gatewayError } from './errors.js';

/**
 * Waits for `work` at most `ms`, then answers 503 `service_unavailable`. Writes to the log retry
 * for ever (the idempotent producer must), so routes that write put their own limit on the wait.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(gatewayError('service_unavailable')), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
