import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { Directory } from '../../processors/directory.js';
import { ConfigSync } from '../../connectors/webhooks/config-sync.js';
import { Load } from '../../connectors/webhooks/load.js';

const quiet = pino({ level: 'silent' });

/** A stand-in for reading the end offsets of `gw.config`: each call is answered by hand. */
function endsByHand() {
  const calls: Array<(ends: ReadonlyMap<number, number>) => void> = [];
  return {
    calls,
    read: () => new Promise<ReadonlyMap<number, number>>((resolve) => calls.push(resolve)),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('dispatcher: catching the directory up before judging an event', () => {
  it('waits until the directory has applied the config topic up to its end offsets', async () => {
    const directory = new Directory();
    const ends = endsByHand();
    const sync = new ConfigSync(directory, ends.read, quiet);
    let done = false;
    void sync.covering(Date.now()).then(() => (done = true));
    await tick();
    expect(ends.calls).toHaveLength(1);
    ends.calls[0]!(new Map([[0, 5], [1, 2]]));
    directory.advance(0, 5);
    directory.settled();
    await tick();
    expect(done).toBe(false);
    directory.advance(1, 2);
    directory.settled();
    await tick();
    expect(done).toBe(true);
  });

  it('serves every event written before a catch-up started with that one, and queues one more for later events', async () => {
    const directory = new Directory();
    const ends = endsByHand();
    const sync = new ConfigSync(directory, ends.read, quiet);
    const before = Date.now() - 1_000;
    const first = sync.covering(Date.now());
    const same = sync.covering(before);
    await tick();
    expect(ends.calls).toHaveLength(1);
    const later = [sync.covering(Date.now() + 60_000), sync.covering(Date.now() + 60_000)];
    ends.calls[0]!(new Map());
    await Promise.all([first, same]);
    await vi.waitFor(() => expect(ends.calls).toHaveLength(2));
    ends.calls[1]!(new Map());
    await Promise.all(later);
    expect(ends.calls).toHaveLength(2);
  });

  it('lets events through when the end offsets cannot be read', async () => {
    const sync = new ConfigSync(new Directory(), () => Promise.reject(new Error('broker down')), quiet);
    await expect(sync.covering(Date.now())).resolves.toBeUndefined();
  });
});

describe('dispatcher: bounded deliveries in flight', () => {
  it('pauses partitions past the limit and resumes them all once half have settled', async () => {
    const load = new Load(4);
    const resumed: string[] = [];
    const pause = (name: string) => () => () => resumed.push(name);
    load.add(3);
    load.hold(pause('p0'));
    load.add(2);
    load.hold(pause('p1'));
    load.hold(pause('p2'));
    expect(load.inFlight()).toBe(5);
    load.done(2);
    expect(resumed).toEqual([]);
    let idle = false;
    void load.idle().then(() => (idle = true));
    load.done(1);
    expect(resumed).toEqual(['p1', 'p2']);
    await tick();
    expect(idle).toBe(false);
    load.done(2);
    await tick();
    expect(idle).toBe(true);
  });
});
