/**
 * A web origin as compared (spec 5 rule 1: exact, letter case and a trailing slash normalised):
 * `scheme://host[:port]` in lower case, the default port dropped. Undefined for anything that is
 * not an http(s) origin: a path, a query, credentials, another scheme.
 */
export function normalizeOrigin(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || url.pathname !== '/') return undefined;
  return url.origin;
}
