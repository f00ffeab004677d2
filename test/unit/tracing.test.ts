import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { appendSend } from '../../processors/sends/append.js';
import type { SendCommand } from '../../schemas/records.js';
import { continueTrace, inTrace, startTrace, startTracing, type Producer } from '../../topics/index.js';

/** A producer that keeps the headers of every record it is given. */
function recordingProducer(headers: unknown[]): Producer {
  return {
    async send(_spec, records) {
      headers.push(...records.map((r) => r.headers));
      return new Map();
    },
    sendRaw: async () => undefined,
    disconnect: async () => undefined,
  };
}

// The producer above never encodes it: only its routing fields are read.
const command = { instance_id: 'inst_1', message_id: 'msg_1' } as Omit<SendCommand, 'expires_at'>;
const traceparent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

describe('tracing', () => {
  it('writes no header and starts no span while no OTLP endpoint is configured', async () => {
    await startTracing('unit', undefined);
    expect(startTrace('send.accept').headers).toBeUndefined();
    expect(continueTrace('send.network', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }).headers).toBeUndefined();
    const written: unknown[] = [];
    await inTrace('send.accept', {}, (hop) => appendSend(recordingProducer(written), command, hop.headers));
    expect(written).toEqual([undefined]);
  });

  it('carries the trace in traceparent from each hop to the next, and starts none for a record outside a trace', async () => {
    const collector = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end('{}')));
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const tracing = await startTracing('unit', `http://127.0.0.1:${(collector.address() as AddressInfo).port}`);
    try {
      const written: (Record<string, string> | undefined)[] = [];
      await inTrace('send.accept', {}, (hop) => appendSend(recordingProducer(written), command, hop.headers));
      const [, traceId, acceptId] = traceparent.exec(written[0]?.traceparent ?? '') ?? [];
      expect(traceId).toBeDefined();
      const next = continueTrace('send.network', { ...written[0], other: 'kept out' });
      const [, nextTraceId, nextId] = traceparent.exec(next.headers?.traceparent ?? '') ?? [];
      expect(nextTraceId).toBe(traceId);
      expect(nextId).not.toBe(acceptId);
      expect(Object.keys(next.headers ?? {})).toEqual(['traceparent']);
      next.end();
      expect(continueTrace('status.apply', {}).headers).toBeUndefined();
    } finally {
      await tracing.stop();
      collector.close();
    }
  });
});
