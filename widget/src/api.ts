/** What the component reads from `GET /connect/bootstrap` (docs/connect.md). */
export interface Bootstrap {
  readonly step: Step;
  readonly status: string;
  readonly connection: { readonly id: string; readonly external_id: string };
  /** `session.id` names the session in every event, for support; it is not the token. */
  readonly session: { readonly id: string; readonly expires_at: string };
  readonly service: { readonly name: string; readonly terms_url: string | null; readonly privacy_url: string | null };
  /** `scopes`: what the partner's key will be allowed to do, shown before the customer authorises it. */
  readonly partner: { readonly name: string; readonly logo_url: string | null; readonly scopes: readonly string[] };
  readonly customer: { readonly email: string; readonly name?: string | null; readonly company?: string | null; readonly locale?: string | null };
  readonly existing?: 'admin' | 'member';
  readonly email_hint?: string;
  readonly code_attempts_left?: number;
  readonly plan: {
    readonly name: string;
    readonly price: { readonly amount: number; readonly currency: string; readonly interval: string };
    readonly methods: readonly PaymentMethod[];
    readonly payment_notice?: 'lapsed';
  };
  readonly payment: { readonly provider: 'sandbox' | 'stripe'; readonly publishable_key: string | null; readonly status: string };
  readonly numbers: readonly NumberInfo[];
}

export type Step = 'account' | 'verify_email' | 'payment' | 'number' | 'manage' | 'revoked';
export type PaymentMethod = 'card' | 'pix';

export interface NumberInfo {
  readonly id: string;
  readonly phone: string | null;
  readonly status: string;
}

export interface Moved {
  readonly step: Step;
  readonly status: string;
  readonly email_hint?: string;
  readonly code_attempts_left?: number;
}

/** An error answer of the API (spec 2.1): logic uses `code`. */
export class ConnectError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Codes after which the session cannot go on: the host is told through onError. */
export const FATAL = new Set(['connect_session_required', 'invalid_connect_session', 'connect_session_expired', 'origin_not_allowed', 'partner_inactive']);

/**
 * The component's calls to `/connect/*`. A session that expires midway is renewed once through
 * the page's `fetchSession` (when it gave one) and the call made again on the new session.
 */
export class ConnectApi {
  private renewal: Promise<boolean> | undefined;

  constructor(
    readonly base: string,
    private session: string,
    /** A new session token from the page; rejects when the page gives none. */
    private readonly fetchSession: () => Promise<string>,
  ) {}

  bootstrap = () => this.call<Bootstrap>('GET', '/connect/bootstrap');
  createAccount = () => this.call<Moved>('POST', '/connect/account');
  link = (email?: string) => this.call<Moved>('POST', '/connect/account/link', email === undefined ? {} : { email });
  verify = (code: string) => this.call<Moved>('POST', '/connect/account/verify', { code });
  resend = () => this.call<Moved>('POST', '/connect/account/resend');
  cancelLink = () => this.call<Moved>('POST', '/connect/account/link/cancel');
  checkout = (method: PaymentMethod) => this.call<{ client_secret: string; attempt_id: string }>('POST', '/connect/checkout', { method });
  payment = () => this.call<{ status: string; step: Step }>('GET', '/connect/payment');
  addNumber = () => this.call<NumberInfo>('POST', '/connect/numbers', {});
  pair = (id: string, method: 'qr' | 'code') => this.call<unknown>('POST', `/connect/numbers/${encodeURIComponent(id)}/connect?method=${method}`);
  complete = () => this.call<{ code: string; connection_id: string; external_id: string; status: string }>('POST', '/connect/complete');
  /** The sandbox processor's form: confirms with the client secret, as Stripe.js would. */
  confirmSandbox = (clientSecret: string, outcome: 'paid' | 'failed') =>
    this.call<{ status: string }>('POST', '/sandbox/payments/confirm', { client_secret: clientSecret, outcome }, false);

  /**
   * Server-sent `qr_code`, `pairing_code` and `instance.status` of the project, from the moment
   * `opened` resolves (a stream starts at the present: pair only after it is open).
   */
  stream(onEvent: (type: string, payload: Record<string, unknown>) => void): { opened: Promise<void>; close: () => void } {
    let source: EventSource;
    let closed = false;
    let resolveOpened!: () => void;
    const opened = new Promise<void>((resolve) => (resolveOpened = resolve));
    const connect = () => {
      const used = this.session;
      source = new EventSource(`${this.base}/connect/stream?session=${encodeURIComponent(used)}`);
      source.addEventListener('open', () => resolveOpened(), { once: true });
      // A refused stream (the session expired) is closed by the browser: on a renewed session, open it again.
      source.addEventListener('error', () => {
        if (source.readyState === EventSource.CLOSED && !closed) void this.renewed(used).then((renewed) => renewed && !closed && connect());
      });
      for (const type of ['qr_code', 'pairing_code', 'instance.status']) {
        source.addEventListener(type, (event) => {
          const body = JSON.parse((event as MessageEvent<string>).data) as { payload?: Record<string, unknown> };
          onEvent(type, body.payload ?? {});
        });
      }
    };
    connect();
    return {
      opened,
      close: () => {
        closed = true;
        source.close();
      },
    };
  }

  /**
   * Whether there is a session newer than `used`: already (another call renewed it), or from the
   * page's `fetchSession`, asked once for all the calls that find the session expired together.
   */
  private renewed(used: string): Promise<boolean> {
    if (this.session !== used) return Promise.resolve(true);
    this.renewal ??= this.fetchSession()
      .then((next) => {
        const fresh = typeof next === 'string' && next !== '' && next !== this.session;
        if (fresh) this.session = next;
        return fresh;
      })
      .catch(() => false)
      .finally(() => (this.renewal = undefined));
    return this.renewal;
  }

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown, withSession = true): Promise<T> {
    const used = this.session;
    try {
      return await this.send<T>(method, path, body, withSession);
    } catch (error) {
      if (!(error instanceof ConnectError) || error.code !== 'connect_session_expired' || !(await this.renewed(used))) throw error;
      return this.send<T>(method, path, body, withSession);
    }
  }

  private async send<T>(method: 'GET' | 'POST', path: string, body: unknown, withSession: boolean): Promise<T> {
    const headers: Record<string, string> = {};
    if (withSession) headers['X-Connect-Session'] = this.session;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch {
      throw new ConnectError('network_error', 'The service could not be reached.', 0);
    }
    const text = await response.text();
    const parsed = (text === '' ? {} : JSON.parse(text)) as T & { code?: string; message?: string };
    if (!response.ok) throw new ConnectError(parsed.code ?? 'internal_error', parsed.message ?? response.statusText, response.status);
    return parsed;
  }
}
