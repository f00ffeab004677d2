import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { formatNumber, t, valueText } from './i18n.js';
import { AuditLog, type Delivery, ErrorLine, logoSrc, Section, ShownOnce, useAction, useConfirm, useListView, when } from './ui.js';
import { thirtyDaysAgo, UsageChart, type UsagePoint } from './usage-chart.js';

interface Partner {
  readonly id: string;
  readonly name: string;
  readonly slug: string;
  readonly allowed_origins: readonly string[];
  readonly webhook_url: string | null;
  readonly key_scopes: readonly string[];
  readonly logo_url: string | null;
  readonly webhook_url_warning: 'private_address' | null;
  readonly active: boolean;
}
interface PartnerConnection {
  readonly id: string;
  readonly external_id: string;
  readonly status: string;
  readonly customer: { readonly name?: string | null; readonly company?: string | null; readonly email: string };
  readonly created_at: string;
}

interface DeadDelivery {
  readonly delivery_id: string;
  readonly event_type: string;
  readonly target_kind: string;
  readonly target_id: string;
  readonly attempts: number;
  readonly last_error: string | null;
  readonly dead_at: string;
}

const SCOPES = ['instances:read', 'instances:write', 'messages:send', 'contacts:check', 'presence:write', 'media:read'];

/** The platform administrators' panel (spec 4.7): partners, their secrets, logos, connections, deliveries. */
export function PlatformPanel() {
  const [partners, setPartners] = useState<Partner[]>([]);
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const { busy, error, run } = useAction();
  const { confirm, dialog } = useConfirm();
  const load = () => run(async () => setPartners((await api.call<{ data: Partner[] }>('GET', '/platform/partners')).data));
  useEffect(() => void load(), []);
  const list = useListView(partners, {
    searchLabel: t('searchPartners'),
    textOf: (p) => `${p.name} ${p.slug} ${p.allowed_origins.join(' ')} ${p.webhook_url ?? ''}`,
    filter: { label: t('status'), values: ['active', 'deactivated'], of: (p) => (p.active ? 'active' : 'deactivated') },
  });

  return (
    <div>
      {dialog}
      {secret && <ShownOnce label={secret.label} value={secret.value} onDone={() => setSecret(null)} />}
      <ErrorLine error={error} />
      <Section title={t('partners')}>
        {list.controls}
        <table>
          <thead><tr><th>{t('logo')}</th><th>{t('name')}</th><th>{t('slug')}</th><th>{t('status')}</th><th>{t('actions')}</th></tr></thead>
          <tbody>
            {list.shown.map((p) => (
              <PartnerRow key={p.id} partner={p} busy={busy} run={run} confirm={confirm} reload={load} onSecret={setSecret} />
            ))}
          </tbody>
        </table>
        {list.pager}
      </Section>
      <DeadDeliveries partners={partners} />
      <AuditLog path="/platform/audit" />
      <NewPartner onCreated={(created) => { setSecret({ label: t('createdSecrets', { name: created.name }), value: `${created.partner_secret}\n${created.webhook_secret}` }); void load(); }} />
    </div>
  );
}

type Confirm = ReturnType<typeof useConfirm>['confirm'];
type Run = (action: () => Promise<unknown>) => Promise<void>;
type Opened = 'connections' | 'deliveries' | 'usage' | 'edit' | null;

