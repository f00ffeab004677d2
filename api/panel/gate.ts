import type {} from '@fastify/cookie';
import type { FastifyRequest } from 'fastify';
import type { Directory, PlatformAdminEntry } from '../../processors/directory.js';
import type { AccountId, ProjectId } from '../../schemas/ids.js';
import type { Clock } from '../../shared/clock.js';
import { gatewayError, resolveLocale } from '../errors.js';
import type { AuthContext, Scope } from '../plugins/auth.js';
import { PANEL_COOKIE, type PanelSession, type PanelSessions } from './sessions.js';

/** What a member sees and nothing more: the panels read with these, and every write needs an admin. */
const MEMBER_SCOPES: readonly Scope[] = ['instances:read', 'messages:read', 'contacts:read', 'conversations:read', 'media:read', 'usage:read', 'webhooks:read', 'events:read'];
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface PanelAccount {
  readonly id: AccountId;
  readonly name: string;
  readonly plan: string;
  readonly role: 'admin' | 'member';
  readonly projects: readonly { readonly id: ProjectId; readonly name: string; readonly is_default: boolean }[];
}

/**
 * The panels' side door into the API: a signed-in person's cookie stands for a key of the account
 * they pick (`X-Account-Id`, needed only when they belong to several) on the project they pick
 * (`X-Project-Id`, default project otherwise): an account admin as an admin key, a member as a
 * read-only one. A platform administrator's e-mail opens `/platform/*`. Writes carry the CSRF token.
 */
export class PanelGate {
  constructor(
    private readonly sessions: PanelSessions,
    private readonly directory: Directory,
    private readonly clock: Clock,
  ) {}

  /** The session of the request's cookie; a write without its CSRF token is refused (403). */
  async signedIn(request: FastifyRequest): Promise<PanelSession | undefined> {
    const token = request.cookies[PANEL_COOKIE];
    if (token === undefined) return undefined;
    const session = await this.sessions.find(token, this.clock());
    if (session === undefined) return undefined;
    const csrf = request.headers['x-csrf-token'];
    if (!READS.has(request.method) && !this.sessions.csrfMatches(session, typeof csrf === 'string' ? csrf : undefined)) throw gatewayError('forbidden');
    return session;
  }

  accountsOf(email: string): PanelAccount[] {
    return this.directory
      .usersWithEmail(email)
      .flatMap((user) => {
        const account = this.directory.accounts.get(user.account_id);
        if (account === undefined) return [];
        const projects = [...this.directory.projects.values()]
          .filter((p) => p.account_id === account.id)
          .map((p) => ({ id: p.id, name: p.name, is_default: p.is_default }))
          .sort((a, b) => Number(b.is_default) - Number(a.is_default) || a.name.localeCompare(b.name));
        return [{ id: account.id, name: account.name, plan: account.plan, role: user.role === 'admin' ? ('admin' as const) : ('member' as const), projects }];
      });
  }

  platformAdminOf(email: string): PlatformAdminEntry | undefined {
    return [...this.directory.platformAdmins.values()].find((admin) => admin.email === email && admin.revoked_at === null);
  }

  /** The auth of an API route called from the panel, or undefined without a signed-in cookie. */
  async accountAuth(request: FastifyRequest): Promise<AuthContext | undefined> {
    const session = await this.signedIn(request);
    if (session === undefined) return undefined;
    const accounts = this.accountsOf(session.email);
    const wanted = request.headers['x-account-id'];
    const account = typeof wanted === 'string' ? accounts.find((a) => a.id === wanted) : accounts.length === 1 ? accounts[0] : undefined;
    if (account === undefined) throw gatewayError('forbidden');
    const wantedProject = request.headers['x-project-id'];
    const project = typeof wantedProject === 'string' ? account.projects.find((p) => p.id === wantedProject) : account.projects.find((p) => p.is_default);
    if (project === undefined) throw gatewayError('forbidden');
    const entry = this.directory.accounts.get(account.id)!;
    request.accountLocale = entry.locale;
    return {
      accountId: account.id,
      projectId: project.id,
      keyId: `panel:${session.email}`,
      role: account.role === 'admin' ? 'admin' : 'agent',
      scopes: account.role === 'admin' ? ['*'] : MEMBER_SCOPES,
      locale: resolveLocale(entry.locale, undefined),
      plan: entry.plan,
      partnerKey: false,
    };
  }

  /** The platform administrator signed in on the request's cookie, if any. */
  async platformAdmin(request: FastifyRequest): Promise<PlatformAdminEntry | undefined> {
    const session = await this.signedIn(request);
    return session === undefined ? undefined : this.platformAdminOf(session.email);
  }
}
