// The API side of media sends: media the caller gave is stored (converted for voice notes and
// stickers), or answered with the error the caller can act on.
import type { Conversion, PlaybackOf } from '../../connectors/media/conversion/playback.js';
import { MediaError } from '../../connectors/media/errors.js';
import { ingestMedia, type IngestDeps, type IngestedMedia, type MediaInput } from '../../connectors/media/ingest.js';
import type { MediaOwner } from '../../connectors/media/store.js';
import { gatewayError } from '../errors.js';

/**
 * `media_too_large` (413) for a cap, `service_unavailable` (503) when no conversion can run now,
 * `invalid_request` (400) naming the problem otherwise; other errors pass unchanged.
 */
export function mediaGatewayError(error: unknown): unknown {
  if (!(error instanceof MediaError)) return error;
  switch (error.kind) {
    case 'too_large':
      return gatewayError('media_too_large', { limit: error.limit }, { cause: error });
    case 'unavailable':
      return gatewayError('service_unavailable', {}, { cause: error });
    case 'invalid_input':
    case 'fetch_failed':
      return gatewayError('invalid_request', { detail: error.message }, { cause: error });
  }
}

/** `ingestMedia` for a route: its failures are GatewayErrors the errors plugin answers. */
export async function ingestSendMedia(deps: IngestDeps, input: MediaInput, owner: MediaOwner): Promise<IngestedMedia>;
export async function ingestSendMedia<C extends Conversion>(
  deps: IngestDeps,
  input: MediaInput,
  owner: MediaOwner,
  conversion: C,
): Promise<IngestedMedia<PlaybackOf<C>>>;
export async function ingestSendMedia<C extends Conversion>(
  deps: IngestDeps,
  input: MediaInput,
  owner: MediaOwner,
  conversion?: C,
): Promise<IngestedMedia<PlaybackOf<C> | null>> {
  try {
    return conversion === undefined ? await ingestMedia(deps, input, owner) : await ingestMedia(deps, input, owner, conversion);
  } catch (error) {
    throw mediaGatewayError(error);
  }
}
