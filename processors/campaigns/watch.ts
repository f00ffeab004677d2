import type { CampaignWatch } from './autopilot.js';

/** A watch that never pauses: for replays (the facts are the past) and projections run without a runner. */
export const idleWatch: CampaignWatch = {
  record: () => undefined,
  trip: () => undefined,
};
