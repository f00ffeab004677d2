import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConnectionRef } from '../../schemas/records.js';

export interface Received {
  /** The path: a partner id, or an account webhook id. */
  readonly target: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly signature: string | undefined;
  readonly contentType: string | undefined;
  readonly raw: Buffer;
  readonly body: { connection?: ConnectionRef; sender?: { phone?: string | null }; event_type: string };
  readonly at: number;
}

/** One local HTTP server for every partner and webhook: the path names the target, `answer` its status. */
export class Receiver {
  readonly received: Received[] = [];
  private server!: Server;

  constructor(private readonly answer: (target: string, earlier: number) => number) {}

  get base(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const header = (name: string) => {
          const value = req.headers[name];
          return Array.isArray(value) ? value[0] : value;
        };
        const request: Received = {
          target: (req.url ?? '/').slice(1),
          eventId: header('x-service-event-id') ?? '',
          eventType: header('x-service-event-type') ?? '',
          signature: header('x-service-signature'),
          contentType: header('content-type'),
          raw,
          body: JSON.parse(raw.toString('utf8')) as Received['body'],
          at: Date.now(),
        };
        const earlier = this.of(request.target, request.eventId).length;
        this.received.push(request);
        res.writeHead(this.answer(request.target, earlier), { 'content-type': 'text/plain' }).end('answer');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  of(target: string, eventId?: string): Received[] {
    return this.received.filter((r) => r.target === target && (eventId === undefined || r.eventId === eventId));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

