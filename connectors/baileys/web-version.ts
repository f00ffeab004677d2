import { DEFAULT_CONNECTION_CONFIG, fetchLatestWaWebVersion, type WAVersion } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';

/** The version this Baileys release ships with: announced when the current one cannot be had. */
export const PINNED_WEB_VERSION: WAVersion = DEFAULT_CONNECTION_CONFIG.version;
/** How long a fetched version (or a failure to fetch one) is kept before the next connect asks again. */
const KEPT_MS = 3_600_000;
const FAILURE_KEPT_MS = 300_000;

/** Asks the network for its current WhatsApp Web version; undefined when it could not tell. */
export type WebVersionFetch = (signal: AbortSignal) => Promise<WAVersion | undefined>;

const fromTheNetwork: WebVersionFetch = async (signal) => {
  const latest = await fetchLatestWaWebVersion({ signal });
  return latest.isLatest ? latest.version : undefined;
};

export interface WebVersionOptions {
  /** `BAILEYS_WA_VERSION`: announced as is, nothing fetched. */
  readonly override: WAVersion | undefined;
  readonly timeoutMs: number;
  readonly logger: Logger;
  readonly fetch?: WebVersionFetch;
}

/**
 * The WhatsApp Web version a socket announces at connect. The network refuses logins below its
 * minimum (405): the current version is fetched (within `timeoutMs`, kept an hour), the pinned one
 * stands in when the fetch fails, and an override wins over both.
 */
export function webVersion({ override, timeoutMs, logger, fetch = fromTheNetwork }: WebVersionOptions): () => Promise<WAVersion> {
  if (override !== undefined) return () => Promise.resolve(override);
  let known: { readonly version: WAVersion; readonly until: number } | undefined;
  return async () => {
    if (known !== undefined && performance.now() < known.until) return known.version;
    const fetched = await fetch(AbortSignal.timeout(timeoutMs)).catch((err: unknown) => logger.warn({ err }, 'WhatsApp Web version not fetched'));
    if (!fetched) logger.warn({ pinned: PINNED_WEB_VERSION.join('.') }, 'the current WhatsApp Web version is unknown: the pinned one is announced');
    known = fetched ? { version: fetched, until: performance.now() + KEPT_MS } : { version: PINNED_WEB_VERSION, until: performance.now() + FAILURE_KEPT_MS };
    return known.version;
  };
}
