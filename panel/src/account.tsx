import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Account } from './api.js';
import { ErrorLine, logoSrc, Section, ShownOnce, useAction, when } from './ui.js';

const TABS = ['Connected apps', 'Numbers', 'API keys', 'Webhooks', 'Usage'] as const;
type Tab = (typeof TABS)[number];

/** What an account's people see: an admin acts, a member reads. */
export function AccountPanel({ account }: { account: Account }) {
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
  const load = () => run(async () => setApps((await api.call<{ data: App[] }>('GET', '/me/connections')).data));
  useEffect(() => void load(), []);
  return (
    <Section title="Connected apps">
      <ErrorLine error={error} />
      {apps.length === 0 && <p>No app is connected.</p>}
      <ul class="rows">
        {apps.map((a) => (
          <li key={a.id} data-app={a.partner_name}>
            {a.partner_logo_url ? <img class="logo" src={logoSrc(a.partner_logo_url)} alt="" /> : <span class="logo" />}
            <span class="grow">{a.partner_name} <span class="muted">· {a.status} · since {when(a.activated_at)}</span></span>
            {admin && a.status !== 'revoked' && (
              <button type="button" disabled={busy} onClick={() => void run(async () => { await api.call('DELETE', `/me/connections/${a.id}`); await load(); })}>Disconnect</button>
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
  const load = () => run(async () => setNumbers((await api.call<{ data: NumberRow[] }>('GET', '/instances')).data));
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
      <ErrorLine error={error} />
      <table>
        <thead><tr><th>Number</th><th>Status</th><th>Health</th>{admin && <th>Pair</th>}</tr></thead>
        <tbody>
          {numbers.map((n) => (
            <tr key={n.id} data-number={n.id}>
              <td>{n.phone ?? n.nickname ?? n.id}</td>
              <td data-status>{n.status}</td>
              <td>{n.health_score ?? '—'}</td>
              {admin && (
                <td class="actions">
                  {n.status !== 'connected' && <button type="button" disabled={busy} onClick={() => void pair(n.id, 'qr')}>QR code</button>}
                  {n.status !== 'connected' && <button type="button" disabled={busy} onClick={() => void pair(n.id, 'code')}>Pairing code</button>}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
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
  const load = () => run(async () => setKeys((await api.call<{ data: Key[] }>('GET', '/keys')).data));
  useEffect(() => void load(), []);
  if (!admin) return <Section title="API keys"><p>Only an admin of the account manages its keys.</p></Section>;
  return (
    <Section title="API keys">
      {shown && <ShownOnce label="New API key" value={shown} onDone={() => setShown(null)} />}
      <ErrorLine error={error} />
      <table>
        <thead><tr><th>Key</th><th>Role</th><th>Scopes</th><th>Created</th><th>State</th><th /></tr></thead>
        <tbody>
          {keys.map((k) => (
            <tr key={k.id} data-key={k.id}>
              <td><code>{k.prefix}…</code></td>
              <td>{k.role}</td>
              <td>{k.scopes.join(', ')}</td>
              <td>{when(k.created_at)}</td>
              <td>{k.revoked_at ? 'revoked' : k.expires_at ? `expires ${when(k.expires_at)}` : 'active'}</td>
              <td class="actions">
                {!k.revoked_at && <button type="button" disabled={busy} onClick={() => void run(async () => { setShown((await api.call<{ api_key: string }>('POST', `/keys/${k.id}/rotate`)).api_key); await load(); })}>Rotate</button>}
                {!k.revoked_at && <button type="button" disabled={busy} onClick={() => void run(async () => { await api.call('DELETE', `/keys/${k.id}`); await load(); })}>Revoke</button>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
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
interface Delivery {
  readonly id: string;
  readonly event_type: string;
  readonly status: string;
  readonly attempt_count: number;
  readonly last_attempt_at: string | null;
  readonly last_response_status: number | null;
}

function Webhooks({ admin }: { admin: boolean }) {
  const [hooks, setHooks] = useState<Webhook[]>([]);
  const [open, setOpen] = useState<{ id: string; deliveries: Delivery[] } | null>(null);
  const { busy, error, run } = useAction();
  useEffect(() => void run(async () => setHooks((await api.call<{ data: Webhook[] }>('GET', '/webhooks')).data)), []);
  const show = (id: string) => run(async () => setOpen({ id, deliveries: (await api.call<{ data: Delivery[] }>('GET', `/webhooks/${id}/deliveries`)).data }));
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
      {open && (
        <table>
          <thead><tr><th>Event</th><th>Status</th><th>Attempts</th><th>Last</th><th>HTTP</th>{admin && <th />}</tr></thead>
          <tbody>
            {open.deliveries.map((d) => (
              <tr key={d.id}>
                <td>{d.event_type}</td><td>{d.status}</td><td>{d.attempt_count}</td><td>{when(d.last_attempt_at)}</td><td>{d.last_response_status ?? '—'}</td>
                {admin && <td><button type="button" disabled={busy} onClick={() => void run(async () => { await api.call('POST', `/webhooks/${open.id}/deliveries/${d.id}/redeliver`); await show(open.id); })}>Redeliver</button></td>}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

interface UsagePoint {
  readonly period_start: string;
  readonly messages: number;
}

/** Messages per day of the last 30 days, from ClickHouse (`GET /usage`), as bars. */
function Usage() {
  const [points, setPoints] = useState<UsagePoint[] | null>(null);
  const { error, run } = useAction();
  useEffect(() => {
    const from = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
    void run(async () => setPoints((await api.call<{ data: UsagePoint[] }>('GET', `/usage?from=${from}&granularity=day&project_id=all`)).data));
  }, []);
  if (points === null) return <Section title="Usage"><ErrorLine error={error} /><p class="muted">Loading…</p></Section>;
  const max = Math.max(1, ...points.map((p) => p.messages));
  const total = points.reduce((sum, p) => sum + p.messages, 0);
  return (
    <Section title="Usage">
      <ErrorLine error={error} />
      <p>Messages in the last 30 days: <strong data-total>{total}</strong></p>
      <svg class="chart" viewBox={`0 0 ${points.length * 10} 100`} role="img" aria-label={`Messages per day, ${total} in all`} preserveAspectRatio="none">
        {points.map((p, i) => {
          const height = (p.messages / max) * 95;
          return <rect key={p.period_start} x={i * 10 + 1} y={100 - height} width={8} height={height} data-day={p.period_start} data-messages={p.messages}><title>{`${p.period_start}: ${p.messages}`}</title></rect>;
        })}
      </svg>
    </Section>
  );
}
