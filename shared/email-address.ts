/** A plausible e-mail address: one `@`, no spaces, a dotted domain, a local part of at most 64 characters. Delivery is the real check. */
export function isEmailAddress(text: string): boolean {
  return /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/.test(text);
}
