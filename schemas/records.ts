// Generated from schemas/**/*.avsc by `npm run schemas:generate`. Do not edit.
import type { AccountId, ConnectionId, EventId, InstanceId, MessageId, PartnerId, ProjectId, WebhookId } from './ids.js';

/** Current state of one entry of an account's audience lists: a suppressed or blocklisted phone, a contact group, or a group's member (compacted, kept for ever; key = entity_id; a null value removes the entry). Each record is the full state. */
export interface AudienceRecord {
  /** Unique id of this record. */
  readonly event_id: EventId;
  /** When the entry was written. */
  readonly occurred_at: number;
  /** Owning account: audience lists are account-wide. */
  readonly account_id: AccountId;
  /** Always null: audience lists are account-wide. */
  readonly project_id: null | ProjectId;
  /** Always null: audience lists are account-wide. */
  readonly instance_id: null | InstanceId;
  /** The record key. A listed phone is sup_ or blk_ and a hash of account and phone (adding it again replaces it); a group is grp_; a member is the group id, a colon and the contact id. Unique across kinds, since a tombstone carries only the key. */
  readonly entity_id: string;
  /** The entry; the branch kind says which. */
  readonly entity: ListedPhone | ContactGroup | GroupMember;
}

/** A named group of the account's contacts; its members are GroupMember entries. */
export interface ContactGroup {
  readonly kind: 'contact_group';
  /** Group name (1 to 100 characters). */
  readonly name: string;
  /** When the group was created. */
  readonly created_at: number;
}

/** A contact in a contact group. */
export interface GroupMember {
  readonly kind: 'group_member';
  /** The group. */
  readonly group_id: string;
  /** The contact. */
  readonly contact_id: string;
  /** When the contact was added. */
  readonly added_at: number;
}

/** A phone on the account's suppression list (no sends but OTPs and deletions) or blocklist (no sends but deletions). */
export interface ListedPhone {
  readonly kind: 'listed_phone';
  /** Which list. */
  readonly list: PhoneListName;
  /** E.164 phone. */
  readonly phone: string;
  /** Why it is listed, as the caller wrote it (up to 200 characters). */
  readonly reason: null | string;
  /** When the phone was listed. */
  readonly created_at: number;
}

/** The account's phone lists. */
export const PhoneListNameValues = ['suppressions', 'blocklist'] as const;
export type PhoneListName = (typeof PhoneListNameValues)[number];

/** Who did a sensitive action, when and from where: rotations, deactivations, revocations, disconnects, key and people changes, numbers unlinked or removed. Written by the API once the action itself is on the log, before it answers. */
export interface AuditRecord {
  /** aud_ id of the entry. */
  readonly event_id: EventId;
  /** When the action was accepted. */
  readonly occurred_at: number;
  /** Account acted on; null for the platform's own actions (partners). */
  readonly account_id: null | AccountId;
  /** What was done, as resource.verb: partner.secret_rotated, partner.webhook_secret_rotated, partner.deactivated, partner.activated, partner.changed, key.created, key.rotated, key.revoked, connection.disconnected, user.added, user.removed, number.renamed, number.unlinked, number.removed. */
  readonly action: string;
  /** Id of what was acted on (ptn_, key_, conn_, usr_, inst_). */
  readonly target_id: string;
  /** api_key, panel_user or platform_admin. */
  readonly actor_kind: string;
  /** Key id, or the e-mail of the panel user or platform administrator. */
  readonly actor_id: string;
  /** Address the request came from, as the API saw it (X-Forwarded-For only behind a trusted proxy). */
  readonly ip: string;
  /** User-Agent of the request, first 200 characters. */
  readonly user_agent: null | string;
}

/** A call fact seen by a number (Baileys call event); source of the call log and of call.received (on offer). */
export interface CallEvent {
  /** Unique id; the public evt_ id of call.received on an offer. */
  readonly event_id: EventId;
  /** When the network says it happened. */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project the record belongs to. */
  readonly project_id: ProjectId;
  /** Number called. */
  readonly instance_id: InstanceId;
  /** The network's id of the call, the same on every fact of one call. */
  readonly call_id: string;
  /** What happened. */
  readonly status: CallStatus;
  /** Who calls, lid resolved where the number knows the phone. */
  readonly caller: Sender;
  /** A video call. */
  readonly is_video: boolean;
  /** The group of a group call. */
  readonly group_jid: null | string;
  /** Told while the number was offline (the call is over). */
  readonly offline: boolean;
  /** A reject made through the API (the number rejected it), not by the caller or another device. */
  readonly by_us: boolean;
}

/** Where a call is (Baileys WACallUpdateType, less the transport steps): offer (it rings here), ringing (at the caller), timeout (nobody answered), reject, accept, terminate (ended). unknown: a status of a newer writer. */
export const CallStatusValues = ['unknown', 'offer', 'ringing', 'timeout', 'reject', 'accept', 'terminate'] as const;
export type CallStatus = (typeof CallStatusValues)[number];

/** One recipient of a campaign, resolved from its audience at creation. */
export interface CampaignRecipient {
  /** The recipient's jid. */
  readonly to: string;
  /** E.164 phone, for the opt-out, suppression and blocklist checks. */
  readonly phone: string;
  /** The contact it came from, if any. */
  readonly contact_id: null | string;
  /** The recipient's own IANA zone for the sending hours; null: the campaign's. */
  readonly time_zone: null | string;
  /** Values of the message's placeholders. */
  readonly variables: Readonly<Record<string, string>>;
}

/** One chunk of a campaign's recipients (compacted, kept for ever; key = campaign_id:chunk). Written once at creation; recipient n of the campaign is entry n - first_index of the chunk holding it. */
export interface CampaignRecipients {
  /** Unique id of this record. */
  readonly event_id: EventId;
  /** When the chunk was written. */
  readonly occurred_at: number;
  /** Owning account. */
  readonly account_id: AccountId;
  /** The campaign. */
  readonly campaign_id: string;
  /** Chunk number. */
  readonly chunk: number;
  /** Campaign-wide index of the first recipient of the chunk. */
  readonly first_index: number;
  /** The recipients, in index order. */
  readonly recipients: ReadonlyArray<CampaignRecipient>;
}

/** Full latest state of one campaign (compacted, kept for ever; key = campaign_id). Written by the campaign commands (create, edit, image, start, pause, resume, cancel) and by the runner (finished, paused by the watch). */
export interface CampaignState {
  /** Unique id of this record. */
  readonly event_id: EventId;
  /** When this state was written. */
  readonly occurred_at: number;
  /** Owning account. */
  readonly account_id: AccountId;
  /** Owning project: its numbers send the campaign. */
  readonly project_id: ProjectId;
  /** cmp_ id; the record key. */
  readonly campaign_id: string;
  /** The caller's name for it. */
  readonly name: string;
  /** draft, scheduled, running, paused, cancelled or finished. */
  readonly status: string;
  /** The send type (text, image, ...) as the send routes name it. */
  readonly message_type: string;
  /** The message as every send carries it, its media stored once; `{{name}}` placeholders in its texts are filled per recipient at send time. */
  readonly content: TextContent | ImageContent | VideoContent | DocumentContent | AudioContent | StickerContent | LocationContent | ContactContent | PollContent | ButtonsContent | ListContent;
  /** IANA zone of the sending hours for recipients without a time zone of their own. */
  readonly time_zone: string;
  /** No send before it; null: as soon as started. */
  readonly start_at: null | number;
  /** Daily sending window start, HH:MM in the recipient's zone; null: any time. */
  readonly hours_from: null | string;
  /** Daily sending window end (exclusive), HH:MM; before hours_from it wraps past midnight. */
  readonly hours_to: null | string;
  /** Numbers that send it; empty: the pool, or any sending number of the project. */
  readonly instance_ids: ReadonlyArray<string>;
  /** Pool whose numbers send it, when instance_ids is empty. */
  readonly pool_id: null | string;
  /** Recipients dispatched per minute at most. */
  readonly pace_per_minute: number;
  /** Valid recipients, written as chunks on gw.campaigns.recipients. */
  readonly recipients: number;
  /** Number of recipient chunks (indexes 0 to chunks - 1). */
  readonly chunks: number;
  /** Audience rows refused at creation (reported in the creation answer). */
  readonly invalid_rows: number;
  /** Why it is paused: `requested` by the caller, or the watch's reason. */
  readonly pause_reason: null | string;
  /** Creation time. */
  readonly created_at: number;
  /** First start. */
  readonly started_at: null | number;
  /** Latest pause, while paused. */
  readonly paused_at: null | number;
  /** When it was cancelled or finished. */
  readonly ended_at: null | number;
}

/** A group as shown on messages and events: {jid, name}. */
export interface GroupRef {
  /** Group jid (ends @g.us). */
  readonly jid: string;
  /** Group subject, when known. */
  readonly name: null | string;
}

/** A media file held by the gateway in its private store (S3 or local folder). No URL on purpose: URLs are pre-signed at read time (GET /media/{id}, spec 2.4 rules 1-2). */
export interface Media {
  /** UUID; the public media.id and the {id} of GET /media/{id}. */
  readonly id: string;
  /** MIME type of the stored bytes. */
  readonly mime_type: string;
  /** Original file name, when the network or caller gave one. */
  readonly filename: null | string;
  /** Size in bytes. */
  readonly size: number;
  /** Object key in the media store. */
  readonly storage_key: string;
  /** Hex SHA-256 of the stored bytes. */
  readonly sha256: string;
}

