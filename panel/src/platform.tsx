import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { ErrorLine, logoSrc, Section, ShownOnce, useAction, when } from './ui.js';

interface Partner {
  readonly id: string;
  readonly name: string;
  readonly slug: string;
  readonly allowed_origins: readonly string[];
  readonly webhook_url: string | null;
  readonly key_scopes: readonly string[];
  readonly logo_url: string | null;
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

/** The platform administrators' panel (spec 4.7): partners, their secrets, logos, connections. */
export function PlatformPanel() {
  const [partners, setPartners] = useState<Partner[]>([]);
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const { busy, error, run } = useAction();
  const load = () => run(async () => setPartners((await api.call<{ data: Partner[] }>('GET', '/platform/partners')).data));
  useEffect(() => void load(), []);

  return (
    <div>
      {secret && <ShownOnce label={secret.label} value={secret.value} onDone={() => setSecret(null)} />}
      <ErrorLine error={error} />
      <Section title="Partners">
        <table>
          <thead><tr><th>Logo</th><th>Name</th><th>Slug</th><th>Status</th><th>Actions</th></tr></thead>
          <tbody>
            {partners.map((p) => (
              <PartnerRow key={p.id} partner={p} busy={busy} run={run} reload={load} onSecret={setSecret} />
            ))}
          </tbody>
        </table>
      </Section>
      <DeadDeliveries partners={partners} />
      <NewPartner onCreated={(created) => { setSecret({ label: `Partner secret and webhook secret of ${created.name}`, value: `${created.partner_secret}\n${created.webhook_secret}` }); void load(); }} />
    </div>
  );
}

function PartnerRow(props: { partner: Partner; busy: boolean; run: (action: () => Promise<unknown>) => Promise<void>; reload: () => Promise<void>; onSecret: (s: { label: string; value: string }) => void }) {
  const { partner: p, run, reload } = props;
  const [connections, setConnections] = useState<PartnerConnection[] | null>(null);
  const upload = (file: File | undefined) =>
    file && run(async () => {
      const form = new FormData();
      form.append('file', file);
      await api.call('POST', `/platform/partners/${p.id}/logo`, form);
      await reload();
    });
  return (
    <>
      <tr data-partner={p.slug}>
        <td>{p.logo_url ? <img class="logo" src={logoSrc(p.logo_url)} alt={`${p.name} logo`} /> : '—'}</td>
        <td>{p.name}</td>
        <td>{p.slug}</td>
        <td>{p.active ? 'active' : 'deactivated'}</td>
        <td class="actions">
          <label class="file">Upload logo <input type="file" accept="image/png,image/jpeg,image/webp,image/svg+xml" onChange={(event) => void upload(event.currentTarget.files?.[0])} /></label>
          <button type="button" disabled={props.busy} onClick={() => void run(async () => props.onSecret({ label: `New partner secret of ${p.name}`, value: (await api.call<{ partner_secret: string }>('POST', `/platform/partners/${p.id}/rotate-secret`)).partner_secret }))}>Rotate secret</button>
          <button type="button" disabled={props.busy} onClick={() => void run(async () => props.onSecret({ label: `New webhook secret of ${p.name}`, value: (await api.call<{ webhook_secret: string }>('POST', `/platform/partners/${p.id}/rotate-webhook-secret`)).webhook_secret }))}>Rotate webhook secret</button>
          <button type="button" disabled={props.busy} onClick={() => void run(async () => { await api.call('POST', `/platform/partners/${p.id}/${p.active ? 'deactivate' : 'activate'}`); await reload(); })}>{p.active ? 'Deactivate' : 'Activate'}</button>
          <button type="button" disabled={props.busy} onClick={() => void run(async () => setConnections((await api.call<{ data: PartnerConnection[] }>('GET', `/platform/partners/${p.id}/connections`)).data))}>Connections</button>
        </td>
      </tr>
      {connections && (
        <tr>
          <td colSpan={5}>
            <table class="inner">
              <thead><tr><th>external_id</th><th>Customer</th><th>Status</th><th>Since</th></tr></thead>
              <tbody>
                {connections.length === 0 && <tr><td colSpan={4}>No connections yet.</td></tr>}
                {connections.map((c) => (
                  <tr key={c.id}><td>{c.external_id}</td><td>{c.customer.company ?? c.customer.name ?? c.customer.email}</td><td>{c.status}</td><td>{when(c.created_at)}</td></tr>
                ))}
              </tbody>
            </table>
          </td>
        </tr>
      )}
    </>
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
    <Section title="New partner">
      <form class="card grid" onSubmit={(event) => { event.preventDefault(); void submit(); }}>
        <label>Name <input name="name" required value={form.name} onInput={(e) => set('name', e.currentTarget.value)} /></label>
        <label>Slug <input name="slug" required pattern="[a-z0-9][a-z0-9\-]{1,62}" value={form.slug} onInput={(e) => set('slug', e.currentTarget.value)} /></label>
        <label>Allowed origins (one per line) <textarea name="origins" rows={2} value={form.origins} onInput={(e) => set('origins', e.currentTarget.value)} /></label>
        <label>Webhook URL <input name="webhook" type="url" value={form.webhook} onInput={(e) => set('webhook', e.currentTarget.value)} /></label>
        <fieldset>
          <legend>Scopes of the keys it issues</legend>
          {SCOPES.map((scope) => (
            <label class="check" key={scope}>
              <input type="checkbox" checked={form.scopes.has(scope)} onChange={(e) => { const next = new Set(form.scopes); if (e.currentTarget.checked) next.add(scope); else next.delete(scope); setForm({ ...form, scopes: next }); }} />
              {scope}
            </label>
          ))}
        </fieldset>
        <ErrorLine error={error} />
        <button class="primary" type="submit" disabled={busy}>Create partner</button>
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
  return (
    <Section title="Dead deliveries">
      <ErrorLine error={error} />
      {sent !== null && <p role="status">Sent again: {sent}. Each is a new delivery with its own retries.</p>}
      <table data-dead-deliveries>
        <thead><tr><th>Given up</th><th>Endpoint</th><th>Event</th><th>Attempts</th><th>Last error</th><th>Actions</th></tr></thead>
        <tbody>
          {dead?.length === 0 && <tr><td colSpan={6}>No dead deliveries.</td></tr>}
          {dead?.map((d) => (
            <tr key={d.delivery_id} data-delivery={d.delivery_id}>
              <td>{when(d.dead_at)}</td>
              <td>{nameOf(d)}</td>
              <td>{d.event_type}</td>
              <td>{d.attempts}</td>
              <td>{d.last_error ?? '—'}</td>
              <td class="actions">
                <button type="button" disabled={busy} onClick={() => void redeliver({ delivery_ids: [d.delivery_id] })}>Redeliver</button>
                <button type="button" disabled={busy} onClick={() => void redeliver({ endpoint: d.target_id })}>Redeliver all of this endpoint</button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}
