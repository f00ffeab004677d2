import type { ConfigRecord } from '../../schemas/records.js';
import { withDeadline } from '../../shared/deadline.js';
import { topics, type Producer } from '../../topics/index.js';
import type { Directory } from '../directory.js';

/** How long a command waits for the log to take a write. */
export const WRITE_DEADLINE_MS = 10_000;

/** What a writer of `gw.config` needs: the producer, and this process's directory to wait on. */
export interface ConfigWriter {
  readonly producer: Producer;
  readonly directory: Directory;
}

/** One write of `gw.config`: an entity's full state, or null to delete it. */
export interface ConfigChange {
  readonly key: string;
  readonly value: ConfigRecord | null;
}

/**
 * Writes an entity of `gw.config` (null deletes it) and resolves once this process's directory
 * has applied that very write, so the caller's answer already holds (a new key works at once).
 */
export async function writeConfig(writer: ConfigWriter, entityId: string, record: ConfigRecord | null): Promise<void> {
  await withDeadline(writer.producer.send(topics.config, [{ key: entityId, value: record }]), WRITE_DEADLINE_MS);
  await writer.directory.applied(entityId, record?.event_id ?? null);
}

/** Writes the changes together; resolves once this process's directory has applied them all. */
export async function writeConfigChanges(writer: ConfigWriter, changes: readonly ConfigChange[]): Promise<void> {
  await withDeadline(writer.producer.send(topics.config, [...changes]), WRITE_DEADLINE_MS);
  await Promise.all(changes.map((c) => writer.directory.applied(c.key, c.value?.event_id ?? null, WRITE_DEADLINE_MS)));
}