/** Where the connector takes the bytes of a media send: exactly one of url and media_ref is set. Base64 uploads are stored by the API first and referenced by media_ref; media bytes never travel on Kafka. */
export interface MediaSource {
  /** Caller URL; fetched by the connector with the 64 MiB cap and the private-address guard (spec 8.3). */
  readonly url: null | string;
  /** Object key in the gateway media store (S3 bucket or local folder) of an upload stored by the API. */
  readonly media_ref: null | string;
  /** Caller-given mimetype; sniffed from the bytes when absent. */
  readonly mime_type: null | string;
  /** File name shown to the recipient (documents). */
  readonly filename: null | string;
}

/** A person as the network identifies them (envelope `sender`, group participants). Lids are resolved to the phone by the connector where possible (spec 6.1). */
export interface Sender {
  /** Phone jid when known (lid resolved); the stable @lid value only when unresolved. */
  readonly jid: string;
  /** Privacy identifier (@lid) when the network gave one; kept after resolution for correlation. */
  readonly lid: null | string;
  /** Display (push) name, when known. */
  readonly name: null | string;
  /** E.164 phone when known; rendered only on partner-facing events (spec 2.4). */
  readonly phone: null | string;
}

/** Cached account. */
export interface Account {
  readonly kind: 'account';
  /** Account name. */
  readonly name: string;
  /** Owner e-mail. */
  readonly email: string;
  /** Language of error messages, e-mails and generated OTP text: pt, en, es, it, de or fr. */
  readonly locale: string;
  /** Plan code (e.g. free, pro); decides rate-limit ceiling and allowances. */
  readonly plan: string;
  /** ISO 3166 alpha-2 country in which the account's phones written in national format are read (imports, sends, checks); null: only international formats (with a plus) are understood. */
  readonly country: null | string;
}

/** The add-ons an account holds on top of its plan (GET/POST /me/addons), keyed addons:<account_id>; the whole set in each record. */
export interface AccountAddons {
  readonly kind: 'account_addons';
  /** Stored-media add-ons held; each adds the plan's media_storage_per_addon_bytes to the stored media allowance (spec 8.3: 1 GB per add-on). */
  readonly media_storage: number;
}

/** An advisory published to some accounts (gateway advisories publish), keyed by its adv_ id; kept for GET /advisories, while its advisory.published events keep gw.events' retention. */
export interface Advisory {
  readonly kind: 'advisory';
  /** The affected accounts, the only ones that see it. */
  readonly accounts: ReadonlyArray<string>;
  /** As in the advisory.published payload. */
  readonly title: string;
  /** What happens to integrations that do not act. */
  readonly impact: string;
  /** What the integration must do. */
  readonly action: string;
  /** Absolute http(s) URL with the details. */
  readonly link: string;
  /** When it was published (published_at of its events). */
  readonly published_at: number;
}

/** Cached API key of a project (the envelope project_id); looked up by key_hash on every request. */
export interface ApiKey {
  readonly kind: 'api_key';
  /** Hex SHA-256 of the full key (svc_live_...). */
  readonly key_hash: string;
  /** Leading characters shown in lists. */
  readonly prefix: string;
  /** Role (partner-issued keys: agent). */
  readonly role: string;
  /** Scopes (e.g. instances:read, messages:send). */
  readonly scopes: ReadonlyArray<string>;
  /** End of the rotation grace period of a rotated key; null while current. */
  readonly expires_at: null | number;
  /** When the key was revoked; it stops working at once. */
  readonly revoked_at: null | number;
  /** Partner connection the key was issued for; its status decides 402 connect_suspended / 401 connect_revoked. */
  readonly connection_id: null | ConnectionId;
}

/** The billing details of an account printed on its invoices (GET/PUT /billing), keyed billing:<account_id>; the whole set in each record. */
export interface BillingDetails {
  readonly kind: 'billing_details';
  /** Legal name printed on invoices; null: the account name. */
  readonly legal_name: null | string;
  /** Tax id (VAT, CNPJ, EIN...) as the customer writes it. */
  readonly tax_id: null | string;
  /** Where invoices are sent; null: the account e-mail. */
  readonly email: null | string;
  /** Street address. */
  readonly address_line1: null | string;
  /** Suite, floor... */
  readonly address_line2: null | string;
  /** City. */
  readonly city: null | string;
  /** State or region. */
  readonly state: null | string;
  /** Postal code. */
  readonly postal_code: null | string;
  /** ISO 3166 alpha-2, upper case. */
  readonly country: null | string;
}

/** The account's brand (GET/PUT /brand), keyed brand:<account_id>; the whole set in each record. */
export interface Brand {
  readonly kind: 'brand';
  /** Name shown instead of the account name. */
  readonly name: null | string;
  /** https URL of the logo. */
  readonly logo_url: null | string;
  /** #RRGGBB. */
  readonly primary_color: null | string;
  /** #RRGGBB. */
  readonly accent_color: null | string;
}

/** Current state of one hot-path entity for the in-memory caches of every process (compacted; key = entity_id; a null value deletes the entity). Each record is the full state. */
export interface ConfigRecord {
  /** Unique id of this record. */
  readonly event_id: EventId;
  /** When the entity changed. */
  readonly occurred_at: number;
  /** Owning account (the account itself for kind account); null for partner, partner_logo, platform_admin and advisory (which names its accounts). */
  readonly account_id: null | AccountId;
  /** Owning project for api_key, webhook, pool (the project itself for kind project); null otherwise. */
  readonly project_id: null | ProjectId;
  /** Always null for the current kinds; kept for the common envelope. */
  readonly instance_id: null | InstanceId;
  /** Id of the entity; the record key. Ids are unique across kinds, since a tombstone carries only the key. */
  readonly entity_id: string;
  /** The entity; the branch kind says which cache holds it. */
  readonly entity: Account | Project | ApiKey | Webhook | Pool | Partner | User | PlatformAdmin | PartnerLogo | Advisory | AccountAddons | BillingDetails | Brand | OfficialRequest | Widgets;
}

/** The account's request to be an official business sender (GET/POST /official), keyed official:<account_id>. */
export interface OfficialRequest {
  readonly kind: 'official_request';
  /** Legal or trading name to verify. */
  readonly business_name: string;
  /** https URL of the business. */
  readonly website: string;
  /** What the business does. */
  readonly description: null | string;
  /** pending (the only status the API writes; a review is an operator's). */
  readonly status: string;
  /** When it was last requested. */
  readonly requested_at: number;
}

/** Cached partner registration (spec 2.7). */
export interface Partner {
  readonly kind: 'partner';
  /** Short name. */
  readonly slug: string;
  /** Display name. */
  readonly name: string;
  /** Logo URL. */
  readonly logo_url: null | string;
  /** Normalised origins allowed for the component (exact match). */
  readonly allowed_origins: ReadonlyArray<string>;
  /** Partner webhook endpoint. */
  readonly webhook_url: null | string;
  /** Scopes given to issued customer keys. */
  readonly key_scopes: ReadonlyArray<string>;
  /** Hex SHA-256 of the partner secret (svc_partner_...). */
  readonly secret_hash: string;
  /** Partner webhook signing secret encrypted by the gateway (opaque). */
  readonly webhook_secret_ciphertext: null | string;
  /** False once deactivated: sessions stop opening and its keys answer 401 connect_revoked. */
  readonly active: boolean;
}

/** A partner's logo (spec 8.3), keyed logo:<partner id>. The bytes (up to 2 MB, above the 1 MB a Kafka record holds by default) are in the media store under storage_key; GET /partners/{id}/logo serves them from what this record says. */
export interface PartnerLogo {
  readonly kind: 'partner_logo';
  /** The partner whose logo this is. */
  readonly partner_id: PartnerId;
  /** image/png, image/jpeg, image/webp or image/svg+xml, as read from the bytes at upload. */
  readonly content_type: string;
  /** Hex SHA-256 of the bytes: the ETag, and the version in the partner's logo_url. */
  readonly sha256: string;
  /** Bytes. */
  readonly size: number;
  /** Where the media store holds the bytes. */
  readonly storage_key: string;
}

/** A platform administrator: registers partners (spec 2.7, 4.7). Authenticates to /platform/* with a bearer credential svc_platform_<secret>, stored only as its hash. */
export interface PlatformAdmin {
  readonly kind: 'platform_admin';
  /** E-mail, lower-cased. */
  readonly email: string;
  /** Hex SHA-256 of the credential (svc_platform_...). */
  readonly secret_hash: string;
  /** When the credential stopped working; null while it works. */
  readonly revoked_at: null | number;
}

/** Cached number pool of a project (the envelope project_id), used by number choice. */
export interface Pool {
  readonly kind: 'pool';
  /** Pool name. */
  readonly name: string;
  /** Numbers in the pool (authoritative membership). */
  readonly instance_ids: ReadonlyArray<string>;
}

/** Cached project; its account is the envelope account_id. */
export interface Project {
  readonly kind: 'project';
  /** Project name. */
  readonly name: string;
  /** Default project of the account (used by Connect). */
  readonly is_default: boolean;
}

/** A person of an account (the envelope account_id), known by e-mail; the role decides what they may do in the panels and the Connect component (only admins link an account to a partner or disconnect an app). */
export interface User {
  readonly kind: 'user';
  /** E-mail, lower-cased; unique within the account. */
  readonly email: string;
  /** admin or member. */
  readonly role: string;
  /** Display name. */
  readonly name: null | string;
}

/** Cached account webhook of a project (the envelope project_id). */
export interface Webhook {
  readonly kind: 'webhook';
  /** Endpoint URL. */
  readonly url: string;
  /** Event names listened to; empty means all. */
  readonly event_types: ReadonlyArray<string>;
  /** Signing secret encrypted by the gateway (opaque). */
  readonly secret_ciphertext: string;
  /** Deliveries on. */
  readonly enabled: boolean;
  /** What the webhook is for, as its owner wrote it. */
  readonly description: null | string;
  /** When the webhook was created; kept on every later record of it, since compaction keeps only the last one. Null on records written before this field. */
  readonly created_at: null | number;
}

