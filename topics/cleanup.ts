import { request } from 'undici';
import type { Kafka } from 'kafkajs';
import { deadLetterTopic, topics, valueSubject } from './catalogue.js';

/**
 * Removes what a run with its own topic prefix (a test environment, a benchmark) left behind: its
 * topics on the cluster and its value subjects in the registry, so neither grows run after run.
 * A long subject list makes the registry slow to list and the broker slow to start.
 */
export async function removePrefixed(kafka: Kafka, registryUrl: string, prefix: string): Promise<void> {
  if (prefix === '') throw new Error('refusing to remove the unprefixed topics of a deployment');
  const admin = kafka.admin();
  await admin.connect();
  try {
    const mine = (await admin.listTopics()).filter((topic) => topic.startsWith(prefix));
    if (mine.length > 0) await admin.deleteTopics({ topics: mine });
  } finally {
    await admin.disconnect();
  }
  for (const spec of [...Object.values(topics), deadLetterTopic]) await deleteSubject(registryUrl, valueSubject(spec, prefix));
}

/** Deletes a registry subject for good; an absent one is left as it is (404). */
export async function deleteSubject(registryUrl: string, subject: string): Promise<void> {
  const url = `${registryUrl}/subjects/${encodeURIComponent(subject)}`;
  // A soft delete first: the registry only deletes permanently what is soft-deleted.
  for (const target of [url, `${url}?permanent=true`]) {
    const { body } = await request(target, { method: 'DELETE' });
    await body.dump();
  }
}
