import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { MediaLinks } from '../../shared/media-links.js';
import { mediaKey, type MediaStore } from '../../connectors/media/store.js';
import { gatewayError } from '../errors.js';
import { securedBy } from '../openapi-security.js';

export interface MediaRoutesOptions {
  readonly store: MediaStore;
  readonly links: MediaLinks;
}

/**
 * `GET /media/{id}?exp&sig` (spec 2.4 rule 2), the stable reference to stored media. The signature
 * is the credential, so no API key is asked. A bad or expired link is `forbidden` (403).
 */
export const mediaRoutes: FastifyPluginAsyncTypebox<MediaRoutesOptions> = async (app, { store, links }) => {
  app.get(
    '/media/:id',
    {
      config: { public: true },
      schema: {
        tags: ['media'],
        summary: 'Stored media through a signed link',
        security: securedBy('mediaSignature'),
        description:
          'Redirects (302) to a freshly pre-signed URL of the object, or streams it when the gateway keeps media in a local folder. ' +
          'Links come in `media.url`; a link that is expired or altered answers 403.',
        produces: ['application/octet-stream'],
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        querystring: Type.Object({
          exp: Type.Integer({ minimum: 0, description: 'Expiry, Unix seconds' }),
          sig: Type.String({ maxLength: 128, description: 'Signature of the id and exp' }),
        }),
        response: {
          // A stream is sent as it is, never serialized: the schema only documents it.
          200: Type.Unsafe<Readable>({ type: 'string', format: 'binary', description: 'The media bytes (local folder store)' }),
          302: Type.Null({ description: 'Redirect to a pre-signed URL of the object (S3 store)' }),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { exp, sig } = request.query;
      if (!links.verify(id, exp, sig)) throw gatewayError('forbidden');
      const storageKey = mediaKey(id);
      if (store.kind === 's3') {
        return reply.redirect(await store.presign({ id, storage_key: storageKey }, links.ttlSeconds), 302);
      }
      const object = await store.get(storageKey);
      if (object === undefined) throw gatewayError('not_found');
      return reply
        .type(object.mimeType)
        .header('content-length', object.size)
        // Stored media is the caller's content, served from the API's origin: never run it as a page.
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "sandbox; default-src 'none'")
        .send(object.body);
    },
  );
};