/** The account's embeddable widgets (GET/PUT /me/widgets), keyed widgets:<account_id>; the whole set in each record. */
export interface Widgets {
  readonly kind: 'widgets';
  /** Whether the click-to-chat button is on. */
  readonly chat_button_enabled: boolean;
  /** The number the button opens a chat with. */
  readonly chat_button_instance_id: null | string;
  /** Text pre-filled in the visitor's message. */
  readonly chat_button_greeting: null | string;
  /** left or right, at the bottom of the page. */
  readonly chat_button_position: string;
  /** #RRGGBB; null: the brand's primary color. */
  readonly chat_button_color: null | string;
}

/** Status of a partner connection (spec 3.1). */
export const ConnectionStatusValues = ['pending_account', 'pending_payment', 'pending_number', 'active', 'suspended', 'revoked'] as const;
export type ConnectionStatus = (typeof ConnectionStatusValues)[number];

/** One transition of a partner connection (spec 3.1), written by the connections state machine; also the first record (from_status null) and data updates of the customer. Compacted with a log: the last record per connection is its current state, so it repeats the full connection data. Whether a new session on a revoked external_id reopens the same connection is left to the state machine (spec 3.1 rule 5). */
export interface ConnectionTransition {
  /** Public evt_ id of the connect.* event when the transition emits one; otherwise a unique id. */
  readonly event_id: EventId;
  /** When it happened. */
  readonly occurred_at: number;
  /** Linked account; null before linking and after revocation. */
  readonly account_id: null | AccountId;
  /** Linked project (the account default project); null before linking and after revocation. */
  readonly project_id: null | ProjectId;
  /** Number whose connection completed the flow (pending_number to active); null otherwise. */
  readonly instance_id: null | InstanceId;
  /** Connection id (UUID). */
  readonly connection_id: ConnectionId;
  /** Partner owning the connection. */
  readonly partner_id: PartnerId;
  /** Partner customer id (up to 200 characters). */
  readonly external_id: string;
  /** Status before; null on the first record. */
  readonly from_status: null | ConnectionStatus;
  /** Status after (current status). */
  readonly to_status: ConnectionStatus;
  /** Cause, free text (decided here): session_opened, account_linked, payment_confirmed, completed, sweep, plan_downgrade, key_call, partner_delete, customer_disconnect, account_deleted, project_deleted. */
  readonly trigger: string;
  /** Customer data. */
  readonly customer: Customer;
  /** Set when to_status is revoked. */
  readonly revoked_by: null | RevokedBy;
  /** When the connection was created. */
  readonly created_at: number;
  /** Last time it became active. */
  readonly activated_at: null | number;
  /** Last time it was suspended. */
  readonly suspended_at: null | number;
  /** When it was revoked. */
  readonly revoked_at: null | number;
}

/** Partner-supplied customer data of a connection (POST /partner/connect-sessions); frozen once the account is linked. */
export interface Customer {
  /** Customer name (name or company is required). */
  readonly name: null | string;
  /** E-mail; decides new versus existing account. */
  readonly email: string;
  /** Company; becomes the account and project name. */
  readonly company: null | string;
  /** E.164 phone; pre-fills the number step. */
  readonly phone: null | string;
  /** ISO 3166 alpha-2; sets the currency. */
  readonly country: null | string;
  /** BCP 47 tag; language of the component and e-mails. */
  readonly locale: null | string;
}

/** Who ended a connection (connect.revoked revoked_by). */
export const RevokedByValues = ['customer', 'partner', 'account_deleted', 'project_deleted'] as const;
export type RevokedBy = (typeof RevokedByValues)[number];

/** A change of the account-wide contact base; every record carries the contact current phone, name and tags. Only opted_out with source keyword:inbound becomes a public event (contact.opted_out); API opt-outs emit none (spec 6.1). */
export interface ContactEvent {
  /** Public evt_ id of contact.opted_out when the record becomes one; otherwise a unique id. */
  readonly event_id: EventId;
  /** When it happened. */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project of the number that received the opt-out keyword; null for account-level changes (API, import). */
  readonly project_id: null | ProjectId;
  /** Number that received the opt-out keyword; null otherwise. */
  readonly instance_id: null | InstanceId;
  /** What changed. */
  readonly kind: ContactEventKind;
  /** Contact id. */
  readonly contact_id: string;
  /** E.164 phone (import upserts by phone). */
  readonly phone: string;
  /** Contact name. */
  readonly name: null | string;
  /** Tag names. */
  readonly tags: ReadonlyArray<string>;
  /** Cause: api, import, keyword:inbound, ... */
  readonly source: string;
  /** The contact's IANA time zone (America/Sao_Paulo), which a campaign to contacts sends within the sending hours of; null when unknown (the campaign's zone applies). */
  readonly time_zone: null | string;
}

/** What changed in a contact. */
export const ContactEventKindValues = ['upserted', 'opted_out', 'opted_in'] as const;
export type ContactEventKind = (typeof ContactEventKindValues)[number];

/** The latest full state of one contact, written by the contacts processor after every change it applies (the contact base's changelog, compacted by contact id). A replay rebuilds every contact from it, however old, while gw.contacts and gw.messages.inbound keep their short retention. A null value deletes the contact. */
export interface ContactState {
  /** Id of the change that produced this state (the gw.contacts record, or the keyword opt-out). */
  readonly event_id: EventId;
  /** When the contact last changed. */
  readonly occurred_at: number;
  /** Account of the contact. */
  readonly account_id: AccountId;
  /** Always null: contacts are account-wide. */
  readonly project_id: null | ProjectId;
  /** Always null: contacts are account-wide. */
  readonly instance_id: null | InstanceId;
  /** Contact id (the record key). */
  readonly contact_id: string;
  /** E.164 phone. */
  readonly phone: string;
  /** Contact name. */
  readonly name: null | string;
  /** Tag names. */
  readonly tags: ReadonlyArray<string>;
  /** Whether the contact opted out. */
  readonly opted_out: boolean;
  /** When the contact opted out; null while opted in. */
  readonly opted_out_at: null | number;
  /** Cause of the opt-out (api, import, keyword:inbound); null while opted in. */
  readonly opt_out_source: null | string;
  /** Time of the last opt-out or opt-in applied; with opt_event_id, what orders opt changes from any topic. */
  readonly opt_changed_at: null | number;
  /** Id of the last opt change applied. */
  readonly opt_event_id: null | string;
  /** When the contact was first known. */
  readonly created_at: number;
  /** The contact's IANA time zone; null when unknown. */
  readonly time_zone: null | string;
}

/** The connection block of Connect partner webhooks (spec 2.5). */
export interface ConnectionRef {
  /** Connection id. */
  readonly id: string;
  /** Partner customer id. */
  readonly external_id: string;
  /** Linked account; null after revocation. */
  readonly account_id: null | AccountId;
  /** Linked project; null after revocation. */
  readonly project_id: null | ProjectId;
  /** Connection status. */
  readonly status: ConnectionStatus;
}

/** Who receives an event: project (project webhooks, partners connected to the project, streams), account (every account webhook; no instance_id), connection (only the partner owning the connection block: connect.*; decided here). */
export const EventScopeValues = ['project', 'account', 'connection'] as const;
export type EventScope = (typeof EventScopeValues)[number];

/** The public webhook envelope (spec 2.5): the only input of webhooks, partner webhooks and streams. Keyed by project id; account events (no project) are keyed by account id. The partner dispatcher adds the connection block of each connection on the project; connect.* events carry it already. */
export interface PublicEvent {
  /** Public event id (evt_...); receivers de-duplicate on it. */
  readonly event_id: EventId;
  /** Event time; rendered as the public `timestamp` (ISO 8601 UTC). */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project concerned; null on account events. connect.revoked keeps the project the connection had until revocation. */
  readonly project_id: null | ProjectId;
  /** Number concerned; null on account and connect events. */
  readonly instance_id: null | InstanceId;
  /** Event name (spec 6), e.g. message.received. */
  readonly event_type: string;
  /** Who receives it. */
  readonly scope: EventScope;
  /** Echo of the send client_reference, when present. */
  readonly client_reference: null | string;
  /** Group of group events and group messages. */
  readonly group: null | GroupRef;
  /** Sender; phone is rendered only for partners. */
  readonly sender: null | Sender;
  /** Mentioned jids. */
  readonly mentions: ReadonlyArray<string>;
  /** Event-specific body as JSON (public API output, never an OTP code or poll secret). */
  readonly payload_json: string;
  /** Connection block of connect.* events. */
  readonly connection: null | ConnectionRef;
  /** scheduled for real events; manual and test events go to account webhooks only, never to partners. */
  readonly trigger: DeliveryTrigger;
  /** Test events only: the one webhook to deliver to. */
  readonly webhook_id: null | WebhookId;
}

/** The number creates a group with these people (it becomes its super admin). */
export interface CreateGroup {
  readonly kind: 'create_group';
  /** The group name. */
  readonly subject: string;
  /** Phone jids or lids of the people to add. */
  readonly participants: ReadonlyArray<string>;
}

/** One group of the number: subject, description, participants. */
export interface GetGroup {
  readonly kind: 'group_metadata';
  /** Group jid (ends @g.us). */
  readonly group_jid: string;
}

/** The invite link of a group the number administers. */
export interface GetInviteCode {
  readonly kind: 'group_invite';
  /** Group jid (ends @g.us). */
  readonly group_jid: string;
}

