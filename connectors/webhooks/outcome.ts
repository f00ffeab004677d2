import type { DeliveryOutcome } from '../../schemas/records.js';
import type { PostResult } from './post.js';

export type Verdict =
  | { readonly delivered: true }
  | { readonly delivered: false; readonly timedOut: boolean; readonly retryable: boolean; readonly summary: string };

/**
 * What counts as delivered, and which failures another attempt may fix, for account webhooks.
 * Only a 2xx delivers. Spec 6.3 retries account webhooks "when the endpoint fails", so every other
 * answer is retried: 5xx, 429 and 408, but also 3xx (redirects are not followed) and the other
 * 4xx (a receiver that is being deployed or misconfigured answers 404 or 401 for a while).
 * Timeouts and transport failures are retried too. Only a destination the gateway refuses to
 * reach (a private address, an unusable URL) is final. Partner webhooks, when they come, retry
 * only transport failures, 5xx and 429 (spec 6.3): `retriableStatus` in connectors/http.
 */
export function judge(result: Exclude<PostResult, { kind: 'aborted' }>): Verdict {
  switch (result.kind) {
    case 'response':
      if (result.status >= 200 && result.status <= 299) return { delivered: true };
      return { delivered: false, timedOut: false, retryable: true, summary: `HTTP ${result.status}` };
    case 'timeout':
      return { delivered: false, timedOut: true, retryable: true, summary: result.error };
    case 'transport':
      return { delivered: false, timedOut: false, retryable: true, summary: result.error };
    case 'refused':
      return { delivered: false, timedOut: false, retryable: false, summary: result.error };
  }
}

/**
 * The recorded outcome of an attempt: `timed_out` for a timeout whether or not a retry follows,
 * `failed_retryable` when another attempt follows, `failed_final` when none does.
 */
export function outcomeOf(verdict: Verdict, retried: boolean): DeliveryOutcome {
  if (verdict.delivered) return 'delivered';
  if (verdict.timedOut) return 'timed_out';
  return retried ? 'failed_retryable' : 'failed_final';
}
