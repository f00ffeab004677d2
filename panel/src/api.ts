/** A refused call: the API's error object (spec 2.1). */
export class PanelError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export interface Account {
  readonly id: string;
  readonly name: string;
  readonly plan: string;
  readonly role: 'admin' | 'member';
  readonly projects: readonly { readonly id: string; readonly name: string; readonly is_default: boolean }[];
}

export interface Me {
  readonly email: string;
  readonly csrf_token: string;
  readonly platform_admin: boolean;
  readonly accounts: readonly Account[];
}

/**
 * The panel's calls: the same API as everyone's, with the sign-in cookie instead of a key. Writes
 * carry the CSRF token; `X-Account-Id` and `X-Project-Id` say which account and project are shown.
 */
export class PanelApi {
  csrf = '';
  account: string | undefined;
  project: string | undefined;

  async call<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (method !== 'GET') headers['X-CSRF-Token'] = this.csrf;
    if (this.account) headers['X-Account-Id'] = this.account;
    if (this.project) headers['X-Project-Id'] = this.project;
    const form = body instanceof FormData;
    if (body !== undefined && !form) headers['Content-Type'] = 'application/json';
    const response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : form ? body : JSON.stringify(body),
    });
    const text = await response.text();
    const parsed = (text === '' ? {} : JSON.parse(text)) as T & { code?: string; message?: string };
    if (!response.ok) throw new PanelError(parsed.code ?? 'internal_error', parsed.message ?? response.statusText, response.status);
    return parsed;
  }
}

export const api = new PanelApi();
