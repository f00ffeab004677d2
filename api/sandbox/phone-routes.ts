import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { asEventId, newId } from '../../schemas/ids.js';
import type { PublicEvent, SandboxCommand } from '../../schemas/records.js';
import { withDeadline } from '../../shared/deadline.js';
import { topics } from '../../topics/index.js';
import { WRITE_DEADLINE_MS } from '../config-writes.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import type { StreamHub } from '../streams/index.js';

const E164 = Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164 phone', examples: ['+5511999998888'] });

const ScanBody = Type.Union([
  Type.Object(
    { qr_code: Type.String({ minLength: 1, maxLength: 500 }), phone: Type.Optional(E164) },
    { additionalProperties: false, examples: [{ qr_code: '2@Jx4k…,Q9m…', phone: '+5511988887777' }] },
  ),
  Type.Object(
    { pairing_code: Type.String({ minLength: 8, maxLength: 9, description: 'As shown, with or without its hyphen' }), phone: Type.Optional(E164) },
    { additionalProperties: false, examples: [{ pairing_code: 'KX7P-2M9Q' }] },
  ),
]);

/**
 * The sandbox network's phone: whoever holds a live QR or pairing code can pair its number, as
 * with the real network, so this route needs no key. It is how the component's number step is
 * walked on one machine (and in tests) without a key of the customer's project.
 */
export const sandboxPhoneRoutes: FastifyPluginAsyncTypebox<RouteOptions & { hub: StreamHub }> = async (app, { ctx, hub }) => {
  app.post(
    '/sandbox/phone/scan',
    {
      config: { public: true },
      schema: {
        tags: ['sandbox'],
        summary: "The sandbox phone scans a QR (or types a pairing code) shown on a number's stream: the number connects",
        body: ScanBody,
        response: { 202: Type.Object({ accepted: Type.Literal(true), instance_id: Type.String() }) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const [field, value] = 'qr_code' in body ? (['qr_code', body.qr_code] as const) : (['pairing_code', body.pairing_code.replace('-', '').toUpperCase()] as const);
      const now = Date.now();
      const shown = hub.findRecent((event) => event.event_type === field && liveChallenge(event, field, value, now));
      if (shown?.instance_id == null || shown.project_id === null) throw gatewayError('not_found');
      const command: SandboxCommand = {
        event_id: asEventId(newId('evt')),
        occurred_at: now,
        account_id: shown.account_id,
        project_id: shown.project_id,
        instance_id: shown.instance_id,
        control: { kind: 'scan', phone: body.phone ?? null },
      };
      await withDeadline(ctx.clients.producer.send(topics.sandboxCommands, [{ key: command.instance_id, value: command }]), WRITE_DEADLINE_MS);
      return reply.code(202).send({ accepted: true as const, instance_id: shown.instance_id });
    },
  );
};

function liveChallenge(event: PublicEvent, field: 'qr_code' | 'pairing_code', value: string, now: number): boolean {
  const payload = JSON.parse(event.payload_json) as Record<string, unknown>;
  return payload[field] === value && typeof payload.expires_at === 'string' && Date.parse(payload.expires_at) > now;
}
