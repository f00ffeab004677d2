/** Epoch milliseconds as the API shows times (ISO 8601, UTC); null stays null. */
export function isoTime(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
