import type { Directory } from '../../processors/directory.js';
import type { ConnectionsView } from '../../processors/connections/view.js';
import type { DeliveryTask, PublicEvent } from '../../schemas/records.js';
import { createConsumer, liveFetchResuming, openOffsetReader, topicName, topics, type ConsumedRecord } from '../../topics/index.js';
import { ConfigSync } from './config-sync.js';
import { waitForBusyEndpoints } from './backpressure.js';
import { Intake, type ConsumerDeps, type RunningIntake } from './intake.js';
import { reachablePartner, targetsOf } from './targets.js';
import { firstTasks } from './tasks.js';

/**
 * First attempts: the group `<prefix>dispatcher` reads `gw.events` and starts one delivery per
 * target of each event. It never waits for an endpoint: fetching goes on while deliveries run.
 * An event without targets (or an account event) is judged again after a catch-up of the directory
 * and the connections view, so a webhook, partner or connection written just before the event is
 * not missed; so is a project's event while partners are registered (a connection activated a
 * moment before it), its known deliveries starting at once and only the new ones after.
 */
export async function consumeEvents(deps: ConsumerDeps & { readonly directory: Directory; readonly connections: ConnectionsView }): Promise<RunningIntake> {
  const groupId = `${deps.serdes.prefix}dispatcher`;
  const consumer = await createConsumer(deps.kafka, deps.serdes, { groupId, topics: [topics.events], fromBeginning: true, fetch: liveFetchResuming });
  const intake = new Intake({ ...deps, consumer, groupId, prefix: deps.serdes.prefix });
  const configTopic = topicName(topics.config, deps.serdes.prefix);
  // One admin connection for every catch-up, rather than one each (up to four a second).
  const offsets = await openOffsetReader(deps.kafka);
  const sync = new ConfigSync(deps.directory, () => offsets.endOffsets(configTopic), deps.logger);
  const connectionsTopic = topicName(topics.connections, deps.serdes.prefix);
  const connectionsSync = new ConfigSync(deps.connections, () => offsets.endOffsets(connectionsTopic), deps.logger);
  const tasksOf = (event: PublicEvent): DeliveryTask[] | Error => {
    try {
      return firstTasks(event, targetsOf(event, deps.directory, deps.connections), Date.now());
    } catch (error) {
      // Only a payload_json that is not JSON gets here: no attempt could ever post it.
      return new Error(`event ${event.event_id} cannot be rendered: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  /**
   * Deliveries of an event judged once the directory (and the connections) hold every write before
   * it; `known` start at once and are not started twice.
   */
  const afterSync = async (event: PublicEvent, { timestamp: writtenAt, headers }: ConsumedRecord<unknown>, known: readonly DeliveryTask[]): Promise<void> => {
    const started = known.map((task) => deps.deliver(task, headers));
    await Promise.all([sync.covering(writtenAt), connectionsSync.covering(writtenAt)]);
    const tasks = tasksOf(event);
    const ids = new Set(known.map((task) => task.delivery_id));
    const added = tasks instanceof Error ? [] : tasks.filter((task) => !ids.has(task.delivery_id));
    await Promise.all([...started, ...added.map((task) => deps.deliver(task, headers))]);
  };
  const partnersRegistered = () => [...deps.directory.partners.values()].some(reachablePartner);
  await intake.consume([topics.events], (record, event, batch) => {
    const tasks = tasksOf(event);
    if (!(tasks instanceof Error) && waitForBusyEndpoints(deps.limiter, tasks, batch)) return false;
    if (tasks instanceof Error) intake.deadLetter(record, tasks.message);
    else if (tasks.length > 0 && event.scope !== 'account' && (event.project_id === null || !partnersRegistered())) {
      intake.admit(record, () => tasks.map((task) => () => deps.deliver(task, record.headers)));
    } else intake.admit(record, () => [() => afterSync(event, record, event.scope === 'account' ? [] : tasks)]);
    return true;
  });
  return {
    intake,
    async stop() {
      await consumer.stop();
      await offsets.close();
    },
  };
}
