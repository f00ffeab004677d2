import type { ApiContext } from '../../api/context.js';
import { Directory } from '../../processors/directory.js';
import { ConnectionsView } from '../../processors/connections/view.js';
import { ConnectionWriter } from '../../processors/connections/writer.js';
import { systemClock } from '../../shared/clock.js';
import type { Clients } from '../../stack/clients.js';

/** The context of route plugins registered alone in a test: empty views that follow nothing. */
export function routeContext(clients: Clients): ApiContext {
  const directory = new Directory();
  const connections = new ConnectionsView();
  const connectionWriter = new ConnectionWriter({
    pool: clients.pool,
    kafka: clients.kafka,
    producer: clients.producer,
    prefix: clients.serdes.prefix,
    view: connections,
    directory,
    clock: systemClock,
  });
  return { clients, directory, connections, connectionWriter, clock: systemClock };
}
