// Phones in requests: what people write (E.164, a plus and spaces, or their national format), read
// in a country the request names or else the account's, and checked against that country's
// numbering plan. A phone the plan does not give out is refused before anything is written.
import { Type } from '@sinclair/typebox';
import type { Directory } from '../processors/directory.js';
import { countryCode, parsePhone, patterns } from '../schemas/phones.js';
import { gatewayError } from './errors.js';

export const Country = Type.String({
  pattern: `^${patterns.country}$`,
  description: "ISO 3166 alpha-2 country of phones written in national format; the account's country when absent",
  examples: ['BR'],
});

/** The country a request's national phones are read in: its own `country`, else the account's (null: none). */
export function requestCountry(directory: Directory, accountId: string, requested: string | undefined, field = 'body/country'): string | null {
  if (requested === undefined) return directory.accounts.get(accountId)?.country ?? null;
  const code = countryCode(requested);
  if (code === undefined) throw gatewayError('invalid_request', { detail: `${field}: ${requested} is not an ISO 3166 alpha-2 country with a numbering plan` });
  return code;
}

/** A phone of a request in E.164; 400 `invalid_request` naming the field and the problem (`body/to: invalid_for_region`). */
export function requestPhone(input: string, country: string | null, field: string): string {
  const parsed = parsePhone(input, country);
  if (!parsed.ok) throw gatewayError('invalid_request', { detail: `${field}: ${parsed.reason}` });
  return parsed.e164;
}
