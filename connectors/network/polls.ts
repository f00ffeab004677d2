import { createHash } from 'node:crypto';

/** The network carries a vote as the SHA-256 of each chosen option's name, never the names. */
export function optionHash(name: string): string {
  return createHash('sha256').update(name, 'utf8').digest('hex');
}

/** Option names of a vote, in the poll's order; hashes that match no option are dropped. */
export function resolveVote(options: readonly string[], hashes: readonly string[]): string[] {
  const chosen = new Set(hashes);
  return options.filter((option) => chosen.has(optionHash(option)));
}
