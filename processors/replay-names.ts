// The names alone, apart from the projections: the command line reads them before any role loads.

/**
 * Projections `gateway replay` rebuilds, at any age: what a projection needs longer than its event
 * topics keep it is on a changelog (`changelogCovers`), or on a topic kept for ever (`gw.usage`).
 */
export const replayable = ['instances', 'connections', 'conversations', 'contacts', 'deliveries', 'calls', 'payments', 'usage', 'audience', 'audit', 'campaigns'] as const;

/** What `gateway replay` takes: the replayable projections, then the ClickHouse tables that have no projection. */
export const replayNames = [...replayable, 'analytics'] as const;
