/** What the readiness probe reports of each dependency. */
export type DependencyName = 'kafka' | 'registry' | 'postgres' | 'clickhouse' | 's3' | 'smtp';
export type DependencyCheck =
  | { readonly status: 'up'; readonly latency_ms: number }
  | { readonly status: 'down'; readonly latency_ms: number; readonly error: string };
