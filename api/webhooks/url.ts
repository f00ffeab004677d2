import { isIP } from 'node:net';
import { addressPolicy, type AddressPolicyOptions } from '../../shared/http/addresses.js';

export const MAX_URL_LENGTH = 2048;

/**
 * Why a webhook URL is refused, or undefined when it is acceptable: an absolute http(s) URL
 * without user info, at most 2048 characters, whose host is not a literal private or loopback
 * address nor `localhost` (unless the outbound guard allows them). Names are resolved only at
 * delivery time, where the dispatcher's guard checks every address again.
 */
export function urlProblem(text: string, outbound: AddressPolicyOptions): string | undefined {
  if (text.length > MAX_URL_LENGTH) return `url is longer than ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'url is not an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'url must use https or http';
  if (url.username !== '' || url.password !== '') return 'url must not carry a user name or password';
  const policy = addressPolicy(outbound);
  // WHATWG parsing has already turned `0x7f.1` and `2130706433` into 127.0.0.1; IPv6 hosts come bracketed.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const literal = isIP(host) !== 0 ? host : isLocalhost(host) ? '127.0.0.1' : undefined;
  const reason = literal === undefined ? undefined : policy(literal);
  return reason === undefined ? undefined : `url points to a ${reason} address (${url.hostname})`;
}

/** `localhost` and its subdomains always resolve to loopback (RFC 6761). */
function isLocalhost(host: string): boolean {
  const bare = host.replace(/\.$/, '');
  return bare === 'localhost' || bare.endsWith('.localhost');
}
