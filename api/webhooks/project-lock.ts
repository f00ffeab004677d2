import { webhooksLock } from '../../processors/config/webhooks.js';
import type { ApiContext } from '../context.js';
import { changeConfigAlone } from '../config-lock.js';

/**
 * Runs a change of a project's webhooks alone, across every API process (one lock per project):
 * a check made inside (one webhook per event, spec 6.2) sees every webhook written before,
 * wherever it was written; `change` must write and wait for its own write before returning.
 */
export function changeProjectWebhooks<T>(ctx: Pick<ApiContext, 'clients' | 'directory'>, projectId: string, change: () => Promise<T>): Promise<T> {
  return changeConfigAlone(ctx, webhooksLock(projectId), change);
}
