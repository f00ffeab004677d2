import { describe, expect, it } from 'vitest';
import { MESSAGES } from '../../panel/src/messages.js';
import { LOCALES } from '../../widget/src/messages.js';

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("the panels' words", () => {
  it('has every message in every language of the component, with the same placeholders', () => {
    expect(Object.keys(MESSAGES).sort()).toEqual([...LOCALES].sort());
    const keys = Object.keys(MESSAGES.en) as (keyof typeof MESSAGES.en)[];
    for (const locale of LOCALES) {
      expect(Object.keys(MESSAGES[locale]).sort(), locale).toEqual([...keys].sort());
      for (const key of keys) {
        const text = MESSAGES[locale][key];
        expect(text.trim().length, `${locale}.${key}`).toBeGreaterThan(0);
        expect(placeholders(text), `${locale}.${key}`).toEqual(placeholders(MESSAGES.en[key]));
      }
    }
  });

  it('says each screen title in each language, not in English', () => {
    for (const locale of LOCALES.filter((l) => l !== 'en')) {
      for (const key of ['signIn', 'numbers', 'usage', 'partners', 'rename'] as const) {
        expect(MESSAGES[locale][key], `${locale}.${key}`).not.toBe(MESSAGES.en[key]);
      }
    }
  });
});
