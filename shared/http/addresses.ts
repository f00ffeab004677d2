// Which IP addresses outbound requests may reach: only globally routable unicast ones. The tables
// follow the IANA special-purpose address registries (RFC 6890 and later updates).
import { isIPv4, isIPv6 } from 'node:net';

/** An address or a network as 4 (IPv4) or 16 (IPv6) bytes and a prefix length. */
export interface Cidr {
  readonly bytes: Uint8Array;
  readonly prefix: number;
}

interface NamedRange extends Cidr {
  readonly name: string;
}

function ipv4Bytes(text: string): number[] {
  return text.split('.').map(Number);
}

/** Expands `::`, and a dotted IPv4 tail (`::ffff:1.2.3.4`), into 16 bytes. */
function ipv6Bytes(text: string): number[] {
  const groups = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [Number.parseInt(group, 16)];
          const [a = 0, b = 0, c = 0, d = 0] = ipv4Bytes(group);
          return [(a << 8) | b, (c << 8) | d];
        });
  const [head = '', tail] = text.split('::');
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const zeros = new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...zeros, ...right].flatMap((group) => [group >> 8, group & 0xff]);
}

/** The bytes of an IPv4 or IPv6 address (a zone index such as `%eth0` is ignored), or undefined. */
export function parseAddress(text: string): Uint8Array | undefined {
  if (isIPv4(text)) return Uint8Array.from(ipv4Bytes(text));
  const bare = text.split('%')[0] ?? '';
  return isIPv6(bare) ? Uint8Array.from(ipv6Bytes(bare)) : undefined;
}

/** `10.0.0.0/8`, `fc00::/7`, or a single address. Throws on anything else (a configuration mistake). */
export function parseCidr(text: string): Cidr {
  const [address = '', prefixText] = text.trim().split('/');
  const bytes = parseAddress(address);
  const prefix = prefixText === undefined ? (bytes?.length ?? 0) * 8 : Number(prefixText);
  if (bytes === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > bytes.length * 8) {
    throw new Error(`not an IP address or CIDR range: "${text}"`);
  }
  return { bytes, prefix };
}

export function cidrContains(range: Cidr, address: Uint8Array): boolean {
  if (range.bytes.length !== address.length) return false;
  for (let i = 0, bits = range.prefix; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((address[i] ?? 0) & mask) !== ((range.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

const ranges = (table: Readonly<Record<string, string>>): NamedRange[] =>
  Object.entries(table).map(([cidr, name]) => ({ ...parseCidr(cidr), name }));

const IPV4_BLOCKED = ranges({
  '0.0.0.0/8': 'this network',
  '10.0.0.0/8': 'private',
  '100.64.0.0/10': 'shared address space',
  '127.0.0.0/8': 'loopback',
  '169.254.0.0/16': 'link-local',
  '172.16.0.0/12': 'private',
  '192.0.0.0/24': 'IETF protocol assignments',
  '192.0.2.0/24': 'documentation',
  '192.88.99.0/24': '6to4 relay anycast',
  '192.168.0.0/16': 'private',
  '198.18.0.0/15': 'benchmarking',
  '198.51.100.0/24': 'documentation',
  '203.0.113.0/24': 'documentation',
  '224.0.0.0/4': 'multicast',
  '240.0.0.0/4': 'reserved', // includes the broadcast address 255.255.255.255
});

const IPV6_BLOCKED = ranges({
  '::/128': 'unspecified',
  '::1/128': 'loopback',
  '64:ff9b:1::/48': 'local-use NAT64',
  '100::/64': 'discard-only',
  '2001::/23': 'IETF protocol assignments', // includes Teredo, 2001::/32
  '2001:db8::/32': 'documentation',
  '3fff::/20': 'documentation',
  '5f00::/16': 'segment routing',
  'fc00::/7': 'unique local',
  'fe80::/10': 'link-local',
  'fec0::/10': 'site-local',
  'ff00::/8': 'multicast',
});

const GLOBAL_UNICAST = parseCidr('2000::/3');

/** IPv6 forms that carry an IPv4 address, judged by that address; `offset` is where it starts. */
const IPV4_EMBEDDING = [
  { ...parseCidr('::ffff:0:0/96'), name: 'IPv4-mapped', offset: 12 },
  { ...parseCidr('64:ff9b::/96'), name: 'NAT64', offset: 12 },
  { ...parseCidr('2002::/16'), name: '6to4', offset: 2 },
];

function blockedIn(table: readonly NamedRange[], address: Uint8Array): string | undefined {
  return table.find((range) => cidrContains(range, address))?.name;
}

/**
 * The name of the special-purpose range that holds `address` (`loopback`, `private`,
 * `IPv4-mapped link-local`, ...), or undefined when the address is globally routable.
 */
export function blockedRange(address: Uint8Array): string | undefined {
  if (address.length === 4) return blockedIn(IPV4_BLOCKED, address);
  for (const embedding of IPV4_EMBEDDING) {
    if (!cidrContains(embedding, address)) continue;
    const inner = blockedIn(IPV4_BLOCKED, address.subarray(embedding.offset, embedding.offset + 4));
    return inner === undefined ? undefined : `${embedding.name} ${inner}`;
  }
  return blockedIn(IPV6_BLOCKED, address) ?? (cidrContains(GLOBAL_UNICAST, address) ? undefined : 'reserved');
}

export interface AddressPolicyOptions {
  /** Allow every destination (local development; tests fetching from a local server). */
  readonly allowPrivateNetwork?: boolean;
  /** Ranges reachable although special-purpose, e.g. one internal media host (`10.1.2.3/32`). */
  readonly allowRanges?: readonly string[];
}

/** Why a destination is refused, or undefined when it may be reached. */
export type AddressPolicy = (address: string) => string | undefined;

export function addressPolicy(options: AddressPolicyOptions = {}): AddressPolicy {
  if (options.allowPrivateNetwork === true) return () => undefined;
  const allowed = (options.allowRanges ?? []).map(parseCidr);
  return (text) => {
    const address = parseAddress(text);
    if (address === undefined) return 'not an IP address';
    if (allowed.some((range) => cidrContains(range, address))) return undefined;
    return blockedRange(address);
  };
}

/** Names that only ever lead to this machine or its local network (RFC 6761, RFC 6762, common internal suffixes). */
const LOCAL_NAMES = /(^|\.)(localhost|local|internal|lan|home\.arpa)$/i;

/**
 * Whether a URL names a host the gateway does not deliver to, judged from the URL alone: a
 * loopback, private or special-purpose IP literal, or a local-only name. A public name that
 * resolves to a private address is caught when the dispatcher connects, not here.
 */
export function privateHost(url: string): boolean {
  let hostname: string;
  try {
    hostname = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  const address = parseAddress(hostname);
  return address === undefined ? LOCAL_NAMES.test(hostname.replace(/\.$/, '')) : blockedRange(address) !== undefined;
}
