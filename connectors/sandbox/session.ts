import type { Logger } from 'pino';
import type { MessageId } from '../../schemas/ids.js';
import type {
  InstanceState,
  InstanceStatus,
  PairingMethod,
  SandboxCommand,
  SandboxCustomerMessage,
  SandboxGroupUpdate,
  SandboxPhoneMessage,
  SendCommand,
  TextContent,
} from '../../schemas/records.js';
import type { NumberSession, OtpOpener, SendResult, SessionEvents, SessionFact } from '../network/connector.js';
import { answerWith, QueryRefused, type AnswerOf, type Answers, type QueryHandlers, type SessionQuery } from '../network/query.js';
import { SandboxGroups } from './groups.js';
import { sandboxChecks } from './directory.js';
import { isGroupJid, phoneJid, phoneOfJid } from '../../schemas/phones.js';
import type { MediaSink } from '../network/media-sink.js';
import { buttonsAsText, listAsText, otpBubbles } from '../network/outgoing-text.js';
import { changeBehaviour, defaultBehaviour, recipientBlocked, sendFails, type Behaviour } from './behaviour.js';
import type { SandboxBehaviours } from './behaviours.js';
import { BanWatch } from './bans.js';
import { receivedContent, type ReceivedContent } from './content.js';
import { derivedPhone, pairingChallenge, simulatedWaId } from './ids.js';
import { sentNetworkId } from '../network/ids.js';
import { People } from './people.js';
import type { OwedReceipt, PendingReceipts } from './receipts.js';
import { Recent } from './recent.js';
import { SandboxPresence, type PresenceView } from './presence.js';
import { SandboxCalls } from './calls.js';
import { SandboxChats } from './chats.js';
import { SandboxLabels } from './labels.js';
import { targetOf } from '../network/targets.js';
import { backoffMs } from '../../shared/backoff.js';

export interface SessionDeps {
  readonly logger: Logger;
  /** The sends the network took and the receipts it owes, kept in Postgres so a killed connector does not forget them. */
  readonly receipts: PendingReceipts;
  /** The behaviour each number was last given, kept in Postgres so a restarted connector does not forget it. */
  readonly behaviours: SandboxBehaviours;
  readonly media?: MediaSink;
  /** Opens OTP codes for the code bubble; absent, the bubble holds the masked code. */
  readonly otp?: OtpOpener;
}

/** One message as the simulated network delivered it to a recipient (for tests; never logged). */
export interface Delivered {
  readonly message_id: MessageId;
  readonly wa_message_id: string;
  readonly to: string;
  readonly content: SendCommand['content'] | TextContent;
  /** The reply and mentions of the send, echoed on its first bubble. */
  readonly quoted_message_id: string | null;
  readonly mentions: readonly string[];
}

/** What the simulated network shows of one number (tests read it; nothing logs it). */
export interface SandboxView {
  readonly status: InstanceStatus;
  readonly phone: string | null;
  /** Messages delivered from the number, oldest first; buttons and lists as text, an OTP as two bubbles. */
  readonly delivered: readonly Delivered[];
  readonly behaviour: Behaviour;
  readonly presence: PresenceView;
}

/** How much each session remembers: polls, authors, messages waiting to arrive. */
const MEMORY = 1_000;
/** Owed receipts a reopened session loads at a time; the next ones once these are on the log. */
const RELOAD_PAGE = 1_000;
/** Delivered messages kept per session: only tests read them, and they look at their last few sends. */
const DELIVERED_KEPT = 100;

const receiptKey = (receipt: OwedReceipt) => `${receipt.wa_message_id}\u0000${receipt.status}`;

const canSend = (status: InstanceStatus) => status === 'connected' || status === 'warming';

