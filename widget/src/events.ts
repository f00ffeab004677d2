import type { Step } from './api.js';

export interface ReadyDetail { readonly step: Step; readonly connectionId: string; readonly status: string }
export interface StepDetail { readonly step: Step }
export interface CompleteDetail { readonly code: string; readonly connectionId: string; readonly externalId: string }
export interface ErrorDetail { readonly code: string; readonly message: string }

/** The callbacks of `ServiceConnect.open` (spec 4.6). */
export interface Callbacks {
  onReady?: (detail: ReadyDetail) => void;
  onStep?: (detail: StepDetail) => void;
  onComplete?: (detail: CompleteDetail) => void;
  onClose?: () => void;
  onError?: (detail: ErrorDetail) => void;
}

/**
 * Tells the host what happened, both ways spec 4.6 names: the callback, and a DOM event
 * `service:*` on the element, bubbling and composed, whose `detail` is the callback's argument.
 * A throwing callback does not stop the component.
 */
export function announcer(host: HTMLElement, callbacks: () => Callbacks) {
  const fire = <D>(name: string, detail: D, callback: ((detail: D) => void) | undefined) => {
    try {
      callback?.(detail);
    } catch (error) {
      console.error(error);
    }
    host.dispatchEvent(new CustomEvent(`service:${name}`, { detail, bubbles: true, composed: true }));
  };
  return {
    ready: (detail: ReadyDetail) => fire('ready', detail, callbacks().onReady),
    step: (detail: StepDetail) => fire('step', detail, callbacks().onStep),
    complete: (detail: CompleteDetail) => fire('complete', detail, callbacks().onComplete),
    close: () => fire('close', null, () => callbacks().onClose?.()),
    error: (detail: ErrorDetail) => fire('error', detail, callbacks().onError),
  };
}

export type Announcer = ReturnType<typeof announcer>;
