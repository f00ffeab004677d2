import type { InstanceStatus, SendStatus, UsageAllowance } from '../schemas/records.js';

/**
 * The `payload` of each public event, as `events/renderers/` renders it and `events/samples.ts`
 * imitates it. Where spec 6.1 says "not shown", these shapes are the gateway's choice (README,
 * "Events"). Optional fields are left out when they have no value.
 */

/** A stored media file: `url` is the signed `GET /media/{id}?exp&sig` link, valid about 24 hours. */
export interface MediaPayload {
  readonly id: string;
  readonly url: string;
  readonly mime_type: string;
  readonly filename: string | null;
  readonly size: number;
}

/** `message.received` (spec 2.4); group and mentions ride on the envelope. */
export interface ReceivedPayload {
  readonly type: string;
  readonly message_id: string;
  readonly wa_message_id: string;
  readonly from: string;
  /** Text, caption, place name, contact name, emoji, poll question or chosen options; null for audio and sticker. */
  readonly body: string | null;
  readonly quoted_id?: string;
  readonly quoted_participant?: string;
  readonly media?: MediaPayload;
  readonly latitude?: number;
  readonly longitude?: number;
  readonly poll?: { readonly name: string; readonly options: readonly string[] };
  readonly poll_vote?: { readonly poll_message_id: string; readonly selected: readonly string[] };
}

/** `message.sent` with origin external (spec 6.1): the number's owner wrote from the phone. */
export interface ExternalSentPayload {
  readonly origin: 'external';
  readonly type: string;
  readonly to: string;
  readonly body: string | null;
  readonly wa_message_id: string;
  readonly message_id: string;
  readonly quoted_message_id?: string;
  /** `ref` is the stable path `/media/{id}`; `url` the signed link to it. */
  readonly media?: MediaPayload & { readonly ref: string };
}

/**
 * `message.edited` and `message.deleted` (names of the gateway; spec 6.1 has none): the author of
 * an earlier message changed it, a customer or the owner from the phone (origin external).
 */
export interface ChangedPayload {
  readonly origin: 'customer' | 'external';
  /** Our id of this change. */
  readonly message_id: string;
  /** The network id of the message changed: the `wa_message_id` its message.received or message.sent carried. */
  readonly wa_message_id: string;
  /** Who changed it: the chat (customer), or the number's own phone jid (external). */
  readonly from: string;
  /** The chat the message is in. */
  readonly chat: string;
  /** Author of the message changed, when known (a group admin may delete another member's message). */
  readonly quoted_participant?: string;
  /** message.edited only: the new text. */
  readonly body?: string;
}

/** `message.sent|delivered|read|failed` of one of our sends. The code of an OTP is never here. */
export interface StatusPayload {
  /** Who wrote the send: the API, or a campaign's runner. */
  readonly origin: 'api' | 'campaign';
  /** Campaign sends only: the campaign. */
  readonly campaign_id?: string;
  readonly message_id: string;
  /** null when the send failed before the network took it. */
  readonly wa_message_id: string | null;
  readonly to: string;
  readonly status: SendStatus;
  /** failed only: a neutral code of spec 7 (not_connected, delivery_failed, internal_error...). */
  readonly error_code?: string;
}

/** `instance.connected|warming|disconnected|logged_out|banned`. */
export interface InstancePayload {
  readonly status: InstanceStatus;
  readonly previous_status: InstanceStatus;
  readonly phone: string | null;
  readonly nickname: string | null;
  readonly reason: string | null;
  readonly health_score: number;
}

/** Stream-only `instance.status`: every status change of a number, pending and connecting included. */
export interface InstanceStatusPayload {
  readonly instance_id: string;
  readonly status: InstanceStatus;
  readonly previous_status: InstanceStatus;
  readonly phone: string | null;
  readonly reason: string | null;
}

/** Stream-only `qr_code`: `qr_code` is the string to draw as a QR code. */
export interface QrCodePayload {
  readonly instance_id: string;
  readonly qr_code: string;
  readonly expires_at: string;
}

/** Stream-only `pairing_code`: the code to type on the phone. */
export interface PairingCodePayload {
  readonly instance_id: string;
  readonly pairing_code: string;
  readonly expires_at: string;
}

export interface ParticipantPayload {
  readonly jid: string;
  readonly lid: string | null;
  readonly name: string | null;
}

/** `group.*`: the group itself is the envelope's `group` (name after the change). */
export interface GroupPayload {
  /** Who made the change, when known. */
  readonly author: string | null;
  /** participant_* only. */
  readonly participants?: readonly ParticipantPayload[];
  /** subject_changed only. */
  readonly subject?: string | null;
  /** description_changed only. */
  readonly description?: string | null;
}

/** `contact.opted_out` (a keyword opt-out, processors/contacts). */
export interface OptedOutPayload {
  readonly source: string;
  readonly phone: string;
  readonly contact_id: string;
}

/** `usage.threshold` (processors/usage): the spec's fields plus which allowance. */
export interface ThresholdPayload {
  readonly percent: number;
  readonly used: number;
  readonly included: number;
  readonly plan: string;
  readonly allowance: UsageAllowance;
}

/** Why the safety autopilot paused a campaign (processors/campaigns/thresholds.ts holds the rules). */
export type CampaignPauseReason = 'failure_rate' | 'block_rate' | 'opt_out_rate' | 'negative_reply_rate' | 'number_unhealthy';

/** `campaign.paused`: the safety autopilot paused the campaign (docs/campaigns.md, "Safety autopilot"). */
export interface CampaignPausedPayload {
  readonly campaign_id: string;
  readonly name: string;
  readonly reason: CampaignPauseReason;
  /** Whether the campaign's own sends tripped the rule, or one of its numbers' (`instance_id`). */
  readonly scope: 'campaign' | 'number';
  readonly instance_id: string | null;
  /** What the window held when it tripped: `sends`, the count (`blocked`, `failed`, …), `rate`; `warming: 1` for a warming number. */
  readonly figures: Readonly<Record<string, number>>;
  /** The rule that tripped: `window_sends` or `window_minutes`, `min_sample`, `limit`, `max_count`. */
  readonly thresholds: Readonly<Record<string, number>>;
  readonly paused_at: string;
}

/** `advisory.published` (spec 6.1). */
export interface AdvisoryPayload {
  readonly advisory_id: string;
  readonly title: string;
  readonly impact: string;
  readonly action: string;
  readonly link: string;
  readonly published_at: string;
}

/** `call.received`: a call rings on the number; the caller is the envelope's sender. */
export interface CallReceivedPayload {
  /** The network's id of the call, to reject it (`POST /calls/{id}/reject`) or find it in `GET /calls`. */
  readonly call_id: string;
  /** The caller's jid (the phone's where known). */
  readonly from: string;
  readonly is_video: boolean;
  /** Told while the number was offline: the call is already over. */
  readonly offline: boolean;
}
