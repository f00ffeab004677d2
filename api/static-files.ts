import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/**
 * Serves built browser files (the component's bundle, the panels' script and stylesheet) at
 * `{prefix}/{name}`: each read once at start, sent with its type and an ETag, revalidated on
 * `If-None-Match`. A file the build did not make is simply not served.
 */
export async function serveBuiltFiles(app: FastifyInstance, options: { dir: string; prefix: string; names: readonly string[]; headers: Record<string, string> }): Promise<void> {
  for (const name of options.names) {
    const body = await readFile(path.join(options.dir, name)).catch(() => undefined);
    if (body === undefined) continue;
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    const type = TYPES[path.extname(name)] ?? 'application/octet-stream';
    app.get(`${options.prefix}/${name}`, { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
      reply.headers(options.headers).header('ETag', etag);
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.type(type).send(body);
    });
  }
}
