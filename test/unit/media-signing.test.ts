import { describe, expect, it } from 'vitest';
import { createMediaLinks } from '../../shared/media-links.js';

const id = '3f1c2b8e-5d4a-4e7b-9c1d-2a3b4c5d6e7f';
const start = Date.UTC(2026, 0, 1);

function parse(link: string) {
  const url = new URL(link);
  return { url, id: decodeURIComponent(url.pathname.split('/').pop() ?? ''), exp: Number(url.searchParams.get('exp')), sig: url.searchParams.get('sig') ?? '' };
}

describe('signed media links', () => {
  const links = createMediaLinks({ secret: 's3cret', publicBaseUrl: 'https://api.example.com', ttlSeconds: 86_400, now: () => start });

  it('builds an absolute /media/{id}?exp&sig link that expires after the TTL', () => {
    const link = parse(links.mediaUrl(id));
    expect(link.url.origin + link.url.pathname).toBe(`https://api.example.com/media/${id}`);
    expect(link.exp).toBe(start / 1000 + 86_400);
    expect(link.sig).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(links.verify(id, link.exp, link.sig)).toBe(true);
    expect(parse(links.mediaUrl(id, 60)).exp).toBe(start / 1000 + 60);
  });

  it('keeps a path of the base URL', () => {
    for (const base of ['https://example.com/gateway', 'https://example.com/gateway/']) {
      const other = createMediaLinks({ secret: 's', publicBaseUrl: base, ttlSeconds: 60 });
      expect(new URL(other.mediaUrl(id)).pathname).toBe(`/gateway/media/${id}`);
    }
  });

  it('refuses a link whose signature, expiry or id was changed', () => {
    const { exp, sig } = parse(links.mediaUrl(id));
    for (let i = 0; i < sig.length; i++) {
      const tampered = sig.slice(0, i) + (sig[i] === 'A' ? 'B' : 'A') + sig.slice(i + 1);
      expect(links.verify(id, exp, tampered), `character ${i}`).toBe(false);
    }
    expect(links.verify(id, exp + 1, sig)).toBe(false);
    expect(links.verify(id.replace('3f', '4f'), exp, sig)).toBe(false);
    expect(links.verify(id, exp, `${sig}A`)).toBe(false);
    expect(links.verify(id, exp, '')).toBe(false);
    expect(links.verify(id, exp + 0.5, sig)).toBe(false);
  });

  it('refuses a link signed with another secret', () => {
    const { exp, sig } = parse(createMediaLinks({ secret: 'other', publicBaseUrl: 'https://api.example.com', ttlSeconds: 60, now: () => start }).mediaUrl(id));
    expect(links.verify(id, exp, sig)).toBe(false);
  });

  it('refuses a link once it has expired', () => {
    let now = start;
    const clocked = createMediaLinks({ secret: 's3cret', publicBaseUrl: 'https://api.example.com', ttlSeconds: 60, now: () => now });
    const { exp, sig } = parse(clocked.mediaUrl(id));
    now = start + 59_999;
    expect(clocked.verify(id, exp, sig)).toBe(true);
    now = start + 60_000;
    expect(clocked.verify(id, exp, sig)).toBe(false);
  });
});
