import { asEventId, newId, type AccountId } from '../../schemas/ids.js';
import type { User } from '../../schemas/records.js';
import { isEmailAddress } from '../../shared/email-address.js';
import { ConfigRefused } from './refused.js';
import { tombstone } from './removal.js';
import { writeConfig, writeConfigChanges, type ConfigWriter } from './write.js';

/** A person added to an account: an admin (may link the account to partners) or a member; one per e-mail address in an account. */
export async function addUser(
  writer: ConfigWriter,
  input: { readonly accountId: AccountId; readonly email: string; readonly role: User['role']; readonly name: string | null; readonly at: number },
): Promise<{ readonly id: string; readonly email: string; readonly role: User['role']; readonly name: string | null }> {
  const email = input.email.trim().toLowerCase();
  if (!isEmailAddress(email)) throw new ConfigRefused('invalid_request', 'body/email: an e-mail address');
  if (writer.directory.usersOf(input.accountId).some((u) => u.email === email)) throw new ConfigRefused('invalid_request', `body/email: ${email} is already a user of the account`);
  const id = newId('usr');
  await writeConfig(writer, id, {
    event_id: asEventId(newId('cfg')),
    occurred_at: input.at,
    account_id: input.accountId,
    project_id: null,
    instance_id: null,
    entity_id: id,
    entity: { kind: 'user', email, role: input.role, name: input.name },
  });
  return { id, email, role: input.role, name: input.name };
}

/** Removes a person of the account; `not_found` when the account has none of that id. */
export async function removeUser(writer: ConfigWriter, input: { readonly accountId: AccountId; readonly userId: string }): Promise<void> {
  if (writer.directory.users.get(input.userId)?.account_id !== input.accountId) throw new ConfigRefused('not_found');
  await writeConfigChanges(writer, [tombstone(input.userId)]);
}
