import type { AdvisoryPayload } from '../payloads.js';
import { asAccountId, asEventId, derivedId } from '../../schemas/ids.js';
import type { PublicEvent } from '../../schemas/records.js';
import { scheduledEvent } from './event.js';

export interface AdvisoryInput {
  readonly accounts: readonly string[];
  readonly title: string;
  readonly impact: string;
  readonly action: string;
  readonly link: string;
}

/** Account-scope events: no project, no number; keyed by account id. */
export function advisoryEvents(advisory: AdvisoryInput, advisoryId: string, publishedAt: number): PublicEvent[] {
  const payload: AdvisoryPayload = {
    advisory_id: advisoryId,
    title: advisory.title,
    impact: advisory.impact,
    action: advisory.action,
    link: advisory.link,
    published_at: new Date(publishedAt).toISOString(),
  };
  return advisory.accounts.map((accountId) =>
    scheduledEvent({
      event_id: asEventId(derivedId('evt', advisoryId, accountId)),
      occurred_at: publishedAt,
      account_id: asAccountId(accountId),
      project_id: null,
      instance_id: null,
      event_type: 'advisory.published',
      scope: 'account',
      payload,
    }),
  );
}