function PartnerRow(props: { partner: Partner; busy: boolean; run: Run; confirm: Confirm; reload: () => Promise<void>; onSecret: (s: { label: string; value: string }) => void }) {
  const { partner: p, run, reload, confirm } = props;
  const [opened, setOpened] = useState<Opened>(null);
  const toggle = (what: Exclude<Opened, null>) => setOpened(opened === what ? null : what);
  const upload = (file: File | undefined) =>
    file && run(async () => {
      const form = new FormData();
      form.append('file', file);
      await api.call('POST', `/platform/partners/${p.id}/logo`, form);
      await reload();
    });
  const rotate = (which: 'secret' | 'webhookSecret', path: string, field: 'partner_secret' | 'webhook_secret') =>
    confirm({
      title: t(`${which}RotateTitle`, { name: p.name }),
      body: t(`${which}RotateBody`, { name: p.name }),
      act: t(`${which}Rotate`),
      action: () => run(async () => props.onSecret({ label: t(`${which}New`, { name: p.name }), value: (await api.call<Record<string, string>>('POST', `/platform/partners/${p.id}/${path}`))[field]! })),
    });
  const setActive = () =>
    p.active
      ? confirm({
          title: t('deactivateTitle', { name: p.name }),
          body: t('deactivateBody'),
          act: t('deactivate'),
          action: () => run(async () => { await api.call('POST', `/platform/partners/${p.id}/deactivate`); await reload(); }),
        })
      : void run(async () => { await api.call('POST', `/platform/partners/${p.id}/activate`); await reload(); });
  return (
    <>
      <tr data-partner={p.slug}>
        <td>{p.logo_url ? <img class="logo" src={logoSrc(p.logo_url)} alt={t('logoOf', { name: p.name })} /> : '—'}</td>
        <td>{p.name}{p.webhook_url_warning && <p class="warning" data-warning>{t('privateWebhook')}</p>}</td>
        <td>{p.slug}</td>
        <td>{valueText(p.active ? 'active' : 'deactivated')}</td>
        <td class="actions">
          <label class="file">{t('uploadLogo')} <input type="file" accept="image/png,image/jpeg,image/webp,image/svg+xml" onChange={(event) => void upload(event.currentTarget.files?.[0])} /></label>
          <button type="button" aria-expanded={opened === 'edit'} onClick={() => toggle('edit')}>{t('edit')}</button>
          <button type="button" disabled={props.busy} onClick={() => rotate('secret', 'rotate-secret', 'partner_secret')}>{t('rotateSecretButton')}</button>
          <button type="button" disabled={props.busy} onClick={() => rotate('webhookSecret', 'rotate-webhook-secret', 'webhook_secret')}>{t('rotateWebhookSecretButton')}</button>
          <button type="button" disabled={props.busy} onClick={setActive}>{t(p.active ? 'deactivate' : 'activate')}</button>
          <button type="button" aria-expanded={opened === 'connections'} onClick={() => toggle('connections')}>{t('connections')}</button>
          <button type="button" aria-expanded={opened === 'deliveries'} onClick={() => toggle('deliveries')}>{t('deliveries')}</button>
          <button type="button" aria-expanded={opened === 'usage'} onClick={() => toggle('usage')}>{t('usage')}</button>
        </td>
      </tr>
      {opened !== null && (
        <tr>
          <td colSpan={5}>
            {opened === 'edit' && <EditPartner partner={p} onSaved={() => { setOpened(null); void reload(); }} />}
            {opened === 'connections' && <Connections partner={p} />}
            {opened === 'deliveries' && <PartnerDeliveries partner={p} />}
            {opened === 'usage' && <PartnerUsage partner={p} />}
          </td>
        </tr>
      )}
    </>
  );
}

function Connections({ partner }: { partner: Partner }) {
  const [connections, setConnections] = useState<PartnerConnection[] | null>(null);
  const { error, run } = useAction();
  useEffect(() => void run(async () => setConnections((await api.call<{ data: PartnerConnection[] }>('GET', `/platform/partners/${partner.id}/connections`)).data)), []);
  const list = useListView(connections ?? [], {
    searchLabel: t('searchConnections'),
    textOf: (c) => `${c.external_id} ${c.customer.company ?? ''} ${c.customer.name ?? ''} ${c.customer.email}`,
    filter: { label: t('status'), values: [...new Set((connections ?? []).map((c) => c.status))], of: (c) => c.status },
  });
  if (connections === null) return <ErrorLine error={error} />;
  return (
    <div data-connections>
      {list.controls}
      <table class="inner">
        <thead><tr><th>external_id</th><th>{t('customer')}</th><th>{t('status')}</th><th>{t('sinceHeader')}</th></tr></thead>
        <tbody>
          {connections.length === 0 && <tr><td colSpan={4}>{t('noConnections')}</td></tr>}
          {list.shown.map((c) => (
            <tr key={c.id}><td>{c.external_id}</td><td>{c.customer.company ?? c.customer.name ?? c.customer.email}</td><td>{valueText(c.status)}</td><td>{when(c.created_at)}</td></tr>
          ))}
        </tbody>
      </table>
      {list.pager}
    </div>
  );
}

