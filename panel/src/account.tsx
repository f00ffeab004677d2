import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Account } from './api.js';
import { formatNumber, formatPercent, t, valueText } from './i18n.js';
import type { MessageKey } from './messages.js';
import { AuditLog, type Delivery, ErrorLine, logoSrc, Section, ShownOnce, useAction, useConfirm, useListView, when } from './ui.js';
import { thirtyDaysAgo, UsageChart, type UsagePoint } from './usage-chart.js';

const TABS = ['apps', 'numbers', 'keys', 'webhooks', 'usage', 'team', 'audit'] as const;
type Tab = (typeof TABS)[number];
const TAB_NAMES: Record<Tab, MessageKey> = { apps: 'connectedApps', numbers: 'numbers', keys: 'apiKeys', webhooks: 'webhooks', usage: 'usage', team: 'team', audit: 'auditLog' };

/** What an account's people see: an admin acts, a member reads. */
export function AccountPanel({ account, email }: { account: Account; email: string }) {
  const [tab, setTab] = useState<Tab>('apps');
  const admin = account.role === 'admin';
  return (
    <div>
      <nav class="tabs" role="tablist" aria-label={t('account')}>
        {TABS.map((name) => (
          <button key={name} role="tab" type="button" aria-selected={tab === name} class={tab === name ? 'current' : ''} onClick={() => setTab(name)}>{t(TAB_NAMES[name])}</button>
        ))}
      </nav>
      <p class="muted">{account.name} · {t('planIs', { plan: account.plan })} · {t(account.role === 'admin' ? 'youAreAdmin' : 'youAreMember')}</p>
      {tab === 'apps' && <Apps admin={admin} />}
      {tab === 'numbers' && <Numbers admin={admin} />}
      {tab === 'keys' && <Keys admin={admin} />}
      {tab === 'webhooks' && <Webhooks admin={admin} />}
      {tab === 'usage' && <Usage />}
      {tab === 'team' && <Team admin={admin} me={email} />}
      {tab === 'audit' && (admin ? <AuditLog path="/audit" /> : <Section title={t('auditLog')}><p>{t('adminOnlyAudit')}</p></Section>)}
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
      title: t('disconnectTitle', { name: a.partner_name }),
      body: t('disconnectBody', { name: a.partner_name }),
      act: t('disconnect'),
      action: () => run(async () => { await api.call('DELETE', `/me/connections/${a.id}`); await load(); }),
    });
  return (
    <Section title={t('connectedApps')}>
      {dialog}
      <ErrorLine error={error} />
      {apps.length === 0 && <p>{t('noApps')}</p>}
      <ul class="rows">
        {apps.map((a) => (
          <li key={a.id} data-app={a.partner_name}>
            {a.partner_logo_url ? <img class="logo" src={logoSrc(a.partner_logo_url)} alt="" /> : <span class="logo" />}
            <span class="grow">{a.partner_name} <span class="muted">· {valueText(a.status)} · {t('since', { when: when(a.activated_at) })}</span></span>
            {admin && a.status !== 'revoked' && (
              <button type="button" disabled={busy} onClick={() => disconnect(a)}>{t('disconnect')}</button>
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
  const [renaming, setRenaming] = useState<string | null>(null);
  const { confirm, dialog } = useConfirm();
  // What the stream said of each number: the list is a projection that can lag behind the stream,
  // and a list read after an event must not undo it.
  const streamed = useRef(new Map<string, Partial<NumberRow>>());
  const withStreamed = (rows: NumberRow[]) => rows.map((n) => ({ ...n, ...streamed.current.get(n.id) }));
  const load = () => run(async () => setNumbers(withStreamed((await api.call<{ data: NumberRow[] }>('GET', '/instances')).data)));
  const list = useListView(numbers, {
    searchLabel: t('searchNumbers'),
    textOf: (n) => `${n.phone ?? ''} ${n.nickname ?? ''} ${n.id}`,
    filter: { label: t('status'), values: [...new Set(numbers.map((n) => n.status))].sort(), of: (n) => n.status },
  });
  const nameOf = (n: NumberRow) => n.phone ?? n.nickname ?? n.id;
  const unlink = (n: NumberRow) =>
    confirm({
      title: t('unlinkTitle', { name: nameOf(n) }),
      body: t('unlinkBody'),
      act: t('unlink'),
      action: () => run(async () => { await api.call('POST', `/instances/${n.id}/disconnect`); await load(); }),
    });
  const remove = (n: NumberRow) =>
    confirm({
      title: t('removeNumberTitle', { name: nameOf(n) }),
      body: t('removeNumberBody'),
      act: t('removeNumber'),
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
      const id = String(payload.instance_id);
      const said: Partial<NumberRow> = {
        ...streamed.current.get(id),
        status: String(payload.status),
        ...(typeof payload.phone === 'string' && { phone: payload.phone }),
        ...(typeof payload.health_score === 'number' && { health_score: payload.health_score }),
      };
      streamed.current.set(id, said);
      setNumbers((rows) => rows.map((n) => (n.id === id ? { ...n, ...said } : n)));
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
    <Section title={t('numbers')}>
      {dialog}
      <ErrorLine error={error} />
      {list.controls}
      <table>
        <thead><tr><th>{t('number')}</th><th>{t('status')}</th><th>{t('health')}</th>{admin && <th>{t('actions')}</th>}</tr></thead>
        <tbody>
          {list.shown.map((n) => [
            <tr key={n.id} data-number={n.id}>
              <td data-name>{n.nickname ?? n.phone ?? n.id}{n.nickname !== null && n.phone !== null && <span class="muted"> · {n.phone}</span>}</td>
              <td data-status={n.status}>{valueText(n.status)}</td>
              <td>{n.health_score === null || n.health_score === undefined ? '—' : formatNumber(n.health_score)}</td>
              {admin && (
                <td class="actions">
                  {n.status !== 'connected' && <button type="button" disabled={busy} onClick={() => void pair(n.id, 'qr')}>{t('qrCode')}</button>}
                  {n.status !== 'connected' && <button type="button" disabled={busy} onClick={() => void pair(n.id, 'code')}>{t('pairingCode')}</button>}
                  {(n.status === 'connected' || n.status === 'warming') && <button type="button" disabled={busy} onClick={() => unlink(n)}>{t('unlink')}</button>}
                  <button type="button" aria-expanded={renaming === n.id} onClick={() => setRenaming(renaming === n.id ? null : n.id)}>{t('rename')}</button>
                  <button type="button" disabled={busy} onClick={() => remove(n)}>{t('remove')}</button>
                </td>
              )}
            </tr>,
            renaming === n.id && (
              <tr key={`${n.id}-rename`}>
                <td colSpan={4}><Rename number={n} onRenamed={(renamed) => { setRenaming(null); setNumbers((rows) => rows.map((row) => (row.id === renamed.id ? renamed : row))); }} /></td>
              </tr>
            ),
          ])}
        </tbody>
      </table>
      {list.pager}
      {pairing && (
        <div class="card" role="status">
          {pairing.value === null && <p>{t('preparingCode')}</p>}
          {pairing.kind === 'qr' && pairing.value && <p>{t('scanQr')} <code data-qr>{pairing.value}</code></p>}
          {pairing.kind === 'code' && pairing.value && <p>{t('typeCode')} <strong data-pairing-code>{pairing.value}</strong></p>}
        </div>
      )}
      {admin && <button class="primary" type="button" disabled={busy} onClick={() => void run(async () => { await api.call('POST', '/instances', { nickname: t('newNumber') }); await load(); })}>{t('addNumber')}</button>}
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
    searchLabel: t('searchKeys'),
    textOf: (k) => `${k.prefix} ${k.role} ${k.scopes.join(' ')}`,
    filter: { label: t('state'), values: ['active', 'expiring', 'revoked'], of: stateOf },
  });
  const rotate = (k: Key) =>
    confirm({
      title: t('rotateKeyTitle', { prefix: k.prefix }),
      body: t('rotateKeyBody'),
      act: t('rotateKey'),
      action: () => run(async () => { setShown((await api.call<{ api_key: string }>('POST', `/keys/${k.id}/rotate`)).api_key); await load(); }),
    });
  const revoke = (k: Key) =>
    confirm({
      title: t('revokeKeyTitle', { prefix: k.prefix }),
      body: t('revokeKeyBody'),
      act: t('revokeKey'),
      action: () => run(async () => { await api.call('DELETE', `/keys/${k.id}`); await load(); }),
    });
  if (!admin) return <Section title={t('apiKeys')}><p>{t('adminOnlyKeys')}</p></Section>;
  return (
    <Section title={t('apiKeys')}>
      {dialog}
      {shown && <ShownOnce label={t('newApiKey')} value={shown} onDone={() => setShown(null)} />}
      <ErrorLine error={error} />
      {list.controls}
      <table>
        <thead><tr><th>{t('key')}</th><th>{t('role')}</th><th>{t('scopes')}</th><th>{t('created')}</th><th>{t('state')}</th><th>{t('actions')}</th></tr></thead>
        <tbody>
          {list.shown.map((k) => (
            <tr key={k.id} data-key={k.id}>
              <td><code>{k.prefix}…</code></td>
              <td>{valueText(k.role)}</td>
              <td>{k.scopes.join(', ')}</td>
              <td>{when(k.created_at)}</td>
              <td>{k.revoked_at ? valueText('revoked') : k.expires_at ? t('expires', { when: when(k.expires_at) }) : valueText('active')}</td>
              <td class="actions">
                {!k.revoked_at && <button type="button" disabled={busy} onClick={() => rotate(k)}>{t('rotate')}</button>}
                {!k.revoked_at && <button type="button" disabled={busy} onClick={() => revoke(k)}>{t('revoke')}</button>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.pager}
      <button class="primary" type="button" disabled={busy} onClick={() => void run(async () => { setShown((await api.call<{ api_key: string }>('POST', '/keys', { role: 'agent', scopes: ['instances:read', 'messages:send'] })).api_key); await load(); })}>
        {t('createKey')}
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
    searchLabel: t('searchDeliveries'),
    textOf: (d) => `${d.event_type} ${d.last_response_status ?? ''}`,
    filter: { label: t('status'), values: ['pending', 'delivered', 'failed'], of: (d) => d.status },
  });
  return (
    <Section title={t('webhooks')}>
      <ErrorLine error={error} />
      {hooks.length === 0 && <p>{t('noWebhooks')}</p>}
      <ul class="rows">
        {hooks.map((h) => (
          <li key={h.id}>
            <span class="grow"><code>{h.url}</code> <span class="muted">· {h.event_types.join(', ') || t('everyEvent')} · {t(h.enabled ? 'on' : 'off')}</span></span>
            <button type="button" disabled={busy} onClick={() => void show(h.id)}>{t('deliveries')}</button>
          </li>
        ))}
      </ul>
      {open && list.controls}
      {open && (
        <table>
          <thead><tr><th>{t('event')}</th><th>{t('status')}</th><th>{t('attempts')}</th><th>{t('last')}</th><th>HTTP</th>{admin && <th>{t('actions')}</th>}</tr></thead>
          <tbody>
            {list.shown.map((d) => (
              <tr key={d.id}>
                <td>{d.event_type}</td><td>{valueText(d.status)}</td><td>{formatNumber(d.attempt_count)}</td><td>{when(d.last_attempt_at)}</td><td>{d.last_response_status ?? '—'}</td>
                {admin && <td><button type="button" disabled={busy} onClick={() => void run(async () => { await api.call('POST', `/webhooks/${open.id}/deliveries/${d.id}/redeliver`); await show(open.id); })}>{t('redeliver')}</button></td>}
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
  const list = useListView(users, { searchLabel: t('searchPeople'), textOf: (u) => `${u.email} ${u.name ?? ''}`, filter: { label: t('role'), values: ['admin', 'member'], of: (u) => u.role } });
  if (!admin) return <Section title={t('team')}><p>{t('adminOnlyTeam')}</p></Section>;
  const add = () =>
    run(async () => {
      await api.call('POST', '/users', { email: form.email, role: form.role, ...(form.name ? { name: form.name } : {}) });
      setForm({ email: '', name: '', role: 'member' });
      await load();
    });
  const remove = (u: User) =>
    confirm({
      title: t('removePersonTitle', { email: u.email }),
      body: t('removePersonBody'),
      act: t('remove'),
      // Accepted: the list drops them now rather than wait for the directory to.
      action: () => run(async () => { await api.call('DELETE', `/users/${u.id}`); setUsers((rows) => rows.filter((row) => row.id !== u.id)); }),
    });
  return (
    <Section title={t('team')}>
      {dialog}
      <ErrorLine error={error} />
      {list.controls}
      <table>
        <thead><tr><th>{t('email')}</th><th>{t('name')}</th><th>{t('role')}</th><th>{t('actions')}</th></tr></thead>
        <tbody>
          {list.shown.map((u) => (
            <tr key={u.id} data-user={u.email}>
              <td>{u.email}</td><td>{u.name ?? '—'}</td><td>{valueText(u.role)}</td>
              <td class="actions">{u.email === me ? <span class="muted">{t('you')}</span> : <button type="button" disabled={busy} onClick={() => remove(u)}>{t('remove')}</button>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.pager}
      <form class="card grid" aria-label={t('addPerson')} onSubmit={(event) => { event.preventDefault(); void add(); }}>
        <label>{t('email')} <input name="email" type="email" required value={form.email} onInput={(e) => setForm({ ...form, email: e.currentTarget.value })} /></label>
        <label>{t('name')} <input name="name" value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} /></label>
        <label>{t('role')}{' '}
          <select name="role" value={form.role} onChange={(e) => setForm({ ...form, role: e.currentTarget.value as User['role'] })}>
            <option value="member">{t('memberOption')}</option>
            <option value="admin">{t('adminOption')}</option>
          </select>
        </label>
        <button class="primary" type="submit" disabled={busy}>{t('add')}</button>
      </form>
    </Section>
  );
}

/** A number's new nickname (`PATCH /instances/{id}`), typed in place. */
function Rename({ number, onRenamed }: { number: NumberRow; onRenamed: (renamed: NumberRow) => void }) {
  const [nickname, setNickname] = useState(number.nickname ?? '');
  const { busy, error, run } = useAction();
  const save = () => run(async () => onRenamed(await api.call<NumberRow>('PATCH', `/instances/${number.id}`, { nickname: nickname.trim() })));
  return (
    <form class="inline-form" aria-label={t('renameTitle', { name: number.nickname ?? number.phone ?? number.id })} onSubmit={(event) => { event.preventDefault(); void save(); }}>
      <label class="inline">{t('nickname')} <input name="nickname" required minLength={1} maxLength={100} value={nickname} onInput={(e) => setNickname(e.currentTarget.value)} /></label>
      <button class="primary" type="submit" disabled={busy}>{t('save')}</button>
      <ErrorLine error={error} />
    </form>
  );
}

interface Entitlements {
  readonly plan: string;
  readonly limits: { readonly messages_per_month: number | null };
  readonly usage: { readonly period_start: string; readonly period_end: string; readonly messages: number };
}

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
    const only = number === '' ? '' : `&instance_id=${encodeURIComponent(number)}`;
    void run(async () => setPoints((await api.call<{ data: UsagePoint[] }>('GET', `/usage?from=${thirtyDaysAgo()}&granularity=day&project_id=all${only}`)).data));
  }, [number]);
  if (points === null) return <Section title={t('usage')}><ErrorLine error={error} /><p class="muted">{t('loading')}</p></Section>;
  const allowance = plan?.limits.messages_per_month ?? null;
  return (
    <Section title={t('usage')}>
      <ErrorLine error={error} />
      {plan && (
        <p data-allowance>
          {t('thisMonth', { plan: plan.plan })} <strong>{formatNumber(plan.usage.messages)}</strong>
          {allowance === null ? ` ${t('noMonthlyLimit')}` : <> {t('ofAllowance', { allowance: formatNumber(allowance) })} <meter min={0} max={allowance} value={plan.usage.messages} aria-label={t('allowanceLabel')} /> {formatPercent(plan.usage.messages / allowance)}</>}
        </p>
      )}
      <label class="inline">{t('number')}{' '}
        <select value={number} onChange={(e) => setNumber(e.currentTarget.value)}>
          <option value="">{t('everyNumber')}</option>
          {numbers.map((n) => <option key={n.id} value={n.id}>{n.nickname ?? n.phone ?? n.id}</option>)}
        </select>
      </label>
      <UsageChart points={points} />
    </Section>
  );
}
