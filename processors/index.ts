import type { MediaLinks } from '../shared/media-links.js';
import type { Pool } from 'pg';
import type { Kafka, Producer, TopicSerdes } from '../topics/index.js';
import { contactsProjection } from './contacts/index.js';
import { conversationsProjection, seedMessageStates } from './conversations/index.js';
import { seedContactStates } from './contacts/index.js';
import { deliveriesProjection } from './deliveries/index.js';
import { eventsProjection } from './events/index.js';
import { instancesProjection } from './instances/projection.js';
import { connectionsProjection } from './connections/projection.js';
import type { Projection } from './runtime/projection.js';
import { usageEventsTable, usageProjection } from './usage/index.js';
import type { ClickHouseTable } from './runtime/clickhouse-table.js';
import { callsProjection } from './calls/projection.js';
import { paymentsProjection } from './payments/projection.js';
import { audienceProjection } from './audience/index.js';
import { analyticsTables } from './analytics/index.js';
import { auditProjection } from './audit/index.js';
import { campaignsProjection, type CampaignWatch } from './campaigns/index.js';

export { replayable, replayNames } from './replay-names.js';
export { runProjection, type RunnerDeps, type RunningProjection } from './runtime/runner.js';
export { MEMBERS_FROM_RECORDS, projectionGaps, replayAll, replayProjection, waitUntilCaughtUp, replayMember, type ReplayedTables, type JoinedMembers, type ReplayGroup, type ReplayMembers } from './runtime/replay.js';
export { LogGapsError, logGaps, type LogGap, type ProjectionGaps, type ReplayResult } from './runtime/log-gaps.js';
export { replayTable, tableGaps } from './runtime/clickhouse-replay.js';
export { startTableWriter, type ClickHouseTable, type RunningTableWriter } from './runtime/clickhouse-table.js';
export type { Projection } from './runtime/projection.js';
export { instancesProjection } from './instances/projection.js';
export { conversationsProjection } from './conversations/index.js';
export { deliveriesProjection } from './deliveries/index.js';
export { callsProjection } from './calls/projection.js';
export { callById, listCalls, type CallRow } from './calls/queries.js';
export { paymentsProjection } from './payments/projection.js';
export { invoicesOf, subscriptionOf, type InvoiceRow, type LatestAttempt, type SubscriptionRow } from './payments/queries.js';

/**
 * Writes to their changelogs the contacts and messages of a deployment older than them, once: before
 * the processors start, and before a replay, which would otherwise rebuild the projection without them.
 */
export async function seedChangelogs(deps: { pool: Pool; producer: Producer; kafka: Kafka; serdes: TopicSerdes }): Promise<{ contacts: number; messages: number }> {
  return { contacts: await seedContactStates(deps), messages: await seedMessageStates(deps) };
}

/**
 * The Postgres projections the processor role runs, by name. `replay` mode is for rebuilding:
 * projections that announce public events do not announce them twice.
 */
export function projectionsFor(
  { producer, mediaLinks, watch }: { readonly producer: Producer; readonly mediaLinks: MediaLinks; readonly watch?: CampaignWatch },
  mode: 'live' | 'replay',
): ReadonlyMap<string, Projection> {
  const projections = [
    instancesProjection, connectionsProjection, conversationsProjection({ producer, mode }), contactsProjection({ producer, mode }), usageProjection(producer, mode),
    deliveriesProjection, callsProjection, paymentsProjection, audienceProjection, auditProjection,
    // A replay feeds no facts to the campaign watch: they are the past.
    campaignsProjection({ watch: mode === 'live' ? watch : undefined, mode }),
  ];
  // The events projection only announces what happens now: replayed, it would announce the past again.
  if (mode === 'live') projections.push(eventsProjection({ producer, mediaLinks }));
  return new Map(projections.map((p) => [p.name, p]));
}

/**
 * The ClickHouse tables `gateway replay <name>` rebuilds: with the Postgres projection of that
 * name, or alone (`analytics`: the analyst tables of docs/analytics.md).
 */
export function clickhouseTablesFor(mode: 'live' | 'replay'): ReadonlyMap<string, readonly ClickHouseTable[]> {
  return new Map([
    ['usage', [usageEventsTable(mode)]],
    ['analytics', analyticsTables],
  ]);
}
