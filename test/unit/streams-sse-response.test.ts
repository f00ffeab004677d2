import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SseResponse } from '../../api/streams/sse.js';
import { StreamedEvent } from '../../api/streams/streamed-event.js';
import { envelopeBody } from '../../events/envelope.js';
import { asAccountId, asEventId, asProjectId } from '../../schemas/ids.js';
import type { PublicEvent } from '../../schemas/records.js';

const event = (n: number, size = 10): PublicEvent => ({
  event_id: asEventId(`evt_${n}`), occurred_at: 1_700_000_000_000, account_id: asAccountId('acc_1'), project_id: asProjectId('prj_1'),
  instance_id: null, event_type: 'message.received', scope: 'project', client_reference: null, group: null, sender: null, mentions: [],
  payload_json: JSON.stringify({ body: 'x'.repeat(size) }), connection: null, trigger: 'scheduled', webhook_id: null,
});

/** A server whose one response is handed to the test as an SSE sink, and a client connected to it. */
async function pair(limits = { maxBufferedBytes: 64 * 1024, drainTimeoutMs: 5_000 }): Promise<{ server: Server; sse: SseResponse; client: IncomingMessage }> {
  let sse!: SseResponse;
  const server = createServer((_req, res) => {
    sse = new SseResponse(res, limits);
    sse.open('1-0');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = await new Promise<IncomingMessage>((resolve, reject) => {
    request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, resolve).on('error', reject).end();
  });
  return { server, sse, client };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

function readAll(client: IncomingMessage): { text: () => string; ended: Promise<void> } {
  let text = '';
  client.setEncoding('utf8');
  client.on('data', (chunk: string) => (text += chunk));
  return { text: () => text, ended: new Promise((resolve) => client.once('close', resolve)) };
}

describe('the SSE response of one client', () => {
  it('writes the headers, the initial id, events with their cursor, heartbeats and ids that moved on', async () => {
    const { server, sse, client } = await pair();
    servers.push(server);
    expect(client.statusCode).toBe(200);
    expect(client.headers).toMatchObject({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    const read = readAll(client);
    sse.send(new StreamedEvent(1, 0, event(1)), '1-1');
    sse.ping('1-1');
    sse.ping('1-4');
    sse.close();
    await read.ended;
    expect(read.text()).toBe(
      `id: 1-0\n\nid: 1-1\nevent: message.received\ndata: ${envelopeBody(event(1))}\n\n: ping\n\n: ping\n\nid: 1-4\n\n`,
    );
    expect(sse.ended).toBe(true);
    sse.ping('1-5');
  });

  it('lets go of a client that does not read once its unread bytes pass the bound', async () => {
    const { server, sse, client } = await pair({ maxBufferedBytes: 64 * 1024, drainTimeoutMs: 5_000 });
    servers.push(server);
    client.pause();
    let sent = 0;
    while (!sse.ended && sent < 200_000) sse.send(new StreamedEvent(1, sent, event(sent++, 1_000)), `1-${sent}`);
    expect(sse.ended).toBe(true);
    // About 1 KB a frame: what the sockets took, plus the bound; far from what was offered.
    expect(sent).toBeLessThan(100_000);
  });

  it('paces a catch-up on the client, and lets go of one that stops reading', async () => {
    const reading = await pair({ maxBufferedBytes: 64 * 1024 * 1024, drainTimeoutMs: 5_000 });
    servers.push(reading.server);
    const read = readAll(reading.client);
    let sent = 0;
    while (reading.sse.send(new StreamedEvent(1, sent, event(sent++, 1_000)), `1-${sent}`));
    await reading.sse.drained();
    expect(reading.sse.ended).toBe(false);
    reading.sse.close();
    await read.ended;
    expect(read.text().split('event: message.received').length - 1).toBe(sent);

    const stuck = await pair({ maxBufferedBytes: 64 * 1024 * 1024, drainTimeoutMs: 200 });
    servers.push(stuck.server);
    stuck.client.pause();
    // The sockets take a few megabytes before the client's pause shows; then the drain never comes.
    let n = 0;
    while (!stuck.sse.ended && n < 200_000) {
      while (stuck.sse.send(new StreamedEvent(1, n, event(n++, 1_000)), `1-${n}`));
      await stuck.sse.drained();
    }
    expect(stuck.sse.ended).toBe(true);
    expect(n).toBeLessThan(100_000);
  });
});
