/** The demo partner's page: no inline script or style, so it runs under the CSP it sends. */
export function demoHtml(widgetUrl: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Demo partner · Connect</title>
<link rel="stylesheet" href="/demo.css">
<script src="${widgetUrl}/v1/connect.js" defer></script>
<script src="/demo.js" defer></script>
</head>
<body>
<main>
  <h1>Demo partner</h1>
  <p>A partner's page on its own origin. It asks its server for a session (with the partner secret, which never reaches this page) and opens the component.</p>
  <form id="session">
    <label>Customer e-mail <input name="email" type="email" required value="owner@padaria.example"></label>
    <label>Company <input name="company" value="Padaria Sol"></label>
    <label>Country <input name="country" value="BR" maxlength="2"></label>
    <label>Language <select name="locale"><option>pt</option><option selected>en</option><option>es</option><option>it</option><option>de</option><option>fr</option></select></label>
    <label><input type="checkbox" name="page_locale" checked> Open the component in this language too (unchecked, it takes the customer's from the session)</label>
    <label><input type="checkbox" name="renew" checked> Renew the session when it expires (fetchSession asks this server for a new one)</label>
    <label>Your customer id (external_id) <input name="external_id" value="demo-customer-1"></label>
    <fieldset><legend>Open as</legend>
      <label><input type="radio" name="mode" value="modal" checked> ServiceConnect.open()</label>
      <label><input type="radio" name="mode" value="inline"> &lt;service-connect&gt; in the page</label>
    </fieldset>
    <button type="submit">Connect your number</button>
  </form>
  <div id="inline"></div>
  <h2>What the component told the page</h2>
  <ol id="log"></ol>
</main>
</body>
</html>`;
}

export const demoCss = `
body { font-family: system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1d2329; }
main { max-width: 720px; margin: 0 auto; padding: 24px; }
form { display: grid; gap: 10px; background: #fff; padding: 16px; border-radius: 10px; border: 1px solid #d5dade; }
label { display: grid; gap: 4px; }
fieldset { border: none; padding: 0; display: grid; gap: 6px; }
fieldset label { display: flex; gap: 8px; align-items: center; }
button { padding: 10px 14px; font: inherit; border-radius: 8px; border: none; background: #0f6e56; color: #fff; cursor: pointer; justify-self: start; }
#inline { margin-top: 16px; }
/* Long JSON lines wrap: a page wider than a phone's screen would put a fixed modal off its centre. */
#log { font-family: ui-monospace, monospace; font-size: 13px; overflow-wrap: anywhere; }
`;

/**
 * The page's script: asks the demo server for a session, opens the component, and writes every
 * callback and DOM event into the list (tests read `window.demoEvents`).
 */
export const demoJs = `
(() => {
  const events = (window.demoEvents = []);
  const log = document.getElementById('log');
  const note = (kind, name, detail) => {
    events.push({ kind, name, detail });
    const item = document.createElement('li');
    item.textContent = kind + ' ' + name + ' ' + JSON.stringify(detail === undefined ? null : detail);
    log.append(item);
  };
  for (const name of ['ready', 'step', 'complete', 'close', 'error']) {
    document.addEventListener('service:' + name, (event) => note('event', name, event.detail));
  }
  document.getElementById('session').addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const response = await fetch('/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(Object.fromEntries(form)) });
    const answer = await response.json();
    if (!response.ok) return note('demo', 'session refused', answer);
    const locale = form.get('page_locale') ? form.get('locale') : undefined;
    // A new session for the same customer (external_id), as a partner's backend would open it.
    const fetchSession = form.get('renew')
      ? async () => {
          const renewed = await fetch('/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(Object.fromEntries(form)) });
          const next = await renewed.json();
          note('demo', 'session renewed', { session_id: next.session_id });
          return next.session_token;
        }
      : undefined;
    if (form.get('mode') === 'inline') {
      const element = document.createElement('service-connect');
      element.dataset.session = answer.session_token;
      element.dataset.api = answer.api_base;
      element.fetchSession = fetchSession;
      if (locale) element.dataset.locale = locale;
      document.getElementById('inline').replaceChildren(element);
      return;
    }
    window.demoHandle = ServiceConnect.open({
      session: answer.session_token,
      apiBase: answer.api_base,
      locale,
      fetchSession,
      onReady: (detail) => note('callback', 'ready', detail),
      onStep: (detail) => note('callback', 'step', detail),
      onComplete: (detail) => note('callback', 'complete', detail),
      onClose: (detail) => note('callback', 'close', detail),
      onError: (detail) => note('callback', 'error', detail),
    });
  });
})();
`;
