import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../shared/repo-root.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { spawnGateway } from '../support/gateway.js';
import { canSignIn } from '../support/sign-in.js';

describe('gateway accounts create', () => {
  let env: TestEnv;
  let clients: Clients;
  let api: RunningApi;

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    api = await startApi(clients, { listen: false });
  });
  afterAll(async () => {
    await api?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('prints {account_id, project_id, api_key, instance_ids} and the key works at once', async () => {
    const cli = spawnGateway(['accounts', 'create', '--name', 'Acme', '--email', 'ops@acme.test', '--sandbox-numbers', '2', '--plan', 'pro', '--json'], env.env);
    expect(await cli.exited, cli.output()).toBe(0);
    const created = JSON.parse(cli.stdout().trim().split('\n').pop()!) as { account_id: string; project_id: string; api_key: string; instance_ids: string[] };
    expect(created.api_key).toMatch(/^svc_live_[A-Za-z0-9]{32}$/);
    expect(created.instance_ids).toHaveLength(2);
    await api.directory.until(() => canSignIn(api.directory, created.account_id));
    const response = await api.app.inject({ method: 'GET', url: '/me/entitlements', headers: { authorization: `Bearer ${created.api_key}` } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ plan: 'pro' });
  });

  it('refuses a call without the required options', async () => {
    const cli = spawnGateway(['accounts', 'create', '--name', 'NoEmail'], env.env);
    expect(await cli.exited).toBe(1);
    expect(cli.output()).toMatch(/accounts create --name N --email E/);
  });
});

describe('gateway help', () => {
  /** The built CLI, with stdout and stderr apart: none of these starts a service. */
  const gateway = (...args: string[]) => {
    const run = spawnSync(process.execPath, [path.join(repoRoot, 'dist', 'stack', 'cli.js'), ...args], { encoding: 'utf8', timeout: 30_000 });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr };
  };

  // The matrix of forms is test/unit/command-line.test.ts; these check the process: streams and exit codes.
  it.each([['--help'], ['-h']])('prints the usage on stdout for %s, exit 0', (flag) => {
    const run = gateway(flag);
    expect(run).toMatchObject({ status: 0, stderr: '' });
    expect(run.stdout).toMatch(/^Usage: gateway <command>/);
    expect(run.stdout).toContain('dead-letters retry');
  });

  it.each([
    [['help', 'accounts'], 'gateway accounts create --name N --email E'],
    [['accounts', 'create', '--help'], 'gateway accounts create --name N --email E'],
    [['listen', '--help'], 'Usage: gateway listen'],
  ])('prints one command’s usage for %j, exit 0', (args, synopsis) => {
    const run = gateway(...args);
    expect(run).toMatchObject({ status: 0, stderr: '' });
    expect(run.stdout).toContain(synopsis);
  });

  it.each([[['--bogus']], [['bogus']]])('refuses %j on stderr with the usage, exit 1', (args) => {
    const run = gateway(...args);
    expect(run).toMatchObject({ status: 1, stdout: '' });
    expect(run.stderr).toContain('Usage: gateway <command>');
  });
});