/** A group fact seen by a number (Baileys groups.upsert, groups.update, group-participants.update); source of group.* events. */
export interface GroupEvent {
  /** Public evt_ id of the group.<kind> event. */
  readonly event_id: EventId;
  /** When it happened. */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project the record belongs to. */
  readonly project_id: ProjectId;
  /** Number (instance) concerned. */
  readonly instance_id: InstanceId;
  /** What happened. */
  readonly kind: GroupEventKind;
  /** The group (name after the change). */
  readonly group: GroupRef;
  /** Jid of who made the change, when known. */
  readonly author: null | string;
  /** Participants concerned (participant_* kinds). */
  readonly participants: ReadonlyArray<Sender>;
  /** New subject (subject_changed). */
  readonly subject: null | string;
  /** New description (description_changed). */
  readonly description: null | string;
}

/** What happened to a group; the public event is group.<kind>. joined/left concern the number itself (added, created, invited; removed, left). */
export const GroupEventKindValues = ['joined', 'left', 'participant_added', 'participant_removed', 'participant_promoted', 'participant_demoted', 'subject_changed', 'description_changed'] as const;
export type GroupEventKind = (typeof GroupEventKindValues)[number];

/** A group as the network describes it. */
export interface GroupInfo {
  readonly kind: 'group';
  /** Group jid (ends @g.us). */
  readonly jid: string;
  /** The group name. */
  readonly subject: string;
  /** The group description. */
  readonly description: null | string;
  /** Jid of its creator, when known. */
  readonly owner: null | string;
  /** When it was created, when known. */
  readonly created_at: null | number;
  /** Number of participants. */
  readonly size: number;
  /** Its participants (absent from a list asked without them). */
  readonly participants: ReadonlyArray<GroupParticipant>;
}

/** The invite link of a group. */
export interface GroupInvite {
  readonly kind: 'invite_link';
  /** The invite code. */
  readonly code: string;
  /** https://chat.whatsapp.com/<code>. */
  readonly link: string;
}

/** The groups a number takes part in. */
export interface GroupList {
  readonly kind: 'groups';
  /** Each group. */
  readonly groups: ReadonlyArray<GroupInfo>;
}

/** A participant of a group. */
export interface GroupParticipant {
  /** Phone jid, or the lid when the phone is unknown. */
  readonly jid: string;
  /** Lid of the participant, when known. */
  readonly lid: null | string;
  /** member, admin or superadmin. */
  readonly role: GroupRole;
}

/** A participant's role in a group. */
export const GroupRoleValues = ['member', 'admin', 'superadmin'] as const;
export type GroupRole = (typeof GroupRoleValues)[number];

/** The groups the number takes part in. */
export interface ListGroups {
  readonly kind: 'list_groups';
  /** Whether each group comes with its participants. */
  readonly with_participants: boolean;
}

/** What to do with participants of a group. */
export const ParticipantActionValues = ['add', 'remove', 'promote', 'demote'] as const;
export type ParticipantAction = (typeof ParticipantActionValues)[number];

/** What became of one participant of an update. */
export interface ParticipantResult {
  /** The participant as asked. */
  readonly jid: string;
  /** ok, or the reason the network gave (not_found, forbidden, conflict...). */
  readonly status: string;
}

/** The outcome of an update of participants, one result each. */
export interface ParticipantsUpdated {
  readonly kind: 'participants_updated';
  /** One per participant asked. */
  readonly results: ReadonlyArray<ParticipantResult>;
}

/** The number (an admin of the group) adds, removes, promotes or demotes participants. */
export interface UpdateParticipants {
  readonly kind: 'update_participants';
  /** Group jid (ends @g.us). */
  readonly group_jid: string;
  /** What to do with them. */
  readonly action: ParticipantAction;
  /** Phone jids or lids. */
  readonly participants: ReadonlyArray<string>;
}

/** An action asked of the session was carried out on the network. */
export interface ActionDone {
  readonly kind: 'action_done';
  /** What was done, for people; null when the action says it all. */
  readonly detail: null | string;
}

/** A change of one chat (Baileys chatModify). */
export const ChatActionValues = ['archive', 'unarchive', 'read', 'unread', 'pin', 'unpin'] as const;
export type ChatAction = (typeof ChatActionValues)[number];

/** A label of a business account. */
export interface ChatLabel {
  /** The network's id of the label. */
  readonly id: string;
  /** Its name. */
  readonly name: string;
  /** The network's color index (0-19). */
  readonly color: number;
  /** The chats it is on. */
  readonly chat_jids: ReadonlyArray<string>;
}

/** The answer to ListChats. */
export interface ChatList {
  readonly kind: 'chats';
  /** Most recent first. */
  readonly chats: ReadonlyArray<ChatSummary>;
}

/** One chat of a number as the network shows it. */
export interface ChatSummary {
  /** The chat's jid (a person's phone jid, a lid, or a group). */
  readonly jid: string;
  /** The chat's name (group subject, contact name), when known. */
  readonly name: null | string;
  /** Messages not read; -1 when marked unread by hand. */
  readonly unread_count: number;
  /** Archived. */
  readonly archived: boolean;
  /** Pinned to the top. */
  readonly pinned: boolean;
  /** When the last message of the chat was sent or received. */
  readonly last_message_at: null | number;
  /** Labels on the chat (business accounts). */
  readonly label_ids: ReadonlyArray<string>;
}

/** Whether phones (E.164) or lids are on the messaging network, asked of the network through the number. */
export interface CheckPhones {
  readonly kind: 'check_phones';
  /** E.164 phones or lid identities, as the caller gave them. */
  readonly phones: ReadonlyArray<string>;
}

/** Which connector implementation runs a number. */
export const ConnectorKindValues = ['sandbox', 'baileys'] as const;
export type ConnectorKind = (typeof ConnectorKindValues)[number];

/** The answer to ReadPresence. */
export interface ContactPresence {
  readonly kind: 'contact_presence';
  /** The contact asked. */
  readonly jid: string;
  /** The last presence heard; unknown when none yet (a contact may hide it). */
  readonly presence: Presence;
  /** When the contact was last online, when the network says. */
  readonly last_seen: null | number;
  /** When the number heard this presence. */
  readonly heard_at: null | number;
}

/** Unlinks the number from the network (a logout from this device): its auth state is deleted and it must be paired again. */
export interface DisconnectNumber {
  readonly kind: 'disconnect';
  /** Why, for the status record (e.g. disconnected from the component). */
  readonly reason: null | string;
}

/** Current state of a number (compacted: the last record per instance wins, so every record carries the full state). A change of status into one with an event gives instance.<status> and the stream instance.status. */
export interface InstanceState {
  /** Public evt_ id of instance.<status> when the status changed into one with an event; otherwise a unique id of the record. */
  readonly event_id: EventId;
  /** When it happened. */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project the record belongs to. */
  readonly project_id: ProjectId;
  /** Number (instance) concerned. */
  readonly instance_id: InstanceId;
  /** E.164 phone; null until the first pairing. */
  readonly phone: null | string;
  /** Label. */
  readonly nickname: null | string;
  /** Current status. */
  readonly status: InstanceStatus;
  /** Status before this change; null when the status did not change. */
  readonly previous_status: null | InstanceStatus;
  /** Why the status changed (e.g. the network disconnect reason). */
  readonly reason: null | string;
  /** Health indicator 0-100 (100 healthy). */
  readonly health_score: number;
  /** Pools holding the number (a copy; the pool records in gw.config are authoritative). */
  readonly pool_ids: ReadonlyArray<string>;
  /** Connector running the number. */
  readonly connector: ConnectorKind;
  /** The number was removed: the connector closes its session and drops its auth state. */
  readonly deleted: boolean;
}

/** Connection status of a number. Transitions are decided by the connector (spec 3.3 gives none); connected, warming, disconnected, logged_out and banned have instance.* events. */
export const InstanceStatusValues = ['pending', 'connecting', 'connected', 'warming', 'disconnected', 'logged_out', 'banned'] as const;
export type InstanceStatus = (typeof InstanceStatusValues)[number];

/** Puts a label on a chat, or takes it off (Baileys addChatLabel, removeChatLabel). */
export interface LabelChat {
  readonly kind: 'label_chat';
  /** The chat. */
  readonly chat_jid: string;
  /** The label. */
  readonly label_id: string;
  /** True puts it on, false takes it off. */
  readonly add: boolean;
}

/** The answer to ListLabels. */
export interface LabelList {
  readonly kind: 'labels';
  /** The labels not deleted. */
  readonly labels: ReadonlyArray<ChatLabel>;
}

/** The chats the number knows, most recent first. */
export interface ListChats {
  readonly kind: 'list_chats';
  /** At most this many. */
  readonly limit: number;
}

/** The labels of the number (business accounts only). */
export interface ListLabels {
  readonly kind: 'list_labels';
  /** Whether each label lists the chats it is on. */
  readonly with_chats: boolean;
}

/** Archives, marks read or unread, or pins a chat of the number. */
export interface ModifyChat {
  readonly kind: 'modify_chat';
  /** The chat. */
  readonly chat_jid: string;
  /** What to change. */
  readonly action: ChatAction;
}

/** A command to the session of one real-network number (connector baileys), written by the API and applied by the connector worker that owns instance_id; sandbox numbers take theirs on gw.sandbox.commands. Never a public event. */
export interface NumberCommand {
  /** Unique id of this command. */
  readonly event_id: EventId;
  /** When the API accepted the command. */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project the record belongs to. */
  readonly project_id: ProjectId;
  /** Number the command applies to. */
  readonly instance_id: InstanceId;
  /** What to do; the branch kind names it. */
  readonly command: PairNumber | DisconnectNumber;
}

