import { createHash } from 'node:crypto';

/**
 * The message id of a campaign's recipient: the same every time the runner emits that recipient
 * (after a restart, a replay, or by two runners for a moment), so the connector, which executes
 * each message id once, never messages a recipient twice.
 */
export function campaignMessageId(campaignId: string, index: number): string {
  const digest = createHash('sha256').update(`campaign\n${campaignId}\n${index}`).digest('base64url').replace(/[-_]/g, '').slice(0, 24);
  return `msg_${digest.toLowerCase()}`;
}

/** The key of a chunk of recipients on `gw.campaigns.recipients`. */
export function chunkKey(campaignId: string, chunk: number): string {
  return `${campaignId}:${chunk}`;
}
