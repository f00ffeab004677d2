import { createContext } from 'preact';
import { useContext, useRef, useState } from 'preact/hooks';
import { ConnectError, FATAL, type Bootstrap, type ConnectApi } from './api.js';
import type { Announcer } from './events.js';
import { errorText, type Translate } from './messages.js';

/** What every step reads: the API, the words, the last bootstrap, and how to move on. */
export interface StepContext {
  readonly api: ConnectApi;
  readonly t: Translate;
  readonly locale: string;
  readonly boot: Bootstrap;
  readonly announce: Announcer;
  /** Reads the bootstrap again: the step shown follows it. */
  readonly refresh: () => Promise<void>;
  /** A failure the flow cannot go past (an expired session, a revoked connection). */
  readonly fail: (error: ConnectError) => void;
  /** The light-DOM node the payment processor's form is mounted in. */
  readonly paymentSlot: () => HTMLElement;
  /** Closes the component once the customer is done (`onClose` reason `done`). */
  readonly done: () => void;
}

export const Ctx = createContext<StepContext | null>(null);

export function useStep(): StepContext {
  const ctx = useContext(Ctx);
  if (ctx === null) throw new Error('a step renders inside the component');
  return ctx;
}

/**
 * Runs an action of a step: `busy` while it runs, its error in words in `error`, and failures
 * the flow cannot go past handed to `fail`.
 */
export function useAction() {
  const ctx = useStep();
  const [busy, setBusy] = useState(false);
  const running = useRef(false);
  const [error, setError] = useState<string | null>(null);
  // Busy buttons are aria-disabled, not disabled, so the focus stays on them: a click meanwhile does nothing.
  const run = async (action: () => Promise<unknown>): Promise<void> => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (caught) {
      const failure = caught instanceof ConnectError ? caught : new ConnectError('internal_error', String(caught), 0);
      if (FATAL.has(failure.code) || failure.code === 'connection_revoked') ctx.fail(failure);
      else setError(errorText(ctx.t, failure.code, failure.message));
    } finally {
      running.current = false;
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}

/** Prices as the customer reads them: `R$ 149,00`, `$29.00`. */
export function formatPrice(locale: string, amount: number, currency: string): string {
  return new Intl.NumberFormat(locale, { style: 'currency', currency }).format(amount / 100);
}
