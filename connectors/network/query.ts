import type { GroupInfo, GroupInvite, GroupList, NumberQuery, ParticipantsUpdated, PhoneChecks } from '../../schemas/records.js';

/** What a number's session can be asked (the branches of `NumberQuery.query`). */
export type SessionQuery = NumberQuery['query'];

/** The answer to each kind of query. */
export interface Answers {
  readonly check_phones: PhoneChecks;
  // Groups (issue 18)
  readonly list_groups: GroupList;
  readonly group_metadata: GroupInfo;
  readonly create_group: GroupInfo;
  readonly update_participants: ParticipantsUpdated;
  readonly group_invite: GroupInvite;
}

export type AnswerOf<Q extends SessionQuery> = Answers[Q['kind']];

/** Any answer. */
export type Answer = Answers[keyof Answers];

/**
 * A session's answer typed by its query. Sessions answer in a switch on the query's kind, which
 * the compiler cannot follow through Q; each branch answers its own kind (the asker checks it).
 */
export const answerTo = <Q extends SessionQuery>(_query: Q, answer: Answer): AnswerOf<Q> => answer as unknown as AnswerOf<Q>;

/** Error codes of the API's catalogue a session answers a query with. */
export type QueryErrorCode = 'not_connected' | 'not_supported' | 'invalid_request' | 'service_unavailable' | 'not_found';

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

