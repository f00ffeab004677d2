import { pino } from 'pino';
import { buildClients, type Clients } from '../../stack/clients.js';
import { OpenedOtpCodes, OtpKeys } from '../../connectors/network/index.js';
import type { TestEnv } from './env.js';

/** The same clients a gateway process builds, on the test's slice of the stack, its media bucket made; logs stay quiet. */
export async function testClients(env: TestEnv): Promise<Clients> {
  const clients = await buildClients(env.config, pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }));
  await clients.media.ensure();
  return clients;
}

/** The OTP codes a connector role opens, as `gateway connector` builds them. */
export function otpCodes(clients: Clients): OpenedOtpCodes {
  return new OpenedOtpCodes(new OtpKeys(clients.pool), clients.cipher);
}
