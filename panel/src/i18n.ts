import { LOCALES, resolveLocale, type Locale } from '../../widget/src/messages.js';
import { MESSAGES, type MessageKey } from './messages.js';

export { LOCALES, type Locale };

/** Each language named in itself, as the switcher offers it. */
export const LOCALE_NAMES: Readonly<Record<Locale, string>> = { pt: 'Português', en: 'English', es: 'Español', it: 'Italiano', de: 'Deutsch', fr: 'Français' };

const CHOSEN = 'gw_panel_locale';

/**
 * The language of the page: the one chosen with the switcher (kept in this browser), else the
 * first of the browser's languages that the panels speak (the component's six), else English.
 */
export function initialLocale(): Locale {
  let chosen: string | undefined;
  try {
    chosen = localStorage.getItem(CHOSEN) ?? undefined;
  } catch {
    chosen = undefined;
  }
  return resolveLocale(chosen, '', navigator.languages);
}

let current: Locale = 'en';

/** Speaks `locale` from now on (the page is rendered again by its caller); `remember` keeps the choice. */
export function setLocale(locale: Locale, remember = false): void {
  current = locale;
  document.documentElement.lang = locale;
  document.title = t('pageTitle');
  if (remember) {
    try {
      localStorage.setItem(CHOSEN, locale);
    } catch {
      // Storage refused (a private window): the choice lasts for this page only.
    }
  }
}

/** The words of `key` in the current language: `t('removeTitle', { name })` fills `{name}`. */
export function t(key: MessageKey, values: Record<string, string | number> = {}): string {
  return MESSAGES[current][key].replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}

/** An API value (a status, a role) in words when the catalogue has it, else as it is. */
export function valueText(value: string): string {
  const key = `value_${value}` as MessageKey;
  return key in MESSAGES.en ? t(key) : value;
}

export const formatNumber = (value: number) => new Intl.NumberFormat(current).format(value);
export const formatPercent = (ratio: number) => new Intl.NumberFormat(current, { style: 'percent' }).format(ratio);

/** A moment, in the page's language and the browser's time zone; a dash when there is none. */
export const formatWhen = (iso: string | null | undefined) => (iso ? new Intl.DateTimeFormat(current, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso)) : '—');

/** A day of the usage axes (`YYYY-MM-DD`, a UTC day), short. */
export const formatDay = (day: string) => new Intl.DateTimeFormat(current, { month: 'short', day: 'numeric', timeZone: 'UTC' }).format(new Date(`${day}T00:00:00Z`));