/** A question or an action for the live session of one number (any connector), written by the API and answered by the connector worker that owns instance_id with a NumberReply of the same request_id. Never a public event; kept briefly: an asker waits seconds, not days. */
export interface NumberQuery {
  /** Unique id of this record. */
  readonly event_id: EventId;
  /** When it was written. */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project the record belongs to. */
  readonly project_id: ProjectId;
  /** Number asked. */
  readonly instance_id: InstanceId;
  /** The asker's id of the question, echoed on its answer (gw.numbers.replies). */
  readonly request_id: string;
  /** When the asker stops waiting; a query read after it is not carried out. */
  readonly expires_at: number;
  /** What is asked; the branch kind names it. */
  readonly query: CheckPhones | SetPresence | ReadPresence | RejectCall | ListChats | ModifyChat | ListLabels | LabelChat | ListGroups | GetGroup | CreateGroup | UpdateParticipants | GetInviteCode;
}

/** The answer of a number's session to a NumberQuery, by request_id; read by the API process that asked. */
export interface NumberReply {
  /** Unique id of this record. */
  readonly event_id: EventId;
  /** When it was written. */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project the record belongs to. */
  readonly project_id: ProjectId;
  /** Number asked. */
  readonly instance_id: InstanceId;
  /** The request_id of the query answered. */
  readonly request_id: string;
  /** The answer; the branch kind names it. */
  readonly answer: QueryFailed | PhoneChecks | ActionDone | ContactPresence | ChatList | LabelList | GroupList | GroupInfo | ParticipantsUpdated | GroupInvite;
}

/** A QR or pairing code to show while a number pairs. Stream only (GET /stream, GET /connect/stream); never a webhook, never forwarded to partners (spec 6.1 rule 2). */
export interface PairingChallenge {
  /** Unique id of the challenge (also the SSE event id source). */
  readonly event_id: EventId;
  /** When it happened. */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project the record belongs to. */
  readonly project_id: ProjectId;
  /** Number (instance) concerned. */
  readonly instance_id: InstanceId;
  /** qr_code or pairing_code on the stream. */
  readonly method: PairingMethod;
  /** QR payload string, or the pairing code to type on the phone. */
  readonly value: string;
  /** When the value stops working. */
  readonly expires_at: number;
}

/** How a number pairs: QR code or pairing code. */
export const PairingMethodValues = ['qr', 'code'] as const;
export type PairingMethod = (typeof PairingMethodValues)[number];

/** Starts pairing: the session connects and publishes each QR, or one pairing code, on gw.instances.pairing. */
export interface PairNumber {
  readonly kind: 'pair';
  /** QR code or pairing code. */
  readonly method: PairingMethod;
  /** E.164 phone of the number; the pairing-code method needs it. */
  readonly phone: null | string;
}

/** Whether one phone or lid is on the network. */
export interface PhoneCheck {
  /** The phone or lid as asked. */
  readonly phone: string;
  /** True when the network knows it. */
  readonly on_network: boolean;
  /** The jid to message it by, when on the network. */
  readonly jid: null | string;
  /** Its lid, when the network gave one. */
  readonly lid: null | string;
}

/** The answer to CheckPhones, one result per phone asked, in the order asked. */
export interface PhoneChecks {
  readonly kind: 'phone_checks';
  /** One per phone asked. */
  readonly results: ReadonlyArray<PhoneCheck>;
}

/** A presence on the network (Baileys WAPresence): available and unavailable are a number's online state, composing, recording and paused what it shows in one chat. unknown: nothing heard yet. */
export const PresenceValues = ['unknown', 'available', 'unavailable', 'composing', 'recording', 'paused'] as const;
export type Presence = (typeof PresenceValues)[number];

/** The session could not answer. */
export interface QueryFailed {
  readonly kind: 'failed';
  /** An error code of the API's catalogue: not_connected, not_supported, invalid_request, service_unavailable. */
  readonly error_code: string;
  /** What happened, for people. */
  readonly error_reason: string;
}

/** The last presence the number heard of a contact; subscribes to it on the network. */
export interface ReadPresence {
  readonly kind: 'read_presence';
  /** The contact's jid. */
  readonly jid: string;
}

/** Rejects a call ringing on the number (Baileys rejectCall). A reply text goes as an ordinary send. */
export interface RejectCall {
  readonly kind: 'reject_call';
  /** The network's id of the call. */
  readonly call_id: string;
  /** Who calls (the jid the call came from, a lid possibly). */
  readonly caller_jid: string;
}

/** Shows a presence: online or offline for the number (chat_jid null), typing, recording or paused in one chat. */
export interface SetPresence {
  readonly kind: 'set_presence';
  /** What to show; never unknown. */
  readonly presence: Presence;
  /** The chat shown the typing state; null for the number's online state. */
  readonly chat_jid: null | string;
}

/** Audio send; no caption (spec 4.2). */
export interface AudioContent {
  readonly kind: 'audio';
  /** Where the bytes come from. */
  readonly media: MediaSource;
  /** True sends a voice note. */
  readonly ptt: boolean;
  /** Length of a voice note in whole seconds, measured when the API converted it to Opus; null on other audio (and on voice notes written before conversion existed). */
  readonly seconds: null | number;
  /** A voice note's 64 loudness bars (0-100) as the network's apps draw them, computed with its duration; null on other audio. */
  readonly waveform: null | Buffer;
}

/** One button of a buttons send. */
export interface Button {
  /** Caller id of the button. */
  readonly id: string;
  /** Button label. */
  readonly title: string;
}

/** Buttons send. For non-official senders the connector sends an equivalent numbered text menu (spec 4.2). */
export interface ButtonsContent {
  readonly kind: 'buttons';
  /** Text above the buttons. */
  readonly body: string;
  /** Buttons, in order. */
  readonly buttons: ReadonlyArray<Button>;
}

/** A contact card (send and receive); the public `body` of a received contact is contact_name. */
export interface ContactContent {
  readonly kind: 'contact';
  /** Displayed name. */
  readonly contact_name: string;
  /** vCard text. On sends the API generates a simple one from name and phone when the caller gave none; a received contact array is kept as the vCards concatenated (decided here). */
  readonly contact_vcard: string;
}

/** A message deleted for everyone (send and receive; the network calls it a revoke). Sent: the number deletes its own message. Received: the author deleted it (public event message.deleted); on inbound records the envelope quoted_id repeats the deleted message. */
export interface DeleteContent {
  readonly kind: 'delete';
  /** wa_message_id of the message deleted. */
  readonly quoted_message_id: string;
}

/** Document send; the file name is media.filename. */
export interface DocumentContent {
  readonly kind: 'document';
  /** Where the bytes come from. */
  readonly media: MediaSource;
  /** Caption (public `body`). */
  readonly caption: null | string;
}

/** An edit of an earlier text or caption (send and receive). Sent: the number's own message gets the new text. Received: the author edited it (public event message.edited); on inbound records the envelope quoted_id repeats the edited message. */
export interface EditContent {
  readonly kind: 'edit';
  /** wa_message_id of the message edited. */
  readonly quoted_message_id: string;
  /** The new text (or caption). */
  readonly body: string;
}

/** Image send. */
export interface ImageContent {
  readonly kind: 'image';
  /** Where the bytes come from. */
  readonly media: MediaSource;
  /** Caption (public `body`). */
  readonly caption: null | string;
}

/** Received audio. */
export interface InboundAudioContent {
  readonly kind: 'audio';
  /** Stored media; null when the download failed (the message is still delivered). */
  readonly media: null | Media;
  /** True for a voice note. */
  readonly ptt: boolean;
}

/** Received document; the file name is media.filename. */
export interface InboundDocumentContent {
  readonly kind: 'document';
  /** Stored media; null when the download failed (the message is still delivered). */
  readonly media: null | Media;
  /** Caption (public `body`). */
  readonly caption: null | string;
}

/** Received image. */
export interface InboundImageContent {
  readonly kind: 'image';
  /** Stored media; null when the download failed (the message is still delivered). */
  readonly media: null | Media;
  /** Caption (public `body`). */
  readonly caption: null | string;
}

/** A message received by a number, or sent by its owner from the phone or another linked device (origin external; the connector drops echoes of its own sends, so OTP codes never appear). Includes reactions and poll votes. Source of message.received, message.sent with origin external, the inbox and conversations. */
export interface InboundMessage {
  /** Public evt_ id of message.received / message.sent; derived from (instance_id, wa_message_id), so a message the network delivers twice gives the same id. */
  readonly event_id: EventId;
  /** Message time given by the network. */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project the record belongs to. */
  readonly project_id: ProjectId;
  /** Number that received (or whose owner sent) the message. */
  readonly instance_id: InstanceId;
  /** customer or external. */
  readonly origin: InboundOrigin;
  /** Our id of the message (inbox, history). */
  readonly message_id: MessageId;
  /** Network id of the message. */
  readonly wa_message_id: string;
  /** Conversation: the customer phone jid (the @lid only when unresolved) or the group jid; one conversation per phone across the project numbers. */
  readonly chat_jid: string;
  /** Author: the customer, or the number itself for origin external. */
  readonly sender: Sender;
  /** Public `from`: the chat jid for origin customer; the number's own phone jid for origin external. */
  readonly from: string;
  /** Origin external only: the chat jid the owner wrote to. */
  readonly to: null | string;
  /** wa_message_id of the quoted message (reply) or of the reacted message (reaction); the network id, since the quoted message need not be ours (decided here). */
  readonly quoted_id: null | string;
  /** Jid of the author of the quoted message. */
  readonly quoted_participant: null | string;
  /** Group of a group message. */
  readonly group: null | GroupRef;
  /** Mentioned jids. */
  readonly mentions: ReadonlyArray<string>;
  /** What was received; the branch kind is the public payload.type. */
  readonly content: TextContent | InboundImageContent | InboundVideoContent | InboundAudioContent | InboundDocumentContent | InboundStickerContent | LocationContent | ContactContent | ReactionContent | PollContent | PollVoteContent | ViewOnceContent | EditContent | DeleteContent;
}

