import net from 'node:net';

/**
 * A TCP proxy in front of a server whose connections the test can hold, as a network that drops
 * their packets holds them: while stalled, bytes either way wait in the proxy and both ends stay
 * open. Connections made after the stall flow.
 */
export class StallingProxy {
  private readonly stalled = new WeakSet<net.Socket>();
  private readonly held: Array<() => void> = [];
  private readonly sockets = new Set<net.Socket>();

  private constructor(private readonly server: net.Server) {}

  static async start(target: { host: string; port: number }): Promise<StallingProxy> {
    const server = net.createServer();
    const proxy = new StallingProxy(server);
    server.on('connection', (client) => proxy.pipe(client, net.connect(target)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Holds the connections open now. */
  stall(): void {
    for (const socket of this.sockets) this.stalled.add(socket);
  }

  resume(): void {
    for (const socket of this.sockets) this.stalled.delete(socket);
    for (const release of this.held.splice(0)) release();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private pipe(client: net.Socket, upstream: net.Socket): void {
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    const forward = (to: net.Socket) => (chunk: Buffer) => {
      if (this.stalled.has(to)) this.held.push(() => to.write(chunk));
      else to.write(chunk);
    };
    client.on('data', forward(upstream));
    upstream.on('data', forward(client));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }
}
