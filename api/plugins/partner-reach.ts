/**
 * What a partner-issued key reaches (spec 5), by path, so a route added later is out of reach
 * until it is named here, and so are routes the gateway does not have yet: everything else
 * answers 403 `forbidden`, whether or not it exists.
 */
const PREFIXES = ['/instances', '/messages', '/chats', '/labels', '/calls', '/groups', '/conversations', '/presence', '/pools', '/campaigns', '/usage', '/advisories'];
const EXACT: ReadonlyMap<string, string> = new Map([
  ['/contacts/check', 'POST'],
  ['/me', 'GET'],
  ['/me/entitlements', 'GET'],
  ['/me/subscription', 'GET'],
]);

export function partnerKeyReaches(method: string, url: string): boolean {
  const path = (url.split('?')[0] ?? '').replace(/\/+$/, '') || '/';
  const verb = method === 'HEAD' ? 'GET' : method;
  if (EXACT.get(path) === verb) return true;
  return PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}