/** Who wrote an inbound record: `customer` (received, message.received) or `external` (the number's owner from the phone or another linked device, message.sent with origin external). */
export const InboundOriginValues = ['customer', 'external'] as const;
export type InboundOrigin = (typeof InboundOriginValues)[number];

/** Received sticker. */
export interface InboundStickerContent {
  readonly kind: 'sticker';
  /** Stored media; null when the download failed (the message is still delivered). */
  readonly media: null | Media;
}

/** Received video. */
export interface InboundVideoContent {
  readonly kind: 'video';
  /** Stored media; null when the download failed (the message is still delivered). */
  readonly media: null | Media;
  /** Caption (public `body`). */
  readonly caption: null | string;
}

/** List send. Item shape decided here (spec 4.2 leaves it open): sections of rows {id, title, description}. Sent as a numbered text menu for non-official senders. */
export interface ListContent {
  readonly kind: 'list';
  /** Text above the list. */
  readonly body: string;
  /** Sections, in order. */
  readonly sections: ReadonlyArray<ListSection>;
}

/** One selectable row of a list send. */
export interface ListRow {
  /** Caller id of the row. */
  readonly id: string;
  /** Row label. */
  readonly title: string;
  /** Secondary text. */
  readonly description: null | string;
}

/** A titled group of rows of a list send. */
export interface ListSection {
  /** Section heading. */
  readonly title: null | string;
  /** Rows, in order. */
  readonly rows: ReadonlyArray<ListRow>;
}

/** A location (send and receive); the public `body` of a received location is name. */
export interface LocationContent {
  readonly kind: 'location';
  /** Latitude in degrees. */
  readonly latitude: number;
  /** Longitude in degrees. */
  readonly longitude: number;
  /** Place name. */
  readonly name: null | string;
  /** Address text. */
  readonly address: null | string;
}

/** An edit or deletion this message made to an earlier one: a row of the conversations projection's message_changes table (change_id is the enclosing message id). */
export interface MessageChangeState {
  /** Network id of the message changed. */
  readonly target_wa_id: string;
  /** edit or delete. */
  readonly change_kind: string;
  /** The new text of an edit; null for a deletion. */
  readonly body: null | string;
  /** When the change was made. */
  readonly occurred_at: number;
}

/** A row of the conversations projection's messages table, column for column (ids are in the enclosing MessageState). type is null on a row only status facts have made so far. */
export interface MessageRowState {
  /** The conversation: the customer's phone jid (a lid while unresolved) or the group jid. */
  readonly jid: string;
  /** in or out. */
  readonly direction: string;
  /** customer or external (received records), api or campaign (our sends). */
  readonly origin: null | string;
  /** Public message type; null until the send or the received record itself is applied. */
  readonly type: null | string;
  /** Text, caption or preview. */
  readonly body: null | string;
  /** Media id. */
  readonly media_id: null | string;
  /** Media MIME type. */
  readonly media_mime_type: null | string;
  /** Document file name. */
  readonly media_filename: null | string;
  /** Media size in bytes. */
  readonly media_size: null | number;
  /** Location latitude. */
  readonly latitude: null | number;
  /** Location longitude. */
  readonly longitude: null | number;
  /** Poll question. */
  readonly poll_name: null | string;
  /** Poll options; null on other messages. */
  readonly poll_options: null | ReadonlyArray<string>;
  /** The poll a vote is for. */
  readonly vote_poll_message_id: null | string;
  /** Options a vote selected; null on other messages. */
  readonly vote_selected: null | ReadonlyArray<string>;
  /** OTP code, masked. */
  readonly code_masked: null | string;
  /** When the message was sent or received. */
  readonly occurred_at: number;
  /** Network message id. */
  readonly wa_message_id: null | string;
  /** Message quoted or reacted to. */
  readonly quoted_id: null | string;
  /** Sender of the quoted message. */
  readonly quoted_participant: null | string;
  /** Sender jid. */
  readonly sender_jid: null | string;
  /** Sender lid. */
  readonly sender_lid: null | string;
  /** Sender push name. */
  readonly sender_name: null | string;
  /** From jid. */
  readonly from_jid: null | string;
  /** To jid. */
  readonly to_jid: null | string;
  /** Group jid. */
  readonly group_jid: null | string;
  /** Group subject. */
  readonly group_name: null | string;
  /** The conversation's name as this message shows it. */
  readonly chat_name: null | string;
  /** Mentioned jids. */
  readonly mentions: ReadonlyArray<string>;
  /** Latest status of our send (queued, sent, delivered, read, failed). */
  readonly status: null | string;
  /** When the API accepted the send. */
  readonly queued_at: null | number;
  /** When the send was first sent. */
  readonly sent_at: null | number;
  /** When the send was first delivered. */
  readonly delivered_at: null | number;
  /** When the send was first read. */
  readonly read_at: null | number;
  /** When the send failed. */
  readonly failed_at: null | number;
  /** Why the send failed. */
  readonly error_code: null | string;
  /** The client's reference of the send. */
  readonly client_reference: null | string;
}

/** The latest full state of one message as the conversation history keeps it, written by the conversations processor after every batch that changed it (the history's changelog, compacted by message id). A replay rebuilds the history from it, however old, while gw.commands.send, gw.messages.status and gw.messages.inbound keep their short retention. A null value deletes the message. */
export interface MessageState {
  /** A unique id of this state record. */
  readonly event_id: EventId;
  /** When the message last changed (its latest time known). */
  readonly occurred_at: number;
  /** Account of the message; null on the state of a received edit or deletion, which has no row of its own. */
  readonly account_id: null | AccountId;
  /** Project of the message. */
  readonly project_id: ProjectId;
  /** Number that sent or received the message. */
  readonly instance_id: InstanceId;
  /** Gateway message id (the record key). */
  readonly message_id: MessageId;
  /** The message's row; null when the message is only an edit or deletion received. */
  readonly message: null | MessageRowState;
  /** The edit or deletion the message is; null for any other message. */
  readonly change: null | MessageChangeState;
  /** Why the message failed, as its failed status fact said (the error_code is on its row); null when it has not failed or no reason was given. */
  readonly error_reason: null | string;
  /** The campaign of a send of origin campaign, as its SendCommand said; null for any other message, and on states written before the field existed. */
  readonly campaign_id: null | string;
}

/** A status fact about one of our sends, written by the connector; source of message.sent/delivered/read/failed. Decided here (spec 3.3 is silent): a message is `queued` until its first fact, then moves only forward sent < delivered < read; a late lower status is kept on the log but does not move the projection back; failed is final. */
export interface MessageStatus {
  /** Public evt_ id of the message.<status> event; derived from (message_id, status), so a repeated receipt gives the same id. */
  readonly event_id: EventId;
  /** When it happened. */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project the record belongs to. */
  readonly project_id: ProjectId;
  /** Number (instance) concerned. */
  readonly instance_id: InstanceId;
  /** Our message id. */
  readonly message_id: MessageId;
  /** Network id; null when the send failed before the network took it. For an OTP, the id of the code bubble. */
  readonly wa_message_id: null | string;
  /** Echo of the send client_reference, copied by the connector so events need no lookup. */
  readonly client_reference: null | string;
  /** Campaign of the send (origin campaign), copied by the connector from its SendCommand so events and analytics say which; null for other sends. */
  readonly campaign_id: null | string;
  /** Recipient jid. */
  readonly to: string;
  /** The fact. */
  readonly status: SendStatus;
  /** On failed: neutral code from spec 7 (e.g. not_connected, media_too_large, not_supported). */
  readonly error_code: null | string;
  /** On failed: technical detail for operators, not translated. */
  readonly error_reason: null | string;
}

/** One-time code send: the connector sends body, then a bubble holding only the code; counts as 1 send. The code is never in clear on the log and never reaches inbox, conversations or events. */
export interface OtpContent {
  readonly kind: 'otp';
  /** Masked code, last digits visible (e.g. ••••12); the only form shown anywhere. */
  readonly code_masked: string;
  /** The code encrypted by the gateway (opaque); decrypted only by the connector to send it. */
  readonly code_ciphertext: string;
  /** Validity mentioned in the text only. */
  readonly expiry_minutes: null | number;
  /** Context text: the caller's, or generated in the account language with random variations. */
  readonly body: string;
}

/** A poll (send and receive; received polls include those the owner creates on the phone). */
export interface PollContent {
  readonly kind: 'poll';
  /** Question (public `body` and poll.name). */
  readonly name: string;
  /** Option names, in order. */
  readonly options: ReadonlyArray<string>;
  /** How many options a voter may pick; 0 means any number (network convention). */
  readonly selectable_count: number;
  /** Poll encryption secret, kept so votes can be decrypted (generated by the gateway on sends; taken from the message on receipt). Never part of a public payload. */
  readonly message_secret: null | Buffer;
}

/** A decrypted poll vote (receive only). A voter's new vote replaces the earlier one; an empty selection withdraws it. The public `body` is derived from selected by the projection. */
export interface PollVoteContent {
  readonly kind: 'poll_vote';
  /** wa_message_id of the poll. */
  readonly poll_message_id: string;
  /** Chosen option names, resolved from the network's hashes against the poll options. */
  readonly selected: ReadonlyArray<string>;
}

