import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClickHouse } from '../../shared/clickhouse.js';

/**
 * `CLICKHOUSE_URL`'s client, against an HTTP server that answers as ClickHouse's HTTP interface
 * does (no ClickHouse server runs here): the client library is loaded on first use.
 */
describe('the ClickHouse server client', () => {
  const seen: { method: string; query: string }[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://clickhouse');
      const query = url.searchParams.get('query') ?? body;
      seen.push({ method: request.method ?? '', query });
      response.setHeader('content-type', 'application/x-ndjson');
      response.end(query.startsWith('SELECT') ? '{"n":1}\n{"n":2}\n' : '');
    });
  });
  let url = '';

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends commands and reads rows once used, and closes whether used or not', async () => {
    await createClickHouse({ kind: 'server', url }).close();
    expect(seen).toEqual([]);

    const clickhouse = createClickHouse({ kind: 'server', url });
    await clickhouse.command('CREATE TABLE IF NOT EXISTS t (n UInt8) ENGINE = Memory');
    expect(await clickhouse.query<{ n: number }>('SELECT n FROM t')).toEqual([{ n: 1 }, { n: 2 }]);
    await clickhouse.close();
    expect(seen.map((s) => s.query)).toEqual([
      expect.stringContaining('CREATE TABLE IF NOT EXISTS t'),
      expect.stringContaining('SELECT n FROM t'),
    ]);
  });
});
