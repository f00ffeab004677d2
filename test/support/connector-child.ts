// A connector process for the restart test of the Baileys connector (issue 18): the gateway's own
// connector role with its Baileys network, plus a channel (IPC) over which the test plays the
// network's side. The local WebSocket server speaks no protocol, so a message is handed to a
// number's live socket as Baileys hands one over after it sent the network its receipt: a
// `messages.upsert` of the message's `proto.WebMessageInfo` on the socket's own emitter. A socket
// that stopped reading (paused) or is not open takes nothing, as the network could deliver nothing
// to it. On SIGTERM it stops as `gateway connector` does.
import { proto, type WAMessage, type WASocket } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { leasePool } from '../../connectors/baileys/index.js';
import { OpenedOtpCodes, OtpKeys, startConnectorRole } from '../../connectors/network/index.js';
import { buildClients } from '../../stack/clients.js';
import { loadConfig } from '../../stack/config.js';
import { baileysNetwork } from '../../stack/baileys-network.js';
import { startProcessLiveness } from '../../stack/member-liveness.js';
import { loggedIn } from './received-messages.js';

/** What the test asks of this process. */
export type ChildRequest =
  | { readonly id: number; readonly kind: 'hand'; readonly instanceId: string; readonly message: string }
  | { readonly id: number; readonly kind: 'status'; readonly instanceId: string };

export interface ChildReply {
  readonly id: number;
  readonly live: boolean;
  readonly handed: boolean;
  readonly partitions: number;
}

const clients = await buildClients(loadConfig(), pino({ level: process.env.LOG_LEVEL ?? 'warn' }), { liveness: true });
await clients.media.ensure();
const otp = new OpenedOtpCodes(new OtpKeys(clients.pool), clients.cipher);
const leases = leasePool(clients.config.databaseUrl, clients.config.baileys.leaseRenewMs, clients.logger);
const network = baileysNetwork(clients, otp, leases);
// As the gateway's roles run: the process's liveness lock fences its leases.
const [liveness, role] = await Promise.all([startProcessLiveness(clients), startConnectorRole(clients, { connectors: [network], otp })]);
const opened = new WeakSet<WASocket>();

/** A socket the network can deliver to: open, and reading. */
function deliverable(socket: WASocket | undefined): socket is WASocket {
  const ws = (socket?.ws as unknown as { socket?: { isPaused: boolean } | null } | undefined)?.socket;
  return socket !== undefined && socket.ws.isOpen && ws?.isPaused === false;
}

process.on('message', (request: ChildRequest) => {
  const socket = network.sessionOf(request.instanceId)?.liveSocket;
  const live = deliverable(socket);
  let handed = false;
  if (request.kind === 'hand' && live) {
    if (!opened.has(socket)) {
      opened.add(socket);
      loggedIn(socket);
    }
    const message = proto.WebMessageInfo.decode(Buffer.from(request.message, 'base64')) as WAMessage;
    socket.ev.emit('messages.upsert', { type: 'notify', messages: [message] });
    handed = true;
  }
  const reply: ChildReply = { id: request.id, live, handed, partitions: role.ownedPartitions().length };
  process.send?.(reply);
});

process.once('SIGTERM', () => {
  void (async () => {
    await role.stop();
    await liveness?.stop();
    await leases.end();
    await clients.close();
    process.exit(0);
  })();
});
process.send?.({ id: 0, live: false, handed: false, partitions: 0 } satisfies ChildReply);
