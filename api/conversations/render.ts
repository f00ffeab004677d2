import type { Static } from '@sinclair/typebox';
import { isGroupJid, phoneOfJid } from '../../schemas/phones.js';
import type { ConversationRow, StoredMessage } from '../../processors/conversations/index.js';
import type { ConversationOut, MessageOut } from './schemas.js';

/** Pre-signs a media id into a time-limited URL (spec 2.4 rule 1). */
export type MediaUrlSigner = (mediaId: string) => string | Promise<string>;

export function conversationOut(row: ConversationRow): Static<typeof ConversationOut> {
  return {
    jid: row.jid,
    phone: phoneOfJid(row.jid) ?? null,
    is_group: isGroupJid(row.jid),
    name: row.name,
    last_instance_id: row.last_instance_id,
    instance_ids: row.instance_ids,
    unread_count: row.unread_count,
    last_message: {
      message_id: row.last_message_id,
      type: row.last_message_type,
      direction: row.last_message_direction,
      preview: row.last_message_preview,
      timestamp: row.last_message_at.toISOString(),
    },
  };
}

/** null and absent are the same to the API: optional fields are left out. */
const optional = <T>(value: T | null): T | undefined => value ?? undefined;
const time = (value: Date | null) => value?.toISOString();

export async function messageOut(row: StoredMessage, signMediaUrl?: MediaUrlSigner): Promise<Static<typeof MessageOut>> {
  const deleted = row.change_kind === 'delete';
  return {
    message_id: row.message_id,
    type: row.type,
    direction: row.direction,
    origin: row.origin,
    instance_id: row.instance_id,
    timestamp: row.occurred_at.toISOString(),
    wa_message_id: row.wa_message_id,
    from: optional(row.from_jid),
    to: optional(row.to_jid),
    sender: row.sender_jid === null ? undefined : { jid: row.sender_jid, lid: row.sender_lid, name: row.sender_name },
    body: deleted ? null : row.change_kind === 'edit' ? row.change_body : row.body,
    quoted_id: optional(row.quoted_id),
    quoted_participant: optional(row.quoted_participant),
    group: row.group_jid === null ? undefined : { jid: row.group_jid, name: row.group_name },
    mentions: row.mentions,
    media: deleted ? undefined : await mediaOut(row, signMediaUrl),
    latitude: optional(row.latitude),
    longitude: optional(row.longitude),
    poll: row.poll_name === null ? undefined : { name: row.poll_name, options: row.poll_options ?? [] },
    poll_vote:
      row.vote_poll_message_id === null ? undefined : { poll_message_id: row.vote_poll_message_id, selected: row.vote_selected ?? [] },
    code_masked: optional(row.code_masked),
    client_reference: optional(row.client_reference),
    status: optional(row.status),
    queued_at: time(row.queued_at),
    sent_at: time(row.sent_at),
    delivered_at: time(row.delivered_at),
    read_at: time(row.read_at),
    failed_at: time(row.failed_at),
    error_code: optional(row.error_code),
    edited_at: row.change_kind === 'edit' ? time(row.changed_at) : undefined,
    deleted_at: deleted ? time(row.changed_at) : undefined,
  };
}

async function mediaOut(row: StoredMessage, signMediaUrl: MediaUrlSigner | undefined): Promise<Static<typeof MessageOut>['media']> {
  if (row.media_id === null) {
    if (row.media_mime_type === null && row.media_filename === null) return undefined;
    return { mime_type: row.media_mime_type, filename: row.media_filename };
  }
  return {
    id: row.media_id,
    url: signMediaUrl === undefined ? undefined : await signMediaUrl(row.media_id),
    mime_type: row.media_mime_type,
    filename: row.media_filename,
    size: row.media_size === null ? undefined : Number(row.media_size),
  };
}
