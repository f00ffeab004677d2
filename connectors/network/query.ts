import type { ActionDone, ChatList, ContactPresence, GroupInfo, GroupInvite, GroupList, LabelList, NumberQuery, ParticipantsUpdated, PhoneChecks } from '../../schemas/records.js';

/** What a number's session can be asked (the branches of `NumberQuery.query`). */
export type SessionQuery = NumberQuery['query'];

/** The answer to each kind of query. */
export interface Answers {
  readonly check_phones: PhoneChecks;
  readonly set_presence: ActionDone;
  readonly read_presence: ContactPresence;
  readonly reject_call: ActionDone;
  readonly list_chats: ChatList;
  readonly modify_chat: ActionDone;
  readonly list_labels: LabelList;
  readonly label_chat: ActionDone;
  readonly list_groups: GroupList;
  readonly group_metadata: GroupInfo;
  readonly create_group: GroupInfo;
  readonly update_participants: ParticipantsUpdated;
  readonly group_invite: GroupInvite;
}

export type AnswerOf<Q extends SessionQuery> = Answers[Q['kind']];

/** What a session does for each kind of query: a session answers every kind, even if only to refuse it. */
export type QueryHandlers = {
  readonly [K in SessionQuery['kind']]: (query: Extract<SessionQuery, { kind: K }>) => Promise<Answers[K]> | Answers[K];
};

/** Answers a query with the handler of its kind (TypeScript cannot narrow a generic query by a switch). */
export async function answerWith<Q extends SessionQuery>(handlers: QueryHandlers, query: Q): Promise<AnswerOf<Q>> {
  const handler = handlers[query.kind] as unknown as (query: Q) => Promise<AnswerOf<Q>> | AnswerOf<Q>;
  return handler(query);
}

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

