import { changeConfigAlone as changeAlone, type ConfigLock } from '../processors/config/lock.js';
import type { ApiContext } from './context.js';
import { configLockDeps } from './config-writes.js';

/** The routes' `changeConfigAlone` (processors/config/lock.ts) with the process's clients. */
export function changeConfigAlone<T>(ctx: Pick<ApiContext, 'clients' | 'directory'>, lock: ConfigLock, change: () => Promise<T>): Promise<T> {
  return changeAlone(configLockDeps(ctx), lock, change);
}
