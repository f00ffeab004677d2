import type { WACallEvent } from '@whiskeysockets/baileys';
import { describe, expect, it } from 'vitest';
import { callFacts, rejectCall, RingingCalls } from '../../connectors/baileys/calls.js';
import type { CallFact } from '../../connectors/network/index.js';

/** A socket whose lid mapping knows one lid. */
const socket = {
  signalRepository: { lidMapping: { getPNForLID: async (lid: string) => (lid === '207811132010712@lid' ? '5511977776666@s.whatsapp.net' : null) } },
} as unknown as Parameters<typeof callFacts>[0];

const at = new Date(1_764_100_000 * 1000);

/** `call` events as Baileys' handleCall builds them from <call> nodes (messages-recv.js). */
const offer: WACallEvent = {
  chatId: '5511988887777@s.whatsapp.net', from: '5511988887777@s.whatsapp.net', callerPn: undefined, id: 'A1B2C3D4E5F60718293A4B5C6D7E8F90',
  date: at, offline: false, status: 'offer', isVideo: true, isGroup: false, groupJid: undefined,
};

describe('Baileys calls', () => {
  it('maps offer, the end of a call and a lid caller; transport steps are not facts', async () => {
    const lidOffer: WACallEvent = { ...offer, id: 'C2', from: '207811132010712@lid', chatId: '207811132010712@lid', isVideo: false, offline: true };
    const groupOffer: WACallEvent = { ...offer, id: 'C3', from: '98765432101234@lid', callerPn: '5511955554444@s.whatsapp.net', isGroup: true, groupJid: '120363025246125888@g.us' };
    const latency: WACallEvent = { ...offer, status: 'relaylatency', latencyMs: 120 };
    const timeout: WACallEvent = { ...offer, status: 'timeout', date: new Date(at.getTime() + 30_000) };
    const facts = await callFacts(socket, [offer, latency, lidOffer, groupOffer, timeout]);
    expect(facts).toEqual<CallFact[]>([
      {
        occurred_at: at.getTime(), call_id: offer.id, status: 'offer', is_video: true, group_jid: null, offline: false, by_us: false,
        caller: { jid: '5511988887777@s.whatsapp.net', lid: null, name: null, phone: '+5511988887777' },
      },
      {
        occurred_at: at.getTime(), call_id: 'C2', status: 'offer', is_video: false, group_jid: null, offline: true, by_us: false,
        caller: { jid: '5511977776666@s.whatsapp.net', lid: '207811132010712@lid', name: null, phone: '+5511977776666' },
      },
      {
        occurred_at: at.getTime(), call_id: 'C3', status: 'offer', is_video: true, group_jid: '120363025246125888@g.us', offline: false, by_us: false,
        caller: { jid: '5511955554444@s.whatsapp.net', lid: '98765432101234@lid', name: null, phone: '+5511955554444' },
      },
      {
        occurred_at: at.getTime() + 30_000, call_id: offer.id, status: 'timeout', is_video: true, group_jid: null, offline: false, by_us: false,
        caller: { jid: '5511988887777@s.whatsapp.net', lid: null, name: null, phone: '+5511988887777' },
      },
    ]);
  });

  it('rejects a ringing call on the network and writes the reject, with the caller of its offer', async () => {
    const calls = new RingingCalls();
    const [ringing] = await callFacts(socket, [{ ...offer, from: '207811132010712@lid' }]);
    calls.seen(ringing!);
    const rejected: unknown[][] = [];
    const written: CallFact[] = [];
    const rejecting = { rejectCall: async (id: string, from: string) => void rejected.push([id, from]) };
    const done = await rejectCall(rejecting, calls, { kind: 'reject_call', call_id: offer.id, caller_jid: '207811132010712@lid' }, async (fact) => void written.push(fact));
    expect(done).toEqual({ kind: 'action_done', detail: null });
    expect(rejected).toEqual([[offer.id, '207811132010712@lid']]);
    expect(written).toMatchObject([{ call_id: offer.id, status: 'reject', by_us: true, is_video: true, caller: { jid: '5511977776666@s.whatsapp.net', lid: '207811132010712@lid' } }]);
  });
});
