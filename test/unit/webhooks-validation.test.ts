import { describe, expect, it } from 'vitest';
import { webhookEventTypes } from '../../events/catalogue.js';
import { eventTypesOf, listenedEvents, sharedEvent } from '../../api/webhooks/event-types.js';
import { MAX_URL_LENGTH, urlProblem } from '../../api/webhooks/url.js';

const strict = {};

describe('webhook URLs', () => {
  it.each([
    'https://hooks.example.com/gateway',
    'http://hooks.example.com:8080/in?token=abc',
    'https://93.184.215.14/hook',
    'https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook',
    'https://localhost.example.com/hook',
  ])('accepts %s', (url) => {
    expect(urlProblem(url, strict)).toBeUndefined();
  });

  it.each([
    ['hooks.example.com/path', 'absolute'],
    ['/relative', 'absolute'],
    ['ftp://example.com/x', 'https or http'],
    ['javascript:alert(1)', 'https or http'],
    ['https://user:pass@example.com/x', 'user name or password'],
    ['https://user@example.com/x', 'user name or password'],
    ['http://localhost:3000/hook', 'loopback'],
    ['http://LOCALHOST./hook', 'loopback'],
    ['http://api.localhost/hook', 'loopback'],
    ['http://127.0.0.1/hook', 'loopback'],
    ['http://2130706433/hook', 'loopback'],
    ['http://0x7f.1/hook', 'loopback'],
    ['http://[::1]/hook', 'loopback'],
    ['http://[::ffff:10.0.0.1]/hook', 'private'],
    ['http://10.1.2.3/hook', 'private'],
    ['http://192.168.0.10/hook', 'private'],
    ['http://169.254.169.254/latest/meta-data', 'link-local'],
    ['http://0.0.0.0/', 'this network'],
  ])('refuses %s (%s)', (url, reason) => {
    expect(urlProblem(url, strict)).toContain(reason);
  });

  it(`refuses URLs longer than ${MAX_URL_LENGTH} characters and accepts one of exactly that length`, () => {
    const base = 'https://hooks.example.com/';
    expect(urlProblem(base + 'a'.repeat(MAX_URL_LENGTH - base.length), strict)).toBeUndefined();
    expect(urlProblem(base + 'a'.repeat(MAX_URL_LENGTH - base.length + 1), strict)).toContain('longer than');
  });

  it('lets the outbound guard settings through: every private address, or the allowed ranges only', () => {
    expect(urlProblem('http://localhost:3000/hook', { allowPrivateNetwork: true })).toBeUndefined();
    expect(urlProblem('http://10.1.2.3/hook', { allowPrivateNetwork: true })).toBeUndefined();
    const ranges = { allowRanges: ['10.1.0.0/16', '127.0.0.1/32'] };
    expect(urlProblem('http://10.1.2.3/hook', ranges)).toBeUndefined();
    expect(urlProblem('http://localhost/hook', ranges)).toBeUndefined();
    expect(urlProblem('http://10.2.0.1/hook', ranges)).toContain('private');
  });
});

describe('webhook event types', () => {
  it('keeps known names in order without repeats', () => {
    expect(eventTypesOf(['message.read', 'message.received', 'message.read'])).toEqual(['message.read', 'message.received']);
    expect(eventTypesOf([])).toEqual([]);
  });

  it('refuses an unknown name with 400 invalid_request naming it', () => {
    expect(() => eventTypesOf(['message.received', 'message.recieved'])).toThrow(
      expect.objectContaining({ code: 'invalid_request', statusCode: 400, message: expect.stringContaining('"message.recieved"') as unknown }),
    );
  });

  it('accepts stream-only names, which listen to nothing', () => {
    expect(eventTypesOf(['qr_code', 'pairing_code', 'instance.status'])).toEqual(['qr_code', 'pairing_code', 'instance.status']);
    expect(listenedEvents(['qr_code'])).toEqual([]);
    expect(listenedEvents([])).toEqual([...webhookEventTypes]);
  });

  it('finds the event two webhooks would share, in catalogue order', () => {
    expect(sharedEvent(['group.joined', 'message.read'], ['message.read', 'group.joined'])).toBe('message.read');
    expect(sharedEvent(['message.read'], ['message.sent'])).toBeUndefined();
    expect(sharedEvent([], ['usage.threshold'])).toBe('usage.threshold');
    expect(sharedEvent(['contact.opted_out'], [])).toBe('contact.opted_out');
    expect(sharedEvent([], [])).toBe('message.received');
  });

  it('lets stream-only names collide with nothing, not even a webhook of every event', () => {
    expect(sharedEvent(['qr_code'], ['qr_code'])).toBeUndefined();
    expect(sharedEvent(['qr_code', 'pairing_code'], [])).toBeUndefined();
  });
});
