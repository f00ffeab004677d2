import { render, type ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { AccountPanel } from './account.js';
import { api, PanelError, type Me } from './api.js';
import { initialLocale, LOCALE_NAMES, LOCALES, setLocale, t, type Locale } from './i18n.js';
import { Login } from './login.js';
import { PlatformPanel } from './platform.js';

type View = { kind: 'platform' } | { kind: 'account'; id: string };

/** The panels: sign in, then the platform's (for its administrators) or an account's. */
function Panel() {
  const [locale, setShown] = useState<Locale>(() => {
    const first = initialLocale();
    setLocale(first);
    return first;
  });
  const speak = (next: Locale) => {
    setLocale(next, true);
    setShown(next);
  };
  return <Signed key={locale} switcher={<LocaleSwitcher locale={locale} onChange={speak} />} />;
}

/** The language of the panels: chosen here, remembered by this browser. */
function LocaleSwitcher({ locale, onChange }: { locale: Locale; onChange: (next: Locale) => void }) {
  return (
    <label class="inline">{t('language')}{' '}
      <select value={locale} onChange={(event) => onChange(event.currentTarget.value as Locale)}>
        {LOCALES.map((l) => <option key={l} value={l} lang={l}>{LOCALE_NAMES[l]}</option>)}
      </select>
    </label>
  );
}

/** The page in one language: rendered anew when the language changes, so every word is said again. */
function Signed({ switcher }: { switcher: ComponentChildren }) {
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

  if (me === undefined) return <main><p class="muted">{t('loading')}</p></main>;
  if (me === null) return <main><div class="corner">{switcher}</div><Login onSignedIn={signedIn} /></main>;
  const account = view?.kind === 'account' ? me.accounts.find((a) => a.id === view.id) : undefined;
  return (
    <div>
      <header class="top">
        <strong>Gateway</strong>
        <nav aria-label={t('panels')}>
          {me.platform_admin && <button type="button" class={view?.kind === 'platform' ? 'current' : ''} onClick={() => choose({ kind: 'platform' })}>{t('platform')}</button>}
          {me.accounts.map((a) => (
            <button key={a.id} type="button" class={account?.id === a.id ? 'current' : ''} onClick={() => choose({ kind: 'account', id: a.id })}>{a.name}</button>
          ))}
        </nav>
        {switcher}
        <span class="muted">{me.email}</span>
        <button type="button" onClick={() => void api.call('POST', '/panel/logout').then(() => setMe(null))}>{t('signOut')}</button>
      </header>
      <main>
        <h1>{view?.kind === 'platform' ? t('platformAdministration') : (account?.name ?? 'Gateway')}</h1>
        {view?.kind === 'platform' && <PlatformPanel />}
        {account && <AccountPanel key={account.id} account={account} email={me.email} />}
        {view === undefined && <p>{t('noAccount')}</p>}
      </main>
    </div>
  );
}

render(<Panel />, document.getElementById('panel')!);
