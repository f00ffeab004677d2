import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api, PanelError } from './api.js';
import { formatNumber, formatWhen, t, valueText } from './i18n.js';

/** Runs an action with a busy flag, keeping its error's message to show. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (caught) {
      setError(caught instanceof PanelError ? caught.message : String(caught));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

export function ErrorLine({ error }: { error: string | null }) {
  return error ? <p class="error" role="alert">{error}</p> : null;
}

/** A secret shown once: the only time anybody sees it. */
export function ShownOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  return (
    <div class="once" role="status">
      <p><strong>{label}</strong>: {t('shownOnce')}</p>
      <code data-secret>{value}</code>
      <button type="button" onClick={onDone}>{t('copied')}</button>
    </div>
  );
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

export const when = formatWhen;

/** A partner logo is served by this same API: shown by its path, so the panel's CSP (`img-src 'self'`) holds wherever the API is reached. */
export function logoSrc(url: string): string {
  try {
    const parsed = new URL(url, location.href);
    return parsed.pathname.startsWith('/partners/') ? `${parsed.pathname}${parsed.search}` : url;
  } catch {
    return url;
  }
}

interface Question {
  readonly title: string;
  readonly body: string;
  /** The label of the button that acts: a verb naming the action ("Revoke the key"). */
  readonly act: string;
  readonly action: () => unknown;
}

/**
 * Asks before a destructive action. The question is a modal `<dialog>`: the browser keeps focus in
 * it, closes it on Escape and gives focus back to the button that opened it. Cancel is focused
 * first, so Enter never destroys anything by accident.
 */
export function useConfirm() {
  const [question, setQuestion] = useState<Question | null>(null);
  const dialog = question && <ConfirmDialog question={question} onClosed={() => setQuestion(null)} />;
  return { confirm: (q: Question) => setQuestion(q), dialog };
}

function ConfirmDialog({ question, onClosed }: { question: Question; onClosed: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => ref.current?.showModal(), []);
  const close = () => ref.current?.close();
  return (
    <dialog ref={ref} class="confirm" aria-labelledby={titleId} onClose={onClosed}>
      <h2 id={titleId}>{question.title}</h2>
      <p>{question.body}</p>
      <div class="buttons">
        <button type="button" autofocus onClick={close}>{t('cancel')}</button>
        <button type="button" class="danger" onClick={() => { close(); void question.action(); }}>{question.act}</button>
      </div>
    </dialog>
  );
}

export interface ListFilter<T> {
  readonly label: string;
  readonly values: readonly string[];
  readonly of: (item: T) => string;
}

/**
 * Search, an optional filter and pages over a list the panel holds: what every list of the panels
 * offers. Pages are of `pageSize`; a new search or filter goes back to the first page.
 */
export function useListView<T>(items: readonly T[], options: { searchLabel: string; textOf: (item: T) => string; filter?: ListFilter<T>; pageSize?: number }) {
  const pageSize = options.pageSize ?? 20;
  const [query, setQuery] = useState('');
  const [chosen, setChosen] = useState('');
  const [page, setPage] = useState(0);
  const needle = query.trim().toLowerCase();
  const matching = items.filter(
    (item) => (needle === '' || options.textOf(item).toLowerCase().includes(needle)) && (chosen === '' || options.filter?.of(item) === chosen),
  );
  const pages = Math.max(1, Math.ceil(matching.length / pageSize));
  const current = Math.min(page, pages - 1);
  const shown = matching.slice(current * pageSize, (current + 1) * pageSize);
  const first = matching.length === 0 ? 0 : current * pageSize + 1;
  const controls = (
    <div class="list-controls">
      <label class="inline">{options.searchLabel} <input type="search" value={query} onInput={(e) => { setQuery(e.currentTarget.value); setPage(0); }} /></label>
      {options.filter && (
        <label class="inline">{options.filter.label}{' '}
          <select value={chosen} onChange={(e) => { setChosen(e.currentTarget.value); setPage(0); }}>
            <option value="">{t('all')}</option>
            {options.filter.values.map((v) => <option key={v} value={v}>{valueText(v)}</option>)}
          </select>
        </label>
      )}
    </div>
  );
  const pager = (
    <div class="pager">
      <span role="status" class="muted">{t('pageOf', { first: formatNumber(first), last: formatNumber(first === 0 ? 0 : first + shown.length - 1), total: formatNumber(matching.length) })}</span>
      <button type="button" disabled={current === 0} onClick={() => setPage(current - 1)}>{t('previous')}</button>
      <button type="button" disabled={current >= pages - 1} onClick={() => setPage(current + 1)}>{t('next')}</button>
    </div>
  );
  return { shown, controls, pager };
}

/** A webhook delivery as `GET /webhooks/{id}/deliveries` and `GET /platform/partners/{id}/deliveries` list it. */
export interface Delivery {
  readonly id: string;
  readonly event_type: string;
  readonly status: string;
  readonly attempt_count: number;
  readonly last_attempt_at: string | null;
  readonly last_response_status: number | null;
  readonly last_error: string | null;
}

export interface AuditEntry {
  readonly id: string;
  readonly action: string;
  readonly target_id: string;
  readonly actor: { readonly kind: string; readonly id: string };
  readonly ip: string;
  readonly user_agent: string | null;
  readonly occurred_at: string;
}

/** An audit log (`GET /audit` or `GET /platform/audit`): who did what, when and from where, newest first. */
export function AuditLog({ path }: { path: string }) {
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);
  const { busy, error, run } = useAction();
  const load = () => run(async () => setEntries((await api.call<{ data: AuditEntry[] }>('GET', `${path}?limit=200`)).data));
  useEffect(() => void load(), []);
  const list = useListView(entries ?? [], {
    searchLabel: t('searchAudit'),
    textOf: (e) => `${e.action} ${e.target_id} ${e.actor.id} ${e.ip}`,
    filter: { label: t('action'), values: [...new Set((entries ?? []).map((e) => e.action))].sort(), of: (e) => e.action },
  });
  return (
    <Section title={t('auditLog')}>
      <ErrorLine error={error} />
      {list.controls}
      <button type="button" disabled={busy} onClick={() => void load()}>{t('refresh')}</button>
      <table data-audit>
        <thead><tr><th>{t('when')}</th><th>{t('action')}</th><th>{t('onWhat')}</th><th>{t('who')}</th><th>{t('from')}</th></tr></thead>
        <tbody>
          {entries?.length === 0 && <tr><td colSpan={5}>{t('nothingYet')}</td></tr>}
          {list.shown.map((e) => (
            <tr key={e.id} data-entry={e.action}>
              <td>{when(e.occurred_at)}</td><td>{e.action}</td><td><code>{e.target_id}</code></td>
              <td>{e.actor.id} <span class="muted">({valueText(e.actor.kind)})</span></td>
              <td title={e.user_agent ?? undefined}>{e.ip}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.pager}
    </Section>
  );
}
