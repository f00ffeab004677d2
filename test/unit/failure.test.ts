import { describe, expect, it, vi } from 'vitest';
import { SerdeError } from '../../schemas/serde.js';
import { classify, GatewayFailure, untilSettled, UNKNOWN_ATTEMPTS } from '../../topics/index.js';
import { pino } from 'pino';

const withProps = (message: string, props: Record<string, unknown>, name?: string) => {
  const error = Object.assign(new Error(message), props);
  if (name) Object.defineProperty(error, 'name', { value: name });
  return error;
};
const pg = (code: string) => withProps(`pg ${code}`, { code, severity: 'ERROR' });

describe('classify', () => {
  it.each([
    ['22021', 'permanent'], ['22P05', 'permanent'], ['23505', 'permanent'],
    ['08006', 'transient'], ['57P01', 'transient'], ['53300', 'transient'], ['40001', 'transient'], ['40P01', 'transient'], ['57014', 'transient'],
    ['42P01', 'unknown'], ['XX000', 'unknown'],
  ])('Postgres %s is %s', (code, kind) => {
    expect(classify(pg(code))).toBe(kind);
  });

  it('ClickHouse: bad data is permanent, a busy or unreachable server transient, the rest unknown', () => {
    expect(classify(withProps('cannot parse', { code: '27', type: 'CANNOT_PARSE_INPUT_ASSERTION_FAILED' }))).toBe('permanent');
    expect(classify(withProps('too many parts', { code: '252', type: 'TOO_MANY_PARTS' }))).toBe('transient');
    expect(classify(withProps('unknown table', { code: '60', type: 'UNKNOWN_TABLE' }))).toBe('unknown');
  });

  it('S3: 5xx and throttling are transient, other 4xx permanent', () => {
    expect(classify(withProps('slow down', { $metadata: { httpStatusCode: 503 } }, 'SlowDown'))).toBe('transient');
    expect(classify(withProps('internal', { $metadata: { httpStatusCode: 500 } }, 'InternalError'))).toBe('transient');
    expect(classify(withProps('throttled', { $metadata: { httpStatusCode: 400 } }, 'ThrottlingException'))).toBe('transient');
    expect(classify(withProps('denied', { $metadata: { httpStatusCode: 403 } }, 'AccessDenied'))).toBe('permanent');
  });

  it('Avro: what cannot be decoded or encoded is permanent', () => {
    expect(classify(new SerdeError('not in the registry wire format'))).toBe('permanent');
    expect(classify(new Error('outer', { cause: new SerdeError('cannot encode x: invalid .body') }))).toBe('permanent');
  });

  it('network errors and kafkajs errors of an unavailable cluster are transient, also as causes', () => {
    expect(classify(withProps('refused', { code: 'ECONNREFUSED' }))).toBe('transient');
    expect(classify(new TypeError('fetch failed', { cause: withProps('reset', { code: 'ECONNRESET' }) }))).toBe('transient');
    expect(classify(new AggregateError([withProps('refused', { code: 'ECONNREFUSED' })]))).toBe('transient');
    expect(classify(withProps('no broker', {}, 'KafkaJSConnectionError'))).toBe('transient');
    expect(classify(withProps('leader moved', { retriable: true, type: 'NOT_LEADER_FOR_PARTITION' }, 'KafkaJSProtocolError'))).toBe('transient');
    expect(classify(withProps('too large', { retriable: false, type: 'MESSAGE_TOO_LARGE' }, 'KafkaJSProtocolError'))).toBe('permanent');
    expect(classify(withProps('timed out', {}, 'TimeoutError'))).toBe('transient');
  });

  it('values out of range and text that is not JSON are permanent; anything else unknown', () => {
    expect(classify(new RangeError('Invalid time value'))).toBe('permanent');
    expect(classify(new SyntaxError('Unexpected token'))).toBe('permanent');
    expect(classify(new TypeError("Cannot read properties of undefined (reading 'x')"))).toBe('unknown');
    expect(classify('a string')).toBe('unknown');
    expect(GatewayFailure.from(pg('22021')).retryable).toBe(false);
    expect(GatewayFailure.from(pg('08006')).kind).toBe('transient');
  });
});

describe('untilSettled', () => {
  const scope = { isRunning: () => true, heartbeat: () => Promise.resolve(), logger: pino({ level: 'silent' }), what: 'test' };

  it('gives up on a permanent failure at once', async () => {
    let tries = 0;
    const settled = await untilSettled(() => Promise.reject(pg('22021')).finally(() => tries++), scope);
    expect(settled).toMatchObject({ kind: 'failed', failure: { kind: 'permanent' } });
    expect(tries).toBe(1);
  });

  it('retries a transient failure until it passes', async () => {
    let tries = 0;
    const settled = await untilSettled(async () => {
      if (++tries < 2) throw pg('08006');
      return 'ok';
    }, scope);
    expect(settled).toEqual({ kind: 'done', value: 'ok' });
  });

  it(`gives up on an unknown failure after ${UNKNOWN_ATTEMPTS} tries, in about 30 s at most`, async () => {
    vi.useFakeTimers();
    try {
      let tries = 0;
      const settling = untilSettled(() => Promise.reject(new Error('bug')).finally(() => tries++), scope);
      await vi.advanceTimersByTimeAsync(31_000);
      expect(await settling).toMatchObject({ kind: 'failed', failure: { kind: 'permanent', message: expect.stringMatching(/gave up after 6 tries: bug/) as unknown } });
      expect(tries).toBe(UNKNOWN_ATTEMPTS);
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops waiting once the batch stops', async () => {
    let running = true;
    const settled = await untilSettled(() => {
      running = false;
      return Promise.reject(pg('08006'));
    }, { ...scope, isRunning: () => running });
    expect(settled).toEqual({ kind: 'stopped' });
  });
});
