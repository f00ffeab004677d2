import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Static } from '@sinclair/typebox';
import type { IngestDeps } from '../../connectors/media/ingest.js';
import type { OtpSealer } from '../../connectors/network/index.js';
import {
  actOn,
  campaignOf,
  CampaignRefused,
  createCampaign,
  editDraft,
  isTimeZone,
  listCampaigns,
  listRecipients,
  progressOf,
  resolveAudience,
  type CampaignDraft,
  type CampaignStatus,
  type Progress,
  type RecipientStatus,
} from '../../processors/campaigns/index.js';
import { projectInstances } from '../../processors/instances/queries.js';
import { asAccountId, asProjectId } from '../../schemas/ids.js';
import type { CampaignState } from '../../schemas/records.js';
import type { RouteOptions } from '../context.js';
import { decodeCursor, encodeCursor, paginate } from '../conversations/cursor.js';
import { gatewayError } from '../errors.js';
import { withinAllowance } from '../media/allowance.js';
import { buildContent } from '../messages/content.js';
import type { AnySendBody, SendType } from '../messages/schemas.js';
import type { AuthContext } from '../plugins/auth.js';
import { requestCountry } from '../phone-input.js';
import {
  CampaignOut,
  CreateCampaign,
  CreatedOut,
  EditCampaign,
  ImageIn,
  ListQuery,
  mediaCampaignTypes,
  NextCursor,
  Params,
  RecipientOut,
  RecipientsQuery,
  type MessageIn,
} from './schemas.js';
import { Type } from '@sinclair/typebox';

/** Spec 8.3: a campaign's image (its media) is at most 5 MB. */
export const CAMPAIGN_MEDIA_BYTES = 5_000_000;
/** A JSON body holding a 5 MB file in base64, and a CSV audience. */
const CREATE_BODY_LIMIT = 12 * 1024 * 1024;
const IMAGE_BODY_LIMIT = 8 * 1024 * 1024;
const NO_MEDIA = { url: null, media_ref: null, mime_type: null, filename: null } as const;

