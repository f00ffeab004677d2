import type { Pool } from 'pg';
import { MEDIA_MAX_BYTES, type IngestDeps } from '../../connectors/media/ingest.js';
import { sizeText } from '../../connectors/media/errors.js';
import type { Directory } from '../../processors/directory.js';
import { mediaAllowance } from '../../processors/usage/addons.js';
import { accountUsage, periodOf } from '../../processors/usage/index.js';
import { gatewayError } from '../errors.js';

/**
 * The media deps of one send, capped by what the account may still store (spec 8.3: the stored
 * media allowance of its plan plus its add-ons): a full allowance answers `media_too_large` before
 * anything is read, and a file larger than the room left is refused like one over the size cap.
 */
export async function withinAllowance(media: IngestDeps, deps: { pool: Pool; directory: Directory }, accountId: string, plan: string): Promise<IngestDeps> {
  const allowance = mediaAllowance(plan, deps.directory.addonsOf(accountId));
  const { mediaBytes } = await accountUsage(deps.pool, accountId, periodOf(Date.now()).id);
  const room = allowance - mediaBytes;
  if (room <= 0) throw gatewayError('media_too_large', { limit: sizeText(allowance) });
  return { ...media, maxBytes: Math.min(media.maxBytes ?? MEDIA_MAX_BYTES, room) };
}
