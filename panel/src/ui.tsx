import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { PanelError } from './api.js';

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
      <p><strong>{label}</strong>: shown once. Copy it now.</p>
      <code data-secret>{value}</code>
      <button type="button" onClick={onDone}>I have copied it</button>
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

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/** A partner logo is served by this same API: shown by its path, so the panel's CSP (`img-src 'self'`) holds wherever the API is reached. */
export function logoSrc(url: string): string {
  try {
    const parsed = new URL(url, location.href);
    return parsed.pathname.startsWith('/partners/') ? `${parsed.pathname}${parsed.search}` : url;
  } catch {
    return url;
  }
}
