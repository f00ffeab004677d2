import type { Admin, GroupDescription } from 'kafkajs';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '../../topics/index.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway.js';
import { groupsOf, partitionsOf } from '../support/groups.js';

/** Long enough that a member left by a killed process cannot be what moves its partitions here. */
const SESSION_MS = 60_000;

/**
 * Dispatchers started with `GATEWAY_INSTANCE_ID` are static members of their groups: one SIGKILLed
 * and started again under the same id takes back its partitions at once. Without it, the killed
 * member stayed in every group until its session ended, and the restarted process waited for it.
 */
describe('role processes with GATEWAY_INSTANCE_ID', () => {
  let env: TestEnv;
  let admin: Admin;
  const processes: GatewayProcess[] = [];
  // The client id is the instance's too, so that a member of either kind is known by its id's start.
  const dispatcher = (instance: string) => {
    const started = spawnGateway(['dispatcher'], { ...env.env, GATEWAY_INSTANCE_ID: `${env.id}-${instance}`, KAFKA_CLIENT_ID: `${env.id}-${instance}` });
    processes.push(started);
    return started;
  };

  beforeAll(async () => {
    // Without the peers' removal of dead members (dead-members.test.ts): only the instance id can move the partitions here.
    env = await createTestEnv({ KAFKA_SESSION_TIMEOUT_MS: String(SESSION_MS), KAFKA_DEAD_MEMBER_CHECK_MS: '0' });
    admin = createKafka(env.config.kafka, pino({ level: 'silent' })).admin();
    await admin.connect();
  });

  afterAll(async () => {
    for (const started of processes) started.kill('SIGKILL');
    await Promise.all(processes.map((started) => started.exited));
    await admin?.disconnect();
    await env?.dispose();
  });

  /** The dispatcher's groups, once every one is stable with one member of each instance, as `holds` wants them. */
  const settled = async (what: string, running: readonly GatewayProcess[], holds: (group: GroupDescription) => boolean = () => true) =>
    waitFor(
      what,
      async () => {
        for (const started of running) started.assertRunning();
        // The dispatcher's shared groups; each process also reads views in groups of its own.
        const groups = (await groupsOf(admin, env.id)).filter((g) => g.groupId.startsWith(`${env.id}.dispatcher`));
        const stable = groups.length > 0 && groups.every((g) => g.state === 'Stable' && g.members.length === 2 && memberOf(g, 'a') && memberOf(g, 'b') && holds(g));
        return stable ? groups : undefined;
      },
      { timeoutMs: SESSION_MS * 0.75, intervalMs: 100 },
    );
  /** A member's id is its instance id (or, without one, its client id) and a suffix the broker gives each join. */
  const memberOf = (group: GroupDescription, instance: string) => group.members.find((m) => m.memberId.startsWith(`${env.id}-${instance}-`));

  it("takes back a killed process's partitions under its id before the killed member's session ends", async () => {
    const first = dispatcher('a');
    const other = dispatcher('b');
    const before = new Map((await settled('both dispatchers in every group', [first, other])).map((g) => [g.groupId, memberOf(g, 'a')!]));
    expect([...before.values()].some((member) => partitionsOf(member).length > 0), 'the first process held no partition').toBe(true);

    first.kill('SIGKILL');
    await first.exited;
    const restarted = dispatcher('a');
    // The killed member's id is gone (its session has 60 s to run): a new join under the same instance holds its partitions.
    const after = await settled('the restarted dispatcher in every group', [restarted, other], (g) => memberOf(g, 'a')!.memberId !== before.get(g.groupId)?.memberId);
    for (const group of after) expect(partitionsOf(memberOf(group, 'a')!), group.groupId).toEqual(partitionsOf(before.get(group.groupId)!));

    // A second live process under the same id fences the one before it, which stops with 1.
    const duplicate = dispatcher('a');
    expect(await restarted.exited, restarted.output()).toBe(1);
    expect(restarted.output()).toContain('another process joined this group under GATEWAY_INSTANCE_ID');
    const fenced = new Map(after.map((g) => [g.groupId, memberOf(g, 'a')!.memberId]));
    await settled('the duplicate in every group', [duplicate, other], (g) => memberOf(g, 'a')!.memberId !== fenced.get(g.groupId));
  }, 180_000);
});
