import {
  DisconnectReason,
  jidDecode,
  makeCacheableSignalKeyStore,
  makeWASocket,
  type BaileysEventMap,
  type SignalKeyStore,
  type WAMessage,
  type WASocket,
} from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import { sentNetworkId } from '../network/ids.js';
import type { InstanceState, InstanceStatus, PairingMethod, SendCommand } from '../../schemas/records.js';
import { backoffMs } from '../../shared/backoff.js';
import type { ProcessFence } from '../../shared/process-fence.js';
import type { NumberSession, SendResult, SessionEvents, SessionFact } from '../network/connector.js';
import { answerWith, QueryRefused, type AnswerOf, type QueryHandlers, type SessionQuery } from '../network/query.js';
import { checkPhones } from './phone-checks.js';
import { boundedCache } from './ttl-cache.js';
import { phoneOfJid } from '../../schemas/phones.js';
import { groupHandlers } from './groups.js';
import { PresenceBook, readPresence, setPresence } from './presence.js';
import { callFacts, rejectCall, RingingCalls } from './calls.js';
import { ChatBook, modifyChat } from './chats.js';
import { LabelBook } from './labels.js';
import { PostgresAuthStore, StaleSocket, type SocketAuth } from './auth-store.js';
import { afterClose } from './close-reasons.js';
import { nextHealth, type HealthFact } from './health.js';
import { ownJids } from './people.js';
import { LeaseLost, type Lease, type NumberLeases } from './lease.js';
import { keepLease } from './lease-keeper.js';
import type { BaileysMapping, OutgoingMessage } from './mapping.js';
import type { SocketOptions } from './socket-options.js';
import { ReceivedQueue } from './received-queue.js';
import { isWarming, WarmingGate } from './warming.js';
import type { Pool } from 'pg';

export interface BaileysSessionDeps {
  readonly pool: Pool;
  readonly leases: NumberLeases;
  /** This worker's name on the leases. */
  readonly owner: string;
  /** The process's fence, when it runs one: leases are taken under its token, and none while it has none. */
  readonly fence: ProcessFence | undefined;
  readonly logger: Logger;
  readonly socket: SocketOptions;
  readonly mapping: BaileysMapping;
  /** When the number first connected (for warming), kept across restarts. */
  readonly firstConnected: { get(instanceId: string): Promise<number | undefined>; set(instanceId: string, at: number): Promise<number> };
}

const LIVE: ReadonlySet<InstanceStatus> = new Set(['connected', 'warming']);
/**
 * How often a lease held by another worker is asked for again (at most): a dead holder's lease ends
 * a few seconds after its death is found (`expireFenced`), well before its time to live.
 */
const LEASE_POLL_MS = 1_000;
/** How long the first QR of a pairing is shown before the network sends the next one. */
const FIRST_QR_LIFETIME_MS = 60_000;
/** How long each later QR is shown. */
const QR_LIFETIME_MS = 20_000;
/** How long a pairing code can be typed. */
const CODE_LIFETIME_MS = 180_000;
/**
 * One commit per key transaction: a failed write ends its socket at once, so a retry (Baileys' own
 * default is 10 tries 3 s apart) could only be refused, and would come from an ended socket.
 */
const KEY_TRANSACTIONS = { maxCommitRetries: 1, delayBetweenTriesMs: 0 };
/** How long a closing session may take to write out what it received before its socket ends. */
const DRAIN_MS = 20_000;

/**
 * The Baileys socket of one number, held under a lease so no other worker has one open at the same
 * time. It connects when the number is paired (or while it pairs), reconnects with backoff and
 * jitter after a drop, and stops for good on logged out, banned or replaced. Everything it sees
 * goes to `events` (on the log before anything else happens with it).
 */