/** A reaction (send and receive). On inbound records the envelope quoted_id repeats the reacted message. */
export interface ReactionContent {
  readonly kind: 'reaction';
  /** wa_message_id of the message reacted to. */
  readonly quoted_message_id: string;
  /** The emoji (public `body`); empty string removes an earlier reaction. */
  readonly emoji: string;
}

/** A send after number choice, written by the API or the campaign runner and executed by the connector owning instance_id. The connector executes each message_id once (it keeps the ids it has executed). Not a public event. */
export interface SendCommand {
  /** Unique id of this command record (not public; de-duplicate sends on message_id). */
  readonly event_id: EventId;
  /** When the send was accepted. */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project the record belongs to. */
  readonly project_id: ProjectId;
  /** Number chosen (forced by the caller or picked from the pool). */
  readonly instance_id: InstanceId;
  /** Id returned by the API; derived from (account, idempotency key) for idempotent sends. */
  readonly message_id: MessageId;
  /** Caller echo value; not a uniqueness key. */
  readonly client_reference: null | string;
  /** Recipient jid (the phone jid of the E.164 `to`). */
  readonly to: string;
  /** What produced the send. */
  readonly origin: SendOrigin;
  /** Campaign of the send when origin is campaign. */
  readonly campaign_id: null | string;
  /** Hex SHA-256 of the Idempotency-Key header, when given. */
  readonly idempotency_key_hash: null | string;
  /** What to send; the branch kind is the send type. */
  readonly content: TextContent | ImageContent | VideoContent | DocumentContent | AudioContent | StickerContent | LocationContent | ContactContent | ReactionContent | PollContent | ButtonsContent | ListContent | OtpContent | EditContent | DeleteContent;
  /** When the API gave up waiting for the log to take this command and answered 503. A command the log took after this instant (its log-append time, the topic keeps append times) is never executed, projected or counted: a refused send never goes out. Null on commands written before this field existed. */
  readonly expires_at: null | number;
  /** wa_message_id of the message this send replies to (the caller's quoted_message_id); null when it is no reply. A reaction, an edit or a deletion names its message in its content instead. */
  readonly quoted_message_id: null | string;
  /** Jids mentioned by the send (phone jids or lids). */
  readonly mentions: ReadonlyArray<string>;
}

/** What produced a send. */
export const SendOriginValues = ['api', 'campaign'] as const;
export type SendOrigin = (typeof SendOriginValues)[number];

/** Status facts of one of our sends (events message.sent, message.delivered, message.read, message.failed). */
export const SendStatusValues = ['sent', 'delivered', 'read', 'failed'] as const;
export type SendStatus = (typeof SendStatusValues)[number];

/** Sticker send; the API stores it as a 512x512 WebP. */
export interface StickerContent {
  readonly kind: 'sticker';
  /** Where the bytes come from. */
  readonly media: MediaSource;
  /** True when the stored WebP has several frames (from an animated GIF or WebP). */
  readonly animated: boolean;
}

/** Plain text (send and receive). A reply to a buttons/list fallback menu also arrives as text (spec 2.4 rule 4). */
export interface TextContent {
  readonly kind: 'text';
  /** Message text. */
  readonly body: string;
}

/** Video send. */
export interface VideoContent {
  readonly kind: 'video';
  /** Where the bytes come from. */
  readonly media: MediaSource;
  /** Caption (public `body`). */
  readonly caption: null | string;
}

/** A view-once photo, video or voice note the network did not hand to this linked device (the phone alone may open it): kept as a fact that it arrived, without content, instead of vanishing. */
export interface ViewOnceContent {
  readonly kind: 'view_once';
  /** image, video or audio when the message says which; null otherwise. */
  readonly media_type: null | string;
}

/** How the Pro plan is paid (spec 4.5): card renews by itself; pix (BRL only) renews through a link sent by e-mail. */
export const PaymentMethodValues = ['card', 'pix'] as const;
export type PaymentMethod = (typeof PaymentMethodValues)[number];

/** One fact about paying the Pro plan of an account (gw.payments, keyed by account id): written by the API when a checkout opens or is replaced, and by the payment provider's confirmations (the sandbox confirm route, Stripe's verified webhook events). Read by the payments processor: the payment-effects projection turns paid into Pro and lapsed into Free (the account's connections held against the new plan) and e-mails a renewal's pay link; the payments projection keeps each account's subscription. */
export interface PaymentRecord {
  /** Unique id of this record; for provider events, derived from the provider's event id so a redelivered event is recognised. */
  readonly event_id: EventId;
  /** When it happened. */
  readonly occurred_at: number;
  /** Account paying; the record key. */
  readonly account_id: AccountId;
  /** Always null; kept for the common envelope. */
  readonly project_id: null | ProjectId;
  /** Always null; kept for the common envelope. */
  readonly instance_id: null | InstanceId;
  /** Connection whose component opened the checkout; null for renewals and lapses. */
  readonly connection_id: null | ConnectionId;
  /** The provider's id of the attempt (sandbox pay_..., Stripe PaymentIntent or Subscription id). */
  readonly attempt_id: string;
  /** sandbox or stripe. */
  readonly provider: string;
  /** card or pix. */
  readonly method: PaymentMethod;
  /** What happened. */
  readonly status: PaymentStatus;
  /** Plan paid for (pro). */
  readonly plan: string;
  /** ISO 4217 code, upper case (BRL, USD, EUR). */
  readonly currency: string;
  /** Amount in the currency's minor unit. */
  readonly amount: number;
  /** End of the period paid (status paid); null otherwise. */
  readonly period_end: null | number;
  /** Why an attempt failed or was canceled, in words (never card data). */
  readonly reason: null | string;
  /** The link that pays a renewal due (a Pix renewal's hosted invoice), e-mailed to `email`; null for every other fact. */
  readonly pay_url: null | string;
  /** Who pays, as given at checkout: where a renewal's pay link goes. */
  readonly email: null | string;
  /** Language of the e-mails to `email` (pt, en, es, it, de, fr). */
  readonly locale: string;
}

/** What happened to a payment attempt or the subscription it pays: pending (checkout opened, being confirmed), paid (first payment or a renewal confirmed; the plan is Pro until period_end), failed (the attempt was refused), canceled (replaced by another method, or abandoned), lapsed (a renewal was not paid; the plan falls back to Free). */
export const PaymentStatusValues = ['pending', 'paid', 'failed', 'canceled', 'lapsed'] as const;
export type PaymentStatus = (typeof PaymentStatusValues)[number];

/** A control of the sandbox network (the simulated phone, customers and network behaviour of one sandbox number), written by the API and applied by the connector that owns instance_id. Never a public event. */
export interface SandboxCommand {
  /** Unique id of this control. The sandbox derives the wa_message_id of a simulated message from it, so a control delivered twice gives the same message. */
  readonly event_id: EventId;
  /** When the control was accepted; the network time of a simulated message. */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project the record belongs to. */
  readonly project_id: ProjectId;
  /** Sandbox number the control applies to. */
  readonly instance_id: InstanceId;
  /** What to simulate; the branch kind names it. */
  readonly control: SandboxConnect | SandboxScan | SandboxSetStatus | SandboxCustomerMessage | SandboxPhoneMessage | SandboxSetBehaviour | SandboxMapLid | SandboxGroupUpdate | SandboxIncomingCall;
}

/** Starts pairing: the number goes to connecting and a QR payload or an 8-character pairing code is published on gw.instances.pairing. */
export interface SandboxConnect {
  readonly kind: 'connect';
  /** QR code or pairing code. */
  readonly method: PairingMethod;
  /** E.164 phone of the number being paired (needed by the pairing-code method on the real network; optional for QR). */
  readonly phone: null | string;
  /** True completes the pairing at once, as if the phone scanned the QR or typed the code. */
  readonly auto: boolean;
}

/** A customer writes to the number (directly or in a group). Becomes an InboundMessage with origin customer; while the number is not connected it waits on the simulated network and arrives when the number connects. */
export interface SandboxCustomerMessage {
  readonly kind: 'customer_message';
  /** The customer: E.164 phone, phone jid, or an @lid identity (resolved to the phone when the number knows the lid; see SandboxMapLid). */
  readonly from: string;
  /** Display (push) name of the customer. */
  readonly name: null | string;
  /** What the customer sends. A poll_vote names the chosen options; the sandbox carries them as the network does (option hashes) and resolves them against the poll known to the number, dropping names the poll does not have. */
  readonly content: TextContent | SandboxMediaContent | LocationContent | ContactContent | ReactionContent | PollContent | PollVoteContent | EditContent | DeleteContent;
  /** wa_message_id of the message replied to. */
  readonly quoted_id: null | string;
  /** Group the message is written in; null for a direct message. */
  readonly group: null | GroupRef;
  /** Mentioned people: E.164 phones, phone jids or @lid identities. */
  readonly mentions: ReadonlyArray<string>;
}

/** Something happens in a group the number sees (joined, left, participants added, removed, promoted or demoted, subject or description changed). Becomes a GroupEvent. */
export interface SandboxGroupUpdate {
  readonly kind: 'group_update';
  /** What happened. */
  readonly change: GroupEventKind;
  /** The group (name after the change). */
  readonly group: GroupRef;
  /** Who made the change: E.164 phone, phone jid or @lid identity. */
  readonly author: null | string;
  /** Participants concerned: E.164 phones, phone jids or @lid identities. */
  readonly participants: ReadonlyArray<string>;
  /** New subject (subject_changed). */
  readonly subject: null | string;
  /** New description (description_changed). */
  readonly description: null | string;
}

