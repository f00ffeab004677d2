import {
  DisconnectReason,
  generateMessageIDV2,
  jidDecode,
  makeCacheableSignalKeyStore,
  makeWASocket,
  type BaileysEventMap,
  type SignalKeyStore,
  type WAMessage,
  type WASocket,
} from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { InstanceState, InstanceStatus, PairingMethod, SendCommand } from '../../schemas/records.js';
import { backoffMs } from '../../shared/backoff.js';
import type { NumberSession, SendResult, SessionEvents, SessionFact } from '../network/connector.js';
import { answerTo, QueryRefused, type AnswerOf, type SessionQuery } from '../network/query.js';
import { checkPhones } from './phone-checks.js';
import { groupAnswer } from './groups.js';
import { PostgresAuthStore } from './auth-store.js';
import { afterClose } from './close-reasons.js';
import { nextHealth, type HealthFact } from './health.js';
import { ownJids } from './people.js';
import { LeaseLost, type Lease, type NumberLeases } from './lease.js';
import type { BaileysMapping, OutgoingMessage } from './mapping.js';
import type { SocketOptions } from './socket-options.js';
import { isWarming, WarmingGate } from './warming.js';
import type { Pool } from 'pg';

export interface BaileysSessionDeps {
  readonly pool: Pool;
  readonly leases: NumberLeases;
  /** This worker's name on the leases. */
  readonly owner: string;
  readonly logger: Logger;
  readonly socket: SocketOptions;
  readonly mapping: BaileysMapping;
  /** When the number first connected (for warming), kept across restarts. */
  readonly firstConnected: { get(instanceId: string): Promise<number | undefined>; set(instanceId: string, at: number): Promise<number> };
}

const LIVE: ReadonlySet<InstanceStatus> = new Set(['connected', 'warming']);
/** How long a QR is shown before the network sends the next one. */
const QR_LIFETIME_MS = 20_000;
/** How long a pairing code can be typed. */
const CODE_LIFETIME_MS = 180_000;

/**
 * The Baileys socket of one number, held under a lease so no other worker has one open at the same
 * time. It connects when the number is paired (or while it pairs), reconnects with backoff and
 * jitter after a drop, and stops for good on logged out, banned or replaced. Everything it sees
 * goes to `events` (on the log before anything else happens with it).
 */
export class BaileysSession implements NumberSession {
  private lease?: Lease;
  private auth?: PostgresAuthStore;
  private socket?: WASocket;
  private status: InstanceStatus;
  private phone: string | null;
  private health: number;
  /** The health score last written to the log. */
  private writtenHealth: number;
  private pairing?: { readonly method: PairingMethod; readonly phone: string | null; codeAsked: boolean };
  private firstConnectedAt?: number;
  private readonly gate = new WarmingGate(() => this.firstConnectedAt);
  /** Sends run one at a time, in call order. */
  private queue: Promise<unknown> = Promise.resolve();
  private attempt = 0;
  private timer?: NodeJS.Timeout;
  private renewTimer?: NodeJS.Timeout;
  private closed = false;
  private readonly log: Logger;

  constructor(
    private readonly instance: InstanceState,
    private readonly events: SessionEvents,
    private readonly deps: BaileysSessionDeps,
    private readonly onClose: () => void,
  ) {
    this.status = instance.status;
    this.phone = instance.phone;
    this.health = instance.health_score;
    this.writtenHealth = instance.health_score;
    this.log = deps.logger.child({ instanceId: instance.instance_id });
  }

  /** Takes the lease (waiting while another worker holds it), then connects if the number is paired. */
  async start(): Promise<void> {
    const id = this.instance.instance_id;
    this.firstConnectedAt = await this.deps.firstConnected.get(id);
    while (!this.closed && this.lease === undefined) {
      this.lease = await this.deps.leases.acquire(id, this.deps.owner);
      if (this.lease === undefined) await this.wait(this.deps.socket.leaseRenewMs);
    }
    if (this.lease === undefined) return;
    if (this.closed) {
      // Closed while it waited: the lease it just took goes back at once.
      await this.deps.leases.release(this.lease);
      return;
    }
    this.keepLease(this.lease);
    this.auth = await PostgresAuthStore.open(this.deps.pool, id, this.lease);
    if (this.auth.creds.me !== undefined || this.pairing !== undefined) this.connect();
  }

  /** The socket open now, if any (tests end it as the network would). */
  get liveSocket(): WASocket | undefined {
    return this.socket;
  }

