import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { WidgetsEntry } from '../../processors/directory.js';
import { writeAccountSetting } from '../../processors/config/account-settings.js';
import { configWriter } from '../config-writes.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { projectInstance } from '../../processors/instances/queries.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description: string) => Type.Union([schema, Type.Null()], { description });

const ChatButton = Type.Object(
  {
    enabled: Type.Boolean({ description: 'Whether the button shows' }),
    instance_id: Nullable(Type.String({ maxLength: 100 }), 'The number the button opens a chat with, one of the key\'s project; required to enable it'),
    greeting: Nullable(Type.String({ minLength: 1, maxLength: 200 }), "Text pre-filled in the visitor's message"),
    position: Type.Union([Type.Literal('left'), Type.Literal('right')], { description: 'Bottom corner of the page' }),
    color: Nullable(Type.String({ pattern: '^#[0-9A-Fa-f]{6}$' }), "#RRGGBB; null: the brand's primary color"),
  },
  { additionalProperties: false },
);

const WidgetsOut = Type.Object({ chat_button: ChatButton });
const WidgetsIn = Type.Object(
  { chat_button: Type.Partial(ChatButton, { additionalProperties: false }) },
  { additionalProperties: false, examples: [{ chat_button: { enabled: true, instance_id: 'inst_…', greeting: 'Hi! I have a question', position: 'right' } }] },
);

const widgetsOut = (entry: WidgetsEntry | undefined) => ({
  chat_button: {
    enabled: entry?.chat_button_enabled ?? false,
    instance_id: entry?.chat_button_instance_id ?? null,
    greeting: entry?.chat_button_greeting ?? null,
    position: entry?.chat_button_position === 'left' ? ('left' as const) : ('right' as const),
    color: entry?.chat_button_color ?? null,
  },
});

/**
 * `GET/PUT /me/widgets`: the account's embeddable widgets, today the click-to-chat button a site
 * shows to open a chat with one of the account's numbers. One `widgets` record per account on
 * `gw.config`; any key of the account reads, owner and admin keys write; `PUT` replaces.
 */
export const accountWidgetRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { directory } = ctx;
  const config = { partnerKeys: false };

  app.get('/me/widgets', { config, schema: { tags: ['account'], summary: "The account's embeddable widgets", response: { 200: WidgetsOut } } }, async (request) =>
    widgetsOut(directory.widgetsOf(request.auth.accountId)),
  );

  app.put(
    '/me/widgets',
    {
      config,
      schema: { tags: ['account'], summary: 'Replace the widgets (account admins); what is omitted takes its default', body: WidgetsIn, response: { 200: WidgetsOut } },
    },
    async (request) => {
      if (request.auth.role === 'agent') throw gatewayError('forbidden');
      const { enabled = false, instance_id = null, greeting = null, position = 'right', color = null } = request.body.chat_button;
      if (enabled && instance_id === null) throw gatewayError('invalid_request', { detail: 'chat_button.instance_id is required to enable it' });
      if (instance_id !== null && (await projectInstance(ctx.clients.pool, request.auth.projectId, instance_id)) === undefined) throw gatewayError('not_found');
      await writeAccountSetting(
        configWriter(ctx),
        request.auth.accountId,
        {
          kind: 'widgets',
          chat_button_enabled: enabled,
          chat_button_instance_id: instance_id,
          chat_button_greeting: greeting,
          chat_button_position: position,
          chat_button_color: color,
        },
        ctx.clock(),
      );
      return widgetsOut(directory.widgetsOf(request.auth.accountId));
    },
  );
};
