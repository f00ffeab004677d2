/**
 * What the runner tells the campaign watch (the safety autopilot plugs in here): per campaign and
 * per number, each send's outcome, opt-out and reply, as they are learnt.
 */
export type CampaignFact =
  | { readonly kind: 'sent' | 'delivered' | 'read' | 'replied'; readonly campaignId: string; readonly instanceId: string; readonly at: number }
  | { readonly kind: 'failed'; readonly campaignId: string; readonly instanceId: string; readonly at: number; readonly errorCode: string | null; readonly reason: string | null }
  | { readonly kind: 'opted_out'; readonly campaignId: string; readonly instanceId: string | null; readonly at: number };

/** Why the watch stops a campaign: `campaign.paused` carries all three. */
export interface PauseDecision {
  readonly reason: string;
  /** The measured figures that tripped it (rates, counts, a number's health). */
  readonly figures: Readonly<Record<string, number>>;
  readonly thresholds: Readonly<Record<string, number>>;
}

export interface CampaignWatch {
  record(fact: CampaignFact): void;
  /** Asked on every tick of a running campaign: a decision pauses it. */
  trip(campaignId: string, now: number): PauseDecision | undefined;
}

/** The watch until the autopilot is wired: it never pauses. */
export const idleWatch: CampaignWatch = {
  record: () => undefined,
  trip: () => undefined,
};
