import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Account } from './api.js';
import { AuditLog, type Delivery, ErrorLine, logoSrc, Section, ShownOnce, useAction, useConfirm, useListView, when } from './ui.js';

const TABS = ['Connected apps', 'Numbers', 'API keys', 'Webhooks', 'Usage', 'Team', 'Audit log'] as const;
type Tab = (typeof TABS)[number];

/** What an account's people see: an admin acts, a member reads. */
export function AccountPanel({ account, email }: { account: Account; email: string }) {
  const [tab, setTab] = useState<Tab>('Connected apps');
  const admin = account.role === 'admin';
  return (
    <div>
      <nav class="tabs" role="tablist" aria-label="Account">
        {TABS.map((t) => (
          <button key={t} role="tab" type="button" aria-selected={tab === t} class={tab === t ? 'current' : ''} onClick={() => setTab(t)}>{t}</button>
        ))}
      </nav>
      <p class="muted">{account.name} · plan {account.plan} · you are {account.role === 'admin' ? 'an admin' : 'a member'}</p>
      {tab === 'Connected apps' && <Apps admin={admin} />}
      {tab === 'Numbers' && <Numbers admin={admin} />}
      {tab === 'API keys' && <Keys admin={admin} />}
      {tab === 'Webhooks' && <Webhooks admin={admin} />}
      {tab === 'Usage' && <Usage />}
      {tab === 'Team' && <Team admin={admin} me={email} />}
      {tab === 'Audit log' && (admin ? <AuditLog path="/audit" /> : <Section title="Audit log"><p>Only an admin of the account reads its audit log.</p></Section>)}
    </div>
  );
}

interface App {
  readonly id: string;
  readonly partner_name: string;
  readonly partner_logo_url: string | null;
  readonly status: string;
  readonly activated_at: string | null;
}

function Apps({ admin }: { admin: boolean }) {
  const [apps, setApps] = useState<App[]>([]);
  const { busy, error, run } = useAction();
  const { confirm, dialog } = useConfirm();
  const load = () => run(async () => setApps((await api.call<{ data: App[] }>('GET', '/me/connections')).data));
  useEffect(() => void load(), []);
  const disconnect = (a: App) =>
    confirm({
      title: `Disconnect ${a.partner_name}?`,
      body: `${a.partner_name} loses access to this account at once: the keys it was given stop working. Connecting it again takes its onboarding again.`,
      act: 'Disconnect',
      action: () => run(async () => { await api.call('DELETE', `/me/connections/${a.id}`); await load(); }),
    });
  return (
    <Section title="Connected apps">
      {dialog}
      <ErrorLine error={error} />
      {apps.length === 0 && <p>No app is connected.</p>}
      <ul class="rows">
        {apps.map((a) => (
          <li key={a.id} data-app={a.partner_name}>
            {a.partner_logo_url ? <img class="logo" src={logoSrc(a.partner_logo_url)} alt="" /> : <span class="logo" />}
            <span class="grow">{a.partner_name} <span class="muted">· {a.status} · since {when(a.activated_at)}</span></span>
            {admin && a.status !== 'revoked' && (
              <button type="button" disabled={busy} onClick={() => disconnect(a)}>Disconnect</button>
            )}
          </li>
        ))}
      </ul>
    </Section>
  );
}

interface NumberRow {
  readonly id: string;
  readonly nickname: string | null;
  readonly phone: string | null;
  readonly status: string;
  readonly health_score?: number | null;
}

