import { parentPort, workerData } from 'node:worker_threads';
import { projectionsFor, replayMember, runProjection, type RunningProjection } from '../processors/index.js';
import { backlogFetch, createKafka, createProducer, RunningGroups } from '../topics/index.js';
import { createMediaLinksOf, createPool, registeredSerdes } from './clients.js';
import type { Config } from './config.js';
import { createLogger } from './logger.js';
import type { FromMember, ToMember } from './replay-members.js';

/**
 * A worker thread's member of replay groups (`replay-members.ts`): joins the group it is told to,
 * applies the partitions the group gives it into the replay's schema, and leaves when told.
 */
const { config } = workerData as { config: Config };
const port = parentPort!;
const logger = createLogger(config.logLevel, config.logFormat).child({ thread: 'replay-member' });
const kafka = createKafka(config.kafka, logger, { groups: new RunningGroups() });
const connected = (async () => {
  const serdes = await registeredSerdes(config);
  const producer = await createProducer(kafka, serdes);
  return { kafka, serdes, producer, pool: createPool(config, logger), logger, mediaLinks: createMediaLinksOf(config) };
})();
let running: RunningProjection | undefined;

async function answer(message: ToMember): Promise<FromMember> {
  const deps = await connected;
  if (message.kind === 'join') {
    const projection = projectionsFor(deps, 'replay').get(message.group.projection);
    if (!projection) return { kind: 'failed', message: `no projection ${message.group.projection}` };
    const { group, index } = message;
    running = await runProjection(deps, projection, { schema: group.schema, ...replayMember(group, index), lock: 'none', fetch: backlogFetch, replaying: true });
    return { kind: 'joined' };
  }
  const left = running;
  running = undefined;
  await left?.stop();
  return { kind: 'left', applied: left?.applied() ?? 0 };
}

port.on('message', (message: ToMember) => {
  answer(message).then(
    (reply) => port.postMessage(reply),
    (error: unknown) => port.postMessage({ kind: 'failed', message: error instanceof Error ? error.message : String(error) } satisfies FromMember),
  );
});
