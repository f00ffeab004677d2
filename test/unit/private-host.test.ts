import { describe, expect, it } from 'vitest';
import { privateHost } from '../../shared/http/addresses.js';

describe('privateHost', () => {
  it('flags loopback, private and special-purpose literals and local-only names', () => {
    for (const url of [
      'http://127.0.0.1:9/hooks',
      'http://10.1.2.3/x',
      'https://192.168.0.10/x',
      'http://[::1]:8080/x',
      'http://[fd00::1]/x',
      'http://169.254.169.254/latest/meta-data',
      'http://[::ffff:10.0.0.1]/x',
      'http://localhost:3000/x',
      'https://api.localhost/x',
      'http://printer.local/x',
      'http://db.internal./x',
      'https://router.home.arpa/x',
    ]) expect(privateHost(url), url).toBe(true);
  });

  it('lets public addresses and names through, and does not judge what it cannot read', () => {
    for (const url of ['https://api.loja.example/hooks', 'https://8.8.8.8/x', 'https://[2606:4700::1111]/x', 'https://localhost.example.com/x', 'not a url']) {
      expect(privateHost(url), url).toBe(false);
    }
  });
});
