// Apart from the relay: the command line prints it before anything is loaded.
import { webhookEventTypes } from '../../events/catalogue.js';

export const listenUsage = `Usage: gateway listen (--forward-to URL | --print) [--events a,b] [--print] [--secret S] [--api-url URL] [--api-key K]

  --forward-to URL   post each event of the project to this URL, signed like a production webhook
  --events a,b       only these event types (default: all); one of ${webhookEventTypes.join(', ')}
  --print            print each event (time, type, id and, when forwarding, the answer); alone: print only
  --secret S         signing secret of the forwarded posts (default: a new one, printed at start)
  --api-url URL      the gateway API (default: http://localhost:$PORT)
  --api-key K        an API key with events:read (default: $GATEWAY_API_KEY)
`;
