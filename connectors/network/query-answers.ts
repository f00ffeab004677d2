import type { Logger } from 'pino';
import { asEventId, newId } from '../../schemas/ids.js';
import type { NumberQuery, NumberReply } from '../../schemas/records.js';
import { withDeadline, DeadlineExceeded } from '../../shared/deadline.js';
import { topics, type Producer } from '../../topics/index.js';
import type { NumberSession } from './connector.js';
import { QueryRefused, type QueryErrorCode } from './query.js';

export interface QueryAnswersDeps {
  readonly producer: Producer;
  readonly logger: Logger;
  /** The session of a number this worker runs. */
  readonly sessionOf: (instanceId: string) => NumberSession | undefined;
}

/**
 * The connector role's side of `gw.commands.queries`: asks the session of the number and writes
 * its answer, or why there is none, to `gw.numbers.replies`. A query read after its asker stopped
 * waiting is not carried out; one still running at that moment is answered as timed out.
 */
export class QueryAnswers {
  constructor(private readonly deps: QueryAnswersDeps) {}

  async apply(query: NumberQuery): Promise<void> {
    const left = query.expires_at - Date.now();
    if (left <= 0) {
      this.deps.logger.info({ requestId: query.request_id, kind: query.query.kind }, 'query read after its asker stopped waiting: not carried out');
      return;
    }
    const answer = await this.answer(query, left);
    const reply: NumberReply = {
      event_id: asEventId(newId('rpl')),
      occurred_at: Date.now(),
      account_id: query.account_id,
      project_id: query.project_id,
      instance_id: query.instance_id,
      request_id: query.request_id,
      answer,
    };
    await this.deps.producer.send(topics.numberReplies, [{ key: query.request_id, value: reply }]);
  }

  private async answer(query: NumberQuery, leftMs: number): Promise<NumberReply['answer']> {
    const session = this.deps.sessionOf(query.instance_id);
    if (session === undefined) return failed('not_connected', 'the number has no session on this worker');
    try {
      return await withDeadline(session.query(query.query), leftMs);
    } catch (error) {
      if (error instanceof QueryRefused) return failed(error.code, error.message);
      if (error instanceof DeadlineExceeded) return failed('service_unavailable', `the number did not answer within ${leftMs} ms`);
      this.deps.logger.warn({ err: error, requestId: query.request_id, kind: query.query.kind }, 'query failed');
      return failed('service_unavailable', `the network did not answer: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

const failed = (error_code: QueryErrorCode, error_reason: string): NumberReply['answer'] => ({ kind: 'failed', error_code, error_reason });
