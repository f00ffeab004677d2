import { ServiceConnectElement } from './element.js';
import type { Callbacks } from './events.js';

export interface OpenOptions extends Callbacks {
  readonly session: string;
  readonly apiBase?: string;
  readonly locale?: string;
}

// The API serves this script by default: without apiBase, calls go back where it came from.
const script = document.currentScript as HTMLScriptElement | null;
if (script?.src) ServiceConnectElement.defaultApiBase = new URL(script.src).origin;

if (!customElements.get('service-connect')) customElements.define('service-connect', ServiceConnectElement);

/**
 * `ServiceConnect.open(options)` (spec 4.6): the component over the page; `close()` ends it. While
 * one is open, another `open()` (a double click) opens nothing and returns the open one's handle.
 */
function open(options: OpenOptions): { close(): void } {
  const shown = document.querySelector<ServiceConnectElement>('service-connect[data-modal]');
  if (shown !== null) return { close: () => shown.close('host') };
  const element = document.createElement('service-connect') as ServiceConnectElement;
  element.dataset.session = options.session;
  if (options.apiBase) element.dataset.api = options.apiBase;
  if (options.locale) element.dataset.locale = options.locale;
  element.setAttribute('data-modal', '');
  element.callbacks = options;
  document.body.append(element);
  return { close: () => element.close('host') };
}

(window as unknown as { ServiceConnect: { open: typeof open } }).ServiceConnect = { open };
