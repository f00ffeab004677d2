/**
 * When the simulated network bans a number: enough of its sends reached people who blocked it,
 * counted over its last sends and over the last hour (docs/sandbox.md). The campaigns' autopilot
 * (processors/campaigns/thresholds.ts) is set to trip before this.
 */
export const banRule = Object.freeze({
  /** Sends to blockers that get the number banned... */
  blocks: 10,
  /** ...among its last this many sends... */
  withinSends: 200,
  /** ...or within this many minutes. */
  withinMinutes: 60,
});

/** The sends of one number as the ban rule sees them, in bounded memory. */
export class BanWatch {
  /** Whether each of the last `withinSends` sends went to a blocker, oldest first. */
  private readonly lastSends: boolean[] = [];
  private blockedInLastSends = 0;
  /** When the last `blocks` sends to blockers were made, oldest first. */
  private readonly blockTimes: number[] = [];

  constructor(private readonly rule = banRule) {}

  /** Counts one send; answers why the number is banned now, if it is. */
  sent(blocked: boolean, at: number): string | undefined {
    this.lastSends.push(blocked);
    if (blocked) this.blockedInLastSends++;
    if (this.lastSends.length > this.rule.withinSends && this.lastSends.shift()) this.blockedInLastSends--;
    if (!blocked) return undefined;
    this.blockTimes.push(at);
    if (this.blockTimes.length > this.rule.blocks) this.blockTimes.shift();
    const { blocks, withinMinutes } = this.rule;
    if (this.blockedInLastSends >= blocks) return `sandbox: ${this.blockedInLastSends} of the last ${this.lastSends.length} sends went to recipients who blocked the number`;
    if (this.blockTimes.length >= blocks && at - this.blockTimes[0]! <= withinMinutes * 60_000) {
      return `sandbox: ${blocks} sends went to recipients who blocked the number within ${withinMinutes} minutes`;
    }
    return undefined;
  }
}
