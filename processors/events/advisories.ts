import type { Logger } from 'pino';
import { startDirectory } from '../directory.js';
import { isHttpUrl } from '../../shared/http/index.js';
import { publishEvents } from '../../events/publish.js';
import { advisoryEvents, type AdvisoryInput } from '../../events/renderers/index.js';
import { asEventId, newId } from '../../schemas/ids.js';
import type { ConfigRecord } from '../../schemas/records.js';
import { topics, type Kafka, type Producer, type TopicSerdes } from '../../topics/index.js';

export interface PublishedAdvisory {
  readonly advisory_id: string;
  readonly published_at: string;
  readonly events: readonly { readonly account_id: string; readonly event_id: string }[];
}

export interface AdvisoryDeps {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly producer: Producer;
  readonly logger: Logger;
}

/**
 * `gateway advisories publish`: one `advisory.published` event per affected account (spec 6.1:
 * account scope, sent only to the accounts named), all with the same advisory_id. Accounts are
 * checked against `gw.config` first, so a mistyped id fails instead of reaching nobody.
 */
export async function publishAdvisory(deps: AdvisoryDeps, input: AdvisoryInput, now = Date.now()): Promise<PublishedAdvisory> {
  const advisory = checkedAdvisory(input);
  const running = await startDirectory(deps);
  try {
    const unknown = advisory.accounts.filter((id) => !running.directory.accounts.has(id));
    if (unknown.length > 0) throw new Error(`unknown account ${unknown.join(', ')}`);
  } finally {
    await running.stop();
  }
  const advisoryId = newId('adv');
  const events = advisoryEvents(advisory, advisoryId, now);
  // Kept first, for GET /advisories at any age: a failure in between leaves an advisory listed
  // whose events were not sent, never events of one that cannot be listed.
  await deps.producer.send(topics.config, [{ key: advisoryId, value: advisoryRecord(advisory, advisoryId, now) }]);
  await publishEvents(deps.producer, events);
  return {
    advisory_id: advisoryId,
    published_at: new Date(now).toISOString(),
    events: events.map((event) => ({ account_id: event.account_id, event_id: event.event_id })),
  };
}

function advisoryRecord(advisory: AdvisoryInput, advisoryId: string, now: number): ConfigRecord {
  const { accounts, title, impact, action, link } = advisory;
  return {
    event_id: asEventId(newId('cfg')),
    occurred_at: now,
    account_id: null,
    project_id: null,
    instance_id: null,
    entity_id: advisoryId,
    entity: { kind: 'advisory', accounts, title, impact, action, link, published_at: now },
  };
}

/** The input trimmed, accounts without repeats; throws on what would make an unusable advisory. */
export function checkedAdvisory(input: AdvisoryInput): AdvisoryInput {
  const accounts = [...new Set(input.accounts.map((id) => id.trim()).filter((id) => id !== ''))];
  if (accounts.length === 0) throw new Error('--account is required (once per affected account)');
  const title = required('title', input.title);
  const impact = required('impact', input.impact);
  const action = required('action', input.action);
  const link = required('link', input.link);
  if (!isHttpUrl(link)) throw new Error('--link must be an absolute http(s) URL');
  return { accounts, title, impact, action, link };
}

function required(option: string, value: string): string {
  const trimmed = value.trim();
  if (trimmed === '') throw new Error(`--${option} is required`);
  return trimmed;
}
