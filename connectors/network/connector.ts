import type {
  CallEvent,
  ConnectorKind,
  GroupEvent,
  InboundMessage,
  InstanceState,
  InstanceStatus,
  PairingMethod,
  SendCommand,
  SendStatus,
} from '../../schemas/records.js';
import type { TopicSpec } from '../../topics/index.js';
import type { AnswerOf, SessionQuery } from './query.js';

/**
 * One implementation of the messaging network (a simulated one now, Baileys next). The connector role
 * opens a session for each number it owns and closes it when the number's partition moves away.
 */
export interface NetworkConnector {
  readonly kind: ConnectorKind;
  /** Creates what the connector keeps of its own (tables) before the role opens sessions. */
  prepare?(): Promise<void>;
  /** A topic of commands the connector consumes besides the sends (its controls), and what applies them. */
  readonly commands?: ConnectorCommands;
  /**
   * Opens the session of a number from its current state (a connected number resumes from its
   * stored auth state). Resolves once the session exists; connecting goes on in the background
   * and is reported as state facts.
   */
  open(instance: InstanceState, events: SessionEvents): Promise<NumberSession>;
}

/** A record addressed to one number: keyed and partitioned by its instance id, like the sends. */
export interface Addressed {
  readonly instance_id: string;
}

/**
 * Commands of a connector's own topic. The role consumes the topic co-partitioned with the sends
 * and in the same batches' order: the sends read before a command are executed before it applies.
 */
export interface ConnectorCommands<C extends Addressed = Addressed> {
  readonly topic: TopicSpec<C>;
  /** Applies one command to the sessions of this worker; a failure is logged and the command skipped. */
  apply(command: C): Promise<void>;
}

/** The live network session of one number. */
export interface NumberSession {
  /**
   * Executes a send; a session that is not connected answers `failed` with `not_connected`. The
   * sends of a batch are called in order without waiting for each answer: a session takes each
   * send in the order of the calls (before its first await).
   */
  send(command: SendCommand): Promise<SendResult>;
  /** Starts pairing: the session reports `connecting` and a pairing challenge. */
  pair(method: PairingMethod, phone?: string): Promise<void>;
  /** Stops the session and keeps its auth state (the number moves to another worker, or the worker stops). */
  close(): Promise<void>;
  /** Unlinks the number from the network and drops its auth state. */
  logout(): Promise<void>;
  /**
   * Answers a question of the API, or carries out an action, on the network (`gw.commands.queries`).
   * A query the session cannot answer is refused with `QueryRefused` and one of the API's codes.
   */
  query<Q extends SessionQuery>(query: Q): Promise<AnswerOf<Q>>;
}

export type SendResult =
  | { readonly kind: 'accepted'; readonly wa_message_id: string }
  | { readonly kind: 'failed'; readonly error_code: string; readonly error_reason: string };

/** Where a session reports what happens on the network; `emit` resolves once the fact is on the log. */
export interface SessionEvents {
  emit(fact: SessionFact): Promise<void>;
}

/** What a session observes. The connector role turns each fact into a record of the log. */
export type SessionFact =
  | StateFact
  | PairingFact
  | StatusFact
  | { readonly kind: 'inbound'; readonly message: InboundFact }
  | { readonly kind: 'group'; readonly event: GroupFact }
  | { readonly kind: 'call'; readonly call: CallFact };

export interface StateFact {
  readonly kind: 'state';
  readonly status: InstanceStatus;
  readonly reason: string | null;
  /** E.164 phone of the number once paired; null keeps the known one. */
  readonly phone: string | null;
  /** The session's health score (0-100); absent keeps the known one. */
  readonly health_score?: number;
}

export interface PairingFact {
  readonly kind: 'pairing';
  readonly method: PairingMethod;
  /** QR payload, or the pairing code to type on the phone. */
  readonly value: string;
  readonly expires_at: number;
}

/** A receipt for one of our sends, by the network id the send was accepted with. */
export interface StatusFact {
  readonly kind: 'status';
  readonly wa_message_id: string;
  readonly status: SendStatus;
  readonly error_code: string | null;
  readonly error_reason: string | null;
  readonly occurred_at: number;
  /**
   * Set by a network that keeps a ledger of the sends it took (the sandbox): the receipt is of a
   * send the gateway made, so one whose send is not found yet waits for its outcome to be stored.
   * Baileys also reports receipts of what the owner's phone sent, which are not ours.
   */
  readonly ours?: boolean;
}

type Envelope = 'event_id' | 'account_id' | 'project_id' | 'instance_id';

/**
 * A received message (or the owner's own from the phone) as the network gave it, with lids resolved
 * where the session knows the phone and poll votes resolved to option names. The role adds the ids.
 */
export type InboundFact = Omit<InboundMessage, Envelope | 'message_id'>;

/** A group fact as the network gave it; the role adds the ids. */
export type GroupFact = Omit<GroupEvent, Envelope>;

/** A call fact as the network gave it (a call rings, is rejected, ends); the role adds the ids. */
export type CallFact = Omit<CallEvent, Envelope>;

/** Opens the sealed OTP code of a send (`OtpContent.code_ciphertext`), only to put it in the code bubble. */
export interface OtpOpener {
  open(sealed: string): string;
}
