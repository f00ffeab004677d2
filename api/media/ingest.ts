// The API side of media sends: media the caller gave is stored, or answered with the error the
// caller can act on.
import { MediaError } from '../../connectors/media/errors.js';
import { ingestMedia, type IngestDeps, type IngestedMedia, type MediaInput } from '../../connectors/media/ingest.js';
import type { MediaOwner } from '../../connectors/media/store.js';
import { gatewayError } from '../errors.js';

const MiB = 1024 * 1024;

function sizeText(bytes: number): string {
  return bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`;
}

/** `media_too_large` (413) for a cap, `invalid_request` (400) naming the problem otherwise; other errors pass unchanged. */
export function mediaGatewayError(error: unknown): unknown {
  if (!(error instanceof MediaError)) return error;
  if (error.kind === 'too_large') return gatewayError('media_too_large', { limit: sizeText(error.limitBytes ?? 0) }, { cause: error });
  return gatewayError('invalid_request', { detail: error.message }, { cause: error });
}

/** `ingestMedia` for a route: its failures are GatewayErrors the errors plugin answers. */
export async function ingestSendMedia(deps: IngestDeps, input: MediaInput, owner: MediaOwner): Promise<IngestedMedia> {
  try {
    return await ingestMedia(deps, input, owner);
  } catch (error) {
    throw mediaGatewayError(error);
  }
}
