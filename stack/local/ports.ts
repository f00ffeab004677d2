import net from 'node:net';

export interface Port {
  readonly host: string;
  readonly port: number;
}

/** Fails, naming the port, when the service could not bind where it must. */
export async function assertPortsFree(service: string, ports: readonly Port[]): Promise<void> {
  for (const { host, port } of ports) {
    const problem = await bindProblem(host, port);
    if (problem === 'EADDRINUSE') {
      throw new Error(`${service} cannot start: ${host}:${port} is already in use by a process this stack did not start`);
    }
    if (problem) throw new Error(`${service} cannot start: cannot listen on ${host}:${port} (${problem})`);
  }
}

function bindProblem(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}
