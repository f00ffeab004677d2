import { describe, expect, it } from 'vitest';
import { errorText, LOCALES, MESSAGES, resolveLocale, translator } from '../../widget/src/messages.js';

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("the component's words", () => {
  it('has every message in every language, with the same placeholders', () => {
    const keys = Object.keys(MESSAGES.en);
    for (const locale of LOCALES) {
      expect(Object.keys(MESSAGES[locale]).sort(), locale).toEqual([...keys].sort());
      for (const key of keys) {
        const text = MESSAGES[locale][key as keyof typeof MESSAGES.en];
        expect(text.trim().length, `${locale}.${key}`).toBeGreaterThan(0);
        expect(placeholders(text), `${locale}.${key}`).toEqual(placeholders(MESSAGES.en[key as keyof typeof MESSAGES.en]));
      }
    }
  });

  it('takes the option, then the document language, then the browser languages, then English', () => {
    expect(resolveLocale('de', 'fr', ['es'])).toBe('de');
    expect(resolveLocale('pt-BR', '', [])).toBe('pt');
    expect(resolveLocale(undefined, 'fr-CA', ['es'])).toBe('fr');
    expect(resolveLocale('ja', '', ['ko', 'it-IT'])).toBe('it');
    expect(resolveLocale(undefined, '', ['ja'])).toBe('en');
  });

  it('fills placeholders and says error codes in words, else the server message', () => {
    const t = translator('pt');
    expect(t('pay', { price: 'R$ 149,00' })).toBe('Pagar R$ 149,00');
    expect(errorText(t, 'invalid_code', 'server words')).toBe('Esse código não está certo ou expirou.');
    expect(errorText(t, 'quota_exceeded', 'Limite do plano.')).toBe('Limite do plano.');
  });
});
