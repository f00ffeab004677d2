/**
 * The Connect component's budget, on this machine:
 * 1. size: `dist/widget/v1/connect.js` gzipped (level 9), against the 35 KB budget;
 * 2. time from `ServiceConnect.open()` to `service:ready` in Debian's Chromium, median of 20, on
 *    the demo partner page of a gateway started for the run, against the 300 ms budget and
 *    against a baseline made in the same page: the same bootstrap call (same session, same
 *    headers, same CORS) whose answer is written into a div, with no component around it.
 *
 *   npm run bench:widget   (BENCH_ROUNDS=20)
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { repoRoot } from '../shared/repo-root.js';
import { launchChromium } from '../test/support/browser.js';
import { benchSlice, percentiles, runMain, start, stop, until } from './support.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const SIZE_BUDGET = 35 * 1024;
const READY_BUDGET_MS = 300;
const cli = path.join(repoRoot, 'dist', 'stack', 'cli.js');

async function main(): Promise<void> {
  const bundle = readFileSync(path.join(repoRoot, 'dist', 'widget', 'v1', 'connect.js'));
  const gzipped = gzipSync(bundle, { level: 9 }).length;
  console.log(`connect.js: ${(bundle.length / 1024).toFixed(1)} KB, ${(gzipped / 1024).toFixed(1)} KB gzipped; budget 35 KB (${((gzipped / SIZE_BUDGET) * 100).toFixed(0)}% of it)`);

  const slice = await benchSlice('widget');
  const port = 3900 + Math.floor(Math.random() * 90);
  const demoPort = port + 100;
  const env = {
    ...slice.env,
    CHDB_PATH: path.join(tmpdir(), `${slice.id}-chdb`),
    PORT: String(port),
    DEMO_PORT: String(demoPort),
    PUBLIC_BASE_URL: `http://localhost:${port}`,
  };
  let gateway: ChildProcess | undefined;
  const browser = await launchChromium();
  try {
    gateway = start([cli, 'start'], env, 'ignore');
    const demo = `http://localhost:${demoPort}`;
    await until('the demo partner page', async () => (await request(demo).then((r) => (r.body.dump(), r.statusCode), () => 0)) === 200);
    const page = await browser.newPage();
    await page.goto(demo);
    await page.waitForFunction(() => 'ServiceConnect' in globalThis);
    const session = await page.evaluate(async () => {
      const response = await fetch('/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'bench@shop.test', company: 'Bench', external_id: 'bench' }) });
      return (await response.json()) as { session_token: string; api_base: string };
    });
    const component: number[] = [];
    const baseline: number[] = [];
    for (let round = 0; round <= ROUNDS; round++) {
      const opened = await page.evaluate(
        ({ session_token, api_base }) =>
          new Promise<number>((resolve) => {
            const g = globalThis as unknown as { ServiceConnect: { open(o: object): { close(): void } }; performance: { now(): number } };
            const began = g.performance.now();
            const handle = g.ServiceConnect.open({
              session: session_token,
              apiBase: api_base,
              onReady: () => {
                const took = g.performance.now() - began;
                handle.close();
                resolve(took);
              },
            });
          }),
        session,
      );
      const bare = await page.evaluate(async ({ session_token, api_base }) => {
        const g = globalThis as unknown as { performance: { now(): number }; document: { createElement(t: string): { textContent: string }; body: { append(n: unknown): void } } };
        const began = g.performance.now();
        const response = await fetch(`${api_base}/connect/bootstrap`, { headers: { 'X-Connect-Session': session_token } });
        const boot = (await response.json()) as { partner: { name: string }; step: string };
        const div = g.document.createElement('div');
        div.textContent = `${boot.partner.name}: ${boot.step}`;
        g.document.body.append(div);
        return g.performance.now() - began;
      }, session);
      // Round 0 warms both up (connections, the browser's caches) and is not counted.
      if (round > 0) {
        component.push(opened);
        baseline.push(bare);
      }
    }
    const ours = percentiles(component);
    const bare = percentiles(baseline);
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    console.log(`open() → service:ready: median ${median(component).toFixed(1)} ms, p99 ${ours.p99.toFixed(1)} ms (budget ${READY_BUDGET_MS} ms)`);
    console.log(`baseline (the same bootstrap call, rendered bare): median ${median(baseline).toFixed(1)} ms, p99 ${bare.p99.toFixed(1)} ms`);
    console.log(`ratio component / baseline (medians): ${(median(component) / median(baseline)).toFixed(2)}`);
  } finally {
    await browser.close();
    if (gateway) await stop(gateway);
    await slice.dispose();
  }
}

runMain(main);
