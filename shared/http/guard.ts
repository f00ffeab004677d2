// The private-address guard, applied where a connection is opened: every connection (first
// request, each redirect, each reconnect) checks the address it is about to use. Names are
// resolved here and the socket connects to the checked address, so a DNS answer that changes
// between check and connect (DNS rebinding) cannot reach a private address.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import { addressPolicy, type AddressPolicy, type AddressPolicyOptions } from './addresses.js';
import { OutboundHttpError } from './errors.js';

/** Every address a name resolves to. Replaceable in tests to play a DNS server. */
export type Resolver = (hostname: string) => Promise<readonly LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });

export interface GuardOptions extends AddressPolicyOptions {
  readonly resolve?: Resolver;
}

function refuse(host: string, reason: string): OutboundHttpError {
  return OutboundHttpError.of('blocked_address', `${host} is not a public address (${reason})`);
}

/**
 * Resolves `hostname` and returns its addresses, or throws when any of them is refused: a name
 * with one private answer among public ones is refused whole.
 */
export async function resolveAllowed(hostname: string, policy: AddressPolicy, resolve: Resolver): Promise<LookupAddress[]> {
  const addresses = await resolve(hostname);
  if (addresses.length === 0) throw OutboundHttpError.of('network', `${hostname} has no address`);
  for (const { address } of addresses) {
    const reason = policy(address);
    if (reason !== undefined) throw refuse(hostname, reason);
  }
  return [...addresses];
}

/** A `lookup` for `net.connect` / `tls.connect` that only ever hands out allowed addresses. */
export function guardedLookup(policy: AddressPolicy, resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolveAllowed(hostname, policy, resolve).then(
      (all) => {
        const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        const first = wanted[0];
        if (options.all === true) callback(null, wanted);
        else if (first !== undefined) callback(null, first.address, first.family);
        else callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: 'ENOTFOUND' }), '');
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}

/**
 * An undici connector with the guard. Literal IP hosts never reach `lookup` (Node connects to
 * them directly), so they are checked here before connecting.
 */
export function guardedConnector(options: GuardOptions & { readonly timeoutMs: number }): buildConnector.connector {
  const policy = addressPolicy(options);
  const connect = buildConnector({ timeout: options.timeoutMs, lookup: guardedLookup(policy, options.resolve ?? systemResolver) });
  return (target, callback) => {
    const reason = isIP(target.hostname) === 0 ? undefined : policy(target.hostname);
    if (reason !== undefined) return callback(refuse(target.hostname, reason), null);
    connect(target, callback);
  };
}