/** The partner webhook's delivery log, with why each failed, and redelivery. */
function PartnerDeliveries({ partner }: { partner: Partner }) {
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const [sent, setSent] = useState<string | null>(null);
  const { busy, error, run } = useAction();
  const load = () => run(async () => setDeliveries((await api.call<{ data: Delivery[] }>('GET', `/platform/partners/${partner.id}/deliveries?limit=100`)).data));
  useEffect(() => void load(), []);
  const list = useListView(deliveries ?? [], {
    searchLabel: t('searchDeliveries'),
    textOf: (d) => `${d.event_type} ${d.last_error ?? ''} ${d.last_response_status ?? ''}`,
    filter: { label: t('status'), values: ['pending', 'delivered', 'failed'], of: (d) => d.status },
  });
  return (
    <div data-partner-deliveries>
      <ErrorLine error={error} />
      {sent && <p role="status">{t('queuedAgain', { id: sent })}</p>}
      {list.controls}
      <table class="inner">
        <thead><tr><th>{t('event')}</th><th>{t('status')}</th><th>{t('attempts')}</th><th>{t('last')}</th><th>HTTP</th><th>{t('reason')}</th><th>{t('actions')}</th></tr></thead>
        <tbody>
          {deliveries?.length === 0 && <tr><td colSpan={7}>{t('noDeliveries')}</td></tr>}
          {list.shown.map((d) => (
            <tr key={d.id} data-delivery={d.id}>
              <td>{d.event_type}</td><td>{valueText(d.status)}</td><td>{formatNumber(d.attempt_count)}</td><td>{when(d.last_attempt_at)}</td><td>{d.last_response_status ?? '—'}</td><td>{d.last_error ?? '—'}</td>
              <td><button type="button" disabled={busy} onClick={() => void run(async () => { setSent((await api.call<{ delivery_id: string }>('POST', `/platform/partners/${partner.id}/deliveries/${d.id}/redeliver`)).delivery_id); await load(); })}>{t('redeliver')}</button></td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.pager}
    </div>
  );
}

/** The partner's usage: messages per day of its connected accounts over the last 30 days (`GET /platform/partners/{id}/usage`). */
function PartnerUsage({ partner }: { partner: Partner }) {
  const [usage, setUsage] = useState<{ connections: number; data: UsagePoint[] } | null>(null);
  const { error, run } = useAction();
  useEffect(() => void run(async () => setUsage(await api.call<{ connections: number; data: UsagePoint[] }>('GET', `/platform/partners/${partner.id}/usage?from=${thirtyDaysAgo()}&granularity=day`))), []);
  if (usage === null) return <div><ErrorLine error={error} /><p class="muted">{t('loading')}</p></div>;
  return (
    <div data-partner-usage>
      <p class="muted">{t('partnerUsageOf', { count: formatNumber(usage.connections) })}</p>
      <UsageChart points={usage.data} />
    </div>
  );
}

function ScopeChoice({ chosen, onChange }: { chosen: ReadonlySet<string>; onChange: (next: Set<string>) => void }) {
  return (
    <fieldset>
      <legend>{t('keyScopes')}</legend>
      {SCOPES.map((scope) => (
        <label class="check" key={scope}>
          <input type="checkbox" checked={chosen.has(scope)} onChange={(e) => { const next = new Set(chosen); if (e.currentTarget.checked) next.add(scope); else next.delete(scope); onChange(next); }} />
          {scope}
        </label>
      ))}
    </fieldset>
  );
}

/** Name, origins, webhook URL and scopes of a partner, changed in place (`PATCH /platform/partners/{id}`). */
function EditPartner({ partner, onSaved }: { partner: Partner; onSaved: () => void }) {
  const { busy, error, run } = useAction();
  const [form, setForm] = useState({ name: partner.name, origins: partner.allowed_origins.join('\n'), webhook: partner.webhook_url ?? '', scopes: new Set(partner.key_scopes) });
  const save = () =>
    run(async () => {
      await api.call('PATCH', `/platform/partners/${partner.id}`, {
        name: form.name,
        allowed_origins: form.origins.split(/[\s,]+/).filter(Boolean),
        webhook_url: form.webhook || null,
        key_scopes: [...form.scopes],
      });
      onSaved();
    });
  return (
    <form class="card grid" aria-label={t('editTitle', { name: partner.name })} onSubmit={(event) => { event.preventDefault(); void save(); }}>
      <label>{t('name')} <input name="name" required value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} /></label>
      <label>{t('webhookUrl')} <input name="webhook" type="url" value={form.webhook} onInput={(e) => setForm({ ...form, webhook: e.currentTarget.value })} /></label>
      <label>{t('allowedOrigins')} <textarea name="origins" rows={2} value={form.origins} onInput={(e) => setForm({ ...form, origins: e.currentTarget.value })} /></label>
      <ScopeChoice chosen={form.scopes} onChange={(scopes) => setForm({ ...form, scopes })} />
      <ErrorLine error={error} />
      <button class="primary" type="submit" disabled={busy}>{t('saveChanges')}</button>
    </form>
  );
}

function NewPartner({ onCreated }: { onCreated: (created: Partner & { partner_secret: string; webhook_secret: string }) => void }) {
  const { busy, error, run } = useAction();
  const [form, setForm] = useState({ name: '', slug: '', origins: '', webhook: '', scopes: new Set(['instances:read', 'messages:send']) });
  const set = (field: 'name' | 'slug' | 'origins' | 'webhook', value: string) => setForm({ ...form, [field]: value });
  const submit = () =>
    run(async () => {
      const created = await api.call<Partner & { partner_secret: string; webhook_secret: string }>('POST', '/platform/partners', {
        name: form.name,
        slug: form.slug,
        allowed_origins: form.origins.split(/[\s,]+/).filter(Boolean),
        webhook_url: form.webhook || null,
        key_scopes: [...form.scopes],
      });
      setForm({ ...form, name: '', slug: '', origins: '', webhook: '' });
      onCreated(created);
    });
  return (
    <Section title={t('newPartner')}>
      <form class="card grid" onSubmit={(event) => { event.preventDefault(); void submit(); }}>
        <label>{t('name')} <input name="name" required value={form.name} onInput={(e) => set('name', e.currentTarget.value)} /></label>
        <label>{t('slug')} <input name="slug" required pattern="[a-z0-9][a-z0-9\-]{1,62}" value={form.slug} onInput={(e) => set('slug', e.currentTarget.value)} /></label>
        <label>{t('allowedOrigins')} <textarea name="origins" rows={2} value={form.origins} onInput={(e) => set('origins', e.currentTarget.value)} /></label>
        <label>{t('webhookUrl')} <input name="webhook" type="url" value={form.webhook} onInput={(e) => set('webhook', e.currentTarget.value)} /></label>
        <ScopeChoice chosen={form.scopes} onChange={(scopes) => setForm({ ...form, scopes })} />
        <ErrorLine error={error} />
        <button class="primary" type="submit" disabled={busy}>{t('createPartner')}</button>
      </form>
    </Section>
  );
}

/** Deliveries given up on, of every webhook and partner: sent again one by one or by endpoint. */
function DeadDeliveries({ partners }: { partners: readonly Partner[] }) {
  const [dead, setDead] = useState<DeadDelivery[] | null>(null);
  const [sent, setSent] = useState<number | null>(null);
  const { busy, error, run } = useAction();
  const load = () => run(async () => setDead((await api.call<{ data: DeadDelivery[] }>('GET', '/platform/dead-deliveries')).data));
  const redeliver = (body: { delivery_ids: string[] } | { endpoint: string }) =>
    run(async () => {
      setSent((await api.call<{ data: DeadDelivery[] }>('POST', '/platform/dead-deliveries/redeliver', body)).data.length);
      await load();
    });
  useEffect(() => void load(), []);
  const nameOf = (d: DeadDelivery) => (d.target_kind === 'partner_webhook' ? (partners.find((p) => p.id === d.target_id)?.name ?? d.target_id) : d.target_id);
  const list = useListView(dead ?? [], {
    searchLabel: t('searchDeadDeliveries'),
    textOf: (d) => `${nameOf(d)} ${d.target_id} ${d.event_type} ${d.last_error ?? ''}`,
    filter: { label: t('endpointKind'), values: ['account_webhook', 'partner_webhook'], of: (d) => d.target_kind },
  });
  return (
    <Section title={t('deadDeliveries')}>
      <ErrorLine error={error} />
      {sent !== null && <p role="status">{t('sentAgain', { count: formatNumber(sent) })}</p>}
      {list.controls}
      <table data-dead-deliveries>
        <thead><tr><th>{t('givenUp')}</th><th>{t('endpoint')}</th><th>{t('event')}</th><th>{t('attempts')}</th><th>{t('lastError')}</th><th>{t('actions')}</th></tr></thead>
        <tbody>
          {dead?.length === 0 && <tr><td colSpan={6}>{t('noDeadDeliveries')}</td></tr>}
          {list.shown.map((d) => (
            <tr key={d.delivery_id} data-delivery={d.delivery_id}>
              <td>{when(d.dead_at)}</td>
              <td>{nameOf(d)}</td>
              <td>{d.event_type}</td>
              <td>{formatNumber(d.attempts)}</td>
              <td>{d.last_error ?? '—'}</td>
              <td class="actions">
                <button type="button" disabled={busy} onClick={() => void redeliver({ delivery_ids: [d.delivery_id] })}>{t('redeliver')}</button>
                <button type="button" disabled={busy} onClick={() => void redeliver({ endpoint: d.target_id })}>{t('redeliverEndpoint')}</button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.pager}
    </Section>
  );
}
