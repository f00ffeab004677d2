import { isLidUser, type WACallEvent, type WASocket } from '@whiskeysockets/baileys';
import type { ActionDone, CallStatus, RejectCall } from '../../schemas/records.js';
import type { CallFact } from '../network/connector.js';
import { personOf } from './people.js';

/** The call statuses of our log; the transport steps (preaccept, transport, relaylatency) are not facts of it. */
const STATUSES: Readonly<Partial<Record<WACallEvent['status'], CallStatus>>> = {
  offer: 'offer',
  ringing: 'ringing',
  timeout: 'timeout',
  reject: 'reject',
  accept: 'accept',
  terminate: 'terminate',
};

type LidSocket = Pick<WASocket, 'signalRepository'>;

/**
 * Call facts from Baileys' `call` event: the caller as a person (the phone the network sent along
 * with a lid, or the one the number learnt), a group call's group, and whether the number was
 * offline when it rang. Baileys fills is_video and the group on later statuses from the offer.
 */
export async function callFacts(socket: LidSocket, calls: readonly WACallEvent[]): Promise<CallFact[]> {
  const facts: CallFact[] = [];
  for (const call of calls) {
    const status = STATUSES[call.status];
    if (status === undefined) continue;
    const learnt = isLidUser(call.from) ? await socket.signalRepository.lidMapping.getPNForLID(call.from).catch(() => null) : null;
    const phone = call.callerPn ?? learnt ?? undefined;
    facts.push({
      occurred_at: call.date.getTime(),
      call_id: call.id,
      status,
      caller: personOf(call.from, phone, null, () => undefined),
      is_video: call.isVideo ?? false,
      group_jid: call.groupJid ?? null,
      offline: call.offline,
      by_us: false,
    });
  }
  return facts;
}

/** Calls still ringing on the number, by id, so a reject made through the API is written with its caller. */
export class RingingCalls {
  private readonly ringing = new Map<string, CallFact>();

  seen(fact: CallFact): void {
    if (fact.status === 'offer' || fact.status === 'ringing') this.ringing.set(fact.call_id, this.ringing.get(fact.call_id) ?? fact);
    else this.ringing.delete(fact.call_id);
    if (this.ringing.size > KEPT) this.ringing.delete(this.ringing.keys().next().value!);
  }

  /** The reject fact of a call this number rejects, from its offer when still known. */
  rejected(query: RejectCall, now: number = Date.now()): CallFact {
    const offer = this.ringing.get(query.call_id);
    this.ringing.delete(query.call_id);
    return {
      occurred_at: now,
      call_id: query.call_id,
      status: 'reject',
      caller: offer?.caller ?? personOf(query.caller_jid, null, null, () => undefined),
      is_video: offer?.is_video ?? false,
      group_jid: offer?.group_jid ?? null,
      offline: false,
      by_us: true,
    };
  }
}

const KEPT = 200;

/** Rejects a ringing call on the network (Baileys rejectCall) and writes the reject as a fact of the log. */
export async function rejectCall(socket: Pick<WASocket, 'rejectCall'>, calls: RingingCalls, query: RejectCall, emit: (fact: CallFact) => Promise<void>): Promise<ActionDone> {
  await socket.rejectCall(query.call_id, query.caller_jid);
  await emit(calls.rejected(query));
  return { kind: 'action_done', detail: null };
}
