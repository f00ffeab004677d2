import type { WAVersion } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { PINNED_WEB_VERSION, webVersion, type WebVersionFetch } from '../../connectors/baileys/web-version.js';

const logger = pino({ level: 'silent' });
const CURRENT: WAVersion = [2, 3000, 1_999_999_999];

/** The WhatsApp Web version announced at connect (issue 18 item 9); nothing here reaches the internet. */
describe('the WhatsApp Web version a socket announces', () => {
  it('announces the override as is, without asking the network', async () => {
    let asked = 0;
    const version = webVersion({ override: [2, 3000, 7], timeoutMs: 100, logger, fetch: async () => (asked++, CURRENT) });
    expect(await version()).toEqual([2, 3000, 7]);
    expect(asked).toBe(0);
  });

  it('fetches the current version once and keeps it for the next connects', async () => {
    let asked = 0;
    const version = webVersion({ override: undefined, timeoutMs: 100, logger, fetch: async () => (asked++, CURRENT) });
    expect([await version(), await version()]).toEqual([CURRENT, CURRENT]);
    expect(asked).toBe(1);
  });

  it('falls back to the pinned version when the fetch fails, says nothing, or outlasts its timeout', async () => {
    const never: WebVersionFetch = (signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
    for (const fetch of [() => Promise.reject(new Error('offline')), () => Promise.resolve(undefined), never] satisfies WebVersionFetch[]) {
      const started = performance.now();
      expect(await webVersion({ override: undefined, timeoutMs: 100, logger, fetch })()).toEqual(PINNED_WEB_VERSION);
      expect(performance.now() - started).toBeLessThan(1_000);
    }
  });
});
