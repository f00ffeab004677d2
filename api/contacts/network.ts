import { phoneJid } from '../../processors/contacts/index.js';

export interface NetworkCheck {
  readonly phone: string;
  readonly on_network: boolean;
  readonly jid: string | null;
  readonly lid?: string;
}

/** Answers whether phones (E.164) or lids are on the messaging network; the connector provides the real one. */
export interface NetworkDirectory {
  check(phones: readonly string[]): Promise<NetworkCheck[]>;
}

/**
 * The sandbox network: a phone whose last four digits are 9999 is not on it, every other phone
 * is; a lid is on it and stays a lid (nothing resolves it here).
 */
export const sandboxNetworkDirectory: NetworkDirectory = {
  async check(phones) {
    return phones.map((phone): NetworkCheck => {
      if (phone.endsWith('@lid')) return { phone, on_network: true, jid: phone, lid: phone };
      if (phone.endsWith('9999')) return { phone, on_network: false, jid: null };
      return { phone, on_network: true, jid: phoneJid(phone) };
    });
  },
};
