import { describe, expect, it } from 'vitest';
import { publishEvents } from '../../events/publish.js';
import { advisoryEvents, scheduledEvent, thresholdEvent } from '../../events/renderers/index.js';
import { asAccountId, asEventId, asInstanceId, asProjectId } from '../../schemas/ids.js';
import type { PublicEvent } from '../../schemas/records.js';
import { topicName, type Producer, type TopicSpec } from '../../topics/index.js';

interface Sent { topic: string; key: string; eventId: string }

function recordingProducer(sends: Sent[][]): Producer {
  return {
    async send<V>(spec: TopicSpec<V>, records: readonly { key: string; value: V | null }[]) {
      sends.push(records.map((r) => ({ topic: topicName(spec, ''), key: r.key, eventId: (r.value as PublicEvent).event_id })));
      return new Map();
    },
    sendRaw: async () => undefined,
    disconnect: async () => undefined,
  };
}

const at = Date.UTC(2026, 2, 1);
const projectEvent = scheduledEvent({
  event_id: asEventId('evt_p'),
  occurred_at: at,
  account_id: asAccountId('acc_1'),
  project_id: asProjectId('prj_1'),
  instance_id: asInstanceId('inst_1'),
  event_type: 'message.received',
  payload: {},
});
const threshold = thresholdEvent({ accountId: asAccountId('acc_1'), period: '2026-03-01', allowance: 'messages', percent: 80, used: 800, included: 1_000, plan: 'free', occurredAt: at });
const advisory = advisoryEvents({ accounts: ['acc_2'], title: 't', impact: 'i', action: 'a', link: 'https://example.com/' }, 'adv_1', at)[0]!;

describe('publishEvents', () => {
  it('writes the events to gw.events in one send, a project event under its project, an account event under its account', async () => {
    const sends: Sent[][] = [];
    await publishEvents(recordingProducer(sends), [projectEvent, threshold, advisory]);
    expect(sends).toEqual([
      [
        { topic: 'gw.events', key: 'prj_1', eventId: 'evt_p' },
        { topic: 'gw.events', key: 'acc_1', eventId: threshold.event_id },
        { topic: 'gw.events', key: 'acc_2', eventId: advisory.event_id },
      ],
    ]);
  });

  it('sends nothing for no events', async () => {
    const sends: Sent[][] = [];
    await publishEvents(recordingProducer(sends), []);
    expect(sends).toEqual([]);
  });
});
