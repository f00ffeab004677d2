export { usageProjection } from './projection.js';
export { startUsageWriter, type RunningUsageWriter, type UsageWriterDeps } from './writer.js';
export { accountUsage, type AccountUsage } from './counters.js';
export { ensureUsageTable, usageEventsTable, usageByPeriod, projectsUsageByPeriod, type Granularity, type PeriodUsage, type UsageQuery } from './table.js';
export { periodOf, type Period } from './period.js';
export { thresholdPercents } from './thresholds.js';
