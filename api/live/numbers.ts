import type { Pool } from 'pg';
import { QueryRefused, type AnswerOf, type NumberAsker, type SessionQuery } from '../../connectors/network/index.js';
import { asAccountId, asInstanceId, asProjectId } from '../../schemas/ids.js';
import { refusal } from '../contacts/network-checks.js';
import { gatewayError } from '../errors.js';
import { projectInstance, type InstanceRow } from '../../processors/instances/queries.js';

/** How long a number is given to answer. */
const ASK_TIMEOUT_MS = 10_000;

const LIVE = new Set(['connected', 'warming']);

/**
 * Asks one number of the caller's project, through its live session (the query channel), for a
 * read or an action of the network: 404 `not_found` for a number of another project, 409
 * `not_connected` for one that is not connected, and the session's refusal code otherwise.
 */
export class LiveNumbers {
  constructor(private readonly deps: { readonly pool: Pool; readonly asker: Pick<NumberAsker, 'ask'> }) {}

  /** The number, refused when it is not the project's or not connected. */
  async live(projectId: string, instanceId: string): Promise<InstanceRow> {
    const number = await projectInstance(this.deps.pool, projectId, instanceId);
    if (number === undefined) throw gatewayError('not_found');
    if (!LIVE.has(number.status)) throw gatewayError('not_connected');
    return number;
  }

  async ask<Q extends SessionQuery>(projectId: string, instanceId: string, query: Q): Promise<AnswerOf<Q>> {
    const number = await this.live(projectId, instanceId);
    const asked = { account_id: asAccountId(number.account_id), project_id: asProjectId(number.project_id), instance_id: asInstanceId(number.instance_id) };
    try {
      return await this.deps.asker.ask(asked, query, ASK_TIMEOUT_MS);
    } catch (error) {
      throw error instanceof QueryRefused ? refusal(error) : error;
    }
  }
}
