import type { NumberQuery, PhoneChecks } from '../../schemas/records.js';

/** What a number's session can be asked (the branches of `NumberQuery.query`). */
export type SessionQuery = NumberQuery['query'];

/** The answer to each kind of query. */
export interface Answers {
  readonly check_phones: PhoneChecks;
}

export type AnswerOf<Q extends SessionQuery> = Answers[Q['kind']];

/** Error codes of the API's catalogue a session answers a query with. */
export type QueryErrorCode = 'not_connected' | 'not_supported' | 'invalid_request' | 'service_unavailable';

/** A query a session refuses, with the code the asker answers its caller with. */
export class QueryRefused extends Error {
  override readonly name = 'QueryRefused';

  constructor(
    readonly code: QueryErrorCode,
    message: string,
  ) {
    super(message);
  }
}

