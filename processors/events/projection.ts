import { publishEvents } from '../../events/publish.js';
import { callEvents, connectionEvents, groupEvent, inboundEvent, instanceEvents, pairingEvent, statusEvent } from '../../events/renderers/index.js';
import type { MediaLinks } from '../../shared/media-links.js';
import type { PublicEvent } from '../../schemas/records.js';
import { continueTrace, GatewayFailure, topics, type Hop, type HopOptions, type Producer, type RecordHeaders, type TopicSpec } from '../../topics/index.js';
import { onBatch, type Handler, type Projection } from '../runtime/projection.js';

/** A topic whose records continue their trace: the hop's name and its span's attributes. */
interface Traced<V> {
  readonly hop: string;
  readonly attributes: (value: V) => HopOptions['attributes'];
}

export interface EventsProjectionDeps {
  readonly producer: Producer;
  readonly mediaLinks: Pick<MediaLinks, 'mediaUrl'>;
}

/**
 * Turns the facts of numbers into public events on `gw.events`, keyed by project id: messages,
 * statuses of our sends, number status changes, pairing codes and group changes. It keeps no
 * tables, only the runner's offsets, and writes each batch's events with one send before the batch
 * commits: a batch retried after a crash repeats the same event ids, which receivers de-duplicate
 * on (spec 6.3, at least once). Live only: a replay would announce the past again.
 */
export function eventsProjection({ producer, mediaLinks }: EventsProjectionDeps): Projection {
  /**
   * Writes the events of each batch's records. A `traced` topic's records (the status facts of
   * sends) are each a hop of their trace, named `traced.hop`, the parent of the events they give.
   */
  const publish = <V>(topic: TopicSpec<V>, render: (value: V) => PublicEvent | readonly PublicEvent[], traced?: Traced<V>): Handler<unknown> =>
    onBatch(topic, async (_tx, records) => {
      const events: PublicEvent[] = [];
      const traces: (RecordHeaders | undefined)[] = [];
      const hops: Hop[] = [];
      for (const { value, meta } of records) {
        if (value === null) continue;
        const hop = traced && continueTrace(traced.hop, meta.headers, { attributes: traced.attributes(value) });
        if (hop) hops.push(hop);
        for (const event of [rendered(render, value)].flat()) {
          events.push(event);
          traces.push(hop?.headers);
        }
      }
      try {
        await publishEvents(producer, events, traces);
      } finally {
        for (const hop of hops) hop.end();
      }
    });
  const mediaUrl = (mediaId: string) => mediaLinks.mediaUrl(mediaId);
  return {
    name: 'events',
    ddl: [],
    // No tables: only the runner's offsets, one row per partition.
    partitionsApart: true,
    handlers: [
      publish(topics.inboundMessages, (message) => inboundEvent(message, mediaUrl)),
      publish(topics.messageStatus, statusEvent, {
        hop: 'status.apply',
        attributes: (status) => ({ message_id: status.message_id, account_id: status.account_id, status: status.status }),
      }),
      publish(topics.instances, instanceEvents),
      publish(topics.pairing, pairingEvent),
      publish(topics.groups, groupEvent),
      publish(topics.connections, connectionEvents),
      publish(topics.calls, callEvents),
    ],
  };
}

/** A record that cannot be rendered never will be: the runner isolates it and dead-letters it. */
function rendered<V>(render: (value: V) => PublicEvent | readonly PublicEvent[], value: V): PublicEvent | readonly PublicEvent[] {
  try {
    return render(value);
  } catch (error) {
    throw GatewayFailure.nonRetryable(`event not renderable: ${error instanceof Error ? error.message : String(error)}`, error);
  }
}
