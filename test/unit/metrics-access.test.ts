import { describe, expect, it } from 'vitest';
import { mayReadMetrics, type MetricsRequest } from '../../api/metrics/access.js';

const from = (remoteAddress: string, headers: MetricsRequest['headers'] = {}): MetricsRequest => ({ headers, socket: { remoteAddress } });
const apiPort = { token: undefined, hostOnlyWithoutToken: true };

describe('who may read /metrics', () => {
  it.each(['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'])('without a token, the host itself (%s) on the API port', (address) => {
    expect(mayReadMetrics(from(address), apiPort)).toBe(true);
  });

  it.each(['10.0.0.5', '192.168.1.10', '203.0.113.7', '::ffff:10.0.0.5', 'fe80::1', '1127.0.0.1', ''])('without a token, not %j on the API port', (address) => {
    expect(mayReadMetrics(from(address), apiPort)).toBe(false);
  });

  it('without a token, not a request a proxy on the host forwarded', () => {
    expect(mayReadMetrics(from('127.0.0.1', { 'x-forwarded-for': '203.0.113.7' }), apiPort)).toBe(false);
    expect(mayReadMetrics(from('127.0.0.1', { forwarded: 'for=203.0.113.7' }), apiPort)).toBe(false);
    expect(mayReadMetrics(from('127.0.0.1', { 'x-real-ip': '203.0.113.7' }), apiPort)).toBe(false);
  });

  it('without a token, anyone on a port of its own', () => {
    expect(mayReadMetrics(from('203.0.113.7'), { token: undefined, hostOnlyWithoutToken: false })).toBe(true);
  });

  it('with a token, whoever sends it, and only them, the host included', () => {
    const access = { token: 's3cret', hostOnlyWithoutToken: true };
    expect(mayReadMetrics(from('203.0.113.7', { authorization: 'Bearer s3cret' }), access)).toBe(true);
    expect(mayReadMetrics(from('127.0.0.1', { authorization: 'bearer s3cret' }), access)).toBe(true);
    expect(mayReadMetrics(from('127.0.0.1'), access)).toBe(false);
    expect(mayReadMetrics(from('127.0.0.1', { authorization: 'Bearer s3cre' }), access)).toBe(false);
    expect(mayReadMetrics(from('127.0.0.1', { authorization: 'Basic s3cret' }), access)).toBe(false);
  });
});