/** A customer calls the number (as Baileys' call offer); status ends it another way. */
export interface SandboxIncomingCall {
  readonly kind: 'incoming_call';
  /** E.164 phone or jid of the caller. */
  readonly from: string;
  /** The call's id, the same for its later statuses. */
  readonly call_id: string;
  /** offer rings; timeout, terminate end it. */
  readonly status: CallStatus;
  /** A video call. */
  readonly is_video: boolean;
}

/** The number learns which phone is behind a privacy identity (as Baileys lid-mapping.update does): later messages from the lid carry the phone jid, with the lid kept in sender.lid. */
export interface SandboxMapLid {
  readonly kind: 'map_lid';
  /** The @lid identity. */
  readonly lid: string;
  /** E.164 phone behind it. */
  readonly phone: string;
}

/** A simulated media message. The connector stores the bytes in the media store and publishes the stored Media; the inbound record never carries bytes. */
export interface SandboxMediaContent {
  readonly kind: 'media';
  /** image, video, audio, document or sticker. */
  readonly media_type: SandboxMediaType;
  /** The file as the simulated network carries it; null has the sandbox generate a small file. A deliberate exception to bytes never travelling on Kafka, limited to the sandbox: the API caps it at 256 KiB. */
  readonly data: null | Buffer;
  /** MIME type; a usual one for media_type when null. */
  readonly mime_type: null | string;
  /** File name (documents). */
  readonly filename: null | string;
  /** Caption of image, video and document. */
  readonly caption: null | string;
  /** Audio only: a voice note. */
  readonly ptt: boolean;
}

/** Type of a simulated media message; the InboundMessage content kind it becomes. */
export const SandboxMediaTypeValues = ['image', 'video', 'audio', 'document', 'sticker'] as const;
export type SandboxMediaType = (typeof SandboxMediaTypeValues)[number];

/** The number's owner writes from the phone. Becomes an InboundMessage with origin external (message.sent with origin external; not counted as a send). Ignored while the number is not connected. */
export interface SandboxPhoneMessage {
  readonly kind: 'phone_message';
  /** Chat written to: E.164 phone, phone jid, @lid identity or group jid. */
  readonly to: string;
  /** What the owner sends. */
  readonly content: TextContent | SandboxMediaContent | LocationContent | ContactContent | ReactionContent | PollContent | PollVoteContent | EditContent | DeleteContent;
  /** wa_message_id of the message replied to. */
  readonly quoted_id: null | string;
}

/** The phone scans the QR or types the pairing code: a pending pairing completes and the number becomes connected. Without a pending pairing it has no effect. */
export interface SandboxScan {
  readonly kind: 'scan';
  /** E.164 phone that scanned; defaults to the phone given at connect, then to the number's known phone, then to one derived from the instance id (decided here). */
  readonly phone: null | string;
}

/** Changes how the simulated network treats the number's sends. Null fields keep their current value. Defaults: delivered after 50 ms, read after 150 ms, no failing recipients besides phones ending in 0000, which always fail, and no blockers besides phones ending in 0404, which have always blocked the number (decided here, for tests). */
export interface SandboxSetBehaviour {
  readonly kind: 'set_behaviour';
  /** Delay from sent to delivered. */
  readonly delivered_after_ms: null | number;
  /** Delay from sent to read; never before delivered. */
  readonly read_after_ms: null | number;
  /** E.164 phones whose sends fail (replaces the previous list). */
  readonly fail_to: null | ReadonlyArray<string>;
  /** E.164 phones that have blocked the number (replaces the previous list): a send to one fails with recipient_blocked and counts towards the number's ban (docs/sandbox.md). */
  readonly block_from: null | ReadonlyArray<string>;
}

/** The network changes the number's status (connected, warming, disconnected, logged_out, banned), as a reconnect, a drop, an unlink from the phone or a ban would. */
export interface SandboxSetStatus {
  readonly kind: 'set_status';
  /** New status. */
  readonly status: InstanceStatus;
  /** Reason carried to the InstanceState record. */
  readonly reason: null | string;
}

/** Plan allowance a threshold refers to (decided here: sends and stored media). */
export const UsageAllowanceValues = ['messages', 'media_storage'] as const;
export type UsageAllowance = (typeof UsageAllowanceValues)[number];

/** What a usage record counts. */
export const UsageKindValues = ['message_sent', 'media_stored', 'threshold_reached'] as const;
export type UsageKind = (typeof UsageKindValues)[number];

/** Counted usage of an account. A send counts once when it reaches status sent (decided here; failed sends and origin external do not count; an OTP counts 1). threshold_reached is the usage.threshold event (account scope). */
export interface UsageRecord {
  /** Derived from what is counted (message_id, media id) so a repeat counts once; for threshold_reached the public evt_ id of usage.threshold. */
  readonly event_id: EventId;
  /** When it happened. */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project of the send or media; null for thresholds. */
  readonly project_id: null | ProjectId;
  /** Number of the send or media; null for thresholds. */
  readonly instance_id: null | InstanceId;
  /** What is counted. */
  readonly kind: UsageKind;
  /** message_sent: messages; media_stored: bytes (negative when stored media is removed); threshold_reached: 0. */
  readonly quantity: number;
  /** Message counted (message_sent). */
  readonly message_id: null | MessageId;
  /** Media counted (media_stored). */
  readonly media_id: null | string;
  /** Allowance reached (threshold_reached). */
  readonly allowance: null | UsageAllowance;
  /** Threshold reached: 80, 90 or 100. */
  readonly percent: null | number;
  /** Used amount at the threshold. */
  readonly used: null | number;
  /** Amount included in the plan. */
  readonly included: null | number;
  /** Plan code at the threshold. */
  readonly plan: null | string;
}

/** One delivery attempt (append-only log for the delivery history and analytics). */
export interface DeliveryAttempt {
  /** Public evt_ id of the event delivered (shared by every task and attempt of the delivery). */
  readonly event_id: EventId;
  /** When the attempt started. */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project of the event; null on account events. */
  readonly project_id: null | ProjectId;
  /** Number of the event, when it has one. */
  readonly instance_id: null | InstanceId;
  /** Unique id of the attempt. */
  readonly attempt_id: string;
  /** Delivery the attempt belongs to. */
  readonly delivery_id: string;
  /** Account or partner webhook. */
  readonly target_kind: DeliveryTargetKind;
  /** Webhook id or partner id; the record key. */
  readonly target_id: string;
  /** Event name. */
  readonly event_type: string;
  /** URL posted to. */
  readonly url: string;
  /** Attempt number, 1-based. */
  readonly attempt: number;
  /** Why it was delivered. */
  readonly trigger: DeliveryTrigger;
  /** Result. */
  readonly outcome: DeliveryOutcome;
  /** HTTP status, when a response came. */
  readonly response_status: null | number;
  /** First 1 KiB of the response body (decided here). */
  readonly response_body_excerpt: null | string;
  /** Transport error when no response came. */
  readonly error: null | string;
  /** Time from request start to answer or failure. */
  readonly duration_ms: number;
  /** When the next attempt is due; null when none follows. */
  readonly next_attempt_at: null | number;
  /** The exact JSON body posted, on the first attempt of a delivery only (the deliveries list keeps it for a redelivery by hand); null on later attempts, which post the same body. */
  readonly body_json: null | string;
}

/** Result of one attempt. timed_out is retried like failed_retryable while attempts remain. */
export const DeliveryOutcomeValues = ['delivered', 'failed_retryable', 'failed_final', 'timed_out'] as const;
export type DeliveryOutcome = (typeof DeliveryOutcomeValues)[number];

/** Who receives a delivery. */
export const DeliveryTargetKindValues = ['account_webhook', 'partner_webhook'] as const;
export type DeliveryTargetKind = (typeof DeliveryTargetKindValues)[number];

/** An event waiting for redelivery (gw.deliveries.retry.<tier>) or given up (gw.deliveries.dead). The first attempt is made straight from gw.events; a failed one writes a task to the tier of its backoff. */
export interface DeliveryTask {
  /** Public evt_ id of the event delivered (shared by every task and attempt of the delivery). */
  readonly event_id: EventId;
  /** When the task was written. */
  readonly occurred_at: number;
  /** Account the record belongs to. */
  readonly account_id: AccountId;
  /** Project of the event; null on account events. */
  readonly project_id: null | ProjectId;
  /** Number of the event, when it has one. */
  readonly instance_id: null | InstanceId;
  /** One event to one target; the same across attempts. */
  readonly delivery_id: string;
  /** Account or partner webhook. */
  readonly target_kind: DeliveryTargetKind;
  /** Webhook id (account_webhook) or partner id (partner_webhook); the record key. URL and secret are read from the current config. */
  readonly target_id: string;
  /** Event name. */
  readonly event_type: string;
  /** Why it is delivered. */
  readonly trigger: DeliveryTrigger;
  /** Number of the next attempt, 1-based. */
  readonly attempt: number;
  /** Earliest time of the next attempt. */
  readonly not_before: number;
  /** Outcome of the previous attempt (status or transport error). */
  readonly last_error: null | string;
  /** Exact JSON body rendered for this target (partner bodies carry the connection block and sender.phone); signed at send time. */
  readonly body_json: string;
}

/** Why an event is delivered: scheduled (a real event, automatic delivery and retries), manual (POST /webhooks/trigger), test (POST /webhooks/{id}/test). */
export const DeliveryTriggerValues = ['scheduled', 'manual', 'test'] as const;
export type DeliveryTrigger = (typeof DeliveryTriggerValues)[number];
