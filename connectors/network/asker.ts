import type { Logger } from 'pino';
import { asEventId, newId, type AccountId, type InstanceId, type ProjectId } from '../../schemas/ids.js';
import type { NumberQuery, NumberReply } from '../../schemas/records.js';
import { withDeadline } from '../../shared/deadline.js';
import { endOffsets, readFromPositions, recordsOf, topicName, topics, type Kafka, type PositionedReader, type Producer, type TopicSerdes } from '../../topics/index.js';
import { QueryRefused, type AnswerOf, type SessionQuery } from './query.js';

export interface NumberAskerDeps {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly producer: Producer;
  readonly logger: Logger;
}

/** The number a query is for, as the API knows it. */
export interface AskedNumber {
  readonly account_id: AccountId;
  readonly project_id: ProjectId;
  readonly instance_id: InstanceId;
}

/** The answer kind each query kind expects. */
const ANSWER_KINDS: { readonly [K in SessionQuery['kind']]: AnswerOf<Extract<SessionQuery, { kind: K }>>['kind'] } = {
  check_phones: 'phone_checks',
  set_presence: 'action_done',
  read_presence: 'contact_presence',
  reject_call: 'action_done',
  list_chats: 'chats',
  modify_chat: 'action_done',
  list_labels: 'labels',
  label_chat: 'action_done',
  list_groups: 'groups',
  group_metadata: 'group',
  create_group: 'group',
  update_participants: 'participants_updated',
  group_invite: 'invite_link',
};

interface Waiting {
  readonly expected: string;
  resolve(answer: NumberReply['answer']): void;
}

/**
 * The API's side of the query channel: writes a `NumberQuery` on `gw.commands.queries` for the
 * connector worker that owns the number, and waits for the `NumberReply` of the same request id on
 * `gw.numbers.replies`, which every API process reads from where it stood when it started. The
 * connector carries out no query read after `expires_at`; the asker gives up a moment later.
 */
export class NumberAsker {
  private readonly waiting = new Map<string, Waiting>();

  private constructor(
    private readonly deps: NumberAskerDeps,
    private reader?: PositionedReader,
  ) {}

  static async start(deps: NumberAskerDeps): Promise<NumberAsker> {
    const asker = new NumberAsker(deps);
    const topic = topicName(topics.numberReplies, deps.serdes.prefix);
    asker.reader = await readFromPositions(
      deps.kafka,
      deps.serdes,
      { groupId: `${deps.serdes.prefix}api.replies.${newId('r')}`, topic: topics.numberReplies, from: await endOffsets(deps.kafka, topic) },
      (batch) => {
        for (const record of recordsOf(batch, topics.numberReplies)) if (record.decoded.ok && record.decoded.value) asker.answered(record.decoded.value);
      },
    );
    return asker;
  }

  /** Asks the number's session; throws `QueryRefused` with the code to answer the caller with. */
  async ask<Q extends SessionQuery>(number: AskedNumber, query: Q, timeoutMs: number): Promise<AnswerOf<Q>> {
    const requestId = newId('req');
    const now = Date.now();
    const record: NumberQuery = { ...number, event_id: asEventId(newId('qry')), occurred_at: now, request_id: requestId, expires_at: now + timeoutMs, query };
    const answer = new Promise<NumberReply['answer']>((resolve) => this.waiting.set(requestId, { expected: ANSWER_KINDS[query.kind], resolve }));
    try {
      await withDeadline(this.deps.producer.send(topics.numberQueries, [{ key: number.instance_id, value: record }]), timeoutMs);
      // The connector answers a query still running at `expires_at` as timed out: a little longer here.
      const got = await withDeadline(answer, timeoutMs - (Date.now() - now) + GRACE_MS);
      if (got.kind === 'failed') throw new QueryRefused(asCode(got.error_code), got.error_reason);
      // `answered` let through only the kind this query expects.
      return got as AnswerOf<Q>;
    } catch (error) {
      if (error instanceof QueryRefused) throw error;
      throw new QueryRefused('service_unavailable', `the number did not answer within ${timeoutMs} ms`);
    } finally {
      this.waiting.delete(requestId);
    }
  }

  async stop(): Promise<void> {
    await this.reader?.stop();
  }

  private answered(reply: NumberReply): void {
    const waiting = this.waiting.get(reply.request_id);
    if (waiting === undefined) return;
    if (reply.answer.kind !== 'failed' && reply.answer.kind !== waiting.expected) {
      this.deps.logger.warn({ requestId: reply.request_id, kind: reply.answer.kind, expected: waiting.expected }, 'a reply of another kind than asked');
      waiting.resolve({ kind: 'failed', error_code: 'service_unavailable', error_reason: `the number answered ${reply.answer.kind}` });
      return;
    }
    waiting.resolve(reply.answer);
  }
}

/** How much longer than the query's own deadline the asker waits for the connector's word. */
const GRACE_MS = 500;

const CODES = new Set(['not_connected', 'not_supported', 'invalid_request', 'service_unavailable', 'not_found']);

function asCode(code: string): QueryRefused['code'] {
  return CODES.has(code) ? (code as QueryRefused['code']) : 'service_unavailable';
}
