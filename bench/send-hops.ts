/**
 * Where a send's time goes, from the spans the gateway exports over OTLP (docs/tracing.md): a
 * plain OTLP/HTTP receiver keeps the `send.accept`, `send.network` and `status.apply` spans of
 * each message, and `hops` puts them together with the moment the bench saw its `delivered` fact.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { percentiles } from './support.js';

interface ExportedSpan {
  readonly name: string;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly attributes: readonly { key: string; value: { stringValue?: string } }[];
  readonly events?: readonly { name: string; timeUnixNano: string }[];
}

interface Export {
  readonly resourceSpans: readonly { scopeSpans: readonly { spans: readonly ExportedSpan[] }[] }[];
}

/** One message's spans, as epoch milliseconds. */
interface MessageSpans {
  accept?: { start: number; end: number };
  network?: { start: number; end: number; claimed?: number; sent?: number };
  /** The first `status.apply` of the message (its `sent` status). */
  applied?: number;
}

const ms = (nanos: string) => Number(BigInt(nanos) / 1_000n) / 1_000;

export async function spanCollector() {
  const messages = new Map<string, MessageSpans>();
  const keep = (span: ExportedSpan) => {
    const messageId = span.attributes.find((a) => a.key === 'message_id')?.value.stringValue;
    if (messageId === undefined) return;
    const spans = messages.get(messageId) ?? {};
    messages.set(messageId, spans);
    const [start, end] = [ms(span.startTimeUnixNano), ms(span.endTimeUnixNano)];
    const event = (name: string) => span.events?.find((e) => e.name === name);
    if (span.name === 'send.accept') spans.accept = { start, end };
    if (span.name === 'send.network') {
      const [claimed, sent] = [event('claimed'), event('sent')];
      spans.network = { start, end, claimed: claimed && ms(claimed.timeUnixNano), sent: sent && ms(sent.timeUnixNano) };
    }
    if (span.name === 'status.apply') spans.applied = Math.min(spans.applied ?? start, start);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const exported = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Export;
        for (const { scopeSpans } of exported.resourceSpans) for (const { spans } of scopeSpans) spans.forEach(keep);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /**
     * Each hop's p50 and p99 over the messages whose hops all came in, `delivered` being when the
     * bench read each message's delivered fact (epoch ms, same machine clock).
     */
    hops(delivered: ReadonlyMap<string, number>) {
      const hops: Record<string, number[]> = {
        'api: accept (route to command acknowledged)': [],
        'log: command written -> connector fetched it': [],
        'connector: claim stored in Postgres': [],
        'connector: network answered': [],
        'connector: status written (batch outcomes stored, status acknowledged)': [],
        'log: status written -> processor applying it': [],
        'network: status written -> delivered fact read': [],
      };
      let complete = 0;
      for (const [messageId, { accept, network, applied }] of messages) {
        const deliveredAt = delivered.get(messageId);
        if (!accept || !network?.claimed || !network.sent || applied === undefined || deliveredAt === undefined) continue;
        complete += 1;
        const spans = Object.values(hops);
        [
          accept.end - accept.start,
          network.start - accept.end,
          network.claimed - network.start,
          network.sent - network.claimed,
          network.end - network.sent,
          applied - network.end,
          deliveredAt - network.end,
        ].forEach((value, i) => spans[i]!.push(value));
      }
      return { complete, hops: Object.entries(hops).map(([hop, values]) => ({ hop, ...percentiles(values) })) };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
