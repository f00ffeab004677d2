import type { AccountId, ProjectId } from '../../schemas/ids.js';
import type { PartnerEntry } from '../../processors/directory.js';
import type { ConnectionEntry } from '../../processors/connections/view.js';
import { keyRevocations } from '../../processors/connections/writer.js';
import { withDeadline } from '../../shared/deadline.js';
import { topics } from '../../topics/index.js';
import { WRITE_DEADLINE_MS } from '../config-writes.js';
import type { ApiContext } from '../context.js';
import { issueKey } from '../../processors/config/keys.js';

/**
 * The connection's one key (spec 5 rule 4): role `agent`, the partner's scopes, bound to the
 * connection's project. Issuing a new one (a second exchange, a rotation) revokes the previous
 * at once, in the same write. Returns the key, shown once.
 */
export async function replaceConnectionKey(
  ctx: Pick<ApiContext, 'clients' | 'directory' | 'clock'>,
  connection: ConnectionEntry,
  partner: PartnerEntry,
): Promise<string> {
  const accountId = connection.account_id as AccountId;
  const now = ctx.clock();
  const previous = keyRevocations(ctx.directory, connection.connection_id, accountId, now);
  const issued = issueKey({
    accountId,
    projectId: connection.project_id as ProjectId,
    role: 'agent',
    scopes: partner.key_scopes,
    connectionId: connection.connection_id,
  });
  const records = [...previous, issued.record];
  await withDeadline(ctx.clients.producer.send(topics.config, records.map((value) => ({ key: value.entity_id, value }))), WRITE_DEADLINE_MS);
  await Promise.all(records.map((record) => ctx.directory.applied(record.entity_id, record.event_id, WRITE_DEADLINE_MS)));
  return issued.apiKey;
}
