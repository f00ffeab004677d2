import type pg from 'pg';
import { BaileysNetwork, BaileysProtocol, webVersion } from '../connectors/baileys/index.js';
import type { OtpOpener } from '../connectors/network/index.js';
import type { Clients } from './clients.js';
import { mediaSink } from './media-sink.js';

/** A connect waits this long at most for the current WhatsApp Web version before it announces the pinned one. */
const WEB_VERSION_TIMEOUT_MS = 3_000;

/**
 * The real network through Baileys: every connector worker runs it beside the sandbox, and the
 * numbers whose `connector` is `baileys` open here (a deployment picks it for new numbers with
 * CONNECTOR=baileys). Received media go to the media store; sends read theirs from it.
 */
export function baileysNetwork(clients: Clients, otp: OtpOpener, leases: pg.Pool): BaileysNetwork {
  const logger = clients.logger.child({ role: 'connector', connector: 'baileys' });
  const { baileys } = clients.config;
  const mapping = new BaileysProtocol({
    pool: clients.pool,
    logger,
    media: mediaSink(clients.media),
    mediaOf: async (source) => {
      const stored = source.media_ref === null ? undefined : await clients.media.get(source.media_ref);
      if (stored === undefined) throw new Error('the media of the send is not in the media store');
      return stored.body;
    },
    otp,
  });
  return new BaileysNetwork({
    pool: clients.pool,
    leasePool: leases,
    ...(clients.fence && { fence: clients.fence }),
    logger,
    mapping,
    socket: {
      url: (instanceId) => baileys.url.replaceAll('{instance_id}', encodeURIComponent(instanceId)),
      connectTimeoutMs: baileys.connectTimeoutMs,
      version: webVersion({ override: baileys.webVersion, timeoutMs: WEB_VERSION_TIMEOUT_MS, logger }),
      reconnectBaseMs: baileys.reconnectBaseMs,
      reconnectMaxMs: baileys.reconnectMaxMs,
      leaseRenewMs: baileys.leaseRenewMs,
      baileysLogLevel: 'warn',
    },
  });
}