/** The simulated network session of one sandbox number. */
export class SandboxSession implements NumberSession {
  private status: InstanceStatus;
  private phone: string | null;
  /** A pairing started by `pair` and not yet completed by a scan, with the phone given for it. */
  private pairing?: { readonly phone: string | null };
  private behaviour = defaultBehaviour;
  private readonly bans = new BanWatch();
  private readonly people = new People();
  private readonly polls = new Recent<string, readonly string[]>(MEMORY);
  /** Author jid of each message the number has seen, for quoted_participant. */
  private readonly authors = new Recent<string, string>(MEMORY);
  private readonly delivered: Delivered[] = [];
  private readonly presence = new SandboxPresence();
  private readonly calls = new SandboxCalls();
  private readonly chats = new SandboxChats();
  private readonly labels = new SandboxLabels(this.chats);
  /** The groups the number is in (created through the API), in memory. */
  private readonly groups = new SandboxGroups(() => phoneJid(this.phone!));
  /** Customer messages and group facts sent while the number was offline: they arrive when it connects. */
  private readonly waiting: SessionFact[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  /** The receipts this session is about to write (or writing): the network's sweep leaves them alone. */
  private readonly owing = new Set<string>();
  private closed = false;

  constructor(
    private readonly instance: InstanceState,
    private readonly events: SessionEvents,
    private readonly deps: SessionDeps,
    private readonly onClose: () => void,
  ) {
    this.status = instance.status;
    this.phone = instance.phone;
  }

  async send(command: SendCommand): Promise<SendResult> {
    if (!canSend(this.status)) return { kind: 'failed', error_code: 'not_connected', error_reason: `the number is ${this.status}` };
    const recipient = phoneOfJid(command.to);
    if (recipient !== undefined && !sandboxChecks([recipient])[0]!.on_network) {
      return { kind: 'failed', error_code: 'not_on_network', error_reason: `${recipient} is not on the network` };
    }
    if (sendFails(this.behaviour, command.to)) {
      return { kind: 'failed', error_code: 'delivery_failed', error_reason: 'sandbox: the recipient is marked failing' };
    }
    if (recipientBlocked(this.behaviour, command.to)) {
      const banned = this.bans.sent(true, Date.now());
      if (banned) await this.setStatus('banned', banned);
      return { kind: 'failed', error_code: 'recipient_blocked', error_reason: 'sandbox: the recipient has blocked the number' };
    }
    const changed = command.content.kind === 'edit' || command.content.kind === 'delete' ? command.content.quoted_message_id : null;
    if (changed !== null && (!this.phone || this.authors.get(changed) !== phoneJid(this.phone))) {
      return { kind: 'failed', error_code: 'delivery_failed', error_reason: `sandbox: ${changed} is not one of the number's own messages` };
    }
    const bubbles = this.bubbles(command.content);
    const ids = bubbles.map((_, i) => sentNetworkId(command.message_id, i));
    const waId = ids[ids.length - 1]!;
    const { deliveredAfterMs, readAfterMs } = this.behaviour;
    const now = Date.now();
    const owed = (status: OwedReceipt['status'], afterMs: number): OwedReceipt =>
      ({ instance_id: this.instance.instance_id, wa_message_id: waId, status, due_at: now + afterMs, sent_at: now });
    const receipts = [owed('delivered', deliveredAfterMs), owed('read', Math.max(deliveredAfterMs, readAfterMs))];
    // A send cut by a crash comes again under the same ids: what the network took before, it keeps once.
    if (!(await this.deps.receipts.take({ instance_id: this.instance.instance_id, wa_message_ids: ids, receipts, sent_at: now }))) {
      return { kind: 'accepted', wa_message_id: waId };
    }
    for (const [i, content] of bubbles.entries()) {
      const reply = i === 0 ? { quoted_message_id: command.quoted_message_id, mentions: command.mentions } : { quoted_message_id: null, mentions: [] };
      this.remember({ message_id: command.message_id, wa_message_id: ids[i]!, to: command.to, content, ...reply });
      if (this.phone) this.authors.set(ids[i]!, phoneJid(this.phone));
    }
    if (command.content.kind === 'poll') this.polls.set(waId, command.content.options);
    this.bans.sent(false, now);
    this.chats.sent(command.to, now);
    for (const receipt of receipts) void this.owe(receipt);
    return { kind: 'accepted', wa_message_id: waId };
  }

  /**
   * Takes the behaviour the number was last given, before the session takes its first send; a
   * `behaviour` control applied meanwhile is newer and stays. If Postgres cannot answer, the
   * session opens with the defaults rather than not at all.
   */
  async loadBehaviour(): Promise<void> {
    const stored = await this.deps.behaviours.of(this.instance.instance_id).catch((err: unknown) => {
      this.deps.logger.warn({ err, instanceId: this.instance.instance_id }, 'sandbox behaviour not loaded; the session opens with the defaults');
      return undefined;
    });
    if (stored && this.behaviour === defaultBehaviour) this.behaviour = stored;
  }

  /**
   * Receipts owed for sends made before this session opened (by a connector that was killed, or
   * by the worker the number moved from): the due ones now, the others when they fall due.
   */
  resume(openedAt: number): void {
    this.reload(openedAt).catch((err: unknown) => this.deps.logger.warn({ err, instanceId: this.instance.instance_id }, 'sandbox owed receipts not reloaded'));
  }

  private async reload(openedAt: number): Promise<void> {
    let after: OwedReceipt | undefined;
    do {
      const page = await this.deps.receipts.owed(this.instance.instance_id, openedAt, after, RELOAD_PAGE);
      if (this.closed) return;
      await Promise.all(page.map((receipt) => this.adopt(receipt)));
      after = page.length === RELOAD_PAGE ? page[page.length - 1] : undefined;
    } while (after);
  }

  /**
   * Takes on a receipt owed to this number that no session of this process holds: one whose session
   * closed, or one a session elsewhere took after this one opened (two workers overlap while a
   * partition moves). Resolves when it is settled; at once when this session holds it already.
   */
  adopt(receipt: OwedReceipt): Promise<void> {
    return this.owing.has(receiptKey(receipt)) ? Promise.resolve() : this.owe(receipt);
  }

  async query<Q extends SessionQuery>(query: Q): Promise<AnswerOf<Q>> {
    if (!canSend(this.status)) throw new QueryRefused('not_connected', `the number is ${this.status}`);
    return answerWith(this.answers, query);
  }

  private readonly answers: QueryHandlers = {
    check_phones: (query) => ({ kind: 'phone_checks', results: sandboxChecks(query.phones) }),
    set_presence: (query) => this.presence.set(query),
    read_presence: (query) => this.presence.read(query.jid),
    reject_call: async (query) => {
      const { done, fact } = this.calls.reject(query);
      await this.events.emit({ kind: 'call', call: fact });
      return done;
    },
    list_chats: (query) => this.chats.list(query.limit),
    modify_chat: (query) => this.chats.modify(query.chat_jid, query.action),
    list_labels: (query) => this.labels.list(query.with_chats),
    label_chat: (query) => this.labels.label(query),
    ...this.groupAnswers(),
  };

  /** Group actions answer from the number's groups in memory and emit the facts the network would. */
  private groupAnswers(): Pick<QueryHandlers, 'list_groups' | 'group_metadata' | 'create_group' | 'update_participants' | 'group_invite'> {
    const answer = async <K extends 'list_groups' | 'group_metadata' | 'create_group' | 'update_participants' | 'group_invite'>(query: Extract<SessionQuery, { kind: K }>) => {
      const { answer: answered, facts } = this.groups.answer(query, Date.now());
      for (const event of facts) await this.events.emit({ kind: 'group', event });
      return answered as Answers[K];
    };
    return { list_groups: answer, group_metadata: answer, create_group: answer, update_participants: answer, group_invite: answer };
  }

  async pair(method: PairingMethod, phone?: string): Promise<void> {
    if (canSend(this.status)) return;
    this.pairing = { phone: phone ?? null };
    await this.setStatus('connecting', null);
    await this.events.emit(pairingChallenge(method, Date.now()));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.owing.clear();
    this.onClose();
  }

  async logout(): Promise<void> {
    this.pairing = undefined;
    await this.close();
  }

  async control(command: SandboxCommand): Promise<void> {
    const { control } = command;
    switch (control.kind) {
      case 'connect':
        await this.pair(control.method, control.phone ?? undefined);
        if (control.auto) await this.scan(null);
        return;
      case 'scan':
        return this.scan(control.phone);
      case 'set_status':
        return this.setStatus(control.status, control.reason);
      case 'customer_message':
        return this.fromCustomer(command, control);
      case 'phone_message':
        return this.fromPhone(command, control);
      case 'set_behaviour': {
        const behaviour = changeBehaviour(this.behaviour, control);
        // Stored before the control's offset is committed: a crash in between applies it again.
        await this.deps.behaviours.store(this.instance.instance_id, behaviour);
        this.behaviour = behaviour;
        return;
      }
      case 'map_lid':
        this.people.map(control.lid, control.phone);
        return;
      case 'group_update':
        return this.groupUpdate(command, control);
      case 'incoming_call': {
        const caller = this.people.person(control.from);
        return this.arrive({ kind: 'call', call: this.calls.incoming(control.call_id, caller, control.status, control.is_video, command.occurred_at) });
      }
    }
  }

  view(): SandboxView {
    return { status: this.status, phone: this.phone, delivered: [...this.delivered], behaviour: this.behaviour, presence: this.presence.view() };
  }

  private async scan(phone: string | null): Promise<void> {
    if (!this.pairing) {
      this.deps.logger.info({ instanceId: this.instance.instance_id }, 'sandbox scan without a pending pairing; ignored');
      return;
    }
    const paired = phone ?? this.pairing.phone ?? undefined;
    this.pairing = undefined;
    await this.setStatus('connected', null, paired);
  }

  private async setStatus(status: InstanceStatus, reason: string | null, phone?: string): Promise<void> {
    // A connected number always has a phone, even one connected by a status control alone.
    if (canSend(status) && !phone && !this.phone) phone = derivedPhone(this.instance.instance_id);
    this.status = status;
    if (phone) this.phone = phone;
    if (status === 'logged_out' || status === 'banned') this.pairing = undefined;
    await this.events.emit({ kind: 'state', status, reason, phone: phone ?? null });
    if (canSend(status)) for (const fact of this.waiting.splice(0)) await this.events.emit(fact);
  }

  private async fromCustomer(command: SandboxCommand, message: SandboxCustomerMessage): Promise<void> {
    const content = await this.receive(message.content);
    if (!content) return;
    const sender = this.people.person(message.from, message.name);
    const waId = simulatedWaId(command.event_id);
    const chat = message.group?.jid ?? sender.jid;
    const quotedId = targetOf(content) ?? message.quoted_id;
    await this.arrive({
      kind: 'inbound',
      message: {
        occurred_at: command.occurred_at,
        origin: 'customer',
        wa_message_id: waId,
        chat_jid: chat,
        sender,
        from: chat,
        to: null,
        quoted_id: quotedId,
        quoted_participant: quotedId === null ? null : (this.authors.get(quotedId) ?? null),
        group: message.group,
        mentions: message.mentions.map((ref) => this.people.person(ref).jid),
        content,
      },
    });
    this.seen(waId, sender.jid, content);
    this.presence.heardFrom(sender.jid, command.occurred_at);
    this.chats.received(chat, message.group?.name ?? sender.name, command.occurred_at);
  }

  private async fromPhone(command: SandboxCommand, message: SandboxPhoneMessage): Promise<void> {
    if (!canSend(this.status) || !this.phone) {
      this.deps.logger.info({ instanceId: this.instance.instance_id }, 'sandbox phone message while the number is not connected; ignored');
      return;
    }
    const content = await this.receive(message.content);
    if (!content) return;
    const own = { jid: phoneJid(this.phone), lid: null, name: this.instance.nickname, phone: this.phone };
    const chat = this.people.person(message.to).jid;
    const waId = simulatedWaId(command.event_id);
    const quotedId = targetOf(content) ?? message.quoted_id;
    await this.events.emit({
      kind: 'inbound',
      message: {
        occurred_at: command.occurred_at,
        origin: 'external',
        wa_message_id: waId,
        chat_jid: chat,
        sender: own,
        from: own.jid,
        to: chat,
        quoted_id: quotedId,
        quoted_participant: quotedId === null ? null : (this.authors.get(quotedId) ?? null),
        group: isGroupJid(chat) ? { jid: chat, name: null } : null,
        mentions: [],
        content,
      },
    });
    this.seen(waId, own.jid, content);
    this.chats.sent(chat, command.occurred_at);
  }

  private async groupUpdate(command: SandboxCommand, update: SandboxGroupUpdate): Promise<void> {
    await this.arrive({
      kind: 'group',
      event: {
        occurred_at: command.occurred_at,
        kind: update.change,
        group: update.group,
        author: update.author === null ? null : this.people.person(update.author).jid,
        participants: update.participants.map((ref) => this.people.person(ref)),
        subject: update.subject,
        description: update.description,
      },
    });
  }

  private async receive(content: SandboxCustomerMessage['content']): Promise<ReceivedContent | undefined> {
    const { account_id: accountId, project_id: projectId, instance_id: instanceId } = this.instance;
    const owner = { accountId, projectId, instanceId };
    const received = await receivedContent(content, { media: this.deps.media, owner, polls: this.polls, logger: this.deps.logger });
    if (!received) this.deps.logger.warn({ instanceId: this.instance.instance_id }, 'sandbox vote on a poll the number does not know; dropped');
    return received;
  }

  /** A fact from the network reaches the number now, or when it next connects. */
  private async arrive(fact: SessionFact): Promise<void> {
    if (canSend(this.status)) return this.events.emit(fact);
    this.waiting.push(fact);
    if (this.waiting.length > MEMORY) this.waiting.shift();
  }

  private seen(waId: string, author: string, content: ReceivedContent): void {
    this.authors.set(waId, author);
    if (content.kind === 'poll') this.polls.set(waId, content.options);
  }

  /** Buttons and lists become numbered text menus (a non-official sender); an OTP becomes two bubbles. */
  private bubbles(content: SendCommand['content']): ReadonlyArray<SendCommand['content'] | TextContent> {
    const text = (body: string): TextContent => ({ kind: 'text', body });
    switch (content.kind) {
      case 'buttons':
        return [text(buttonsAsText(content))];
      case 'list':
        return [text(listAsText(content))];
      case 'otp':
        return otpBubbles(content, this.deps.otp ?? { open: () => content.code_masked }).map(text);
      default:
        return [content];
    }
  }

  private remember(delivered: Delivered): void {
    this.delivered.push(delivered);
    if (this.delivered.length > DELIVERED_KEPT) this.delivered.shift();
  }

  /**
   * Emits a receipt when it falls due. Once it is on the log the network owes it no longer; a
   * session closed meanwhile leaves it owed (its fact may have been dropped), for the session that
   * opens next or the one open elsewhere (the network's sweep). A write that fails (the brokers or
   * Postgres away) is tried again while the session is open, and the sweep leaves it to this session.
   * Resolves when the receipt is settled, never when the session closes first.
   */
  private owe(receipt: OwedReceipt, failures = 0): Promise<void> {
    this.owing.add(receiptKey(receipt));
    return new Promise((settled) => this.later(receipt.due_at - Date.now(), () => void this.writeReceipt(receipt, failures).then(settled)));
  }

  private async writeReceipt(receipt: OwedReceipt, failures: number): Promise<void> {
    const { wa_message_id: waId, status } = receipt;
    try {
      await this.events.emit({ kind: 'status', wa_message_id: waId, status, error_code: null, error_reason: null, occurred_at: Date.now(), ours: true });
    } catch (err) {
      this.deps.logger.warn({ err, waId, status }, 'sandbox receipt not written; tried again');
      return this.owe({ ...receipt, due_at: Date.now() + backoffMs(failures + 1, 200, 5_000) }, failures + 1);
    }
    if (this.closed) return;
    await this.deps.receipts
      .settle([receipt])
      .catch((err: unknown) => this.deps.logger.warn({ err, waId, status }, 'sandbox receipt written, not settled; the next sweep writes it again'));
    this.owing.delete(receiptKey(receipt));
  }

  private later(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.closed) run();
    }, Math.max(0, ms));
    this.timers.add(timer);
  }
}
