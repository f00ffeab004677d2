import type { InboundMessage, SendCommand } from '../../schemas/records.js';
import { isGroupJid } from '../../schemas/phones.js';
import { inboundContent, sendContent, type ContentColumns } from '../../events/content.js';

/** A message of a conversation as `conversations.messages` keeps it (status facts aside). */
export interface MessageRow extends ContentColumns {
  readonly message_id: string;
  readonly account_id: string;
  readonly project_id: string;
  readonly instance_id: string;
  /** The conversation: the customer's phone jid (a lid while unresolved) or the group jid. */
  readonly jid: string;
  readonly direction: 'in' | 'out';
  /** customer or external (received records), api or campaign (our sends). */
  readonly origin: string;
  readonly occurred_at: Date;
  readonly wa_message_id: string | null;
  readonly quoted_id: string | null;
  readonly quoted_participant: string | null;
  readonly sender_jid: string | null;
  readonly sender_lid: string | null;
  readonly sender_name: string | null;
  readonly from_jid: string | null;
  readonly to_jid: string | null;
  readonly group_jid: string | null;
  readonly group_name: string | null;
  /** The conversation's name as this message shows it: the group subject, or a customer's push name. */
  readonly chat_name: string | null;
  readonly mentions: readonly string[];
  readonly status: 'queued' | null;
  readonly queued_at: Date | null;
  readonly client_reference: string | null;
  /** The campaign of a send of origin campaign. */
  readonly campaign_id: string | null;
}

/** A received message, or one the number's owner sent from the phone (origin external: direction out). */
export function inboundRow(message: InboundMessage): MessageRow {
  const received = message.origin === 'customer';
  return {
    message_id: message.message_id,
    account_id: message.account_id,
    project_id: message.project_id,
    instance_id: message.instance_id,
    jid: message.chat_jid,
    direction: received ? 'in' : 'out',
    origin: message.origin,
    occurred_at: new Date(message.occurred_at),
    wa_message_id: message.wa_message_id,
    quoted_id: message.quoted_id,
    quoted_participant: message.quoted_participant,
    sender_jid: message.sender.jid,
    sender_lid: message.sender.lid,
    sender_name: message.sender.name,
    from_jid: message.from,
    to_jid: message.to,
    group_jid: message.group?.jid ?? null,
    group_name: message.group?.name ?? null,
    chat_name: message.group !== null ? message.group.name : received ? message.sender.name : null,
    mentions: message.mentions,
    status: null,
    queued_at: null,
    client_reference: null,
    campaign_id: null,
    ...inboundContent(message.content),
  };
}

/** One of our sends, `queued` as the API accepted it. */
export function sendRow(command: SendCommand): MessageRow {
  const at = new Date(command.occurred_at);
  return {
    message_id: command.message_id,
    account_id: command.account_id,
    project_id: command.project_id,
    instance_id: command.instance_id,
    jid: command.to,
    direction: 'out',
    origin: command.origin,
    occurred_at: at,
    wa_message_id: null,
    quoted_id: command.content.kind === 'reaction' ? command.content.quoted_message_id : command.quoted_message_id,
    quoted_participant: null,
    sender_jid: null,
    sender_lid: null,
    sender_name: null,
    from_jid: null,
    to_jid: command.to,
    group_jid: isGroupJid(command.to) ? command.to : null,
    group_name: null,
    chat_name: null,
    mentions: command.mentions,
    status: 'queued',
    queued_at: at,
    client_reference: command.client_reference,
    campaign_id: command.campaign_id,
    ...sendContent(command.content),
  };
}

/** A row of `conversations.messages` as pg returns it; type and origin are null on a row only status facts have made. */
export interface StoredRow extends Omit<MessageRow, 'origin' | 'type' | 'media_size' | 'status' | 'direction'> {
  readonly direction: string;
  readonly origin: string | null;
  readonly type: string | null;
  /** bigint, as pg returns it. */
  readonly media_size: string | null;
  readonly status: string | null;
  readonly sent_at: Date | null;
  readonly delivered_at: Date | null;
  readonly read_at: Date | null;
  readonly failed_at: Date | null;
  readonly error_code: string | null;
  readonly error_reason: string | null;
}
