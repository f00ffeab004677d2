import { LRUCache } from 'lru-cache';
import type { Pool } from 'pg';
import { QueryRefused, type NumberAsker } from '../../connectors/network/index.js';
import { asAccountId, asInstanceId, asProjectId } from '../../schemas/ids.js';
import type { PhoneCheck } from '../../schemas/records.js';
import { gatewayError } from '../errors.js';
import { projectInstances, type InstanceRow } from '../../processors/instances/queries.js';

/** Answers `POST /contacts/check` for a project. */
export interface PhoneChecker {
  check(projectId: string, phones: readonly string[]): Promise<PhoneCheck[]>;
}

/** How long a number is given to answer. */
const ASK_TIMEOUT_MS = 10_000;
/** Who is on the network changes slowly: an answer is reused for an hour, per network. */
const CACHE_TTL_MS = 3_600_000;
const CACHE_ENTRIES = 200_000;

const ASKING = new Set(['connected', 'warming']);

/**
 * Asks the network through a connected number of the project (a real-network one first: the sandbox
 * answers by its own rule), one query for every phone of a call not answered in the last hour. A
 * project without a connected number cannot ask: 409 `not_connected`.
 */
export class NetworkChecks implements PhoneChecker {
  private readonly cache = new LRUCache<string, PhoneCheck>({ max: CACHE_ENTRIES, ttl: CACHE_TTL_MS });

  constructor(private readonly deps: { readonly pool: Pool; readonly asker: Pick<NumberAsker, 'ask'> }) {}

  async check(projectId: string, phones: readonly string[]): Promise<PhoneCheck[]> {
    const number = chooseNumber(await projectInstances(this.deps.pool, projectId));
    if (number === undefined) throw gatewayError('not_connected');
    const key = (phone: string) => `${number.connector}:${phone}`;
    const unknown = [...new Set(phones.filter((phone) => !this.cache.has(key(phone))))];
    const answered = new Map<string, PhoneCheck>();
    if (unknown.length > 0) {
      const asked = { account_id: asAccountId(number.account_id), project_id: asProjectId(number.project_id), instance_id: asInstanceId(number.instance_id) };
      try {
        const { results } = await this.deps.asker.ask(asked, { kind: 'check_phones', phones: unknown }, ASK_TIMEOUT_MS);
        for (const result of results) {
          answered.set(result.phone, result);
          this.cache.set(key(result.phone), result);
        }
      } catch (error) {
        throw error instanceof QueryRefused ? refusal(error) : error;
      }
    }
    return phones.map((phone) => answered.get(phone) ?? this.cache.get(key(phone)) ?? { phone, on_network: false, jid: null, lid: null });
  }
}

function chooseNumber(numbers: readonly InstanceRow[]): InstanceRow | undefined {
  const asking = numbers.filter((n) => ASKING.has(n.status));
  return asking.find((n) => n.connector !== 'sandbox') ?? asking[0];
}

/** The API's answer to a session's refusal. */
export function refusal(error: QueryRefused) {
  return error.code === 'invalid_request' ? gatewayError('invalid_request', { detail: error.message }) : gatewayError(error.code);
}
