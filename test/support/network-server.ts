import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/** What the server does with a number's connection attempts. */
export type Behaviour =
  | { readonly kind: 'hold' }
  | { readonly kind: 'drop' }
  /** Leaves the upgrade unanswered: the client's socket stays connecting, and anything it sends fails. */
  | { readonly kind: 'stall' }
  /** Refuses the upgrade with this HTTP status: the session reads any refusal as the edge's transient close (503). */
  | { readonly kind: 'refuse'; readonly status: number };

export interface Connection {
  readonly number: string;
  readonly openedAt: number;
  closedAt?: number;
}

/**
 * A local stand-in for the network's WebSocket endpoint: it never speaks the protocol (the
 * network cannot be reached from here) but accepts, holds, drops or refuses connections per
 * number, and records every attempt and every open socket with its times.
 */
export class NetworkServer {
  readonly attempts: { readonly number: string; readonly at: number }[] = [];
  readonly connections: Connection[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly sockets = new Set<WebSocket>();
  /** Upgrades left unanswered, refused when the server closes. */
  private readonly stalled: ((accept: boolean, status: number) => void)[] = [];

  private readonly server: WebSocketServer;

  private constructor() {
    this.server = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      verifyClient: (info, done) => {
        const number = numberOf(info.req.url);
        this.attempts.push({ number, at: performance.now() });
        const behaviour = this.behaviourOf(number);
        if (behaviour.kind === 'refuse') done(false, behaviour.status);
        else if (behaviour.kind === 'stall') this.stalled.push(done);
        else done(true);
      },
    });
    this.server.on('connection', (socket, request) => {
      const number = numberOf(request.url);
      const connection: Connection = { number, openedAt: performance.now() };
      this.connections.push(connection);
      this.sockets.add(socket);
      socket.on('close', () => {
        connection.closedAt = performance.now();
        this.sockets.delete(socket);
      });
      socket.on('error', () => undefined);
      if (this.behaviourOf(number).kind === 'drop') socket.close();
    });
  }

  static async start(): Promise<NetworkServer> {
    const started = new NetworkServer();
    await new Promise<void>((resolve) => started.server.once('listening', resolve));
    return started;
  }

  /** The address a session of `number` connects to. */
  url(number: string): string {
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}/ws/chat?number=${encodeURIComponent(number)}`;
  }

  /** The address for `BAILEYS_WS_URL`, the number's id in place of `{instance_id}`. */
  template(): string {
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}/ws/chat?number={instance_id}`;
  }

  set(number: string, behaviour: Behaviour): void {
    this.behaviours.set(number, behaviour);
  }

  attemptsOf(number: string): number[] {
    return this.attempts.filter((a) => a.number === number).map((a) => a.at);
  }

  openOf(number: string): Connection[] {
    return this.connections.filter((c) => c.number === number && c.closedAt === undefined);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.terminate();
    for (const done of this.stalled.splice(0)) done(false, 503);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private behaviourOf(number: string): Behaviour {
    return this.behaviours.get(number) ?? { kind: 'hold' };
  }
}

function numberOf(url: string | undefined): string {
  return new URL(url ?? '/', 'ws://local').searchParams.get('number') ?? '';
}
