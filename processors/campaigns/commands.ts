import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { asAccountId, asEventId, asProjectId, newId } from '../../schemas/ids.js';
import type { CampaignRecipient, CampaignState } from '../../schemas/records.js';
import { DeadlineExceeded, withDeadline } from '../../shared/deadline.js';
import { topics, type Producer } from '../../topics/index.js';
import { chunkKey } from './ids.js';
import { campaignById, type CampaignRow, type CampaignStatus } from './queries.js';
import { CampaignRefused } from './refused.js';

/** Recipients per record of `gw.campaigns.recipients`: about 100 kB with variables, far under a record's limit. */
export const CHUNK_SIZE = 500;
/** How long a command waits for the log and then for the projection to show it. */
const WRITE_DEADLINE_MS = 10_000;
const POLL_MS = 25;

export interface CampaignCommandDeps {
  readonly pool: Pool;
  readonly producer: Producer;
}

/** What a campaign is made of; the status and times are the commands'. */
export type CampaignDraft = Pick<
  CampaignState,
  'name' | 'message_type' | 'content' | 'time_zone' | 'start_at' | 'hours_from' | 'hours_to' | 'instance_ids' | 'pool_id' | 'pace_per_minute' | 'invalid_rows'
>;

/** Writes a draft campaign: its recipients in chunks, then its state, and answers it once projected. */
export async function createCampaign(
  deps: CampaignCommandDeps,
  owner: { readonly accountId: string; readonly projectId: string },
  draft: CampaignDraft,
  recipients: readonly CampaignRecipient[],
): Promise<CampaignState> {
  const campaignId = newId('cmp');
  const now = Date.now();
  const chunks = [];
  for (let first = 0; first < recipients.length; first += CHUNK_SIZE) {
    const chunk = first / CHUNK_SIZE;
    chunks.push({
      key: chunkKey(campaignId, chunk),
      value: { event_id: asEventId(randomUUID()), occurred_at: now, account_id: asAccountId(owner.accountId), campaign_id: campaignId, chunk, first_index: first, recipients: recipients.slice(first, first + CHUNK_SIZE) },
    });
  }
  // The recipients first: a campaign on the log always has all of its recipients there.
  for (let i = 0; i < chunks.length; i += 20) await withDeadline(deps.producer.send(topics.campaignRecipients, chunks.slice(i, i + 20)), WRITE_DEADLINE_MS);
  const state: CampaignState = {
    ...draft,
    event_id: asEventId(randomUUID()),
    occurred_at: now,
    account_id: asAccountId(owner.accountId),
    project_id: asProjectId(owner.projectId),
    campaign_id: campaignId,
    status: 'draft',
    recipients: recipients.length,
    chunks: chunks.length,
    pause_reason: null,
    created_at: now,
    started_at: null,
    paused_at: null,
    ended_at: null,
  };
  return writeState(deps, state, async () => (await recipientsProjected(deps.pool, campaignId)) === recipients.length);
}

/** A campaign of the project, as projected; 404 when it is another project's or none. */
export async function campaignOf(pool: Pool, projectId: string, campaignId: string): Promise<CampaignRow> {
  const row = await campaignById(pool, campaignId);
  if (row === undefined || row.state.project_id !== projectId) throw new CampaignRefused('not_found');
  return row;
}

export type CampaignAction = 'start' | 'pause' | 'resume' | 'cancel';

/** The statuses each action applies to. */
const FROM: Readonly<Record<CampaignAction, readonly CampaignStatus[]>> = {
  start: ['draft'],
  pause: ['running', 'scheduled'],
  resume: ['paused'],
  cancel: ['draft', 'scheduled', 'running', 'paused'],
};

/** The state after an action; `campaign_state` (409) when the campaign's status does not allow it. */
export function nextState(state: CampaignState, action: CampaignAction, now: number, pauseReason = 'requested'): CampaignState {
  if (!FROM[action].includes(state.status as CampaignStatus)) throw new CampaignRefused('campaign_state', { status: state.status });
  const due = state.start_at === null || state.start_at <= now;
  const base = { ...state, event_id: asEventId(randomUUID()), occurred_at: now };
  switch (action) {
    case 'start':
      return { ...base, status: due ? 'running' : 'scheduled', started_at: now };
    case 'resume':
      return { ...base, status: due ? 'running' : 'scheduled', pause_reason: null, paused_at: null };
    case 'pause':
      return { ...base, status: 'paused', pause_reason: pauseReason, paused_at: now };
    case 'cancel':
      return { ...base, status: 'cancelled', ended_at: now };
  }
}

/** Runs an action on a campaign of the project and answers the new state once projected. */
export async function actOn(deps: CampaignCommandDeps, projectId: string, campaignId: string, action: CampaignAction): Promise<CampaignState> {
  const { state } = await campaignOf(deps.pool, projectId, campaignId);
  return writeState(deps, nextState(state, action, Date.now()));
}

/** Changes a draft (its message, schedule, numbers, pace or name); `campaign_state` once it left draft. */
export async function editDraft(deps: CampaignCommandDeps, projectId: string, campaignId: string, change: (state: CampaignState) => Partial<CampaignDraft>): Promise<CampaignState> {
  const { state } = await campaignOf(deps.pool, projectId, campaignId);
  if (state.status !== 'draft') throw new CampaignRefused('campaign_state', { status: state.status });
  return writeState(deps, { ...state, ...change(state), event_id: asEventId(randomUUID()), occurred_at: Date.now() });
}

/** Writes a campaign's state and waits until the projection shows it (or a later one). */
export async function writeState(deps: CampaignCommandDeps, state: CampaignState, applied: () => Promise<boolean> = async () => true): Promise<CampaignState> {
  const deadline = Date.now() + WRITE_DEADLINE_MS;
  await withDeadline(deps.producer.send(topics.campaigns, [{ key: state.campaign_id, value: state }]), WRITE_DEADLINE_MS);
  for (;;) {
    const row = await campaignById(deps.pool, state.campaign_id);
    if (row !== undefined && row.updated_at.getTime() >= state.occurred_at && (await applied())) return row.state.event_id === state.event_id ? state : row.state;
    if (Date.now() > deadline) throw new DeadlineExceeded(WRITE_DEADLINE_MS);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function recipientsProjected(pool: Pool, campaignId: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM campaigns.recipients WHERE campaign_id = $1', [campaignId]);
  return Number(rows[0]!.n);
}