  send(command: SendCommand): Promise<SendResult> {
    const turn = this.queue.then(() => this.sendNow(command));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  async query<Q extends SessionQuery>(query: Q): Promise<AnswerOf<Q>> {
    const socket = this.socket;
    if (socket === undefined || !LIVE.has(this.status)) throw new QueryRefused('not_connected', `the number is ${this.status}`);
    switch (query.kind) {
      case 'check_phones':
        return answerTo(query, { kind: 'phone_checks', results: await checkPhones(socket, query.phones) });
      default:
        return answerTo(query, await groupAnswer(socket, query));
    }
  }

  async pair(method: PairingMethod, phone?: string): Promise<void> {
    if (LIVE.has(this.status)) return;
    this.pairing = { method, phone: phone ?? null, codeAsked: false };
    await this.setStatus('connecting', 'pairing');
    if (this.auth === undefined) return; // connects once the lease is taken
    await this.endSocket();
    this.connect();
  }

  /**
   * Unlinks the number from the network (a logout of this device) and forgets its auth state; the
   * session stays, under its lease, for the next pairing.
   */
  async unlink(reason: string): Promise<void> {
    const socket = this.socket;
    if (socket !== undefined && LIVE.has(this.status)) await socket.logout().catch((err: unknown) => this.log.warn({ err }, 'logout on the network failed'));
    await this.endSocket();
    this.pairing = undefined;
    await this.auth?.remove();
    this.deps.mapping.forget(this.instance.instance_id);
    if (this.lease) this.auth = await PostgresAuthStore.open(this.deps.pool, this.instance.instance_id, this.lease);
    await this.setStatus('disconnected', reason);
  }

  async close(): Promise<void> {
    await this.stop();
  }

  async logout(): Promise<void> {
    const socket = this.socket;
    if (socket !== undefined && LIVE.has(this.status)) await socket.logout().catch((err: unknown) => this.log.warn({ err }, 'logout on the network failed'));
    await this.auth?.remove().catch((err: unknown) => this.log.warn({ err }, 'auth state not removed'));
    this.deps.mapping.forget(this.instance.instance_id);
    await this.stop();
  }

  private async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    // The lease is renewed until the socket is closed: a slow close must not let another worker in.
    await this.endSocket();
    clearInterval(this.renewTimer);
    if (this.lease) await this.deps.leases.release(this.lease).catch((err: unknown) => this.log.warn({ err }, 'lease not released; it expires'));
    this.onClose();
  }

  /** Renews the lease; closes the socket by itself before the lease can expire unrenewed. */
  private keepLease(lease: Lease): void {
    const { leaseRenewMs } = this.deps.socket;
    this.renewTimer = setInterval(() => {
      if (performance.now() + leaseRenewMs >= lease.validUntil) this.lost('lease not renewed in time');
      this.deps.leases.renew(lease).then(
        (kept) => kept || this.lost('lease taken by another worker'),
        (err: unknown) => this.log.warn({ err }, 'lease renewal failed'),
      );
    }, leaseRenewMs);
    this.renewTimer.unref();
  }

  private lost(why: string): void {
    if (this.closed) return;
    this.log.warn({ why }, 'the number is no longer ours: socket closed');
    void this.stop();
  }

  private connect(): void {
    if (this.closed || this.auth === undefined) return;
    const auth = this.auth;
    const { socket: options, mapping } = this.deps;
    const keys: SignalKeyStore = {
      get: (type, ids) => auth.keys.get(type, ids),
      // A key the database does not have would stop messages reaching recipients: the session stops instead.
      set: (data) => Promise.resolve(auth.keys.set(data)).catch((err: unknown) => this.failedWrite(err)),
      clear: () => auth.keys.clear?.() ?? Promise.resolve(),
    };
    const socket = makeWASocket({
      waWebSocketUrl: options.url(this.instance.instance_id),
      connectTimeoutMs: options.connectTimeoutMs,
      logger: this.log.child({ module: 'baileys' }, { level: options.baileysLogLevel }),
      auth: { creds: auth.creds, keys: makeCacheableSignalKeyStore(keys) },
      markOnlineOnConnect: false,
      syncFullHistory: false,
      emitOwnEvents: true,
      browser: ['Gateway', 'Chrome', '1.0'],
      getMessage: (key) => mapping.storedMessage(this.instance.instance_id, key),
      msgRetryCounterCache: mapping.retryCounters(this.instance.instance_id),
      cachedGroupMetadata: (jid) => mapping.groupMetadata(this.instance.instance_id, jid, this.socket),
    });
    this.socket = socket;
    // Baileys forwards a refused upgrade without acting on it: the socket would sit out its connect timeout.
    socket.ws.on('unexpected-response', (_request: unknown, response: { statusCode?: number }) => void socket.end(refused(response.statusCode)));
    socket.ev.process((batch) => this.onEvents(socket, batch));
  }

