import type { CacheStore } from '@whiskeysockets/baileys';
import { LRUCache } from 'lru-cache';

/**
 * A bounded cache with a time to live, in the shape Baileys takes (`CacheStore`). The connector
 * keeps one per number across that number's sockets, so a socket restart does not forget retry
 * counters or group metadata.
 */
export function ttlCache(ttlMs: number, maxEntries: number): CacheStore {
  const cache = boundedCache<NonNullable<unknown>>(maxEntries, ttlMs);
  return {
    get: <T>(key: string) => cache.get(key) as T | undefined,
    set: <T>(key: string, value: T) => void cache.set(key, value as NonNullable<unknown>),
    del: (key: string) => void cache.delete(key),
    flushAll: () => cache.clear(),
  };
}

/**
 * An LRU cache bounded by entry count. Bounded through `maxSize` rather than `max`: with `max`,
 * lru-cache allocates its arrays for every entry up front (about 160 KB at 10,000), which the
 * connector would pay for every number, most of whose caches stay nearly empty.
 */
export function boundedCache<V extends NonNullable<unknown>>(maxEntries: number, ttlMs?: number): LRUCache<string, V> {
  return new LRUCache<string, V>({ maxSize: maxEntries, sizeCalculation: () => 1, ...(ttlMs === undefined ? {} : { ttl: ttlMs }) });
}
