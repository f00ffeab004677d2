import { instancesProjection } from './instances/projection.js';
import type { Projection } from './runtime/projection.js';

export { runProjection, type RunnerDeps, type RunningProjection } from './runtime/runner.js';
export { replayProjection, waitUntilCaughtUp, type ReplayResult } from './runtime/replay.js';
export type { Projection } from './runtime/projection.js';

/** Every Postgres projection the processor role runs, by name. */
export const projections: ReadonlyMap<string, Projection> = new Map([instancesProjection].map((p) => [p.name, p]));
