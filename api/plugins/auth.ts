import { hashSecret } from '../../shared/secret-token.js';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccountId, ProjectId } from '../../schemas/ids.js';
import type { Directory, KeyEntry } from '../../processors/directory.js';
import { gatewayError, resolveLocale, type Locale } from '../errors.js';
import { defaultRateLimit, type RateLimit, type RateLimiter } from './rate-limit.js';
import { partnerKeyReaches } from './partner-reach.js';

/** Scopes a key may hold. Owner and admin keys hold `*`. */
export const scopes = [
  'instances:read',
  'instances:write',
  'messages:send',
  'messages:read',
  'contacts:check',
  'contacts:read',
  'contacts:write',
  'conversations:read',
  'presence:write',
  'media:read',
  'usage:read',
  'keys:write',
  'pools:write',
  'sandbox:write',
  'webhooks:read',
  'webhooks:write',
  'events:read',
  'groups:read',
  'groups:write',
] as const;
export type Scope = (typeof scopes)[number];

/** The scopes a partner gives the keys of its customers (spec 2.7); a partner key's reach (spec 5) implies the rest. */
export const partnerKeyScopes: readonly Scope[] = ['instances:read', 'instances:write', 'messages:send', 'contacts:check', 'presence:write', 'media:read'];

export const roles = ['owner', 'admin', 'agent'] as const;
export type Role = (typeof roles)[number];

/** Who is calling, set on `request.auth` by the auth plugin before any handler runs. */
export interface AuthContext {
  readonly accountId: AccountId;
  readonly projectId: ProjectId;
  readonly keyId: string;
  readonly role: Role;
  readonly scopes: readonly (Scope | '*')[];
  readonly locale: Locale;
  /** Plan name of the account (`free`, `pro`). */
  readonly plan: string;
  /** A key issued to a partner's customer through Connect: it reaches less (spec 5). */
  readonly partnerKey: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
  }
  interface FastifyContextConfig {
    /** Scope a key needs for the route; absent means any valid key. */
    scope?: Scope;
    /** False where partner-issued keys get 403 (spec 5's list). */
    partnerKeys?: boolean;
    /** True on the few routes that need no key (health, docs): rate limited per IP. */
    public?: boolean;
    /** Routes of another surface (spec 5) with an authentication of their own: the API-key check leaves them alone. */
    surface?: 'platform' | 'partner' | 'connect';
  }
}

/** The SHA-256 of a key as stored: keys themselves are never kept. */
export const hashKey: (key: string) => string = hashSecret;

/** What a partner-issued key's connection allows now (spec 3.1): checked on every call of such a key. */
export type ConnectionStanding = 'usable' | 'suspended' | 'revoked';

export interface AuthOptions {
  readonly directory: Directory;
  /** Holds a partner-issued key's connection against its partner, plan, account and project, moving it at once when they changed. */
  readonly connectionStanding: (connectionId: string) => Promise<ConnectionStanding>;
  readonly takeToken: RateLimiter;
  /** The rate limit of an account's plan (spec 8.1: the plan's ceiling). */
  readonly rateLimitFor: (plan: string) => RateLimit;
  /** The panels' cookie, standing for a key when no Authorization header is sent (api/panel/gate.ts). */
  readonly panel?: { accountAuth(request: FastifyRequest): Promise<AuthContext | undefined> };
}

const BEARER = /^Bearer\s+(\S+)$/i;

/** A key works until it is revoked or its rotation grace ends; long streams re-check it. */
export function keyUsable(key: KeyEntry | undefined, now = Date.now()): key is KeyEntry {
  return key !== undefined && key.revoked_at === null && (key.expires_at === null || key.expires_at > now);
}

/**
 * Authenticates every route that is not marked public, then applies the rate limit of the key
 * (per IP on public routes), the route's scope and the partner-key reach. Runs before body
 * parsing, so a refused request costs no more than its headers.
 */
