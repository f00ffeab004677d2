import { EventEmitter } from 'node:events';
import type { Consumer } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { GroupMembers, type MemberChange } from '../../topics/group-members.js';

/** The part of a kafkajs consumer `GroupMembers` listens to: its instrumentation events. */
function consumer(): Consumer & { emit(event: string, payload?: unknown): boolean } {
  const emitter = new EventEmitter();
  const events = { GROUP_JOIN: 'consumer.group_join', DISCONNECT: 'consumer.disconnect' };
  return Object.assign(emitter, { events }) as never;
}

const join = (memberId: string) => ({ payload: { memberId } });

describe('GroupMembers', () => {
  it("keeps each consumer's latest member id and tells every change", () => {
    const members = new GroupMembers();
    const changes: MemberChange[] = [];
    members.listen((change) => changes.push(change));
    const events = consumer();
    const views = consumer();
    members.follow(events, 'dispatcher.events', undefined);
    members.follow(views, 'dispatcher.views', 'dispatcher-0');

    events.emit('consumer.group_join', join('gw-1'));
    views.emit('consumer.group_join', join('dispatcher-0-a'));
    // A rejoin after the coordinator forgot the member gives it a new id: it replaces the old one.
    events.emit('consumer.group_join', join('gw-2'));
    expect(members.held()).toEqual([
      { consumer: 1, member: { groupId: 'dispatcher.events', memberId: 'gw-2', groupInstanceId: null } },
      { consumer: 2, member: { groupId: 'dispatcher.views', memberId: 'dispatcher-0-a', groupInstanceId: 'dispatcher-0' } },
    ]);

    views.emit('consumer.disconnect', {});
    expect(members.held().map((held) => held.consumer)).toEqual([1]);
    expect(changes.map(({ consumer, member }) => [consumer, member?.memberId])).toEqual([
      [1, 'gw-1'],
      [2, 'dispatcher-0-a'],
      [1, 'gw-2'],
      [2, undefined],
    ]);
  });

  it('tells nothing of a consumer that disconnects before it ever joined, nor to a listener stopped', () => {
    const members = new GroupMembers();
    const changes: MemberChange[] = [];
    const stop = members.listen((change) => changes.push(change));
    const never = consumer();
    members.follow(never, 'processor.views', undefined);
    never.emit('consumer.disconnect', {});
    stop();
    const later = consumer();
    members.follow(later, 'processor.views', undefined);
    later.emit('consumer.group_join', join('gw-3'));
    expect(changes).toEqual([]);
    expect(members.held()).toHaveLength(1);
  });
});