export interface CampaignRouteOptions extends RouteOptions {
  readonly media: IngestDeps;
  readonly otp: OtpSealer;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The stored content as the caller sees it: media by type and name, never by storage key. */
function messageOut(state: CampaignState): CampaignOut['message'] {
  const { kind, ...fields } = state.content as unknown as { kind: string } & Record<string, unknown>;
  const media = fields.media as { media_ref: string | null; url: string | null; mime_type: string | null; filename: string | null } | undefined;
  if (media !== undefined) fields.media = media.media_ref === null && media.url === null ? null : { mime_type: media.mime_type, filename: media.filename };
  for (const name of ['waveform', 'seconds', 'ptt', 'message_secret'] as const) delete fields[name];
  return { type: kind, ...fields };
}

export function campaignOut(state: CampaignState, progress?: Progress): CampaignOut {
  return {
    id: state.campaign_id,
    name: state.name,
    status: state.status as CampaignOut['status'],
    message: messageOut(state),
    schedule: {
      start_at: iso(state.start_at),
      time_zone: state.time_zone,
      sending_hours: state.hours_from === null || state.hours_to === null ? null : { from: state.hours_from, to: state.hours_to },
    },
    sender: { instance_ids: [...state.instance_ids], pool_id: state.pool_id },
    pace_per_minute: state.pace_per_minute,
    recipients: state.recipients,
    pause_reason: state.pause_reason,
    created_at: new Date(state.created_at).toISOString(),
    started_at: iso(state.started_at),
    paused_at: iso(state.paused_at),
    ended_at: iso(state.ended_at),
    ...(progress === undefined ? {} : { progress }),
  };
}

/**
 * `/campaigns` (spec 4.3 names them; the shapes are ours, docs/campaigns.md): a campaign is a
 * message, an audience resolved at creation, a schedule, the numbers and a pace. The routes only
 * write campaign records to the log (processors/campaigns); the processor role runs them.
 */
export const campaignRoutes: FastifyPluginAsyncTypebox<CampaignRouteOptions> = async (app, options) => {
  const { ctx } = options;
  const { pool, producer } = ctx.clients;
  const deps = { pool, producer };
  const tags = ['campaigns'];
  const config = { scope: 'messages:send' } as const;

  /** The content of a campaign's message, its media (if given) stored once under the 5 MB cap. */
  const contentOf = async (message: MessageIn, auth: AuthContext): Promise<CampaignState['content']> => {
    const type = message.type as SendType;
    const media = message.media as { ptt?: boolean; caption?: string } | undefined;
    if (type === 'audio' && media?.ptt === true) throw gatewayError('invalid_request', { detail: 'a campaign does not send voice notes; send the audio as a file' });
    if (mediaCampaignTypes.has(type) && media === undefined) return awaitingMedia(type);
    const ingest = mediaCampaignTypes.has(type) ? await withinAllowance(options.media, { pool, directory: ctx.directory }, auth.accountId, auth.plan) : options.media;
    const owner = { accountId: asAccountId(auth.accountId), projectId: asProjectId(auth.projectId), instanceId: null };
    const body = { ...message, to: '' } as unknown as AnySendBody;
    const content = await buildContent(type, body, { media: { ...ingest, maxBytes: Math.min(ingest.maxBytes ?? CAMPAIGN_MEDIA_BYTES, CAMPAIGN_MEDIA_BYTES) }, owner, otp: options.otp, locale: auth.locale });
    return content as CampaignState['content'];
  };

  /** The schedule, numbers and pace of a body, checked: 400 for a bad zone or half a window, 404 for a number or pool not the project's. */
  const settingsOf = async (body: { schedule?: CreateCampaign['schedule']; sender?: CreateCampaign['sender']; pace_per_minute?: number }, projectId: string, current?: CampaignState) => {
    const out: { -readonly [K in keyof CampaignDraft]?: CampaignDraft[K] } = {};
    if (body.schedule !== undefined) {
      const { start_at, time_zone = 'UTC', sending_hours } = body.schedule;
      if (!isTimeZone(time_zone)) throw gatewayError('invalid_request', { detail: `schedule/time_zone ${time_zone} is not an IANA time zone` });
      if (sending_hours !== undefined && sending_hours.from === sending_hours.to) throw gatewayError('invalid_request', { detail: 'schedule/sending_hours is an empty window' });
      Object.assign(out, { start_at: start_at === undefined ? null : Date.parse(start_at), time_zone, hours_from: sending_hours?.from ?? null, hours_to: sending_hours?.to ?? null });
    }
    if (body.sender !== undefined) {
      const { instance_ids = [], pool_id } = body.sender;
      if (instance_ids.length > 0 && pool_id !== undefined) throw gatewayError('invalid_request', { detail: 'sender names numbers or a pool, not both' });
      if (instance_ids.length > 0) {
        const known = new Set((await projectInstances(pool, projectId)).map((n) => n.instance_id));
        if (instance_ids.some((id) => !known.has(id))) throw gatewayError('not_found');
      }
      if (pool_id !== undefined && ctx.directory.pools.get(pool_id)?.project_id !== projectId) throw gatewayError('not_found');
      Object.assign(out, { instance_ids, pool_id: pool_id ?? null });
    }
    if (body.pace_per_minute !== undefined) out.pace_per_minute = body.pace_per_minute;
    return { ...(current === undefined ? { start_at: null, time_zone: 'UTC', hours_from: null, hours_to: null, instance_ids: [], pool_id: null, pace_per_minute: 60 } : {}), ...out };
  };

  const read = async (auth: AuthContext, id: string) => {
    const { state } = await campaignOf(pool, auth.projectId, id);
    return campaignOut(state, await progressOf(pool, auth.accountId, id));
  };

  app.post(
    '/campaigns',
    { config, bodyLimit: CREATE_BODY_LIMIT, schema: { tags, summary: 'Create a campaign (a draft): message, audience, schedule, numbers, pace', body: CreateCampaign, response: { 201: CreatedOut } } },
    async (request, reply) => {
      const { auth, body } = request;
      const settings = await settingsOf(body, auth.projectId);
      const country = requestCountry(ctx.directory, auth.accountId, body.country);
      const audience = await resolveAudience(pool, auth.accountId, country, body.audience);
      // Last: the media is stored only for a campaign that is otherwise valid.
      const message = body.message as MessageIn;
      const content = await contentOf(message, auth);
      const draft = { ...settings, name: body.name.trim(), message_type: message.type, content, invalid_rows: audience.invalid.length } as CampaignDraft;
      const state = await createCampaign(deps, { accountId: auth.accountId, projectId: auth.projectId }, draft, audience.recipients);
      return reply.code(201).send({ ...campaignOut(state, await progressOf(pool, auth.accountId, state.campaign_id)), invalid_rows: audience.invalid });
    },
  );

  app.get(
    '/campaigns',
    { config, schema: { tags, summary: "The project's campaigns, newest first", querystring: ListQuery, response: { 200: Type.Object({ data: Type.Array(CampaignOut), next_cursor: NextCursor }) } } },
    async (request) => {
      const { status, limit, cursor } = request.query;
      const rows = await listCampaigns(pool, request.auth.projectId, status as CampaignStatus | undefined, { limit: limit + 1, after: cursor === undefined ? undefined : decodeCursor(cursor) });
      const page = paginate(rows, limit, (row) => ({ at: new Date(row.state.created_at), id: row.state.campaign_id }));
      return { data: page.items.map((row) => campaignOut(row.state)), next_cursor: page.next_cursor };
    },
  );

  app.get(
    '/campaigns/:id',
    { config, schema: { tags, summary: 'One campaign with its progress', params: Params, response: { 200: CampaignOut } } },
    async (request) => read(request.auth, request.params.id),
  );

  app.patch(
    '/campaigns/:id',
    { config, bodyLimit: CREATE_BODY_LIMIT, schema: { tags, summary: 'Change a draft campaign (its audience stays)', params: Params, body: EditCampaign, response: { 200: CampaignOut } } },
    async (request) => {
      const { auth, body } = request;
      const { state } = await campaignOf(pool, auth.projectId, request.params.id);
      if (state.status !== 'draft') throw new CampaignRefused('campaign_state', { status: state.status });
      const settings = await settingsOf(body, auth.projectId, state);
      const edited = body.message as MessageIn | undefined;
      const message = edited === undefined ? {} : { message_type: edited.type, content: await contentOf(edited, auth) };
      await editDraft(deps, auth.projectId, state.campaign_id, () => ({ ...settings, ...message, ...(body.name === undefined ? {} : { name: body.name.trim() }) }));
      return read(auth, state.campaign_id);
    },
  );

  app.post(
    '/campaigns/:id/image',
    {
      config: { ...config, mediaBody: true },
      bodyLimit: IMAGE_BODY_LIMIT,
      schema: { tags, summary: "Upload a draft media campaign's file (image, video, document, audio, sticker), 5 MB at most; every send reuses it", params: Params, body: ImageIn, response: { 200: CampaignOut } },
    },
    async (request) => {
      const { auth, body } = request;
      const { state } = await campaignOf(pool, auth.projectId, request.params.id);
      if (state.status !== 'draft') throw new CampaignRefused('campaign_state', { status: state.status });
      if (!mediaCampaignTypes.has(state.message_type)) throw gatewayError('invalid_request', { detail: `a ${state.message_type} campaign has no media` });
      const caption = (state.content as { caption?: string | null }).caption ?? undefined;
      const message = { type: state.message_type, media: { ...body.media, ...(caption === undefined || !['image', 'video', 'document'].includes(state.message_type) ? {} : { caption }) } } as MessageIn;
      const content = await contentOf(message, auth);
      await editDraft(deps, auth.projectId, state.campaign_id, () => ({ content }));
      return read(auth, state.campaign_id);
    },
  );

  for (const action of ['start', 'pause', 'resume', 'cancel'] as const) {
    app.post(
      `/campaigns/:id/${action}`,
      { config, schema: { tags, summary: SUMMARIES[action], params: Params, response: { 200: CampaignOut } } },
      async (request) => {
        const { auth } = request;
        if (action === 'start') {
          const { state } = await campaignOf(pool, auth.projectId, request.params.id);
          const media = (state.content as { media?: { media_ref: string | null; url: string | null } }).media;
          if (state.status === 'draft' && media !== undefined && media.media_ref === null && media.url === null) {
            throw gatewayError('invalid_request', { detail: "upload the campaign's file first (POST /campaigns/{id}/image)" });
          }
        }
        await actOn(deps, auth.projectId, request.params.id, action);
        return read(auth, request.params.id);
      },
    );
  }

  app.get(
    '/campaigns/:id/recipients',
    {
      config,
      schema: {
        tags,
        summary: "A campaign's recipients in order, each with its status",
        params: Params,
        querystring: RecipientsQuery,
        response: { 200: Type.Object({ data: Type.Array(RecipientOut), next_cursor: NextCursor }) },
      },
    },
    async (request) => {
      const { status, limit, cursor } = request.query;
      const campaign = await campaignOf(pool, request.auth.projectId, request.params.id);
      const after = cursor === undefined ? -1 : Number(decodeCursor(cursor).id);
      if (!Number.isInteger(after)) throw gatewayError('invalid_request', { detail: 'cursor is not one this list returned' });
      const rows = await listRecipients(pool, campaign.state.campaign_id, status as RecipientStatus | undefined, { limit: limit + 1, after });
      const items = rows.slice(0, limit);
      const last = items[items.length - 1];
      return {
        data: items.map((r): Static<typeof RecipientOut> => ({
          index: r.idx,
          to: r.phone,
          contact_id: r.contact_id,
          status: r.status,
          skip_reason: r.skip_reason,
          message_id: r.message_id,
          instance_id: r.instance_id,
          error_code: r.error_code,
          dispatched_at: r.dispatched_at?.toISOString() ?? null,
          sent_at: r.sent_at?.toISOString() ?? null,
          delivered_at: r.delivered_at?.toISOString() ?? null,
          read_at: r.read_at?.toISOString() ?? null,
          failed_at: r.failed_at?.toISOString() ?? null,
          replied_at: r.replied_at?.toISOString() ?? null,
        })),
        next_cursor: rows.length > limit && last !== undefined ? encodeCursor({ at: new Date(0), id: String(last.idx) }) : null,
      };
    },
  );
};

const SUMMARIES = {
  start: 'Start a draft campaign (scheduled until its start_at)',
  pause: 'Pause a running or scheduled campaign',
  resume: 'Resume a paused campaign where it stopped',
  cancel: 'Cancel a campaign for good; recipients not yet sent to are not',
} as const;

/** A media campaign's content before its file is uploaded; it cannot start so. */
function awaitingMedia(type: SendType): CampaignState['content'] {
  switch (type) {
    case 'audio':
      return { kind: 'audio', media: NO_MEDIA, ptt: false, seconds: null, waveform: null };
    case 'sticker':
      return { kind: 'sticker', media: NO_MEDIA, animated: false };
    default:
      return { kind: type as 'image' | 'video' | 'document', media: NO_MEDIA, caption: null };
  }
}
