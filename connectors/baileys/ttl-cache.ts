import type { CacheStore } from '@whiskeysockets/baileys';
import { LRUCache } from 'lru-cache';

/**
 * A bounded cache with a time to live, in the shape Baileys takes (`CacheStore`). The connector
 * keeps one per number across that number's sockets, so a socket restart does not forget retry
 * counters or group metadata.
 */
export function ttlCache(ttlMs: number, maxEntries: number): CacheStore {
  const cache = new LRUCache<string, NonNullable<unknown>>({ max: maxEntries, ttl: ttlMs });
  return {
    get: <T>(key: string) => cache.get(key) as T | undefined,
    set: <T>(key: string, value: T) => void cache.set(key, value as NonNullable<unknown>),
    del: (key: string) => void cache.delete(key),
    flushAll: () => cache.clear(),
  };
}