export class BaileysSession implements NumberSession {
  private lease?: Lease;
  /** A lease lost whose giving back failed (the database was away): given back before the next is taken. */
  private unreleased?: Lease;
  private auth?: PostgresAuthStore;
  private socket?: WASocket;
  private status: InstanceStatus;
  private phone: string | null;
  private health: number;
  /** The health score last written to the log. */
  private writtenHealth: number;
  private pairing?: Pairing;
  private firstConnectedAt?: number;
  /**
   * The last write of the socket's credentials: a login is announced once the identity it brought
   * is stored. Baileys may hand `creds.update` and the open connection over in two batches, whose
   * handlers run side by side; announced first, a restart in between would find the number
   * `warming` and its credentials without the login.
   */
  private credsWritten: Promise<void> = Promise.resolve();
  private readonly gate = new WarmingGate(() => this.firstConnectedAt);
  /** Sends run one at a time, in call order. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Received messages and group facts, written in the network's order, across this number's sockets. */
  private readonly received = new ReceivedQueue();
  private attempt = 0;
  private timer?: NodeJS.Timeout;
  private stopRenewing?: () => void;
  /** A run of `start` is under way: it takes the lease and the auth state. */
  private starting = false;
  private closed = false;
  /** The last presence heard of each contact. */
  private readonly presence = new PresenceBook();
  private readonly calls = new RingingCalls();
  private readonly chats = new ChatBook();
  private readonly labels = new LabelBook(this.chats);
  /** Whether each phone sent to is on the network, for an hour. */
  private readonly recipients = boundedCache<boolean>(10_000, 3_600_000);
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

  /**
   * Takes the lease (waiting while another worker holds it) and the auth state, retrying a database
   * error with backoff (the number reads `disconnected` with the error meanwhile); then connects if
   * the number is paired or pairing. Runs again after the lease is lost.
   */
  async start(): Promise<void> {
    if (this.starting) return;
    this.starting = true;
    try {
      await this.takeOver();
    } finally {
      this.starting = false;
    }
  }

  private async takeOver(): Promise<void> {
    const id = this.instance.instance_id;
    const { reconnectBaseMs, reconnectMaxMs, leaseRenewMs } = this.deps.socket;
    let failures = 0;
    while (!this.closed && this.auth === undefined) {
      try {
        const lease = this.lease ?? (await this.acquire());
        if (lease === undefined) {
          await this.wait(Math.min(leaseRenewMs, LEASE_POLL_MS));
          continue;
        }
        this.firstConnectedAt ??= await this.deps.firstConnected.get(id);
        const auth = await PostgresAuthStore.open(this.deps.pool, id, lease);
        if (this.lease === lease) this.auth = auth;
      } catch (err) {
        this.log.warn({ err }, 'the session could not start; retrying');
        if (++failures === 1) await this.setStatus('disconnected', `the session could not start (${String(err)}); retrying`).catch(() => undefined);
        await this.wait(backoffMs(failures, reconnectBaseMs, reconnectMaxMs));
      }
    }
    if (this.auth !== undefined && (this.auth.creds.me !== undefined || this.pairing !== undefined)) this.connect();
  }

  /** The lease if it is free, renewed from then on; given back at once if the session closed or the fence ended meanwhile. */
  private async acquire(): Promise<Lease | undefined> {
    const { fence } = this.deps;
    const token = fence?.current;
    if (fence !== undefined && token === undefined) return undefined;
    // Its socket is closed: given back now, this worker can take the number again at once, not when the lease runs out.
    if (this.unreleased) {
      await this.deps.leases.release(this.unreleased);
      this.unreleased = undefined;
    }
    const lease = await this.deps.leases.acquire(this.instance.instance_id, this.deps.owner, token);
    if (lease === undefined) return undefined;
    // Closed meanwhile, or its fence ended meanwhile (`fenceEnded` found no lease then): given back.
    if (this.closed || fence?.current !== token) {
      await this.deps.leases.release(lease);
      return undefined;
    }
    this.lease = lease;
    this.stopRenewing = keepLease(this.deps.leases, lease, this.deps.socket.leaseRenewMs, this.log, (why) => void this.lost(why));
    return lease;
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
    return answerWith(this.answers(socket), query);
  }

