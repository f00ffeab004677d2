import type { Directory } from '../../processors/directory.js';

/**
 * True once the directory holds the account and at least `keys` of its keys. Config records are
 * keyed by entity, so a key can be read before its account, and auth answers 401 until both are in.
 */
export function canSignIn(directory: Directory, accountId: string, keys = 1): boolean {
  return directory.accounts.has(accountId) && directory.keysOf(accountId).length >= keys;
}