function Numbers({ admin }: { admin: boolean }) {
  const [numbers, setNumbers] = useState<NumberRow[]>([]);
  const [pairing, setPairing] = useState<{ id: string; kind: 'qr' | 'code'; value: string | null } | null>(null);
  const following = useRef<string | null>(null);
  const streamOpen = useRef<Promise<void>>(Promise.resolve());
  const { busy, error, run } = useAction();
  const { confirm, dialog } = useConfirm();
  const load = () => run(async () => setNumbers((await api.call<{ data: NumberRow[] }>('GET', '/instances')).data));
  const list = useListView(numbers, {
    noun: 'numbers',
    textOf: (n) => `${n.phone ?? ''} ${n.nickname ?? ''} ${n.id}`,
    filter: { label: 'Status', values: [...new Set(numbers.map((n) => n.status))].sort(), of: (n) => n.status },
  });
  const nameOf = (n: NumberRow) => n.phone ?? n.nickname ?? n.id;
  const unlink = (n: NumberRow) =>
    confirm({
      title: `Unlink ${nameOf(n)}?`,
      body: 'The number leaves the network at once: it sends and receives nothing until it is paired again from the phone.',
      act: 'Unlink',
      action: () => run(async () => { await api.call('POST', `/instances/${n.id}/disconnect`); await load(); }),
    });
  const remove = (n: NumberRow) =>
    confirm({
      title: `Remove ${nameOf(n)}?`,
      body: 'Its session is closed and it leaves this account; its messages stay in the history.',
      act: 'Remove the number',
      // Accepted (202): the list drops it now rather than wait for the projection to.
      action: () => run(async () => { await api.call('DELETE', `/instances/${n.id}`); setNumbers((rows) => rows.filter((row) => row.id !== n.id)); }),
    });
  useEffect(() => {
    void load();
    // The default project's stream (the cookie signs it in): QR and pairing codes, and status changes.
    const source = new EventSource('/stream');
    // A stream starts at the present: pairing waits until it is open, or its QR could be missed.
    streamOpen.current = new Promise((resolve) => source.addEventListener('open', () => resolve(), { once: true }));
    const payloadOf = (event: Event) => (JSON.parse((event as MessageEvent<string>).data) as { payload: Record<string, unknown> }).payload;
    source.addEventListener('qr_code', (event) => {
      const payload = payloadOf(event);
      if (payload.instance_id === following.current) setPairing({ id: String(payload.instance_id), kind: 'qr', value: String(payload.qr_code) });
    });
    source.addEventListener('pairing_code', (event) => {
      const payload = payloadOf(event);
      if (payload.instance_id === following.current) setPairing({ id: String(payload.instance_id), kind: 'code', value: String(payload.pairing_code) });
    });
    // The event itself says the new status: the list (a projection) may not have it yet.
    source.addEventListener('instance.status', (event) => {
      const payload = payloadOf(event);
      setNumbers((rows) =>
        rows.map((n) =>
          n.id === payload.instance_id
            ? { ...n, status: String(payload.status), phone: typeof payload.phone === 'string' ? payload.phone : n.phone, health_score: typeof payload.health_score === 'number' ? payload.health_score : n.health_score }
            : n,
        ),
      );
    });
    return () => source.close();
  }, []);
  const pair = (id: string, method: 'qr' | 'code') =>
    run(async () => {
      following.current = id;
      setPairing({ id, kind: method, value: null });
      await streamOpen.current;
      await api.call('POST', `/instances/${id}/connect`, { method });
    });
  return (
    <Section title="Numbers">
      {dialog}
      <ErrorLine error={error} />
      {list.controls}
      <table>
        <thead><tr><th>Number</th><th>Status</th><th>Health</th>{admin && <th>Actions</th>}</tr></thead>
        <tbody>
          {list.shown.map((n) => (
            <tr key={n.id} data-number={n.id}>
              <td>{n.phone ?? n.nickname ?? n.id}</td>
              <td data-status>{n.status}</td>
              <td>{n.health_score ?? '—'}</td>
              {admin && (
                <td class="actions">
                  {n.status !== 'connected' && <button type="button" disabled={busy} onClick={() => void pair(n.id, 'qr')}>QR code</button>}
                  {n.status !== 'connected' && <button type="button" disabled={busy} onClick={() => void pair(n.id, 'code')}>Pairing code</button>}
                  {(n.status === 'connected' || n.status === 'warming') && <button type="button" disabled={busy} onClick={() => unlink(n)}>Unlink</button>}
                  <button type="button" disabled={busy} onClick={() => remove(n)}>Remove</button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {list.pager}
      {pairing && (
        <div class="card" role="status">
          {pairing.value === null && <p>Preparing the code…</p>}
          {pairing.kind === 'qr' && pairing.value && <p>Scan with WhatsApp › Linked devices: <code data-qr>{pairing.value}</code></p>}
          {pairing.kind === 'code' && pairing.value && <p>Type on the phone: <strong data-pairing-code>{pairing.value}</strong></p>}
        </div>
      )}
      {admin && <button class="primary" type="button" disabled={busy} onClick={() => void run(async () => { await api.call('POST', '/instances', { nickname: 'New number' }); await load(); })}>Add a number</button>}
    </Section>
  );
}

interface Key {
  readonly id: string;
  readonly prefix: string;
  readonly role: string;
  readonly scopes: readonly string[];
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
}

function Keys({ admin }: { admin: boolean }) {
  const [keys, setKeys] = useState<Key[]>([]);
  const [shown, setShown] = useState<string | null>(null);
  const { busy, error, run } = useAction();
  const { confirm, dialog } = useConfirm();
  const load = () => run(async () => setKeys((await api.call<{ data: Key[] }>('GET', '/keys')).data));
  useEffect(() => void load(), []);
  const stateOf = (k: Key) => (k.revoked_at ? 'revoked' : k.expires_at ? 'expiring' : 'active');
  const list = useListView(keys, {
    noun: 'keys',
    textOf: (k) => `${k.prefix} ${k.role} ${k.scopes.join(' ')}`,
    filter: { label: 'State', values: ['active', 'expiring', 'revoked'], of: stateOf },
  });
  const rotate = (k: Key) =>
    confirm({
      title: `Rotate the key ${k.prefix}…?`,
      body: 'A new key is shown once; this one keeps working for the grace period only, so update every place that uses it.',
      act: 'Rotate the key',
      action: () => run(async () => { setShown((await api.call<{ api_key: string }>('POST', `/keys/${k.id}/rotate`)).api_key); await load(); }),
    });
  const revoke = (k: Key) =>
    confirm({
      title: `Revoke the key ${k.prefix}…?`,
      body: 'It stops working at once, everywhere it is used. This cannot be undone.',
      act: 'Revoke the key',
      action: () => run(async () => { await api.call('DELETE', `/keys/${k.id}`); await load(); }),
    });
  if (!admin) return <Section title="API keys"><p>Only an admin of the account manages its keys.</p></Section>;
  return (
    <Section title="API keys">
      {dialog}
      {shown && <ShownOnce label="New API key" value={shown} onDone={() => setShown(null)} />}
      <ErrorLine error={error} />
      {list.controls}
      <table>
        <thead><tr><th>Key</th><th>Role</th><th>Scopes</th><th>Created</th><th>State</th><th>Actions</th></tr></thead>
        <tbody>
          {list.shown.map((k) => (
            <tr key={k.id} data-key={k.id}>
              <td><code>{k.prefix}…</code></td>
              <td>{k.role}</td>
              <td>{k.scopes.join(', ')}</td>
              <td>{when(k.created_at)}</td>
              <td>{k.revoked_at ? 'revoked' : k.expires_at ? `expires ${when(k.expires_at)}` : 'active'}</td>
              <td class="actions">
                {!k.revoked_at && <button type="button" disabled={busy} onClick={() => rotate(k)}>Rotate</button>}
                {!k.revoked_at && <button type="button" disabled={busy} onClick={() => revoke(k)}>Revoke</button>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.pager}
      <button class="primary" type="button" disabled={busy} onClick={() => void run(async () => { setShown((await api.call<{ api_key: string }>('POST', '/keys', { role: 'agent', scopes: ['instances:read', 'messages:send'] })).api_key); await load(); })}>
        Create a key (agent: read numbers, send messages)
      </button>
    </Section>
  );
}

interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly event_types: readonly string[];
  readonly enabled: boolean;
}
function Webhooks({ admin }: { admin: boolean }) {
  const [hooks, setHooks] = useState<Webhook[]>([]);
  const [open, setOpen] = useState<{ id: string; deliveries: Delivery[] } | null>(null);
  const { busy, error, run } = useAction();
  useEffect(() => void run(async () => setHooks((await api.call<{ data: Webhook[] }>('GET', '/webhooks')).data)), []);
  const show = (id: string) => run(async () => setOpen({ id, deliveries: (await api.call<{ data: Delivery[] }>('GET', `/webhooks/${id}/deliveries?limit=100`)).data }));
  const list = useListView(open?.deliveries ?? [], {
    noun: 'deliveries',
    textOf: (d) => `${d.event_type} ${d.last_response_status ?? ''}`,
    filter: { label: 'Status', values: ['pending', 'delivered', 'failed'], of: (d) => d.status },
  });
  return (
    <Section title="Webhooks">
      <ErrorLine error={error} />
      {hooks.length === 0 && <p>No webhook yet (POST /webhooks).</p>}
      <ul class="rows">
        {hooks.map((h) => (
          <li key={h.id}>
            <span class="grow"><code>{h.url}</code> <span class="muted">· {h.event_types.join(', ') || 'every event'} · {h.enabled ? 'on' : 'off'}</span></span>
            <button type="button" disabled={busy} onClick={() => void show(h.id)}>Deliveries</button>
          </li>
        ))}
      </ul>
      {open && list.controls}
      {open && (
        <table>
          <thead><tr><th>Event</th><th>Status</th><th>Attempts</th><th>Last</th><th>HTTP</th>{admin && <th>Actions</th>}</tr></thead>
          <tbody>
            {list.shown.map((d) => (
              <tr key={d.id}>
                <td>{d.event_type}</td><td>{d.status}</td><td>{d.attempt_count}</td><td>{when(d.last_attempt_at)}</td><td>{d.last_response_status ?? '—'}</td>
                {admin && <td><button type="button" disabled={busy} onClick={() => void run(async () => { await api.call('POST', `/webhooks/${open.id}/deliveries/${d.id}/redeliver`); await show(open.id); })}>Redeliver</button></td>}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open && list.pager}
    </Section>
  );
}

interface User {
  readonly id: string;
  readonly email: string;
  readonly role: 'admin' | 'member';
  readonly name: string | null;
}

/** The people of the account (`/users`): added as admin or member, removed after a question. */
function Team({ admin, me }: { admin: boolean; me: string }) {
  const [users, setUsers] = useState<User[]>([]);
  const [form, setForm] = useState<{ email: string; name: string; role: User['role'] }>({ email: '', name: '', role: 'member' });
  const { busy, error, run } = useAction();
  const { confirm, dialog } = useConfirm();
  const load = () => run(async () => setUsers((await api.call<{ data: User[] }>('GET', '/users')).data));
  useEffect(() => void (admin && load()), []);
  const list = useListView(users, { noun: 'people', textOf: (u) => `${u.email} ${u.name ?? ''}`, filter: { label: 'Role', values: ['admin', 'member'], of: (u) => u.role } });
  if (!admin) return <Section title="Team"><p>Only an admin of the account manages its people.</p></Section>;
  const add = () =>
    run(async () => {
      await api.call('POST', '/users', { email: form.email, role: form.role, ...(form.name ? { name: form.name } : {}) });
      setForm({ email: '', name: '', role: 'member' });
      await load();
    });
  const remove = (u: User) =>
    confirm({
      title: `Remove ${u.email}?`,
      body: 'They can no longer sign in to this account; their sessions end at their next request.',
      act: 'Remove',
      // Accepted: the list drops them now rather than wait for the directory to.
      action: () => run(async () => { await api.call('DELETE', `/users/${u.id}`); setUsers((rows) => rows.filter((row) => row.id !== u.id)); }),
    });
  return (
    <Section title="Team">
      {dialog}
      <ErrorLine error={error} />
      {list.controls}
      <table>
        <thead><tr><th>E-mail</th><th>Name</th><th>Role</th><th>Actions</th></tr></thead>
        <tbody>
          {list.shown.map((u) => (
            <tr key={u.id} data-user={u.email}>
              <td>{u.email}</td><td>{u.name ?? '—'}</td><td>{u.role}</td>
              <td class="actions">{u.email === me ? <span class="muted">you</span> : <button type="button" disabled={busy} onClick={() => remove(u)}>Remove</button>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.pager}
      <form class="card grid" aria-label="Add a person" onSubmit={(event) => { event.preventDefault(); void add(); }}>
        <label>E-mail <input name="email" type="email" required value={form.email} onInput={(e) => setForm({ ...form, email: e.currentTarget.value })} /></label>
        <label>Name <input name="name" value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} /></label>
        <label>Role{' '}
          <select name="role" value={form.role} onChange={(e) => setForm({ ...form, role: e.currentTarget.value as User['role'] })}>
            <option value="member">member: reads everything, changes nothing</option>
            <option value="admin">admin: manages numbers, keys, apps and people</option>
          </select>
        </label>
        <button class="primary" type="submit" disabled={busy}>Add</button>
      </form>
    </Section>
  );
}

interface UsagePoint {
  readonly period_start: string;
  readonly messages: number;
}
interface Entitlements {
  readonly plan: string;
  readonly limits: { readonly messages_per_month: number | null };
  readonly usage: { readonly period_start: string; readonly period_end: string; readonly messages: number };
}

const DAY_MS = 86_400_000;
const WIDTH = 640;
const HEIGHT = 220;
const PLOT = { left: 44, right: 8, top: 10, bottom: 28 } as const;

/**
 * Messages per day of the last 30 days, from ClickHouse (`GET /usage`), for every number or one,
 * as bars on dated axes; and the month so far against the plan's allowance (`GET /me/entitlements`).
 */
function Usage() {
  const [points, setPoints] = useState<UsagePoint[] | null>(null);
  const [numbers, setNumbers] = useState<NumberRow[]>([]);
  const [number, setNumber] = useState('');
  const [plan, setPlan] = useState<Entitlements | null>(null);
  const { error, run } = useAction();
  useEffect(() => {
    void run(async () => {
      setNumbers((await api.call<{ data: NumberRow[] }>('GET', '/instances')).data);
      setPlan(await api.call<Entitlements>('GET', '/me/entitlements'));
    });
  }, []);
  useEffect(() => {
    const from = new Date(Date.now() - 29 * DAY_MS).toISOString().slice(0, 10);
    const only = number === '' ? '' : `&instance_id=${encodeURIComponent(number)}`;
    void run(async () => setPoints((await api.call<{ data: UsagePoint[] }>('GET', `/usage?from=${from}&granularity=day&project_id=all${only}`)).data));
  }, [number]);
  if (points === null) return <Section title="Usage"><ErrorLine error={error} /><p class="muted">Loading…</p></Section>;
  const total = points.reduce((sum, p) => sum + p.messages, 0);
  const top = niceCeiling(Math.max(1, ...points.map((p) => p.messages)));
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const slot = plotWidth / Math.max(1, points.length);
  const y = (value: number) => PLOT.top + plotHeight - (value / top) * plotHeight;
  const day = (iso: string) => new Date(`${iso}T00:00:00Z`).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
  const allowance = plan?.limits.messages_per_month ?? null;
  return (
    <Section title="Usage">
      <ErrorLine error={error} />
      {plan && (
        <p data-allowance>
          This month, plan {plan.plan}: <strong>{plan.usage.messages}</strong>
          {allowance === null ? ' messages (no monthly limit)' : <> of {allowance} messages <meter min={0} max={allowance} value={plan.usage.messages} aria-label="Messages this month against the plan" /> {Math.round((plan.usage.messages / allowance) * 100)}%</>}
        </p>
      )}
      <label class="inline">Number{' '}
        <select value={number} onChange={(e) => setNumber(e.currentTarget.value)}>
          <option value="">every number</option>
          {numbers.map((n) => <option key={n.id} value={n.id}>{n.phone ?? n.nickname ?? n.id}</option>)}
        </select>
      </label>
      <p>Messages in the last 30 days: <strong data-total>{total}</strong></p>
      <svg class="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`Messages per day, ${total} in all`}>
        {(top % 2 === 0 ? [0, top / 2, top] : [0, top]).map((tick) => (
          <g key={tick} class="axis">
            <line x1={PLOT.left} x2={WIDTH - PLOT.right} y1={y(tick)} y2={y(tick)} />
            <text x={PLOT.left - 6} y={y(tick) + 4} text-anchor="end">{tick}</text>
          </g>
        ))}
        {points.map((p, i) => {
          const height = (p.messages / top) * plotHeight;
          return <rect key={p.period_start} x={PLOT.left + i * slot + 1} y={PLOT.top + plotHeight - height} width={Math.max(1, slot - 2)} height={height} data-day={p.period_start} data-messages={p.messages}><title>{`${p.period_start}: ${p.messages}`}</title></rect>;
        })}
        {points.map((p, i) => (i % 7 === 0 || i === points.length - 1) && (
          <text key={`label-${p.period_start}`} class="axis" x={PLOT.left + i * slot + slot / 2} y={HEIGHT - 8} text-anchor="middle" data-axis-day={p.period_start}>{day(p.period_start)}</text>
        ))}
      </svg>
    </Section>
  );
}

/** The smallest of 1, 2 or 5 times a power of ten at or above `value`: round figures on the axis. */
function niceCeiling(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  return ([1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= value) ?? value);
}
