import { describe, expect, it } from 'vitest';
import { countryCode, parsePhone } from '../../schemas/phones.js';

describe('parsePhone', () => {
  it.each([
    ['+5511999998888', undefined, '+5511999998888', 'BR'],
    ['+55 (11) 99999-8888', undefined, '+5511999998888', 'BR'],
    ['  +55 11 99999.8888 ', 'DE', '+5511999998888', 'BR'],
    ['(11) 99999-8888', 'BR', '+5511999998888', 'BR'],
    ['11999998888', 'br', '+5511999998888', 'BR'],
    ['015112345678', 'DE', '+4915112345678', 'DE'],
    ['07400 123456', 'GB', '+447400123456', 'GB'],
    ['00 44 7400 123456', 'DE', '+447400123456', 'GB'],
    ['(415) 555-0100', 'US', '+14155550100', 'US'],
    ['+800 1234 5678', undefined, '+80012345678', null],
  ])('reads %j (country %s) as %s', (input, country, e164, region) => {
    expect(parsePhone(input, country)).toEqual({ ok: true, e164, country: region });
  });

  it.each([
    ['call +55 11 99999-8888 now', 'BR', 'not_a_number'],
    ['+5511999998888 ext. 12', undefined, 'not_a_number'],
    ['', 'BR', 'not_a_number'],
    ['(11) 99999-8888', undefined, 'missing_country'],
    ['(11) 99999-8888', null, 'missing_country'],
    ['(11) 99999-8888', 'XX', 'unknown_country'],
    ['+999 1234 5678', undefined, 'invalid_country_code'],
    ['+1234', undefined, 'too_short'],
    ['11 9000', 'BR', 'too_short'],
    ['+55 11 99999 88887777', undefined, 'too_long'],
    ['+1 555 000 1111', undefined, 'invalid_for_region'],
    ['+44 7700 900123', undefined, 'invalid_for_region'],
    // Brazilian mobiles have had nine digits since 2016: the eight-digit form is no longer given out.
    ['+55 11 9999-8888', undefined, 'invalid_for_region'],
  ])('refuses %j (country %s): %s', (input, country, reason) => {
    expect(parsePhone(input, country)).toEqual({ ok: false, reason });
  });

  it('reads the same text again in the country it is asked in (phones read lately are kept per country)', () => {
    expect(parsePhone('(11) 99999-8888', 'BR')).toEqual({ ok: true, e164: '+5511999998888', country: 'BR' });
    expect(parsePhone('(11) 99999-8888', undefined)).toEqual({ ok: false, reason: 'missing_country' });
    expect(parsePhone('(11) 99999-8888', 'US')).toMatchObject({ ok: false });
    expect(parsePhone('(11) 99999-8888', 'BR')).toEqual({ ok: true, e164: '+5511999998888', country: 'BR' });
  });

  it('takes ISO 3166 alpha-2 countries with a numbering plan, in either case', () => {
    expect(countryCode('br')).toBe('BR');
    expect(countryCode(' GB ')).toBe('GB');
    expect(countryCode('XX')).toBeUndefined();
    expect(countryCode('BRA')).toBeUndefined();
  });
});
