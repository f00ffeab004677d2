import type { AccountId, ProjectId } from '../../schemas/ids.js';
import type { Locale } from '../errors.js';

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
] as const;
export type Scope = (typeof scopes)[number];

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
  }
}
