import { Type, type Static } from '@sinclair/typebox';
import type { AccountEntry, BillingEntry } from '../../processors/directory.js';

const Text = (maxLength: number, description: string) => Type.Union([Type.String({ minLength: 1, maxLength }), Type.Null()], { description });

export const Address = Type.Object(
  {
    line1: Text(200, 'Street address'),
    line2: Text(200, 'Suite, floor…'),
    city: Text(100, 'City'),
    state: Text(100, 'State or region'),
    postal_code: Text(20, 'Postal code'),
    country: Type.Union([Type.String({ pattern: '^[A-Z]{2}$' }), Type.Null()], { description: 'ISO 3166 alpha-2, upper case' }),
  },
  { additionalProperties: false },
);

export const BillingIn = Type.Object(
  {
    legal_name: Type.Optional(Text(200, 'Legal name printed on invoices; null: the account name')),
    tax_id: Type.Optional(Text(50, 'Tax id (VAT, CNPJ, EIN…) as written')),
    email: Type.Optional(Type.Union([Type.String({ maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$' }), Type.Null()], { description: 'Where invoices go; null: the account e-mail' })),
    address: Type.Optional(Type.Partial(Address)),
  },
  { additionalProperties: false, examples: [{ legal_name: 'Shop Ltda', tax_id: '12.345.678/0001-90', email: 'billing@shop.example', address: { line1: 'Rua A, 1', city: 'São Paulo', postal_code: '01000-000', country: 'BR' } }] },
);

export const BillingOut = Type.Object({
  legal_name: Type.Union([Type.String(), Type.Null()]),
  tax_id: Type.Union([Type.String(), Type.Null()]),
  email: Type.Union([Type.String(), Type.Null()]),
  address: Address,
});

export type BillingOut = Static<typeof BillingOut>;

const NONE: BillingOut = { legal_name: null, tax_id: null, email: null, address: { line1: null, line2: null, city: null, state: null, postal_code: null, country: null } };

/** The stored details in the API's shape; every field null before the first `PUT /billing`. */
export function billingOut(entry: BillingEntry | undefined): BillingOut {
  if (entry === undefined) return NONE;
  return {
    legal_name: entry.legal_name,
    tax_id: entry.tax_id,
    email: entry.email,
    address: { line1: entry.address_line1, line2: entry.address_line2, city: entry.city, state: entry.state, postal_code: entry.postal_code, country: entry.country },
  };
}

/** The details a `PUT` stores: it replaces them all, so what it omits is null. */
export function billingEntry(given: Static<typeof BillingIn>): BillingEntry {
  const address = given.address ?? {};
  return {
    legal_name: given.legal_name ?? null,
    tax_id: given.tax_id ?? null,
    email: given.email ?? null,
    address_line1: address.line1 ?? null,
    address_line2: address.line2 ?? null,
    city: address.city ?? null,
    state: address.state ?? null,
    postal_code: address.postal_code ?? null,
    country: address.country ?? null,
  };
}

/** Who an invoice is billed to: the details, with the account's name and e-mail where none is set. */
export function billedTo(account: AccountEntry, details: BillingOut): BillingOut {
  return { ...details, legal_name: details.legal_name ?? account.name, email: details.email ?? account.email };
}
