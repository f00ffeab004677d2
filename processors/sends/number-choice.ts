import type { Pool } from 'pg';
import type { Directory } from '../../processors/directory.js';
import { projectInstances, type InstanceRow } from '../instances/queries.js';
import { SendRefused } from './refused.js';

/** Statuses in which a number sends. A warming number sends too, at the pace its connector sets. */
const SENDING = new Set(['connected', 'warming']);

/**
 * How long this process trusts its own last choice for a conversation over the inbox projection,
 * which learns of a send a moment after it is accepted: a burst of sends to a new customer stays on
 * one number. After that the projection, which also sees the customer's own messages, decides.
 */
const RECENT_CHOICE_MS = 60_000;

/**
 * How long a project's numbers are read from memory rather than the projection. A number that went
 * down within this window may still be chosen; its connector then fails the send `not_connected`.
 */
const NUMBERS_TTL_MS = 1_000;

/** Refusals a cached list of numbers may cause (a number added or connected a moment ago): checked again fresh. */
const staleRefusals: ReadonlySet<string> = new Set(['not_found', 'not_connected', 'no_number_available']);
const RECENT_CHOICES_KEPT = 100_000;

export interface NumberChoice {
  readonly instanceId?: string;
  readonly poolId?: string;
  /** Narrows the choice to these numbers (a campaign's), as a pool does. */
  readonly instanceIds?: readonly string[];
  readonly projectId: string;
  /** The customer's jid: a conversation stays on the number it is on while that number is connected. */
  readonly to: string;
}

export interface NumberChooserDeps {
  readonly pool: Pool;
  readonly directory: Directory;
  /** The number that last talked with this customer in the project (conversation affinity). */
  readonly lastInstanceFor: (projectId: string, jid: string) => Promise<string | null>;
}

/**
 * Picks the number of a send (spec 4.1): `instance_id` forces one; `pool_id` narrows the choice to
 * a pool; otherwise any sending number of the project. Among candidates, the conversation's number
 * wins; else the project's sends rotate across them.
 */
export function createNumberChooser(deps: NumberChooserDeps) {
  const turns = new Map<string, number>();
  const numbersCache = new Map<string, { rows: Promise<InstanceRow[]>; at: number }>();
  const numbersOf = (projectId: string, fresh: boolean) => {
    const cached = numbersCache.get(projectId);
    if (!fresh && cached && Date.now() - cached.at < NUMBERS_TTL_MS) return cached.rows;
    const rows = projectInstances(deps.pool, projectId);
    numbersCache.set(projectId, { rows, at: Date.now() });
    rows.catch(() => numbersCache.delete(projectId));
    if (numbersCache.size > RECENT_CHOICES_KEPT) numbersCache.delete(numbersCache.keys().next().value!);
    return rows;
  };
  const recent = new Map<string, { instanceId: string; at: number }>();
  const remember = (conversation: string, instanceId: string) => {
    recent.delete(conversation);
    recent.set(conversation, { instanceId, at: Date.now() });
    if (recent.size > RECENT_CHOICES_KEPT) recent.delete(recent.keys().next().value!);
  };
  const stickyNumber = async (projectId: string, jid: string, conversation: string) => {
    const mine = recent.get(conversation);
    if (mine && Date.now() - mine.at < RECENT_CHOICE_MS) return mine.instanceId;
    return deps.lastInstanceFor(projectId, jid);
  };

  return async function choose(choice: NumberChoice): Promise<InstanceRow> {
    // A refusal is never based on the cache: the number may have connected a moment ago.
    const chosen = await pick(choice, false).catch((error: unknown) => {
      if (error instanceof SendRefused && staleRefusals.has(error.code)) return pick(choice, true);
      throw error;
    });
    remember(`${choice.projectId}\n${choice.to}`, chosen.instance_id);
    return chosen;
  };

  async function pick(choice: NumberChoice, fresh: boolean): Promise<InstanceRow> {
    const numbers = await numbersOf(choice.projectId, fresh);
    if (choice.instanceId !== undefined) {
      const forced = numbers.find((n) => n.instance_id === choice.instanceId);
      if (!forced) throw new SendRefused('not_found');
      if (!SENDING.has(forced.status)) throw new SendRefused('not_connected');
      return forced;
    }
    let candidates = numbers.filter((n) => SENDING.has(n.status));
    if (choice.poolId !== undefined) {
      const pool = deps.directory.pools.get(choice.poolId);
      if (!pool || pool.project_id !== choice.projectId) throw new SendRefused('not_found');
      const members = new Set(pool.instance_ids);
      candidates = candidates.filter((n) => members.has(n.instance_id));
    }
    if (choice.instanceIds !== undefined && choice.instanceIds.length > 0) {
      const named = new Set(choice.instanceIds);
      candidates = candidates.filter((n) => named.has(n.instance_id));
    }
    if (candidates.length === 0) throw new SendRefused('no_number_available');
    if (candidates.length === 1) return candidates[0]!;
    const sticky = await stickyNumber(choice.projectId, choice.to, `${choice.projectId}\n${choice.to}`);
    const kept = candidates.find((n) => n.instance_id === sticky);
    if (kept) return kept;
    const rotation = `${choice.projectId}:${choice.poolId ?? choice.instanceIds?.join(',') ?? '*'}`;
    const turn = turns.get(rotation) ?? 0;
    turns.set(rotation, turn + 1);
    return candidates[turn % candidates.length]!;
  }
}

export type NumberChooser = ReturnType<typeof createNumberChooser>;
