import { Worker } from 'node:worker_threads';
import type { ReplayGroup, ReplayMembers } from '../processors/index.js';
import type { Config } from './config.js';

/** What the replay's process tells a member's thread. */
export type ToMember = { readonly kind: 'join'; readonly group: ReplayGroup; readonly index: number } | { readonly kind: 'leave' };

/** What a member's thread answers: after `join`, `joined` or `failed`; after `leave`, `left` or `failed`. */
export type FromMember =
  | { readonly kind: 'joined' }
  | { readonly kind: 'left'; readonly applied: number }
  | { readonly kind: 'failed'; readonly message: string };

/**
 * Members of replay groups in `config.replayThreads` worker threads (`replay-member.ts`). They
 * start at once and build their Kafka, registry and Postgres clients while the replay prepares,
 * then join each replay that wants them. Node runs a thread's
 * JavaScript on one core: the decoding and COPY text that keep a replay's main thread busy then
 * spread over the machine's cores.
 */
export function replayMembers(config: Config): { readonly members?: ReplayMembers; close(): Promise<void> } {
  const threads = config.replayThreads;
  if (threads === 0) return { close: async () => undefined };
  let closing = false;
  const started = Array.from({ length: threads }, () => startMember(config, () => closing));
  return {
    members: {
      count: threads,
      async join(group) {
        await Promise.all(started.map((member, n) => member.ask({ kind: 'join', group, index: n + 1 }, 'joined')));
        return {
          lost: Promise.race(started.map((member) => member.ended)),
          async leave() {
            const left = await Promise.all(started.map((member) => member.ask({ kind: 'leave' }, 'left')));
            return left.reduce((sum, answer) => sum + answer.applied, 0);
          },
        };
      },
    },
    async close() {
      closing = true;
      await Promise.all(started.map((member) => member.worker.terminate()));
    },
  };
}

interface Member {
  readonly worker: Worker;
  /** Rejects when the thread ends before it is closed. */
  readonly ended: Promise<never>;
  ask<K extends Exclude<FromMember['kind'], 'failed'>>(message: ToMember, expected: K): Promise<Extract<FromMember, { kind: K }>>;
}

function startMember(config: Config, closing: () => boolean): Member {
  const worker = new Worker(new URL('./replay-member.js', import.meta.url), { workerData: { config } });
  let exited: Error | undefined;
  const waiting = new Set<(error: Error) => void>();
  let end!: (error: Error) => void;
  const ended = new Promise<never>((_, reject) => (end = reject));
  ended.catch(() => undefined);
  // A thread that dies fails the question it was asked and whatever replay it was a member of.
  const fail = (error: Error) => {
    if (closing()) return;
    exited ??= error;
    for (const reject of waiting) reject(error);
    end(error);
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`a replay member's thread exited (code ${code})`)));
  return {
    worker,
    ended,
    ask(message, expected) {
      if (exited) return Promise.reject(exited);
      return new Promise((resolve, reject) => {
        const settle = (answer: FromMember) => {
          worker.off('message', settle);
          waiting.delete(reject);
          if (answer.kind === expected) resolve(answer as Extract<FromMember, { kind: typeof expected }>);
          else reject(new Error(answer.kind === 'failed' ? `a replay member failed: ${answer.message}` : `a replay member answered ${answer.kind}, not ${expected}`));
        };
        waiting.add(reject);
        worker.on('message', settle);
        worker.postMessage(message);
      });
    },
  };
}