  private async onEvents(socket: WASocket, batch: Partial<BaileysEventMap>): Promise<void> {
    if (this.socket !== socket) return;
    try {
      if (batch['creds.update']) await this.auth!.saveCreds().catch((err: unknown) => this.failedWrite(err));
      if (batch['connection.update']) await this.onConnection(socket, batch['connection.update']);
      if (batch['lid-mapping.update']) this.deps.mapping.learnLid(this.instance.instance_id, batch['lid-mapping.update']);
      // History sync is not replayed as messages, but it teaches the number who is behind its lids.
      for (const mapping of batch['messaging-history.set']?.lidPnMappings ?? []) this.deps.mapping.learnLid(this.instance.instance_id, mapping);
      if (batch['messages.upsert']) for (const message of batch['messages.upsert'].messages) await this.onMessage(socket, message);
      const facts: SessionFact[] = [
        ...this.deps.mapping.statuses(batch['messages.update'] ?? [], batch['message-receipt.update'] ?? []),
        ...this.deps.mapping.groupEvents(this.instance.instance_id, ownJids(socket), batch['group-participants.update'], batch['groups.update']).map((event) => ({ kind: 'group' as const, event })),
      ];
      for (const fact of facts) await this.emit(fact);
    } catch (err) {
      this.log.error({ err }, 'network events not handled');
    }
  }

  private async onMessage(socket: WASocket, message: WAMessage): Promise<void> {
    try {
      const fact = await this.deps.mapping.inbound(this.instance, message, socket);
      if (fact) await this.emit({ kind: 'inbound', message: fact });
    } catch (err) {
      this.log.error({ err, waMessageId: message.key.id }, 'received message not mapped');
    }
  }

  private async onConnection(socket: WASocket, update: BaileysEventMap['connection.update']): Promise<void> {
    if (update.qr !== undefined) await this.onQr(socket, update.qr);
    if (update.connection === 'open') {
      this.attempt = 0;
      this.pairing = undefined;
      const now = Date.now();
      this.firstConnectedAt ??= await this.deps.firstConnected.set(this.instance.instance_id, now);
      await this.setStatus(isWarming(this.firstConnectedAt, now) ? 'warming' : 'connected', null, phoneOf(socket.authState.creds.me?.id));
    }
    if (update.connection === 'close') await this.onClosed(update.lastDisconnect?.error);
  }

  private async onQr(socket: WASocket, qr: string): Promise<void> {
    const pairing = this.pairing;
    if (pairing === undefined) return;
    const now = Date.now();
    if (pairing.method === 'qr') return this.emit({ kind: 'pairing', method: 'qr', value: qr, expires_at: now + QR_LIFETIME_MS });
    if (pairing.codeAsked || pairing.phone === null) return;
    pairing.codeAsked = true;
    const code = await socket.requestPairingCode(pairing.phone.replace(/\D/g, ''));
    await this.emit({ kind: 'pairing', method: 'code', value: code, expires_at: now + CODE_LIFETIME_MS });
  }

