import type { ActionDone, RejectCall, Sender } from '../../schemas/records.js';
import type { CallFact } from '../network/connector.js';
import { QueryRefused } from '../network/query.js';
import { Recent } from './recent.js';

const KEPT = 200;

/**
 * Calls on the sandbox network: a customer's call rings (`incoming_call` control) until it is
 * answered elsewhere, times out, ends, or the number rejects it through the API.
 */
export class SandboxCalls {
  private readonly ringing = new Recent<string, CallFact>(KEPT);

  incoming(callId: string, caller: Sender, status: CallFact['status'], isVideo: boolean, at: number): CallFact {
    const fact: CallFact = { occurred_at: at, call_id: callId, status, caller, is_video: isVideo, group_jid: null, offline: false, by_us: false };
    if (status === 'offer' || status === 'ringing') this.ringing.set(callId, fact);
    else this.ringing.delete(callId);
    return fact;
  }

  /** The reject fact of a ringing call; a call that is not ringing cannot be rejected. */
  reject(query: RejectCall, now: number = Date.now()): { done: ActionDone; fact: CallFact } {
    const offer = this.ringing.get(query.call_id);
    if (offer === undefined) throw new QueryRefused('invalid_request', `call ${query.call_id} is not ringing on the number`);
    this.ringing.delete(query.call_id);
    return { done: { kind: 'action_done', detail: null }, fact: { ...offer, occurred_at: now, status: 'reject', offline: false, by_us: true } };
  }
}
