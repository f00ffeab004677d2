import { createHash } from 'node:crypto';
import type { CampaignState, PublicEvent } from '../../schemas/records.js';
import type { CampaignPausedPayload } from '../payloads.js';
import { asInstanceId } from '../../schemas/ids.js';
import { scheduledEvent } from './event.js';

/**
 * `campaign.paused` of a campaign the watch paused; its id derives from the paused state, so a
 * runner that writes the pause again after a crash announces it once.
 */
export function campaignPausedEvent(paused: CampaignState, decision: Pick<CampaignPausedPayload, 'reason' | 'scope' | 'instance_id' | 'figures' | 'thresholds'>): PublicEvent {
  const payload: CampaignPausedPayload = {
    campaign_id: paused.campaign_id,
    name: paused.name,
    reason: decision.reason,
    scope: decision.scope,
    instance_id: decision.instance_id,
    figures: decision.figures,
    thresholds: decision.thresholds,
    paused_at: new Date(paused.paused_at ?? paused.occurred_at).toISOString(),
  };
  const digest = createHash('sha256').update(`campaign.paused\n${paused.campaign_id}\n${paused.paused_at ?? paused.occurred_at}`).digest('hex').slice(0, 24);
  return scheduledEvent({
    event_id: `evt_${digest}` as PublicEvent['event_id'],
    occurred_at: paused.paused_at ?? paused.occurred_at,
    account_id: paused.account_id,
    project_id: paused.project_id,
    instance_id: decision.instance_id === null ? null : asInstanceId(decision.instance_id),
    event_type: 'campaign.paused',
    payload,
  });
}
