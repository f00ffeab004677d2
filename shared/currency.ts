/** Currencies of the Pro plan (spec 4.4 rule 2). */
export type Currency = 'BRL' | 'USD' | 'EUR';

/** ISO 3166 alpha-2 codes of the countries and territories of the Americas, Brazil aside. */
const AMERICAS = new Set(
  (
    'AG AI AR AW BB BL BM BO BQ BS BZ CA CL CO CR CU CW DM DO EC FK GD GF GL GP GT GY HN HT JM KN KY LC MF MQ MS MX NI ' +
    'PA PE PM PR PY SR SV SX TC TT US UY VC VE VG VI'
  ).split(' '),
);

/** BR pays in BRL, the Americas in USD, every other country (and an unknown one) in EUR. */
export function currencyFor(country: string | null | undefined): Currency {
  const code = country?.trim().toUpperCase();
  if (code === 'BR') return 'BRL';
  return code !== undefined && AMERICAS.has(code) ? 'USD' : 'EUR';
}