  private answers(socket: WASocket): QueryHandlers {
    return {
      check_phones: async (query) => ({ kind: 'phone_checks', results: await checkPhones(socket, query.phones) }),
      set_presence: (query) => setPresence(socket, query),
      read_presence: (query) => readPresence(socket, this.presence, query.jid),
      reject_call: (query) => rejectCall(socket, this.calls, query, (call) => this.emit({ kind: 'call', call })),
      list_chats: (query) => this.chats.list(query.limit),
      modify_chat: (query) => modifyChat(socket, this.chats, query.chat_jid, query.action),
      list_labels: (query) => this.labels.list(socket, query.with_chats),
      label_chat: (query) => this.labels.label(socket, query),
      ...groupHandlers(socket),
    };
  }

  async pair(method: PairingMethod, phone?: string): Promise<void> {
    if (LIVE.has(this.status)) return;
    this.pairing = { method, phone: phone ?? null, codeAsked: false, qrs: 0, restarted: false };
    await this.setStatus('connecting', 'pairing');
    // Connects once the lease and the auth state are taken (after a logout, the auth state is read anew now).
    if (this.auth === undefined) {
      void this.start();
      return;
    }
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
    await this.stop();
  }

  private async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    await this.drainReceived();
    // The lease is renewed until the socket is closed: a slow close must not let another worker in.
    await this.endSocket();
    this.stopRenewing?.();
    const held = this.lease ?? this.unreleased;
    if (held) await this.deps.leases.release(held).catch((err: unknown) => this.log.warn({ err }, 'lease not released; it expires'));
    // The number is gone from this worker: its caches go with it.
    this.deps.mapping.forget(this.instance.instance_id);
    this.onClose();
  }

  /**
   * What the network counts as delivered reaches the log before the socket ends (Baileys sends the
   * receipt before it hands a message over): the socket stops reading, so nothing more is
   * acknowledged (the network delivers it again to the next socket), and the queue is written out.
   */
  private async drainReceived(): Promise<void> {
    pauseReading(this.socket);
    if (!(await this.received.drain(DRAIN_MS))) this.log.warn({ deadlineMs: DRAIN_MS }, 'received messages still being written when the session closed');
  }

  /** The process's fence `token` ended: a lease taken under it goes, as if lost. */
  fenceEnded(token: string): void {
    if (this.lease?.fence === token) void this.lost("the process's liveness lapsed");
  }

  /**
   * The lease is gone (not renewed in time, taken, or its fence ended): the socket closes before
   * anyone else can take the lease, the number reads `disconnected`, and the session goes back to
   * taking the lease, which it gives back first in case it still holds it. A session closing (it
   * drains what it received) ends its socket at once all the same.
   */
  private async lost(why: string): Promise<void> {
    if (this.closed) {
      if (this.socket) this.log.warn({ why }, 'the number is no longer ours while its session closes: socket closed at once');
      await this.endSocket();
      return;
    }
    this.log.warn({ why }, 'the number is no longer ours: socket closed, taking the lease again');
    this.stopRenewing?.();
    const lease = this.lease;
    this.lease = undefined;
    this.auth = undefined;
    await this.endSocket();
    if (lease) {
      await this.deps.leases.release(lease).catch((err: unknown) => {
        this.log.warn({ err }, 'lease not released; given back before the next is taken');
        this.unreleased = lease;
      });
    }
    await this.setStatus('disconnected', `${why}; taking the number back`).catch((err: unknown) => this.log.warn({ err }, 'status not written'));
    void this.start();
  }

  private connect(): void {
    this.open().catch((err: unknown) => this.log.error({ err }, 'socket not opened'));
  }

  private async open(): Promise<void> {
    if (this.closed || this.auth === undefined) return;
    const auth = this.auth;
    const { socket: options, mapping } = this.deps;
    const version = await options.version();
    // Another connect, a close or a lost lease came first while the version was asked.
    if (this.closed || this.auth !== auth || this.socket !== undefined) return;
    if (this.pairing) this.pairing.qrs = 0;
    // From now on this socket alone writes the number's auth state; the writes of those before it are refused.
    const claimed = auth.claim();
    const write = async (work: (own: SocketAuth) => Promise<void>): Promise<void> => {
      if (this.socket !== socket) throw new StaleSocket(this.instance.instance_id);
      // A key the database does not have would stop messages reaching recipients: the socket stops instead.
      await work(await claimed).catch((err: unknown) => this.failedWrite(socket, err));
    };
    const keys: SignalKeyStore = {
      get: async (type, ids) => (await claimed).keys.get(type, ids),
      set: (data) => write((own) => Promise.resolve(own.keys.set(data))),
      clear: () => write((own) => own.keys.clear?.() ?? Promise.resolve()),
    };
    const socket = makeWASocket({
      waWebSocketUrl: options.url(this.instance.instance_id),
      connectTimeoutMs: options.connectTimeoutMs,
      version,
      logger: this.log.child({ module: 'baileys' }, { level: options.baileysLogLevel }),
      auth: { creds: auth.creds, keys: makeCacheableSignalKeyStore(keys) },
      transactionOpts: KEY_TRANSACTIONS,
      markOnlineOnConnect: false,
      syncFullHistory: false,
      emitOwnEvents: true,
      browser: ['Gateway', 'Chrome', '1.0'],
      getMessage: (key) => mapping.storedMessage(this.instance.instance_id, key),
      msgRetryCounterCache: mapping.retryCounters(this.instance.instance_id),
      cachedGroupMetadata: (jid) => mapping.groupMetadata(this.instance.instance_id, jid, this.socket),
    });
    this.socket = socket;
    claimed.catch((err: unknown) => this.failedWrite(socket, err)).catch(() => undefined);
    // Baileys forwards a refused upgrade without acting on it: the socket would sit out its connect timeout.
    socket.ws.on('unexpected-response', (_request: unknown, response: { statusCode?: number }) => void socket.end(refused(response.statusCode)));
    socket.ev.process((batch) => this.onEvents(socket, batch, () => write((own) => own.saveCreds())));
  }

  private async onEvents(socket: WASocket, batch: Partial<BaileysEventMap>, saveCreds: () => Promise<void>): Promise<void> {
    // What the batch teaches about lids first, then what it received, queued before anything is awaited.
    if (batch['lid-mapping.update']) this.deps.mapping.learnLid(this.instance.instance_id, batch['lid-mapping.update']);
    // History sync is not replayed as messages, but it teaches the number who is behind its lids.
    for (const mapping of batch['messaging-history.set']?.lidPnMappings ?? []) this.deps.mapping.learnLid(this.instance.instance_id, mapping);
    this.take(socket, batch);
    if (this.socket !== socket) return;
    try {
      if (batch['creds.update']) {
        const written = saveCreds();
        this.credsWritten = written.catch(() => undefined);
        await written;
      }
      if (batch['connection.update']) await this.onConnection(socket, batch['connection.update']);
      for (const fact of this.deps.mapping.statuses(batch['messages.update'] ?? [], batch['message-receipt.update'] ?? [])) await this.emit(fact);
      if (batch['presence.update']) this.presence.learn(batch['presence.update']);
      this.chats.learn(batch);
      this.labels.learn(batch);
      for (const call of batch.call ? await callFacts(socket, batch.call) : []) {
        this.calls.seen(call);
        await this.emit({ kind: 'call', call });
      }
    } catch (err) {
      this.log.error({ err }, 'network events not handled');
    }
  }

  /**
   * Queues the batch's received messages and group facts. The network counts a message delivered
   * once Baileys hands it over, so it is written even if its socket has ended since, or while the
   * session closes.
   */
  private take(socket: WASocket, batch: Partial<BaileysEventMap>): void {
    for (const message of batch['messages.upsert']?.messages ?? []) this.received.push(() => this.onMessage(socket, message));
    if (batch['group-participants.update'] === undefined && batch['groups.update'] === undefined) return;
    const groups = this.deps.mapping.groupEvents(this.instance.instance_id, ownJids(socket), batch['group-participants.update'], batch['groups.update']);
    for (const event of groups) this.received.push(() => this.events.emit({ kind: 'group', event }));
  }

  private async onMessage(socket: WASocket, message: WAMessage): Promise<void> {
    try {
      const fact = await this.deps.mapping.inbound(this.instance, message, socket);
      if (fact) await this.events.emit({ kind: 'inbound', message: fact });
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
      await this.credsWritten;
      this.firstConnectedAt ??= await this.deps.firstConnected.set(this.instance.instance_id, now);
      await this.setStatus(isWarming(this.firstConnectedAt, now) ? 'warming' : 'connected', null, phoneOf(socket.authState.creds.me?.id));
    }
    if (update.connection === 'close') await this.onClosed(update.lastDisconnect?.error);
  }

  private async onQr(socket: WASocket, qr: string): Promise<void> {
    const pairing = this.pairing;
    if (pairing === undefined) return;
    const now = Date.now();
    if (pairing.method === 'qr') return this.emit({ kind: 'pairing', method: 'qr', value: qr, expires_at: now + (pairing.qrs++ === 0 ? FIRST_QR_LIFETIME_MS : QR_LIFETIME_MS) });
    if (pairing.codeAsked || pairing.phone === null) return;
    pairing.codeAsked = true;
    const auth = this.auth!;
    const me = auth.creds.me;
    let code: string;
    try {
      code = await socket.requestPairingCode(pairing.phone.replace(/\D/g, ''));
    } catch (err) {
      this.log.warn({ err }, 'pairing code not obtained');
      if (this.socket !== socket) return;
      // Baileys set `me` to the phone before it asked: left there, the next connect would log in instead of pairing.
      auth.creds.me = me;
      await auth.saveCreds().catch((error: unknown) => this.log.warn({ err: error }, 'auth state not written'));
      this.pairing = undefined;
      await this.endSocket();
      await this.setStatus('disconnected', `the pairing code could not be obtained (${String(err)}); ask for a new pairing`);
      return;
    }
    await this.emit({ kind: 'pairing', method: 'code', value: code, expires_at: now + CODE_LIFETIME_MS });
  }

  private async onClosed(error: Error | undefined): Promise<void> {
    this.socket = undefined;
    if (this.closed) return;
    const code = (error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode;
    const paired = this.auth?.creds.me !== undefined;
    const next = afterClose(code, paired && this.pairing?.restarted === false);
    if (next.kind === 'stop') {
      this.pairing = undefined;
      if (next.dropAuth) {
        await this.auth?.remove().catch((err: unknown) => this.log.warn({ err }, 'auth state not removed'));
        this.deps.mapping.forget(this.instance.instance_id);
        // Baileys still holds the logged-out creds in memory: the next pairing reads fresh ones.
        this.auth = undefined;
      }
      await this.setStatus(next.status, next.reason);
      return;
    }
    // The network ends a pairing nobody scanned with a timeout: it waits for a new request, not a loop of QRs.
    if (!paired && (this.pairing === undefined || code === DisconnectReason.timedOut)) {
      this.pairing = undefined;
      await this.setStatus('disconnected', 'pairing ended without a scan');
      return;
    }
    if (next.at === 'once' && this.pairing) this.pairing.restarted = true;
    if (next.at !== 'once' && LIVE.has(this.status)) this.health = nextHealth(this.health, 'disconnected');
    await this.setStatus(next.at === 'once' ? this.status : next.status, next.reason);
    const { reconnectBaseMs, reconnectMaxMs } = this.deps.socket;
    const delay = next.at === 'once' ? 0 : next.at === 'slow' ? backoffMs(1, reconnectMaxMs, reconnectMaxMs) : backoffMs(++this.attempt, reconnectBaseMs, reconnectMaxMs);
    this.timer = setTimeout(() => this.connect(), delay);
  }

  /**
   * Whether a phone recipient is on the network, asked once an hour per phone (`onWhatsApp`): a
   * send to a phone that is not fails at once, clearly, instead of leaving as a message nobody
   * receives. Groups, lids and broadcasts are not asked; an unanswered check lets the send go.
   */
  private async onNetwork(socket: WASocket, to: string): Promise<boolean> {
    const phone = phoneOfJid(to);
    if (phone === undefined) return true;
    const known = this.recipients.get(phone);
    if (known !== undefined) return known;
    const checked = await checkPhones(socket, [phone]).then(
      ([check]) => check?.on_network ?? true,
      (err: unknown) => (this.log.debug({ err }, 'the recipient could not be checked; sending anyway'), undefined),
    );
    if (checked === undefined) return true;
    this.recipients.set(phone, checked);
    return checked;
  }

  private async sendNow(command: SendCommand): Promise<SendResult> {
    const socket = this.socket;
    if (socket === undefined || !LIVE.has(this.status)) return { kind: 'failed', error_code: 'not_connected', error_reason: `the number is ${this.status}` };
    const wait = this.gate.take();
    if (wait > 0) await this.wait(wait);
    if (this.socket !== socket) return { kind: 'failed', error_code: 'not_connected', error_reason: 'the connection closed while the send waited' };
    if (!(await this.onNetwork(socket, command.to))) return { kind: 'failed', error_code: 'not_on_network', error_reason: `${command.to} is not on the network` };
    let outgoing: readonly OutgoingMessage[];
    try {
      outgoing = await this.deps.mapping.outgoing(command);
    } catch (err) {
      return { kind: 'failed', error_code: 'delivery_failed', error_reason: `the send could not be built: ${String(err)}` };
    }
    let waId = '';
    try {
      for (const [part, message] of outgoing.entries()) {
        // Ours before it leaves: the socket echoes each send at once, and the echo must be known as ours.
        const id = sentNetworkId(command.message_id, part);
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

  /** A write of `socket` failed: that socket stops (never a newer one), and the session goes on from the database. */
  private async failedWrite(socket: WASocket, err: unknown): Promise<never> {
    if (this.socket !== socket || err instanceof StaleSocket) throw err;
    const lost = err instanceof LeaseLost;
    this.log.error({ err }, lost ? 'auth write refused: the number moved to another worker' : 'auth state not written: the session stops');
    if (lost) await this.lost('auth write refused: the lease moved to another worker');
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
    // Baileys drops its frame handlers as it ends; only then may a drained socket read its close handshake.
    const ended = socket?.end(undefined);
    resumeReading(socket);
    await ended;
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms).unref());
  }
}

/** A pairing under way: how it is asked for, and how far it went. */
interface Pairing {
  readonly method: PairingMethod;
  readonly phone: string | null;
  codeAsked: boolean;
  /** QRs this socket showed so far: its first lives longer than the next ones. */
  qrs: number;
  /** The socket restarted once after the pairing succeeded (515): a later 515 waits like any drop. */
  restarted: boolean;
}

/** `5511999998888:12@s.whatsapp.net` → `+5511999998888`. */
function phoneOf(jid: string | undefined): string | undefined {
  const user = jidDecode(jid)?.user;
  return user === undefined ? undefined : `+${user}`;
}

/** The WebSocket under Baileys' socket (Baileys keeps it protected), to pause and resume reading frames. */
type Reading = { readonly readyState: number; readonly isPaused: boolean; pause(): void; resume(): void };

const wsOf = (socket: WASocket | undefined) => (socket?.ws as unknown as { socket?: Reading | null } | undefined)?.socket ?? undefined;

/** Stops reading an open socket (one still connecting or closing has nothing to read, and ws cannot pause it). */
function pauseReading(socket: WASocket | undefined): void {
  const ws = wsOf(socket);
  if (ws?.readyState === 1) ws.pause();
}

function resumeReading(socket: WASocket | undefined): void {
  const ws = wsOf(socket);
  if (ws?.isPaused) ws.resume();
}

/** An HTTP refusal of the upgrade is the edge's, never the number's: a transient close, retried with backoff. */
function refused(httpStatus: number | undefined): Error {
  return Object.assign(new Error(`the network refused the connection (HTTP ${httpStatus ?? '?'})`), { output: { statusCode: DisconnectReason.unavailableService } });
}
