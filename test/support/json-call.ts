import { request } from 'undici';

export type JsonBody = Record<string, unknown>;

/** A JSON caller of one base URL: status and parsed body (an empty body is `{}`). */
export function jsonCaller(base: () => string) {
  return async (method: string, path: string, options: { headers?: Record<string, string>; body?: unknown } = {}): Promise<{ status: number; body: JsonBody }> => {
    const response = await request(`${base()}${path}`, {
      method: method as 'GET',
      headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.body.text();
    return { status: response.statusCode, body: (text === '' ? {} : JSON.parse(text)) as JsonBody };
  };
}
