import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { signInMail } from '../../connectors/email/templates.js';
import type { Mailer } from '../../connectors/email/smtp.js';
import { isEmailAddress } from '../../shared/email-address.js';
import type { RouteOptions } from '../context.js';
import { EmailCodes } from '../email-codes.js';
import { serveBuiltFiles } from '../static-files.js';
import { gatewayError, toLocale } from '../errors.js';
import { securedBy } from '../openapi-security.js';
import type { PanelGate } from './gate.js';
import { PANEL_COOKIE, PANEL_SESSION_TTL_MS, type PanelSession, type PanelSessions } from './sessions.js';

export interface PanelRouteOptions extends RouteOptions {
  readonly gate: PanelGate;
  readonly sessions: PanelSessions;
  readonly mailer: Pick<Mailer, 'send'>;
  readonly codeKey: string;
  /** The panels' build: `app.js` and `app.css`. */
  readonly dir: string;
}

const Email = Type.String({ maxLength: 254 });
const Me = Type.Object({
  email: Type.String(),
  csrf_token: Type.String({ description: 'Send it back in X-CSRF-Token on every write' }),
  platform_admin: Type.Boolean(),
  accounts: Type.Array(Type.Object({}, { additionalProperties: true })),
});
const config = { public: true };
const tags = ['panel'];

/**
 * Sign-in to the panels without a password (issue 11): a six-digit code to the e-mail, the same
 * codes and limits as the component's (spec 8.4), then an HttpOnly, SameSite=Strict cookie
 * (Secure unless on localhost). Whether an e-mail is known is never told: the code step answers
 * the same either way.
 */
export const panelRoutes: FastifyPluginAsyncTypebox<PanelRouteOptions> = async (app, { ctx, gate, sessions, mailer, codeKey, dir }) => {
  await servePanelPage(app, dir);
  const codes = new EmailCodes(ctx.clients.pool, codeKey, 'panel');
  const challenge = (email: string) => `panel:${email}`;
  const known = (email: string) => gate.accountsOf(email).length > 0 || gate.platformAdminOf(email) !== undefined;
  const me = (session: PanelSession) => ({
    email: session.email,
    csrf_token: sessions.csrfToken(session),
    platform_admin: gate.platformAdminOf(session.email) !== undefined,
    accounts: gate.accountsOf(session.email),
  });

  app.post(
    '/panel/login',
    {
      config,
      schema: {
        tags,
        summary: 'Send a sign-in code to an e-mail of an account user or platform administrator',
        body: Type.Object({ email: Email, locale: Type.Optional(Type.String({ maxLength: 10 })) }, { additionalProperties: false, examples: [{ email: 'ana@padaria.example' }] }),
        response: { 202: Type.Object({ sent: Type.Literal(true) }) },
      },
    },
    async (request, reply) => {
      const email = request.body.email.trim().toLowerCase();
      if (!isEmailAddress(email)) throw gatewayError('invalid_request', { detail: 'body/email: an e-mail address' });
      if (known(email)) {
        const code = await codes.issue(challenge(email), { email, accountId: '' }, ctx.clock());
        const locale = toLocale(request.body.locale ?? '') ?? 'en';
        await mailer.send({ to: email, ...signInMail(locale, code) });
      }
      return reply.code(202).send({ sent: true as const });
    },
  );

  app.post(
    '/panel/login/verify',
    {
      config,
      schema: {
        tags,
        summary: 'Sign in with the code: sets the session cookie',
        body: Type.Object({ email: Email, code: Type.String({ maxLength: 20 }) }, { additionalProperties: false, examples: [{ email: 'ana@padaria.example', code: '482913' }] }),
        response: { 200: Me },
      },
    },
    async (request, reply) => {
      const email = request.body.email.trim().toLowerCase();
      const code = request.body.code.trim();
      if (!/^\d{6}$/.test(code)) throw gatewayError('invalid_code');
      await codes.confirm(challenge(email), code, ctx.clock());
      if (!known(email)) throw gatewayError('invalid_code');
      const { token, session } = await sessions.open(email, ctx.clock());
      setCookie(request, reply, token, PANEL_SESSION_TTL_MS / 1000);
      return me(session);
    },
  );

  app.get('/panel/me', { config, schema: { tags, summary: 'Who is signed in, their accounts and the CSRF token', security: securedBy('panelSession'), response: { 200: Me } } }, async (request) => {
    const session = await gate.signedIn(request);
    if (session === undefined) throw gatewayError('unauthorized');
    return me(session);
  });

  app.post('/panel/logout', { config, schema: { tags, summary: 'Sign out', response: { 204: Type.Null() } } }, async (request, reply) => {
    const session = await gate.signedIn(request);
    if (session !== undefined) await sessions.close(session);
    setCookie(request, reply, '', 0);
    return reply.code(204).send(null);
  });
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gateway panel</title>
<link rel="stylesheet" href="/panel/app.css">
<script src="/panel/app.js" defer></script>
</head>
<body><div id="panel"></div></body>
</html>`;

/** The panels' page: one script and one stylesheet of our own, under a CSP that allows nothing else. */
async function servePanelPage(app: FastifyInstance, dir: string): Promise<void> {
  const csp = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
  app.get('/panel', { config, schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('Content-Security-Policy', csp).header('X-Frame-Options', 'DENY').header('Cache-Control', 'no-store').send(PAGE),
  );
  await serveBuiltFiles(app, { dir, prefix: '/panel', names: ['app.js', 'app.css'], headers: { 'Cache-Control': 'no-cache' } });
}

function setCookie(request: FastifyRequest, reply: FastifyReply, value: string, maxAgeSeconds: number): void {
  const local = request.hostname.split(':')[0] === 'localhost' || request.hostname.startsWith('127.0.0.1');
  reply.setCookie(PANEL_COOKIE, value, { httpOnly: true, sameSite: 'strict', secure: !local, path: '/', maxAge: maxAgeSeconds });
}
