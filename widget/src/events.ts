import type { Step } from './api.js';

/**
 * Every detail carries `sessionId`, the session's `csn_…` id (null until the component has read
 * it): what a partner's support asks a customer for, as Plaid's `link_session_id`.
 */
interface Session { readonly sessionId: string | null }

export interface ReadyDetail extends Session { readonly step: Step; readonly connectionId: string; readonly status: string }
export interface StepDetail extends Session { readonly step: Step }
export interface CompleteDetail extends Session { readonly code: string; readonly connectionId: string; readonly externalId: string }
export interface ErrorDetail extends Session { readonly code: string; readonly message: string }

/**
 * Why the component closed: the customer dismissed it (× or Escape), finished (Done), or the page
 * closed it (`close()` of the handle or the element).
 */
export type CloseReason = 'dismissed' | 'done' | 'host';

/** `step`: the last screen the customer saw, `error` for the error screen, null before the first. */
export interface CloseDetail extends Session { readonly reason: CloseReason; readonly step: Step | 'error' | null }

/** The callbacks of `ServiceConnect.open` (spec 4.6). */
export interface Callbacks {
  onReady?: (detail: ReadyDetail) => void;
  onStep?: (detail: StepDetail) => void;
  onComplete?: (detail: CompleteDetail) => void;
  onClose?: (detail: CloseDetail) => void;
  onError?: (detail: ErrorDetail) => void;
  /** See `ServiceConnectElement.fetchSession`. */
  fetchSession?: () => Promise<string>;
}

type Without<D> = Omit<D, 'sessionId'>;

/**
 * Tells the host what happened, both ways spec 4.6 names: the callback, and a DOM event
 * `service:*` on the element, bubbling and composed, whose `detail` is the callback's argument.
 * A throwing callback does not stop the component.
 */
export function announcer(host: HTMLElement, callbacks: () => Callbacks, sessionId: () => string | null) {
  const fire = <D>(name: string, partial: Without<D>, callback: ((detail: D) => void) | undefined) => {
    const detail = { ...partial, sessionId: sessionId() } as D;
    try {
      callback?.(detail);
    } catch (error) {
      console.error(error);
    }
    host.dispatchEvent(new CustomEvent(`service:${name}`, { detail, bubbles: true, composed: true }));
  };
  return {
    ready: (detail: Without<ReadyDetail>) => fire('ready', detail, callbacks().onReady),
    step: (detail: Without<StepDetail>) => fire('step', detail, callbacks().onStep),
    complete: (detail: Without<CompleteDetail>) => fire('complete', detail, callbacks().onComplete),
    close: (detail: Without<CloseDetail>) => fire('close', detail, callbacks().onClose),
    error: (detail: Without<ErrorDetail>) => fire('error', detail, callbacks().onError),
  };
}

export type Announcer = ReturnType<typeof announcer>;
