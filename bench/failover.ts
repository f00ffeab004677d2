/**
 * Fail-over benchmark: how long do a role's partitions stop when one of its processes dies, and how
 * soon does a new process of the role take work?
 * The api and two processes each of processor, connector and dispatcher run on a test prefix and
 * database under a steady load of sends (each followed to its `message.read` webhook). For each of
 * those three roles in turn: SIGKILL one of its two processes; "moved" is the time from the kill
 * until none of the role's groups holds a member of the killed process and each is stable again (its
 * partitions are the live members'); the pause is the time from the kill
 * until every send accepted in the second after it has reached its webhook (some of them are on the
 * killed member's partitions; the steady latency is printed beside it). Then a new process of the
 * role starts: the time until it holds partitions in one of the role's groups (its first work), and
 * until it is in all of them with every group stable. Last, the other
 * old process is stopped with SIGTERM: the time until it is out of every group.
 * With --static every process has a `GATEWAY_INSTANCE_ID`, and the killed one is started again
 * under its id at once, as a supervisor restarts it: the pause is then its restart's, and the new
 * process's first work its own start.
 * It prints figures; it never fails on them.
 *
 *   npm run bench:failover -- --rate 50
 *   npm run bench:failover -- --static                    # static members, restarted under their ids
 *   KAFKA_SESSION_TIMEOUT_MS=3000 npm run bench:failover   # the roles with 3 s sessions
 *   KAFKA_DEAD_MEMBER_CHECK_MS=0 npm run bench:failover    # killed members leave only when their sessions end
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import kafkajs, { type Admin } from 'kafkajs';
import { pino } from 'pino';
import { Pool, request } from 'undici';
import { repoRoot } from '../shared/repo-root.js';
import { loadConfig } from '../stack/config.js';
import { createKafka, groupTiming } from '../topics/index.js';
import { benchSlice, deliverableCustomers, numbersConnected, percentiles, childFlags, run, runMain, stop, until } from './support.js';

const { AssignerProtocol } = kafkajs;
const { values: flags } = parseArgs({ options: { rate: { type: 'string' }, static: { type: 'boolean' } } });
const RATE = Number(flags.rate ?? process.env.FAILOVER_RATE ?? 50);
const STATIC = flags.static === true;
const ROLES = ['processor', 'connector', 'dispatcher'] as const;
type Role = (typeof ROLES)[number];
const cli = path.join(repoRoot, 'dist', 'stack', 'cli.js');

interface Member {
  readonly clientId: string;
  readonly memberId: string;
  readonly partitions: number;
}

/** A role process the bench started; `instance` is its `GATEWAY_INSTANCE_ID` under --static. */
interface RoleProcess {
  readonly child: ChildProcess;
  readonly clientId: string;
  readonly instance: string | undefined;
  readonly at: number;
}

/**
 * Whether `member` is `process`'s. A static member keeps the client id of the first process that
 * joined under its instance id, so it is known by its member id (the instance id and a suffix of
 * each join), less the ids of the killed process that ran under the same instance before it.
 */
function isMemberOf(process: RoleProcess, member: Member, retired: ReadonlySet<string> = new Set()): boolean {
  if (process.instance === undefined) return member.clientId === process.clientId;
  return member.memberId.startsWith(`${process.instance}-`) && !retired.has(member.memberId);
}
type Groups = Map<string, { state: string; members: Member[] }>;

/** Ctrl-C ends the run early; the role processes, the test prefix and the database are removed. */
let interrupted = false;
process.once('SIGINT', () => (interrupted = true));

