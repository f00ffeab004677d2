/** Why a send (of the API or of a campaign) cannot go now; the API answers the code with its status. */
export type SendRefusalCode = 'not_found' | 'not_connected' | 'no_number_available' | 'service_unavailable';

export class SendRefused extends Error {
  constructor(readonly code: SendRefusalCode) {
    super(`send refused: ${code}`);
    this.name = 'SendRefused';
  }
}
