import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { AccountPanel } from './account.js';
import { api, PanelError, type Me } from './api.js';
import { Login } from './login.js';
import { PlatformPanel } from './platform.js';

type View = { kind: 'platform' } | { kind: 'account'; id: string };

/** The panels: sign in, then the platform's (for its administrators) or an account's. */
function Panel() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [view, setView] = useState<View | undefined>();

  const signedIn = (who: Me) => {
    api.csrf = who.csrf_token;
    setMe(who);
    const first: View | undefined = who.platform_admin ? { kind: 'platform' } : who.accounts[0] && { kind: 'account', id: who.accounts[0].id };
    choose(first);
  };
  const choose = (next: View | undefined) => {
    api.account = next?.kind === 'account' ? next.id : undefined;
    setView(next);
  };
  useEffect(() => {
    api.call<Me>('GET', '/panel/me').then(signedIn, (error: unknown) => {
      if (error instanceof PanelError && error.status === 401) setMe(null);
      else throw error;
    });
  }, []);

  if (me === undefined) return <main><p class="muted">Loading…</p></main>;
  if (me === null) return <main><Login onSignedIn={signedIn} /></main>;
  const account = view?.kind === 'account' ? me.accounts.find((a) => a.id === view.id) : undefined;
  return (
    <div>
      <header class="top">
        <strong>Gateway</strong>
        <nav aria-label="Panels">
          {me.platform_admin && <button type="button" class={view?.kind === 'platform' ? 'current' : ''} onClick={() => choose({ kind: 'platform' })}>Platform</button>}
          {me.accounts.map((a) => (
            <button key={a.id} type="button" class={account?.id === a.id ? 'current' : ''} onClick={() => choose({ kind: 'account', id: a.id })}>{a.name}</button>
          ))}
        </nav>
        <span class="muted">{me.email}</span>
        <button type="button" onClick={() => void api.call('POST', '/panel/logout').then(() => setMe(null))}>Sign out</button>
      </header>
      <main>
        <h1>{view?.kind === 'platform' ? 'Platform administration' : (account?.name ?? 'Gateway')}</h1>
        {view?.kind === 'platform' && <PlatformPanel />}
        {account && <AccountPanel key={account.id} account={account} email={me.email} />}
        {view === undefined && <p>This e-mail has no account and is no platform administrator.</p>}
      </main>
    </div>
  );
}

render(<Panel />, document.getElementById('panel')!);
