import { proto, toNumber, type BaileysEventMap } from '@whiskeysockets/baileys';
import type { SendStatus } from '../../schemas/records.js';
import type { StatusFact } from '../network/connector.js';

const Status = proto.WebMessageInfo.Status;

/** The network's status of a message, as ours; pending and unknown ones say nothing yet. */
function statusOf(status: number | null | undefined): SendStatus | undefined {
  switch (status) {
    case Status.SERVER_ACK:
      return 'sent';
    case Status.DELIVERY_ACK:
      return 'delivered';
    case Status.READ:
    case Status.PLAYED:
      return 'read';
    case Status.ERROR:
      return 'failed';
    default:
      return undefined;
  }
}

/**
 * Receipts of our own sends, from `messages.update` (the message's status moved; the socket puts
 * the receipt's time in `messageTimestamp`, and the network's error code on a failure) and
 * `message-receipt.update` (a recipient's device delivered, read or played it; one per member in
 * groups). Only `fromMe` messages have receipts of ours; the log keeps every fact, and the
 * projection never moves a status back.
 */
export function statusFacts(
  updates: BaileysEventMap['messages.update'],
  receipts: BaileysEventMap['message-receipt.update'],
  now: number = Date.now(),
): StatusFact[] {
  const facts: StatusFact[] = [];
  for (const { key, update } of updates) {
    const status = statusOf(update.status);
    if (!key.fromMe || !key.id || status === undefined) continue;
    const failed = status === 'failed';
    facts.push({
      kind: 'status',
      wa_message_id: key.id,
      status,
      error_code: failed ? 'delivery_failed' : null,
      error_reason: failed ? errorReason(update.messageStubParameters) : null,
      occurred_at: msOf(update.messageTimestamp, now),
    });
  }
  for (const { key, receipt } of receipts) {
    if (!key.fromMe || !key.id) continue;
    const read = receipt.readTimestamp ?? receipt.playedTimestamp;
    const status: SendStatus = read != null ? 'read' : 'delivered';
    facts.push({ kind: 'status', wa_message_id: key.id, status, error_code: null, error_reason: null, occurred_at: msOf(read ?? receipt.receiptTimestamp, now) });
  }
  return facts;
}

/** A receipt's time in seconds (zero or absent when the network gave none) in ms. */
function msOf(seconds: Parameters<typeof toNumber>[0], now: number): number {
  const value = seconds == null ? 0 : toNumber(seconds);
  return value > 0 ? value * 1000 : now;
}

/** The network's error code (and restriction notice) the socket puts on a failed message. */
function errorReason(parameters: unknown): string {
  const said = Array.isArray(parameters) ? parameters.filter((p): p is string => typeof p === 'string' && p !== '') : [];
  return said.length === 0 ? 'the network reported an error' : `the network reported an error: ${said.join('; ')}`;
}
