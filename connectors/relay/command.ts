import { parseArgs } from 'node:util';
import { isHttpUrl } from '../../shared/http/index.js';
import { isWebhookEventType } from '../../events/catalogue.js';
import { newSigningSecret } from '../../events/signature.js';
import { runRelay, type RelayOptions } from './relay.js';
import { listenUsage } from './usage.js';

type Env = Readonly<Record<string, string | undefined>>;

/** `gateway listen`: the local relay, until Ctrl-C. Resolves with the exit code (`--help` is read before: stack/command-line.ts). */
export async function listenCommand(argv: readonly string[], env: Env, port: number): Promise<number> {
  const options = relayOptions(argv, env, port);
  if (typeof options === 'string') {
    console.error(`${options}\n\n${listenUsage}`);
    return 1;
  }
  if (options.generatedSecret) {
    console.log(`Signing secret of this session: ${options.secret}`);
    console.log('(verify X-Service-Signature with it; pass --secret to use your own)');
  }
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await runRelay(options, { line: (text) => console.log(text), error: (text) => console.error(text) }, stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** The relay's options from the command line and environment, or what is wrong with them. */
export function relayOptions(argv: readonly string[], env: Env, port: number): (RelayOptions & { generatedSecret: boolean }) | string {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        'forward-to': { type: 'string' },
        events: { type: 'string' },
        print: { type: 'boolean' },
        secret: { type: 'string' },
        'api-url': { type: 'string' },
        'api-key': { type: 'string' },
      },
    }));
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  const forwardTo = values['forward-to'];
  const print = values.print ?? false;
  if (forwardTo === undefined && !print) return 'Give --forward-to URL, --print, or both.';
  if (forwardTo !== undefined && !isHttpUrl(forwardTo)) return `--forward-to is not an http(s) URL: ${forwardTo}`;
  const apiUrl = values['api-url'] ?? `http://localhost:${port}`;
  if (!isHttpUrl(apiUrl)) return `--api-url is not an http(s) URL: ${apiUrl}`;
  const apiKey = values['api-key'] ?? env.GATEWAY_API_KEY?.trim();
  if (!apiKey) return 'Give an API key with --api-key or GATEWAY_API_KEY.';
  const events = (values.events ?? '').split(',').map((type) => type.trim()).filter(Boolean);
  const unknown = events.filter((type) => !isWebhookEventType(type));
  if (unknown.length > 0) return `--events: unknown event type ${unknown.join(', ')}`;
  const secret = values.secret === undefined || values.secret === '' ? undefined : values.secret;
  // Printing only signs nothing: no secret to show.
  return { apiUrl, apiKey, forwardTo, events, print, secret: secret ?? newSigningSecret(), generatedSecret: secret === undefined && forwardTo !== undefined };
}

