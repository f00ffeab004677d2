import type { WAVersion } from '@whiskeysockets/baileys';
import type { LevelWithSilent } from 'pino';

/** How sessions reach the network and how patient they are (docs/configuration.md, `BAILEYS_*`). */
export interface SocketOptions {
  /** The network's WebSocket address for a number (tests point it at a local server). */
  readonly url: (instanceId: string) => string;
  readonly connectTimeoutMs: number;
  /** The WhatsApp Web version to announce, asked at every connect (`webVersion`). */
  readonly version: () => Promise<WAVersion>;
  readonly reconnectBaseMs: number;
  readonly reconnectMaxMs: number;
  /** A lease lives three renewals. */
  readonly leaseRenewMs: number;
  /** Baileys' own logs, below ours: `warn` keeps its protocol dumps (which hold key material) out. */
  readonly baileysLogLevel: LevelWithSilent;
}
