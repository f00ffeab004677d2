import type { Logger } from 'pino';
import type { Pool } from 'pg';
import type { ConnectionId } from '../../schemas/ids.js';
import type { ConfigRecord } from '../../schemas/records.js';
import type { Kafka, Producer, TopicSerdes } from '../../topics/index.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import type { Directory } from '../directory.js';
import { removeOrphanNumbers } from '../instances/orphans.js';
import type { CheckTrigger } from './machine.js';
import type { ConnectionsView } from './view.js';
import { startConnectionWriting } from './writing.js';

export interface SweeperDeps {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly producer: Producer;
  readonly pool: Pool;
  readonly logger: Logger;
  readonly clock?: Clock;
}

export interface RunningSweeper {
  /** Checks every connection now (what each period does). */
  sweep(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * The sweeper role (spec 3.1 rule 1): every `intervalMs` it holds every connection against its
 * account's plan and the existence of its account and project, suspending, resuming, advancing or
 * revoking through the writer. Between sweeps it follows `gw.config` and checks at once the
 * connections of an account whose plan changed or that was deleted, and of a deleted project.
 * Several sweepers may run: the writer serialises them, and a check that finds nothing to do writes nothing.
 * Each period also removes the numbers a deleted project left behind (processors/instances/orphans.ts).
 */
export async function startSweeper(deps: SweeperDeps, options: { intervalMs: number }): Promise<RunningSweeper> {
  const logger = deps.logger.child({ role: 'sweeper' });
  const { directory, connections, writer, stop } = await startConnectionWriting(deps, deps.clock ?? systemClock);
  const check = async (ids: readonly string[], trigger: CheckTrigger): Promise<number> => {
    let changed = 0;
    for (const id of ids) {
      try {
        const before = connections.get(id);
        const after = await writer.check(id as ConnectionId, trigger);
        if (after !== before) changed++;
      } catch (err) {
        logger.warn({ err, connection_id: id }, 'connection check failed; the next sweep tries again');
      }
    }
    return changed;
  };
  const live = () => [...connections.all()].filter((c) => c.to_status !== 'revoked').map((c) => c.connection_id);
  const sweep = async () => {
    const changed = await check(live(), 'sweep');
    if (changed > 0) logger.info({ changed }, 'sweep moved connections');
    return changed;
  };

  const plans = new Map([...directory.accounts.values()].map((a) => [a.id as string, a.plan]));
  const unsubscribe = directory.subscribe((key, record) => {
    const affected = affectedBy(key, record, plans, directory, connections);
    if (affected === undefined) return;
    void check(affected.ids, affected.trigger);
  });
  const removeOrphans = () =>
    removeOrphanNumbers({ ...deps, prefix: deps.serdes.prefix, directory }).then(
      (projects) => projects > 0 && logger.info({ projects }, 'removed the numbers of deleted projects'),
      (err: unknown) => logger.warn({ err }, 'could not remove the numbers of deleted projects; the next sweep tries again'),
    );
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(sweep, () => undefined).then(removeOrphans, removeOrphans);
  }, options.intervalMs);
  logger.info({ intervalMs: options.intervalMs }, 'sweeper running');
  return {
    sweep,
    async stop() {
      clearInterval(timer);
      unsubscribe();
      await running.catch(() => undefined);
      await stop();
    },
  };
}

/** The connections a `gw.config` record concerns, and why: a plan change, or a deleted account or project. */
function affectedBy(
  key: string,
  record: ConfigRecord | null,
  plans: Map<string, string>,
  directory: Directory,
  view: ConnectionsView,
): { ids: string[]; trigger: CheckTrigger } | undefined {
  const ids = (list: readonly { connection_id: string; to_status: string }[]) => list.filter((c) => c.to_status !== 'revoked').map((c) => c.connection_id);
  if (record === null) {
    const wasAccount = plans.delete(key);
    const linked = wasAccount ? view.ofAccount(key) : [...view.all()].filter((c) => c.project_id === key);
    return linked.length > 0 ? { ids: ids(linked), trigger: 'sweep' } : undefined;
  }
  if (record.entity.kind !== 'account') return undefined;
  const before = plans.get(key);
  plans.set(key, record.entity.plan);
  if (before === record.entity.plan || !directory.accounts.has(key)) return undefined;
  return { ids: ids(view.ofAccount(key)), trigger: 'plan_change' };
}
