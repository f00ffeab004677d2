import type { Pool } from 'pg';
import type { CampaignState } from '../../schemas/records.js';

export const CAMPAIGN_STATUSES = ['draft', 'scheduled', 'running', 'paused', 'cancelled', 'finished'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];
export const RECIPIENT_STATUSES = ['pending', 'queued', 'sent', 'delivered', 'read', 'failed', 'skipped'] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

export interface CampaignRow {
  readonly state: CampaignState;
  readonly updated_at: Date;
}

/** What became of a campaign's recipients, from the facts on the log and the runner's marks. */
export interface Progress {
  readonly recipients: number;
  readonly pending: number;
  readonly queued: number;
  readonly sent: number;
  readonly delivered: number;
  readonly read: number;
  readonly failed: number;
  readonly replied: number;
  readonly opted_out: number;
  readonly suppressed: number;
  readonly blocklisted: number;
}

export interface RecipientRow {
  readonly idx: number;
  readonly to_jid: string;
  readonly phone: string;
  readonly contact_id: string | null;
  readonly message_id: string;
  readonly status: RecipientStatus;
  readonly skip_reason: string | null;
  readonly instance_id: string | null;
  readonly error_code: string | null;
  readonly error_reason: string | null;
  readonly dispatched_at: Date | null;
  readonly sent_at: Date | null;
  readonly delivered_at: Date | null;
  readonly read_at: Date | null;
  readonly failed_at: Date | null;
  readonly replied_at: Date | null;
}

export async function campaignById(db: Pool, campaignId: string): Promise<CampaignRow | undefined> {
  const { rows } = await db.query<CampaignRow>('SELECT state, updated_at FROM campaigns.campaigns WHERE campaign_id = $1', [campaignId]);
  return rows[0];
}

export async function listCampaigns(
  db: Pool,
  projectId: string,
  status: CampaignStatus | undefined,
  page: { readonly limit: number; readonly after?: { readonly at: Date; readonly id: string } },
): Promise<CampaignRow[]> {
  const { rows } = await db.query<CampaignRow>(
    `SELECT state, updated_at FROM campaigns.campaigns
     WHERE project_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::timestamptz IS NULL OR (created_at, campaign_id) < ($3, $4))
     ORDER BY created_at DESC, campaign_id DESC LIMIT $5`,
    [projectId, status ?? null, page.after?.at ?? null, page.after?.id ?? null, page.limit],
  );
  return rows;
}

/** `opted_out` counts recipients skipped for it and those who opted out after their send. */
export async function progressOf(db: Pool, accountId: string, campaignId: string): Promise<Progress> {
  const { rows } = await db.query<Record<keyof Progress, string>>(
    `SELECT count(*) AS recipients,
       count(*) FILTER (WHERE status = 'pending') AS pending,
       count(*) FILTER (WHERE dispatched_at IS NOT NULL) AS queued,
       count(*) FILTER (WHERE sent_at IS NOT NULL) AS sent,
       count(*) FILTER (WHERE delivered_at IS NOT NULL) AS delivered,
       count(*) FILTER (WHERE read_at IS NOT NULL) AS read,
       count(*) FILTER (WHERE failed_at IS NOT NULL) AS failed,
       count(*) FILTER (WHERE replied_at IS NOT NULL) AS replied,
       count(*) FILTER (WHERE skip_reason = 'opted_out' OR (r.dispatched_at IS NOT NULL AND EXISTS (
         SELECT 1 FROM contacts.contacts c WHERE c.account_id = $2 AND c.phone = r.phone AND c.opted_out AND c.opted_out_at >= r.dispatched_at))) AS opted_out,
       count(*) FILTER (WHERE skip_reason = 'suppressed') AS suppressed,
       count(*) FILTER (WHERE skip_reason = 'blocklisted') AS blocklisted
     FROM campaigns.recipients r WHERE campaign_id = $1`,
    [campaignId, accountId],
  );
  const row = rows[0]!;
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)])) as unknown as Progress;
}

/** Recipients in campaign order, after index `after`. */
export async function listRecipients(db: Pool, campaignId: string, status: RecipientStatus | undefined, page: { readonly limit: number; readonly after: number }): Promise<RecipientRow[]> {
  const { rows } = await db.query<RecipientRow>(
    `SELECT idx, to_jid, phone, contact_id, message_id, status, skip_reason, instance_id, error_code, error_reason,
       dispatched_at, sent_at, delivered_at, read_at, failed_at, replied_at
     FROM campaigns.recipients WHERE campaign_id = $1 AND ($2::text IS NULL OR status = $2) AND idx > $3
     ORDER BY idx LIMIT $4`,
    [campaignId, status ?? null, page.after, page.limit],
  );
  return rows;
}