async function main(): Promise<void> {
  const slice = await benchSlice('failover');
  const { id } = slice;
  const chdbPath = (name: string) => path.join(tmpdir(), `${id}-chdb-${name}`);
  const port = 3900 + Math.floor(Math.random() * 90);
  const env = { ...slice.env, ALLOW_PRIVATE_NETWORK: 'true', PORT: String(port) };
  const config = loadConfig();
  const kafka = createKafka(config.kafka, pino({ level: 'silent' }));
  const admin = kafka.admin();
  await admin.connect();

  const issued = new Map<string, number>();
  const answered = new Set<string>();
  const accepted = new Map<string, number>();
  const read = new Map<string, number>();
  /** The event types each send's webhooks carried, to say where a send that was never read stopped. */
  const events = new Map<string, Set<string>>();
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (body.includes('message.read')) for (const match of body.matchAll(/fo-(\d+)-x/g)) read.set(match[1]!, performance.now());
      const type = /"event_type":"([^"]+)"/.exec(body)?.[1] ?? 'unknown';
      for (const match of body.matchAll(/fo-(\d+)-x/g)) events.set(match[1]!, (events.get(match[1]!) ?? new Set<string>()).add(type));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const children = new Set<ChildProcess>();
  const logFile = path.join(tmpdir(), `${id}-roles.log`);
  const log = openSync(logFile, 'a');
  let started = 0;
  const names = ['accounts'];
  const startRole = (role: string, instance = STATIC ? `${id}-${role}-${started + 1}` : undefined): RoleProcess => {
    const clientId = `${role}-${++started}`;
    names.push(clientId);
    const roleEnv = { ...process.env, ...env, CHDB_PATH: chdbPath(clientId), KAFKA_CLIENT_ID: clientId, ...(instance && { GATEWAY_INSTANCE_ID: instance }) };
    const at = performance.now();
    const child = spawn(process.execPath, [...childFlags(), cli, role], { env: roleEnv, stdio: ['ignore', log, log] });
    children.add(child);
    return { child, clientId, instance, at };
  };
  let loading = true;
  try {
    const account = JSON.parse(
      await run([cli, 'accounts', 'create', '--name', 'Failover', '--email', 'failover@gateway.local', '--sandbox-numbers', '8', '--plan', 'scale', '--json'], { ...env, CHDB_PATH: chdbPath('accounts') }),
    ) as { api_key: string; instance_ids: string[] };
    startRole('api');
    const running = new Map<Role, RoleProcess[]>();
    for (const role of ROLES) running.set(role, [startRole(role), startRole(role)]);
    const gateway = `http://127.0.0.1:${port}`;
    const auth = { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json' };
    await numbersConnected(gateway, auth, 8);
    for (const number of account.instance_ids) await post(`${gateway}/sandbox/instances/${number}/behaviour`, auth, { delivered_after_ms: 0, read_after_ms: 0 });
    await post(`${gateway}/webhooks`, auth, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` });

    const timing = groupTiming(config.kafka.sessionTimeoutMs);
    const membership = STATIC ? 'static members, the killed one started again under its id at once' : 'dynamic members, a new process started after the pause';
    const deadCheck = config.kafka.deadMemberCheckMs > 0 ? `peers remove a dead process's members (checked every ${config.kafka.deadMemberCheckMs} ms)` : 'no removal of dead members';
    console.log(`failover: ${RATE} sends/s; groups: session ${timing.sessionTimeout} ms, heartbeat ${timing.heartbeatInterval} ms; ${membership}; ${deadCheck}; role logs in ${logFile}`);
    const pool = new Pool(gateway, { connections: 8 });
    const customers = deliverableCustomers(500);
    const load = (async () => {
      const begun = performance.now();
      for (let tick = 0, n = 0; loading; tick++) {
        const wait = begun + tick * 100 - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        for (let i = 0; i < RATE / 10; i++) {
          const ref = String(++n);
          const body = JSON.stringify({ to: customers[n % customers.length], body: `Order ${n}`, client_reference: `fo-${ref}-x` });
          const at = performance.now();
          issued.set(ref, at);
          pool.request({ method: 'POST', path: '/messages/text', headers: auth, body }).then(
            async (response) => {
              await response.body.dump();
              if (response.statusCode === 202) accepted.set(ref, at);
              answered.add(ref);
            },
            () => answered.add(ref),
          );
        }
      }
    })();
    await until('webhooks flowing', () => read.size > RATE * 3);
    // Past the start-up backlog: the sends of the 10 s after webhooks began.
    const from = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    const steady = percentiles([...read].flatMap(([ref, at]) => (accepted.has(ref) && accepted.get(ref)! >= from && accepted.get(ref)! < from + 10_000 ? [at - accepted.get(ref)!] : [])));
    console.log(`steady: 202 → message.read webhook p50 ${steady.p50.toFixed(0)} ms, p99 ${steady.p99.toFixed(0)} ms`);
    console.log('role         partitions of killed   SIGKILL → moved   pause after SIGKILL   start → first partitions   start → in all groups   SIGTERM → out of groups');

    for (const role of ROLES) {
      if (interrupted) break;
      const [killed, other] = running.get(role)!;
      const before = await describe(admin, id);
      // The groups both processes are in (each process also has groups of its own).
      const roleGroups = [...before]
        .filter(([, g]) => [killed!, other!].every((p) => g.members.some((m) => isMemberOf(p, m))))
        .map(([groupId]) => groupId);
      const killedMembers = [...before.values()].flatMap((g) => g.members.filter((m) => isMemberOf(killed!, m)));
      const owned = killedMembers.reduce((sum, m) => sum + m.partitions, 0);
      const retired = new Set(killedMembers.map((m) => m.memberId));
      const kill = performance.now();
      killed!.child.kill('SIGKILL');
      const restarted = STATIC ? startRole(role, killed!.instance) : undefined;
      // Moved: no group of the role holds a member of the killed process, and every one is stable again.
      let moved = NaN;
      const moving = until(
        `the ${role}'s groups without the killed member`,
        async () => {
          const now = await describe(admin, id);
          return roleGroups.every((groupId) => now.get(groupId)?.state === 'Stable' && !now.get(groupId)!.members.some((m) => retired.has(m.memberId)));
        },
        120_000,
        50,
      ).then(
        () => (moved = performance.now() - kill),
        () => undefined,
      );
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const window = [...issued].filter(([, at]) => at >= kill && at < kill + 1_000).map(([ref]) => ref);
      await until(`the answers to the sends after the ${role} kill`, () => window.every((ref) => answered.has(ref)), 60_000, 20).catch(() => undefined);
      const after = window.filter((ref) => accepted.has(ref));
      let pause = NaN;
      await until(`the sends after the ${role} kill`, () => after.length > 0 && after.every((ref) => read.has(ref)), 120_000, 20).then(
        () => (pause = Math.max(...after.map((ref) => read.get(ref)!)) - kill),
        () => {
          const unread = after.filter((ref) => !read.has(ref));
          const stops = new Map<string, number>();
          for (const ref of unread) {
            const seen = [...(events.get(ref) ?? [])].sort().join('+') || 'no webhook';
            stops.set(seen, (stops.get(seen) ?? 0) + 1);
          }
          console.log(`  ${role}: ${unread.length} of ${after.length} sends after the kill not read; their webhooks: ${[...stops].map(([seen, n]) => `${n} ${seen}`).join(', ')}`);
        },
      );
      await moving;
      const fresh = restarted ?? startRole(role);
      let toWork = NaN;
      let joined = NaN;
      await until(
        `the new ${role} in every group of the role`,
        async () => {
          const now = await describe(admin, id);
          const holds = roleGroups.map((groupId) => now.get(groupId)?.members.find((m) => isMemberOf(fresh, m, retired)));
          if (Number.isNaN(toWork) && holds.some((m) => m !== undefined && m.partitions > 0)) toWork = performance.now() - fresh.at;
          return holds.every((m) => m !== undefined) && roleGroups.every((groupId) => now.get(groupId)?.state === 'Stable');
        },
        120_000,
        50,
      ).then(
        () => (joined = performance.now() - fresh.at),
        () => undefined,
      );
      const term = performance.now();
      other!.child.kill('SIGTERM');
      let left = NaN;
      await until(
        `the SIGTERMed ${role} out of its groups`,
        async () => {
          const now = await describe(admin, id);
          return roleGroups.every((groupId) => !now.get(groupId)?.members.some((m) => isMemberOf(other!, m)));
        },
        60_000,
        50,
      ).then(
        () => (left = performance.now() - term),
        () => undefined,
      );
      running.set(role, [fresh]);
      const s = (ms: number) => (Number.isNaN(ms) ? 'timed out' : `${(ms / 1000).toFixed(1)} s`);
      console.log(`${role.padEnd(12)} ${String(owned).padStart(20)}   ${s(moved).padStart(15)}   ${s(pause).padStart(19)}   ${s(toWork).padStart(24)}   ${s(joined).padStart(21)}   ${s(left).padStart(23)}`);
    }
    loading = false;
    await load;
    await pool.close();
  } finally {
    loading = false;
    await Promise.all([...children].map(stop));
    receiver.close();
    await admin.disconnect();
    await slice.dispose();
    for (const name of names) rmSync(chdbPath(name), { recursive: true, force: true });
  }
}

/** The slice's groups: state, and each member's client id with the number of partitions it holds. */
async function describe(admin: Admin, id: string): Promise<Groups> {
  const { groups } = await admin.listGroups();
  const ids = groups.map((g) => g.groupId).filter((groupId) => groupId.startsWith(id));
  const described = await admin.describeGroups(ids);
  return new Map(
    described.groups.map((group) => [
      group.groupId,
      {
        state: group.state,
        members: group.members.map((member) => ({ clientId: member.clientId, memberId: member.memberId, partitions: assignedPartitions(member.memberAssignment) })),
      },
    ]),
  );
}

function assignedPartitions(assignment: Buffer): number {
  if (assignment.length === 0) return 0;
  const decoded = AssignerProtocol.MemberAssignment.decode(assignment);
  return Object.values(decoded?.assignment ?? {}).reduce((sum, partitions) => sum + partitions.length, 0);
}

async function post(url: string, headers: Record<string, string>, body: unknown): Promise<void> {
  const response = await request(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new Error(`POST ${url}: ${response.statusCode} ${text}`);
}

runMain(main);
