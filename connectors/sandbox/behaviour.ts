import type { SandboxSetBehaviour } from '../../schemas/records.js';
import { phoneOfJid } from '../../schemas/phones.js';

/** How the simulated network treats the sends of one number. */
export interface Behaviour {
  readonly deliveredAfterMs: number;
  readonly readAfterMs: number;
  /** E.164 phones whose sends fail. */
  readonly failTo: ReadonlySet<string>;
  /** E.164 phones that have blocked the number. */
  readonly blockFrom: ReadonlySet<string>;
}

export const defaultBehaviour: Behaviour = Object.freeze({ deliveredAfterMs: 50, readAfterMs: 150, failTo: new Set<string>(), blockFrom: new Set<string>() });

/** Sends to phones ending in 0000 always fail, so tests need no set-up for a failing recipient. */
export function sendFails(behaviour: Behaviour, to: string): boolean {
  const phone = phoneOfJid(to);
  return phone !== undefined && (phone.endsWith('0000') || behaviour.failTo.has(phone));
}

/** Phones ending in 0404 have always blocked every sandbox number, like 0000 for failures. */
export function recipientBlocked(behaviour: Behaviour, to: string): boolean {
  const phone = phoneOfJid(to);
  return phone !== undefined && (phone.endsWith('0404') || behaviour.blockFrom.has(phone));
}

export function changeBehaviour(behaviour: Behaviour, change: SandboxSetBehaviour): Behaviour {
  return {
    deliveredAfterMs: change.delivered_after_ms ?? behaviour.deliveredAfterMs,
    readAfterMs: change.read_after_ms ?? behaviour.readAfterMs,
    failTo: change.fail_to ? new Set(change.fail_to) : behaviour.failTo,
    blockFrom: change.block_from ? new Set(change.block_from) : behaviour.blockFrom,
  };
}
