import type { AccountId, ProjectId } from '../../schemas/ids.js';
import { issueKey } from '../config/keys.js';
import { writeConfigChanges, type ConfigWriter } from '../config/write.js';
import type { PartnerEntry } from '../directory.js';
import type { ConnectionEntry } from './view.js';
import { keyRevocations } from './writer.js';

/**
 * The connection's one key (spec 5 rule 4): role `agent`, the partner's scopes, bound to the
 * connection's project. Issuing a new one (a second exchange, a rotation) revokes the previous
 * at once, in the same write. Returns the key, shown once.
 */
export async function replaceConnectionKey(writer: ConfigWriter, connection: ConnectionEntry, partner: PartnerEntry, now: number): Promise<string> {
  const accountId = connection.account_id as AccountId;
  const previous = keyRevocations(writer.directory, connection.connection_id, accountId, now);
  const issued = issueKey({
    accountId,
    projectId: connection.project_id as ProjectId,
    role: 'agent',
    scopes: partner.key_scopes,
    connectionId: connection.connection_id,
  });
  await writeConfigChanges(writer, [...previous, issued.record].map((value) => ({ key: value.entity_id, value })));
  return issued.apiKey;
}