  private async onClosed(error: Error | undefined): Promise<void> {
    this.socket = undefined;
    if (this.closed) return;
    const code = (error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode;
    const next = afterClose(code);
    if (next.kind === 'stop') {
      this.pairing = undefined;
      if (next.dropAuth) {
        await this.auth?.remove().catch((err: unknown) => this.log.warn({ err }, 'auth state not removed'));
        this.deps.mapping.forget(this.instance.instance_id);
      }
      await this.setStatus(next.status, next.reason);
      return;
    }
    const paired = this.auth?.creds.me !== undefined;
    // The network ends a pairing nobody scanned with a timeout: it waits for a new request, not a loop of QRs.
    if (!paired && (this.pairing === undefined || code === DisconnectReason.timedOut)) {
      this.pairing = undefined;
      await this.setStatus('disconnected', 'pairing ended without a scan');
      return;
    }
    if (next.at === 'backoff' && LIVE.has(this.status)) this.health = nextHealth(this.health, 'disconnected');
    await this.setStatus(next.at === 'once' ? this.status : next.status, next.reason);
    const delay = next.at === 'once' ? 0 : backoffMs(++this.attempt, this.deps.socket.reconnectBaseMs, this.deps.socket.reconnectMaxMs);
    this.timer = setTimeout(() => this.connect(), delay);
  }

  private async sendNow(command: SendCommand): Promise<SendResult> {
    const socket = this.socket;
    if (socket === undefined || !LIVE.has(this.status)) return { kind: 'failed', error_code: 'not_connected', error_reason: `the number is ${this.status}` };
    const wait = this.gate.take();
    if (wait > 0) await this.wait(wait);
    if (this.socket !== socket) return { kind: 'failed', error_code: 'not_connected', error_reason: 'the connection closed while the send waited' };
    let outgoing: readonly OutgoingMessage[];
    try {
      outgoing = await this.deps.mapping.outgoing(command);
    } catch (err) {
      return { kind: 'failed', error_code: 'delivery_failed', error_reason: `the send could not be built: ${String(err)}` };
    }
    let waId = '';
    try {
      for (const message of outgoing) {
        // Ours before it leaves: the socket echoes each send at once, and the echo must be known as ours.
        const id = generateMessageIDV2(socket.authState.creds.me?.id);
        await this.deps.mapping.rememberSending(this.instance.instance_id, id);
        const sent = await socket.sendMessage(command.to, message.content, { ...message.options, messageId: id });
        if (!sent?.key.id) throw new Error('the network gave no message id');
        waId = sent.key.id;
        await this.deps.mapping.rememberSent(this.instance.instance_id, command, message, sent, ownJids(socket));
      }
    } catch (err) {
      await this.scored(/blocked|not-authorized|463/i.test(String(err)) ? 'blocked' : 'failed');
      return { kind: 'failed', error_code: 'delivery_failed', error_reason: String(err) };
    }
    await this.scored('sent');
    return { kind: 'accepted', wa_message_id: waId };
  }

  /** Moves the health score; a move of 5 points or more since the last one written goes to the log. */
  private async scored(fact: HealthFact): Promise<void> {
    this.health = nextHealth(this.health, fact);
    if (Math.abs(this.health - this.writtenHealth) >= 5) await this.setStatus(this.status, null);
  }

  private async failedWrite(err: unknown): Promise<never> {
    const lost = err instanceof LeaseLost;
    this.log.error({ err }, lost ? 'auth write refused: the number moved to another worker' : 'auth state not written: the session stops');
    if (lost) await this.stop();
    else {
      await this.endSocket();
      await this.setStatus('disconnected', 'auth state could not be saved');
      // A fresh socket reads the state the database has, so nothing runs on a key it lost.
      this.auth = await PostgresAuthStore.open(this.deps.pool, this.instance.instance_id, this.lease);
      this.timer = setTimeout(() => this.connect(), backoffMs(++this.attempt, this.deps.socket.reconnectBaseMs, this.deps.socket.reconnectMaxMs));
    }
    throw err;
  }

  private async setStatus(status: InstanceStatus, reason: string | null, phone?: string): Promise<void> {
    this.status = status;
    if (phone) this.phone = phone;
    this.writtenHealth = this.health;
    await this.emit({ kind: 'state', status, reason, phone: phone ?? null, health_score: this.health });
  }

  private emit(fact: SessionFact): Promise<void> {
    return this.closed ? Promise.resolve() : this.events.emit(fact);
  }

  /** Resolves once the socket is closed: only then may the lease go to another worker. */
  private async endSocket(): Promise<void> {
    const socket = this.socket;
    this.socket = undefined;
    clearTimeout(this.timer);
    await socket?.end(undefined);
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms).unref());
  }
}

/** `5511999998888:12@s.whatsapp.net` → `+5511999998888`. */
function phoneOf(jid: string | undefined): string | undefined {
  const user = jidDecode(jid)?.user;
  return user === undefined ? undefined : `+${user}`;
}

/** An HTTP refusal of the upgrade is the edge's, never the number's: a transient close, retried with backoff. */
function refused(httpStatus: number | undefined): Error {
  return Object.assign(new Error(`the network refused the connection (HTTP ${httpStatus ?? '?'})`), { output: { statusCode: DisconnectReason.unavailableService } });
}
