/** Why a campaign command is refused; the API answers the code with its status. */
export type CampaignRefusalCode = 'campaign_state' | 'not_found' | 'invalid_request';

export class CampaignRefused extends Error {
  constructor(
    readonly code: CampaignRefusalCode,
    readonly params: { readonly status?: string; readonly detail?: string } = {},
  ) {
    super(`campaign command refused: ${code}${params.status === undefined ? '' : ` (${params.status})`}${params.detail === undefined ? '' : `: ${params.detail}`}`);
    this.name = 'CampaignRefused';
  }
}
