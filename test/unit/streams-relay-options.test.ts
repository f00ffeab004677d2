import { describe, expect, it } from 'vitest';
import { relayOptions } from '../../connectors/relay/index.js';

describe('gateway listen options', () => {
  const env = { GATEWAY_API_KEY: 'svc_live_from_env' };

  it('defaults the API to localhost:$PORT and the key to GATEWAY_API_KEY, and generates a secret when forwarding', () => {
    const options = relayOptions(['--forward-to', 'http://localhost:4000/hook'], env, 3100);
    expect(options).toMatchObject({
      apiUrl: 'http://localhost:3100', apiKey: 'svc_live_from_env', forwardTo: 'http://localhost:4000/hook', events: [], print: false, generatedSecret: true,
    });
    expect(typeof options === 'object' && options.secret).toMatch(/^whsec_/);
  });

  it('takes the secret, events, key and API given', () => {
    const options = relayOptions(
      ['--forward-to', 'http://127.0.0.1:9/x', '--secret', 'whsec_mine', '--events', 'message.received, usage.threshold', '--print', '--api-url', 'https://gw.example/api', '--api-key', 'svc_live_flag'],
      env,
      3000,
    );
    expect(options).toMatchObject({
      apiUrl: 'https://gw.example/api', apiKey: 'svc_live_flag', secret: 'whsec_mine', generatedSecret: false, print: true,
      events: ['message.received', 'usage.threshold'],
    });
    expect(relayOptions(['--print'], env, 3000)).toMatchObject({ forwardTo: undefined, print: true, generatedSecret: false });
  });

  it('says what is wrong', () => {
    expect(relayOptions([], env, 3000)).toMatch(/--forward-to URL, --print/);
    expect(relayOptions(['--print'], {}, 3000)).toMatch(/GATEWAY_API_KEY/);
    expect(relayOptions(['--forward-to', 'ftp://x'], env, 3000)).toMatch(/not an http/);
    expect(relayOptions(['--print', '--events', 'qr_code,message.read'], env, 3000)).toMatch(/unknown event type qr_code/);
    expect(relayOptions(['--print', '--nope'], env, 3000)).toMatch(/nope/);
  });
});
