import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { hash } from 'node:crypto';
import type { IngestDeps } from '../../connectors/media/ingest.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId, newId } from '../../schemas/ids.js';
import type { SendCommand } from '../../schemas/records.js';
import type { Cipher } from '../../shared/cipher.js';
import type { OtpSealer } from '../../connectors/network/index.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import type { AuthContext } from '../plugins/auth.js';
import { buildContent, replyOf } from './content.js';
import { IdempotencyKeys } from './idempotency.js';
import { createNumberChooser } from '../../processors/sends/number-choice.js';
import { SendAccepted, sendBodies, sendTypes, type AnySendBody, type SendType } from './schemas.js';
import { phoneJid, phoneOfJid } from '../../schemas/phones.js';
import { requestCountry, requestPhone } from '../phone-input.js';
import { appendSend } from '../../processors/sends/append.js';
import { inTrace } from '../../topics/index.js';
import { standingRefusal, type RecipientStanding, type StandingKind } from '../../processors/audience/index.js';
import { MEDIA_BODY_LIMIT, TEXT_BODY_LIMIT } from '../body-limits.js';
import { withinAllowance } from '../media/allowance.js';

const mediaTypes: ReadonlySet<SendType> = new Set(['image', 'video', 'document', 'audio', 'sticker']);
const summaries: Partial<Record<SendType, string>> = {
  edit: "Edit one of the number's own messages (its text or caption)",
  delete: "Delete one of the number's own messages for everyone",
};

const standingKind = (type: SendType): StandingKind => (type === 'delete' || type === 'otp' ? type : 'message');

export interface MessageRouteOptions extends RouteOptions {
  /** Where media of sends is stored, and converted for voice notes and stickers. */
  readonly media: IngestDeps;
  /** Secrets of webhooks and partners are sealed by it. */
  readonly cipher: Cipher;
  readonly otp: OtpSealer;
  /** Whether the account's contact with this E.164 phone opted out, and the account's lists it is on. */
  readonly standing: (accountId: string, phone: string) => Promise<RecipientStanding>;
  readonly lastInstanceFor: (projectId: string, jid: string) => Promise<string | null>;
}

/**
 * The send routes of spec 4.2: `POST /messages/{type}` validates, picks the number, writes one
 * `SendCommand` to the log and answers 202 `queued`. The connector that owns the number sends it.
 */
export const messageRoutes: FastifyPluginAsyncTypebox<MessageRouteOptions> = async (app, options) => {
  const { clients, directory } = options.ctx;
  const idempotency = new IdempotencyKeys(clients.pool);
  const choose = createNumberChooser({ pool: clients.pool, directory, lastInstanceFor: options.lastInstanceFor });

  /** `idempotent`: the key of the send and the message id its claim gave. */
  const accept = async (type: SendType, body: AnySendBody, auth: AuthContext, idempotent: { key: string; messageId: string } | undefined): Promise<SendAccepted> => {
    // A jid is taken as it is; a phone must be one its country gives out (a list of impossible numbers hurts the number's health).
    const to = body.to.includes('@') ? body.to : phoneJid(requestPhone(body.to, requestCountry(directory, auth.accountId, body.country), 'body/to'));
    const phone = phoneOfJid(to);
    const [standing, number] = await Promise.all([
      type !== 'delete' && phone !== undefined ? options.standing(auth.accountId, phone) : undefined,
      choose({ projectId: auth.projectId, instanceId: body.instance_id, poolId: body.pool_id, to }),
    ]);
    if (standing !== undefined && standingRefusal(standingKind(type), standing) !== undefined) throw gatewayError('contact_opted_out');
    const owner = { accountId: asAccountId(auth.accountId), projectId: asProjectId(auth.projectId), instanceId: asInstanceId(number.instance_id) };
    const media = mediaTypes.has(type) ? await withinAllowance(options.media, { pool: clients.pool, directory }, auth.accountId, auth.plan) : options.media;
    const content = await buildContent(type, body, { media, owner, otp: options.otp, locale: auth.locale });
    const messageId = asMessageId(idempotent?.messageId ?? newId('msg'));
    const command: Omit<SendCommand, 'expires_at'> = {
      event_id: asEventId(newId('evt')),
      occurred_at: Date.now(),
      account_id: auth.accountId,
      project_id: auth.projectId,
      instance_id: asInstanceId(number.instance_id),
      message_id: messageId,
      client_reference: body.client_reference ?? null,
      to,
      origin: 'api',
      campaign_id: null,
      idempotency_key_hash: idempotent === undefined ? null : hash('sha256', idempotent.key),
      content,
      ...replyOf(type, body),
    };
    await inTrace('send.accept', { kind: 'producer', attributes: { message_id: messageId, account_id: auth.accountId } }, (hop) =>
      appendSend(clients.producer, command, hop.headers),
    );
    return { message_id: messageId, status: 'queued', client_reference: body.client_reference ?? null };
  };

  for (const type of sendTypes) {
    app.post(
      `/messages/${type}`,
      {
        config: { scope: 'messages:send', mediaBody: mediaTypes.has(type) },
        bodyLimit: mediaTypes.has(type) ? MEDIA_BODY_LIMIT : TEXT_BODY_LIMIT,
        schema: {
          tags: ['messages'],
          summary: summaries[type] ?? `Send a ${type} message`,
          headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ description: 'Up to 255 characters; 24 h per account' })) }),
          body: sendBodies[type],
          response: { 202: SendAccepted },
        },
      },
      async (request, reply) => {
        const key = IdempotencyKeys.validate(request.headers['idempotency-key']);
        const body = request.body;
        if (key === undefined) return reply.code(202).send(await accept(type, body, request.auth, undefined));

        const claim = await idempotency.claim(request.auth.accountId, key, IdempotencyKeys.requestHash(type, body));
        if (claim.kind === 'replay') {
          return reply.code(claim.statusCode as 202).header('idempotent-replayed', 'true').send(claim.response as SendAccepted);
        }
        try {
          const accepted = await accept(type, body, request.auth, { key, messageId: claim.messageId });
          await idempotency.complete(request.auth.accountId, key, 202, accepted);
          return reply.code(202).send(accepted);
        } catch (error) {
          await idempotency.release(request.auth.accountId, key);
          throw error;
        }
      },
    );
  }
};
