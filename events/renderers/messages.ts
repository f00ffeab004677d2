import type { ChangedPayload, ExternalSentPayload, MediaPayload, ReceivedPayload, StatusPayload } from '../payloads.js';
import type { DeleteContent, EditContent, InboundMessage, Media, MessageStatus, PublicEvent } from '../../schemas/records.js';
import { inboundContent } from '../content.js';
import { scheduledEvent } from './event.js';

/** Signs a media id into its time-limited `GET /media/{id}?exp&sig` link. */
export type MediaUrl = (mediaId: string) => string;

/**
 * An inbound record: a customer's message is `message.received`; the owner writing from the phone
 * (origin external) is `message.sent`. The record's event_id is the public one (derived from the
 * network id by the connector, so a message delivered twice keeps its id).
 */
export function inboundEvent(message: InboundMessage, mediaUrl: MediaUrl): PublicEvent {
  const external = message.origin === 'external';
  const { content } = message;
  if (content.kind === 'edit' || content.kind === 'delete') return changeEvent(message, content);
  return scheduledEvent({
    event_id: message.event_id,
    occurred_at: message.occurred_at,
    account_id: message.account_id,
    project_id: message.project_id,
    instance_id: message.instance_id,
    event_type: external ? 'message.sent' : 'message.received',
    group: message.group,
    sender: message.sender,
    mentions: message.mentions,
    payload: external ? externalSentPayload(message, mediaUrl) : receivedPayload(message, mediaUrl),
  });
}

/** An edit or a deletion of an earlier message by its author: `message.edited` or `message.deleted`. */
function changeEvent(message: InboundMessage, change: EditContent | DeleteContent): PublicEvent {
  const payload: ChangedPayload = {
    origin: message.origin,
    message_id: message.message_id,
    wa_message_id: change.quoted_message_id,
    from: message.from,
    chat: message.chat_jid,
    ...(message.quoted_participant !== null && { quoted_participant: message.quoted_participant }),
    ...(change.kind === 'edit' && { body: change.body }),
  };
  return scheduledEvent({
    event_id: message.event_id,
    occurred_at: message.occurred_at,
    account_id: message.account_id,
    project_id: message.project_id,
    instance_id: message.instance_id,
    event_type: change.kind === 'edit' ? 'message.edited' : 'message.deleted',
    group: message.group,
    sender: message.sender,
    payload,
  });
}

/** The fields of spec 2.4, as the conversation history shows them. */
function receivedPayload(message: InboundMessage, mediaUrl: MediaUrl): ReceivedPayload {
  const content = inboundContent(message.content);
  const media = mediaOf(message);
  return {
    type: content.type,
    message_id: message.message_id,
    wa_message_id: message.wa_message_id,
    from: message.from,
    body: content.body,
    ...(message.quoted_id !== null && { quoted_id: message.quoted_id }),
    ...(message.quoted_participant !== null && { quoted_participant: message.quoted_participant }),
    ...(media !== null && { media: mediaPayload(media, mediaUrl) }),
    ...(content.latitude !== null && content.longitude !== null && { latitude: content.latitude, longitude: content.longitude }),
    ...(content.poll_name !== null && { poll: { name: content.poll_name, options: content.poll_options ?? [] } }),
    ...(content.vote_poll_message_id !== null && {
      poll_vote: { poll_message_id: content.vote_poll_message_id, selected: content.vote_selected ?? [] },
    }),
  };
}

/** Exactly the fields spec 6.1 lists for origin external. */
function externalSentPayload(message: InboundMessage, mediaUrl: MediaUrl): ExternalSentPayload {
  const content = inboundContent(message.content);
  const media = mediaOf(message);
  return {
    origin: 'external',
    type: content.type,
    to: message.to ?? message.chat_jid,
    body: content.body,
    wa_message_id: message.wa_message_id,
    message_id: message.message_id,
    ...(message.quoted_id !== null && { quoted_message_id: message.quoted_id }),
    ...(media !== null && { media: { ...mediaPayload(media, mediaUrl), ref: `/media/${media.id}` } }),
  };
}

/** The stored media of a message; null without an attachment or when its download failed. */
function mediaOf(message: InboundMessage): Media | null {
  return 'media' in message.content ? message.content.media : null;
}

function mediaPayload(media: Media, mediaUrl: MediaUrl): MediaPayload {
  return { id: media.id, url: mediaUrl(media.id), mime_type: media.mime_type, filename: media.filename, size: media.size };
}

/**
 * A status fact of one of our sends: `message.<status>`. The fact carries no content, so an OTP
 * code cannot reach the event; `error_reason` is for operators and stays out.
 */
export function statusEvent(status: MessageStatus): PublicEvent {
  const payload: StatusPayload = {
    origin: status.campaign_id === null ? 'api' : 'campaign',
    ...(status.campaign_id !== null && { campaign_id: status.campaign_id }),
    message_id: status.message_id,
    wa_message_id: status.wa_message_id,
    to: status.to,
    status: status.status,
    ...(status.status === 'failed' && status.error_code !== null && { error_code: status.error_code }),
  };
  return scheduledEvent({
    event_id: status.event_id,
    occurred_at: status.occurred_at,
    account_id: status.account_id,
    project_id: status.project_id,
    instance_id: status.instance_id,
    event_type: `message.${status.status}`,
    client_reference: status.client_reference,
    payload,
  });
}
