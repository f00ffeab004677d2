import { asAccountId, asEventId, asProjectId, newId, type InstanceId } from '../../schemas/ids.js';
import type { ConfigRecord } from '../../schemas/records.js';
import { topics, type Producer } from '../../topics/index.js';
import { createInstance } from '../instances/create.js';
import { issueKey } from '../keys/issue.js';
import type { Locale } from '../errors.js';

export interface NewAccount {
  readonly name: string;
  readonly email: string;
  readonly locale?: Locale;
  readonly plan?: string;
  /** Sandbox numbers to create and connect at once. */
  readonly sandboxNumbers?: number;
}

export interface CreatedAccount {
  readonly account_id: string;
  readonly project_id: string;
  /** Shown once. */
  readonly api_key: string;
  readonly instance_ids: readonly InstanceId[];
}

/** Connects a sandbox number without a person scanning a code (the sandbox connector's `auto` pairing). */
export type ConnectSandboxNumber = (instance: { accountId: string; projectId: string; instanceId: InstanceId }) => Promise<void>;

/**
 * An account with its default project and an owner key, written to `gw.config`: what the first
 * user of a fresh install (or a test) needs, without any panel.
 */
export async function createAccount(
  producer: Producer,
  input: NewAccount,
  connectSandbox: ConnectSandboxNumber,
): Promise<CreatedAccount> {
  const accountId = asAccountId(newId('acc'));
  const projectId = asProjectId(newId('prj'));
  const now = Date.now();
  const envelope = { occurred_at: now, account_id: accountId, project_id: projectId, instance_id: null };
  const account: ConfigRecord = {
    ...envelope,
    event_id: asEventId(newId('cfg')),
    entity_id: accountId,
    entity: { kind: 'account', name: input.name, email: input.email, locale: input.locale ?? 'en', plan: input.plan ?? 'free' },
  };
  const project: ConfigRecord = {
    ...envelope,
    event_id: asEventId(newId('cfg')),
    entity_id: projectId,
    entity: { kind: 'project', name: input.name, is_default: true },
  };
  // The owner is the account's first admin: the one who may link it to a partner (spec 4.5).
  const owner: ConfigRecord = {
    ...envelope,
    project_id: null,
    event_id: asEventId(newId('cfg')),
    entity_id: newId('usr'),
    entity: { kind: 'user', email: input.email.trim().toLowerCase(), role: 'admin', name: null },
  };
  const key = issueKey({ accountId, projectId, role: 'owner', scopes: ['*'] });
  await producer.send(topics.config, [account, project, owner, key.record].map((value) => ({ key: value.entity_id, value })));

  const instanceIds: InstanceId[] = [];
  for (let i = 0; i < (input.sandboxNumbers ?? 0); i++) {
    const instance = await createInstance(producer, { accountId, projectId, nickname: `Sandbox ${i + 1}`, connector: 'sandbox' });
    await connectSandbox({ accountId, projectId, instanceId: instance.instance_id });
    instanceIds.push(instance.instance_id);
  }
  return { account_id: accountId, project_id: projectId, api_key: key.apiKey, instance_ids: instanceIds };
}
