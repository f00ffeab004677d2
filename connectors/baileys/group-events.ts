import type { BaileysEventMap } from '@whiskeysockets/baileys';
import type { GroupEventKind } from '../../schemas/records.js';
import type { GroupFact } from '../network/connector.js';
import { personOf, type LidLookup } from './people.js';

const KINDS: Readonly<Record<string, GroupEventKind | undefined>> = {
  add: 'participant_added',
  remove: 'participant_removed',
  promote: 'participant_promoted',
  demote: 'participant_demoted',
};

/**
 * Group facts from `group-participants.update` and `groups.update`. The number itself added or
 * removed is `joined` / `left`; `modify` (a participant changed number) has no event of ours.
 */
export function groupFacts(
  own: { readonly jid: string | null; readonly lid: string | null },
  participants: BaileysEventMap['group-participants.update'] | undefined,
  groups: BaileysEventMap['groups.update'] | undefined,
  phoneOfLid: LidLookup,
  now: number = Date.now(),
): GroupFact[] {
  const facts: GroupFact[] = [];
  if (participants) {
    const kind = KINDS[participants.action];
    if (kind !== undefined) {
      const people = participants.participants.map((p) => personOf(p.id, p.phoneNumber ?? p.lid, p.notify ?? p.name, phoneOfLid));
      const isOwn = (jid: string) => jid === own.jid || jid === own.lid;
      const self = people.some((p) => isOwn(p.jid) || (p.lid !== null && isOwn(p.lid)));
      const ownKind = kind === 'participant_added' ? 'joined' : kind === 'participant_removed' ? 'left' : undefined;
      facts.push({
        occurred_at: now,
        kind: self && ownKind !== undefined ? ownKind : kind,
        group: { jid: participants.id, name: null },
        author: participants.author ? personOf(participants.author, participants.authorPn, null, phoneOfLid).jid : null,
        participants: people,
        subject: null,
        description: null,
      });
    }
  }
  for (const change of groups ?? []) {
    if (!change.id) continue;
    const author = change.author ? personOf(change.author, change.authorPn, null, phoneOfLid).jid : null;
    const base = { occurred_at: now, group: { jid: change.id, name: change.subject ?? null }, author, participants: [] };
    if (change.subject !== undefined) facts.push({ ...base, kind: 'subject_changed', subject: change.subject, description: null });
    // A removed description comes as the key with no value.
    if ('desc' in change) facts.push({ ...base, kind: 'description_changed', subject: null, description: change.desc || null });
  }
  return facts;
}
