import { publishEvents } from '../../events/publish.js';
import { callEvents, connectionEvents, groupEvent, inboundEvent, instanceEvents, pairingEvent, statusEvent } from '../../events/renderers/index.js';
import type { MediaLinks } from '../../shared/media-links.js';
import type { PublicEvent } from '../../schemas/records.js';
import { continueTrace, GatewayFailure, topics, type Producer, type TopicSpec, type RecordHeaders } from '../../topics/index.js';
import { onBatch, valuesOf, type Handler, type Projection } from '../runtime/projection.js';

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
  const publish = <V>(topic: TopicSpec<V>, render: (value: V) => PublicEvent | readonly PublicEvent[]): Handler<unknown> =>
    onBatch(topic, async (_tx, records) => {
      await publishEvents(producer, valuesOf(records).flatMap((value) => rendered(render, value)));
    });
  /** Status facts of traced sends: each record is a `status.apply` hop, the parent of its events. */
  const publishStatuses: Handler<unknown> = onBatch(topics.messageStatus, async (_tx, records) => {
    const events: PublicEvent[] = [];
    const traces: (RecordHeaders | undefined)[] = [];
    const hops = records.flatMap(({ value, meta }) => {
      if (value === null) return [];
      const rendering = [rendered(statusEvent, value)].flat();
      const hop = continueTrace('status.apply', meta.headers, { attributes: { message_id: value.message_id, account_id: value.account_id, status: value.status } });
      for (const event of rendering) {
        events.push(event);
        traces.push(hop.headers);
      }
      return [hop];
    });
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
    handlers: [
      publish(topics.inboundMessages, (message) => inboundEvent(message, mediaUrl)),
      publishStatuses,
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
