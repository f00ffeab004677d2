/**
 * The component's look, adopted by its shadow root as a constructed stylesheet: no `<style>` or
 * `style` attribute is written, so a host CSP without 'unsafe-inline' styles holds. Hosts theme it
 * with the custom properties below, set on `service-connect` or any ancestor (docs/widget.md).
 */
const CSS = `
:host {
  --sc-color-primary: #0f6e56;
  --sc-color-on-primary: #ffffff;
  --sc-color-text: #1d2329;
  --sc-color-muted: #5b6670;
  --sc-color-background: #ffffff;
  --sc-color-surface: #f3f5f6;
  --sc-color-border: #d5dade;
  --sc-color-danger: #b42318;
  --sc-radius: 10px;
  --sc-font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  --sc-font-size: 15px;
  display: block;
  color: var(--sc-color-text);
  font-family: var(--sc-font-family);
  font-size: var(--sc-font-size);
  line-height: 1.45;
}
:host([data-modal]) {
  position: fixed;
  inset: 0;
  z-index: 2147483000;
  display: grid;
  place-items: center;
  background: rgb(16 24 32 / 55%);
}
.panel {
  box-sizing: border-box;
  width: min(420px, 100% - 24px);
  max-height: calc(100% - 24px);
  overflow: auto;
  background: var(--sc-color-background);
  border: 1px solid var(--sc-color-border);
  border-radius: var(--sc-radius);
  padding: 20px 22px 22px;
  box-shadow: 0 12px 40px rgb(16 24 32 / 18%);
}
.bar { display: flex; align-items: center; gap: 10px; margin-bottom: 14px; }
.bar img { width: 32px; height: 32px; object-fit: contain; border-radius: 6px; }
.bar .partner { flex: 1; font-weight: 600; }
h2 { font-size: 1.2em; margin: 0 0 8px; }
p { margin: 0 0 12px; }
.muted { color: var(--sc-color-muted); font-size: .92em; }
.stack { display: grid; gap: 10px; }
button {
  font: inherit;
  cursor: pointer;
  border-radius: var(--sc-radius);
  padding: 10px 14px;
  border: 1px solid var(--sc-color-border);
  background: var(--sc-color-surface);
  color: var(--sc-color-text);
}
button.primary { background: var(--sc-color-primary); border-color: var(--sc-color-primary); color: var(--sc-color-on-primary); font-weight: 600; }
button.link { background: none; border: none; padding: 4px 0; color: var(--sc-color-primary); text-decoration: underline; }
button.icon { background: none; border: none; padding: 4px 8px; font-size: 1.3em; line-height: 1; }
button:disabled, button[aria-disabled='true'] { opacity: .55; cursor: default; }
button:focus-visible, input:focus-visible { outline: 3px solid var(--sc-color-primary); outline-offset: 2px; }
label { display: grid; gap: 4px; font-weight: 500; }
input {
  font: inherit;
  padding: 10px 12px;
  border: 1px solid var(--sc-color-border);
  border-radius: var(--sc-radius);
  color: var(--sc-color-text);
  background: var(--sc-color-background);
}
input.code { letter-spacing: .4em; font-size: 1.3em; text-align: center; font-variant-numeric: tabular-nums; }
fieldset { border: none; margin: 0; padding: 0; display: grid; gap: 8px; }
legend { font-weight: 500; margin-bottom: 6px; }
.choice { display: flex; align-items: center; gap: 8px; padding: 10px 12px; border: 1px solid var(--sc-color-border); border-radius: var(--sc-radius); font-weight: 400; }
.notice { background: var(--sc-color-surface); border-radius: var(--sc-radius); padding: 10px 12px; }
.error { color: var(--sc-color-danger); font-weight: 500; }
.price { font-size: 1.5em; font-weight: 700; }
.qr { display: block; width: 220px; height: 220px; margin: 4px auto 12px; background: #fff; padding: 8px; border-radius: 6px; }
.pairing { font-size: 1.8em; font-weight: 700; letter-spacing: .12em; text-align: center; font-variant-numeric: tabular-nums; margin: 8px 0 14px; }
ul.numbers { list-style: none; margin: 0 0 12px; padding: 0; display: grid; gap: 6px; }
ul.scopes { margin: 0 0 12px; padding-left: 20px; }
ul.numbers li { display: flex; justify-content: space-between; padding: 8px 12px; background: var(--sc-color-surface); border-radius: var(--sc-radius); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;

let sheet: CSSStyleSheet | undefined;

/** One stylesheet shared by every instance on the page. */
export function componentSheet(): CSSStyleSheet {
  if (sheet === undefined) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
  }
  return sheet;
}