async function authenticate(app: FastifyInstance, options: AuthOptions): Promise<void> {
  app.decorateRequest('auth', undefined as unknown as AuthContext);

  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (config.surface !== undefined) return;
    if (request.routeOptions.url === undefined || config.public === true) {
      if (!(await options.takeToken(`ip:${request.ip}`, defaultRateLimit))) throw gatewayError('rate_limited');
      return;
    }
    if (request.headers.authorization === undefined && options.panel !== undefined) {
      const signedIn = await options.panel.accountAuth(request);
      if (signedIn !== undefined) {
        if (!(await options.takeToken(`key:${signedIn.keyId}`, options.rateLimitFor(signedIn.plan)))) throw gatewayError('rate_limited');
        if (config.scope !== undefined && !signedIn.scopes.includes('*') && !signedIn.scopes.includes(config.scope)) throw gatewayError('forbidden');
        request.auth = signedIn;
        return;
      }
    }
    const match = BEARER.exec(request.headers.authorization ?? '');
    const key = match?.[1] ? options.directory.keyByHash(hashKey(match[1])) : undefined;
    const connectionId = key?.connection_id ?? null;
    if (!keyUsable(key)) {
      // A key of an ended connection says why it stopped (spec 7: connect_revoked); a rotated one does not.
      if (connectionId !== null && (await options.connectionStanding(connectionId)) === 'revoked') {
        throw gatewayError('connect_revoked');
      }
      // Guessing keys draws from the caller's IP bucket.
      if (!(await options.takeToken(`ip:${request.ip}`, defaultRateLimit))) throw gatewayError('rate_limited');
      throw gatewayError('unauthorized');
    }
    const account = options.directory.accounts.get(key.account_id);
    if (!account) throw gatewayError('unauthorized');
    request.accountLocale = account.locale;
    if (!(await options.takeToken(`key:${key.id}`, options.rateLimitFor(account.plan)))) throw gatewayError('rate_limited');

    const auth: AuthContext = {
      accountId: key.account_id,
      projectId: key.project_id,
      keyId: key.id,
      role: (roles as readonly string[]).includes(key.role) ? (key.role as Role) : 'agent',
      scopes: key.scopes as readonly (Scope | '*')[],
      locale: resolveLocale(account.locale, undefined),
      plan: account.plan,
      partnerKey: key.connection_id !== null,
    };
    if (key.connection_id !== null) {
      const standing = await options.connectionStanding(key.connection_id);
      if (standing === 'revoked') throw gatewayError('connect_revoked');
      if (standing === 'suspended') throw gatewayError('connect_suspended');
    }
    if (auth.partnerKey && (config.partnerKeys === false || !partnerKeyReaches(request.method, request.url))) throw gatewayError('forbidden');
    // A partner key holds the partner's scopes among the six of spec 2.7; a route of its reach that
    // needs another scope (usage:read, conversations:read, ...) is reached by the reach list alone.
    const granted = auth.scopes.includes('*') || (config.scope !== undefined && auth.scopes.includes(config.scope));
    const impliedByReach = auth.partnerKey && config.scope !== undefined && !partnerKeyScopes.includes(config.scope);
    if (config.scope !== undefined && !granted && !impliedByReach) {
      throw gatewayError('forbidden');
    }
    request.auth = auth;
  });
}

/**
 * A route the gateway lacks is still out of a partner key's reach: 403, not merely absent (spec 5
 * names routes such as `/billing` that a partner key never reaches). Runs at the root, where the
 * not-found handler lives.
 */
export function refuseUnknownRoutesToPartnerKeys(directory: Directory) {
  return async (request: FastifyRequest): Promise<void> => {
    if (request.routeOptions.url !== undefined) return;
    const bearer = BEARER.exec(request.headers.authorization ?? '')?.[1];
    const key = bearer === undefined ? undefined : directory.keyByHash(hashKey(bearer));
    if (keyUsable(key) && key.connection_id !== null && !partnerKeyReaches(request.method, request.url)) throw gatewayError('forbidden');
  };
}

export const authPlugin = fp(authenticate, { name: 'gateway-auth', dependencies: ['gateway-errors'] });
