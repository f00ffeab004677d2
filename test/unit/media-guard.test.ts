import { describe, expect, it } from 'vitest';
import { addressPolicy, blockedRange, parseAddress, parseCidr } from '../../shared/http/addresses.js';
import { OutboundHttpError } from '../../shared/http/errors.js';
import { createHttpFetcher } from '../../shared/http/fetch.js';
import { guardedLookup, resolveAllowed, type Resolver } from '../../shared/http/guard.js';

const rangeOf = (address: string) => {
  const bytes = parseAddress(address);
  if (bytes === undefined) throw new Error(`test address ${address} does not parse`);
  return blockedRange(bytes);
};

const dns = (table: Record<string, string[]>): Resolver => async (hostname) =>
  (table[hostname] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('address ranges', () => {
  it.each([
    ['0.0.0.0', 'this network'],
    ['0.1.2.3', 'this network'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'shared address space'],
    ['100.127.255.254', 'shared address space'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'IETF protocol assignments'],
    ['192.0.2.10', 'documentation'],
    ['192.88.99.1', '6to4 relay anycast'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
  ])('refuses IPv4 %s (%s)', (address, range) => {
    expect(rangeOf(address)).toBe(range);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.215.14', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '11.0.0.1', '223.255.255.255'])(
    'allows public IPv4 %s',
    (address) => {
      expect(rangeOf(address)).toBeUndefined();
    },
  );

  it.each([
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['0000:0000:0000:0000:0000:0000:0000:0001', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['fc00::1', 'unique local'],
    ['fd12:3456:789a::1', 'unique local'],
    ['ff02::1', 'multicast'],
    ['ff05::1:3', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001::1', 'IETF protocol assignments'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'IETF protocol assignments'],
    ['100::1', 'discard-only'],
    ['64:ff9b:1::1', 'local-use NAT64'],
    ['5f00::1', 'segment routing'],
    ['::127.0.0.1', 'reserved'],
    ['1::1', 'reserved'],
    ['4000::1', 'reserved'],
  ])('refuses IPv6 %s (%s)', (address, range) => {
    expect(rangeOf(address)).toBe(range);
  });

  it.each(['2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '2001:4860:4860::8888', '2c0f:fb50:4003::1'])('allows public IPv6 %s', (address) => {
    expect(rangeOf(address)).toBeUndefined();
  });

  it.each([
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback'],
    ['0:0:0:0:0:ffff:7f00:0001', 'IPv4-mapped loopback'],
    ['::ffff:10.1.2.3', 'IPv4-mapped private'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped link-local'],
    ['::ffff:192.168.0.1', 'IPv4-mapped private'],
    ['::ffff:0.0.0.0', 'IPv4-mapped this network'],
    ['64:ff9b::10.0.0.1', 'NAT64 private'],
    ['64:ff9b::7f00:1', 'NAT64 loopback'],
    ['2002:7f00:1::', '6to4 loopback'],
    ['2002:c0a8:0101::1', '6to4 private'],
  ])('judges IPv4 inside IPv6 by the IPv4 address: %s', (address, range) => {
    expect(rangeOf(address)).toBe(range);
  });

  it.each(['::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::1.1.1.1', '2002:808:808::1'])('allows public IPv4 inside IPv6: %s', (address) => {
    expect(rangeOf(address)).toBeUndefined();
  });

  it('parses addresses and ranges, and refuses anything else', () => {
    expect(parseAddress('example.com')).toBeUndefined();
    expect(parseAddress('1.2.3.256')).toBeUndefined();
    expect(parseAddress('::ffff:1.2.3.4')).toEqual(Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4]));
    expect(parseCidr('10.1.2.3')).toEqual({ bytes: Uint8Array.from([10, 1, 2, 3]), prefix: 32 });
    for (const bad of ['10.0.0.0/33', '::/129', 'host/8', '10.0.0.0/x', '']) expect(() => parseCidr(bad)).toThrow();
  });
});

describe('address policy', () => {
  it('refuses special-purpose addresses and text that is no address', () => {
    const policy = addressPolicy();
    expect(policy('127.0.0.1')).toBe('loopback');
    expect(policy('localhost')).toBe('not an IP address');
    expect(policy('8.8.8.8')).toBeUndefined();
  });

  it('lets configuration allow everything, or some ranges', () => {
    expect(addressPolicy({ allowPrivateNetwork: true })('127.0.0.1')).toBeUndefined();
    const policy = addressPolicy({ allowRanges: ['10.1.0.0/16', '::1'] });
    expect(policy('10.1.2.3')).toBeUndefined();
    expect(policy('::1')).toBeUndefined();
    expect(policy('10.2.0.1')).toBe('private');
    expect(policy('127.0.0.1')).toBe('loopback');
    expect(() => addressPolicy({ allowRanges: ['not a range'] })).toThrow();
  });
});

describe('DNS answers', () => {
  const policy = addressPolicy();

  it('refuses a name when any of its addresses is private', async () => {
    const resolve = dns({
      'mixed.test': ['93.184.215.14', '10.0.0.7'],
      'mapped.test': ['2606:4700::1', '::ffff:127.0.0.1'],
      'public.test': ['93.184.215.14', '2606:4700:4700::1111'],
    });
    await expect(resolveAllowed('mixed.test', policy, resolve)).rejects.toMatchObject({ kind: 'blocked_address', retryable: false });
    await expect(resolveAllowed('mapped.test', policy, resolve)).rejects.toMatchObject({ kind: 'blocked_address' });
    await expect(resolveAllowed('public.test', policy, resolve)).resolves.toHaveLength(2);
    await expect(resolveAllowed('nothing.test', policy, resolve)).rejects.toMatchObject({ kind: 'network' });
  });

  it('hands net.connect only checked addresses, one or all, of the family asked', async () => {
    const lookup = guardedLookup(policy, dns({ 'public.test': ['93.184.215.14', '2606:4700:4700::1111'], 'private.test': ['192.168.0.10'] }));
    const call = (hostname: string, options: { all?: boolean; family?: number }) =>
      new Promise<unknown>((resolve, reject) =>
        lookup(hostname, options, (error, address, family) => (error ? reject(error) : resolve({ address, family }))),
      );
    await expect(call('public.test', {})).resolves.toEqual({ address: '93.184.215.14', family: 4 });
    await expect(call('public.test', { family: 6 })).resolves.toEqual({ address: '2606:4700:4700::1111', family: 6 });
    await expect(call('public.test', { all: true })).resolves.toMatchObject({ address: [{ address: '93.184.215.14' }, { address: '2606:4700:4700::1111' }] });
    await expect(call('private.test', { all: true })).rejects.toBeInstanceOf(OutboundHttpError);
  });
});

describe('the fetcher with the guard on', () => {
  // Nothing listens at these destinations: a refusal proves the check ran before connecting.
  const fetcher = createHttpFetcher({ resolve: dns({ 'rebind.test': ['127.0.0.1'], 'metadata.test': ['169.254.169.254'] }), connectTimeoutMs: 500 });

  it.each([
    'http://rebind.test:9/',
    'http://metadata.test/latest/meta-data/',
    'http://127.0.0.1:9/',
    'http://2130706433:9/',
    'http://0x7f.1:9/',
    'http://[::1]:9/',
    'http://[::ffff:127.0.0.1]:9/',
    'http://[::ffff:a9fe:a9fe]/',
    'https://169.254.169.254/',
    'http://10.0.0.1/',
  ])('refuses %s', async (url) => {
    await expect(fetcher.get(url, { maxBytes: 1024 })).rejects.toMatchObject({ name: 'OutboundHttpError', kind: 'blocked_address', retryable: false });
  });

  it.each(['ftp://example.com/file', 'file:///etc/passwd', 'not a url'])('refuses %s as an invalid URL', async (url) => {
    await expect(fetcher.get(url, { maxBytes: 1024 })).rejects.toMatchObject({ kind: 'invalid_url' });
  });
});
