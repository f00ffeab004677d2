import type { DeliveryOutcome, DeliveryTargetKind } from '../../schemas/records.js';
import type { PostResult } from './post.js';

export type Verdict =
  | { readonly delivered: true }
  | { readonly delivered: false; readonly timedOut: boolean; readonly retryable: boolean; readonly summary: string };

/**
 * What counts as delivered, and which failures another attempt may fix. Only a 2xx delivers.
 *
 * Account webhooks: spec 6.3 retries them "when the endpoint fails", so every other answer is
 * retried: 5xx, 429 and 408, but also 3xx (redirects are not followed) and the other 4xx (a
 * receiver that is being deployed or misconfigured answers 404 or 401 for a while).
 *
 * Partner webhooks (spec 6.3): retried on transport failure, 5xx and 429; any other answer (3xx,
 * every other 4xx, 408 included) is final. A timeout (no answer in time) is a transport failure.
 *
 * Timeouts and transport failures are retried for both. Only a destination the gateway refuses to
 * reach (a private address, an unusable URL) is final for both.
 */
export function judge(result: Exclude<PostResult, { kind: 'aborted' }>, kind: DeliveryTargetKind = 'account_webhook'): Verdict {
  switch (result.kind) {
    case 'response': {
      if (result.status >= 200 && result.status <= 299) return { delivered: true };
      const retryable = kind === 'account_webhook' || result.status === 429 || (result.status >= 500 && result.status <= 599);
      return { delivered: false, timedOut: false, retryable, summary: `HTTP ${result.status}` };
    }
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
