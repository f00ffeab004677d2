import { render } from 'preact';
import { ConnectApi } from './api.js';
import { App } from './app.js';
import { announcer, type Callbacks, type CloseDetail, type CloseReason } from './events.js';
import { resolveLocale } from './messages.js';
import { componentSheet } from './styles.js';

/**
 * `<service-connect data-session data-api data-locale>` (spec 4.6): the component in a shadow root
 * of its own, no iframe. `ServiceConnect.open` makes one with `data-modal`, over the page.
 */
export class ServiceConnectElement extends HTMLElement {
  /** The callbacks of `ServiceConnect.open`; the DOM events are sent either way. */
  callbacks: Callbacks = {};
  /**
   * Asked for a new session token when the session expires midway (30 minutes, spec 8.4), as
   * Stripe's `fetchClientSecret`: the page's backend opens a new session for the same external_id.
   * Without it, an expired session ends in the error screen and `onError`.
   */
  fetchSession: (() => Promise<string>) | undefined;
  /** Where the API is when `data-api` is not given: the origin the script came from. */
  static defaultApiBase = '';
  private root: ShadowRoot | undefined;
  private slotNode: HTMLElement | undefined;
  private closed = false;
  /** The session's id and the last screen shown, for the events and the reason of `close`. */
  private readonly shown: { sessionId: string | null; step: CloseDetail['step'] } = { sessionId: null, step: null };
  /** What had the focus before the modal opened: it gets it back when the modal closes. */
  private opener: HTMLElement | null = null;
  /** The page's own overflow, put back when the modal closes. */
  private pageOverflow = '';
  /**
   * Keeps the modal over what the customer sees. `position: fixed` fills the layout viewport, which
   * a page wider than the screen (or a pinch zoom) makes larger than the visual viewport: the modal
   * would centre off-screen. Placed by CSSOM, which a strict style-src allows.
   */
  private readonly fitVisualViewport = () => {
    const view = window.visualViewport;
    if (!view) return;
    this.style.setProperty('inset', 'auto');
    this.style.setProperty('left', `${view.offsetLeft}px`);
    this.style.setProperty('top', `${view.offsetTop}px`);
    this.style.setProperty('width', `${view.width}px`);
    this.style.setProperty('height', `${view.height}px`);
  };
  private readonly onKey = (event: KeyboardEvent) => {
    if (event.key === 'Escape') this.close('dismissed');
    if (event.key === 'Tab') this.keepFocusInside(event);
  };

  connectedCallback(): void {
    const session = this.dataset.session;
    const announce = this.announcer();
    if (!session) {
      announce.error({ code: 'connect_session_required', message: 'data-session is missing' });
      return;
    }
    const page = this.dataset.locale;
    const documentLang = document.documentElement.lang;
    // Until the session says the customer's language, the page's; a language the page sets wins.
    const localeFor = (customer: string | null | undefined) =>
      customer ? resolveLocale(page, customer, [documentLang, ...navigator.languages]) : resolveLocale(page, documentLang, navigator.languages);
    // Read when the session expires: a page may set `fetchSession` after the element is on it.
    const fetchSession = () => {
      const fetch = this.fetchSession ?? this.callbacks.fetchSession;
      return fetch === undefined ? Promise.reject(new Error('no fetchSession')) : fetch();
    };
    const api = new ConnectApi((this.dataset.api || ServiceConnectElement.defaultApiBase).replace(/\/+$/, ''), session, fetchSession);
    this.root ??= this.attachShadow({ mode: 'open' });
    this.root.adoptedStyleSheets = [componentSheet()];
    const modal = this.hasAttribute('data-modal');
    if (modal) {
      document.addEventListener('keydown', this.onKey);
      this.opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      // The page behind a modal does not scroll (CSSOM, which a strict style-src allows).
      this.pageOverflow = document.documentElement.style.overflow;
      document.documentElement.style.overflow = 'hidden';
      this.fitVisualViewport();
      window.visualViewport?.addEventListener('resize', this.fitVisualViewport);
      window.visualViewport?.addEventListener('scroll', this.fitVisualViewport);
    }
    render(
      <App
        api={api}
        localeFor={localeFor}
        announce={announce}
        modal={modal}
        paymentSlot={() => this.paymentSlot()}
        close={(reason) => this.close(reason)}
        onShown={(step, sessionId) => Object.assign(this.shown, { step, sessionId: sessionId ?? this.shown.sessionId })}
      />,
      this.root,
    );
  }

  disconnectedCallback(): void {
    document.removeEventListener('keydown', this.onKey);
    if (this.root) render(null, this.root);
    if (this.hasAttribute('data-modal')) {
      window.visualViewport?.removeEventListener('resize', this.fitVisualViewport);
      window.visualViewport?.removeEventListener('scroll', this.fitVisualViewport);
      document.documentElement.style.overflow = this.pageOverflow;
      if (this.opener?.isConnected) this.opener.focus();
    }
  }

  /** Tab and Shift+Tab go round the modal's controls (and the payment form in its slot), never out to the page behind. */
  private keepFocusInside(event: KeyboardEvent): void {
    if (!this.root) return;
    const selector = 'button:not([disabled]), input:not([disabled]), select, textarea, a[href], iframe, [tabindex]:not([tabindex="-1"])';
    const focusable = [...this.root.querySelectorAll<HTMLElement>(selector), ...this.querySelectorAll<HTMLElement>(selector)].filter((el) => el.getClientRects().length > 0);
    const first = focusable[0];
    const last = focusable[focusable.length - 1];
    if (first === undefined || last === undefined) return;
    const active = this.root.activeElement ?? (this.contains(document.activeElement) ? document.activeElement : null);
    const inside = active !== null && focusable.includes(active as HTMLElement);
    if (!inside || (event.shiftKey && active === first) || (!event.shiftKey && active === last)) {
      event.preventDefault();
      (event.shiftKey ? last : first).focus();
    }
  }

  /** Ends the component: `service:close` and `onClose` with why and where, then it leaves the page. */
  close(reason: CloseReason = 'host'): void {
    if (this.closed) return;
    this.closed = true;
    this.announcer().close({ reason, step: this.shown.step });
    this.remove();
  }

  private announcer() {
    return announcer(this, () => this.callbacks, () => this.shown.sessionId);
  }

  /** The light-DOM node the payment processor's form mounts in, shown through the shadow root's slot. */
  private paymentSlot(): HTMLElement {
    if (this.slotNode === undefined) {
      this.slotNode = document.createElement('div');
      this.slotNode.slot = 'payment';
      this.append(this.slotNode);
    }
    return this.slotNode;
  }
}
