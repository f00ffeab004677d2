// Whether a failed outbound request is worth retrying: the one table for media fetches and
// webhook deliveries. Spec 6.3: retried on transport failure, 5xx and 429; a 4xx is not retried.

/** Statuses that answer differently from the rule of their class (only 5xx is retried). */
const STATUS_EXCEPTIONS: Readonly<Record<number, boolean>> = {
  408: true, // Request Timeout: the server gave up waiting, a new attempt may be faster
  429: true, // Too Many Requests
};

/** True when a response with this (non-2xx) status may succeed if sent again later. */
export function retriableStatus(status: number): boolean {
  return STATUS_EXCEPTIONS[status] ?? (status >= 500 && status <= 599);
}

/** Failures of an outbound request other than an unwanted status, and whether each is retried. */
export const OUTBOUND_FAILURES = {
  /** The destination resolves to a private, loopback or reserved address. */
  blocked_address: false,
  /** Not an http(s) URL, or unusable. */
  invalid_url: false,
  too_many_redirects: false,
  /** The body is larger than the cap of the request. */
  too_large: false,
  /** Connecting, waiting for the headers, or reading the body took too long. */
  timeout: true,
  /** DNS failure, refused or reset connection, TLS failure. */
  network: true,
} as const satisfies Record<string, boolean>;

export type OutboundFailureKind = keyof typeof OUTBOUND_FAILURES | 'status';
