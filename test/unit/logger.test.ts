import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../stack/logger.js';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, stream };
}

describe('logs', () => {
  it('never carry credentials of requests or secrets of records', () => {
    const { lines, stream } = capture();
    const logger = createLogger('info', 'json', stream);
    logger.info({ req: { headers: { authorization: 'Bearer svc_live_abcdefghijklmnopqrstuvwxyz' } } }, 'request');
    logger.info({ key: { api_key: 'svc_live_zyxwvutsrqponmlkjihgfedcba', secret: 'whsec', code: '123456' } }, 'created');
    const text = lines.join('');
    expect(text).not.toMatch(/svc_live_|whsec|123456/);
    expect(text.match(/\[redacted\]/g)).toHaveLength(4);
  });
});
