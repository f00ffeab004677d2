import type { FastifyPluginAsync } from 'fastify';
import path from 'node:path';
import { serveBuiltFiles } from '../static-files.js';

/**
 * Serves the Connect component's bundle at `/v1/connect.js` (spec 4.6: `{widget_url}/v1/connect.js`)
 * from the build's folder, read once. Any page may load it; it is cached briefly, revalidated by ETag.
 */
export const widgetRoutes: FastifyPluginAsync<{ widgetDir: string }> = async (app, { widgetDir }) => {
  await serveBuiltFiles(app, {
    dir: path.join(widgetDir, 'v1'),
    prefix: '/v1',
    names: ['connect.js', 'connect.js.map'],
    headers: { 'Cache-Control': 'public, max-age=300', 'Access-Control-Allow-Origin': '*' },
  });
};
