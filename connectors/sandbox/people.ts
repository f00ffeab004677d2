import type { Sender } from '../../schemas/records.js';
import { isLid, phoneJid, phoneOfJid, toJid } from '../../schemas/phones.js';
import { Recent } from './recent.js';

/** Privacy identities a number remembers (sandbox controls map them): the newest ones. */
const KNOWN = 1_000;

/**
 * Who is who, as one number knows it: the phones behind privacy identities (@lid). A person the
 * number knows by lid appears with the phone jid and the lid kept; an unknown lid stays a lid.
 */
export class People {
  private readonly phoneByLid = new Recent<string, string>(KNOWN);
  private readonly lidByPhone = new Recent<string, string>(KNOWN);

  map(lid: string, phone: string): void {
    this.phoneByLid.set(lid, phone);
    this.lidByPhone.set(phone, lid);
  }

  /** A person from an E.164 phone or a jid. */
  person(ref: string, name: string | null = null): Sender {
    const jid = toJid(ref);
    if (isLid(jid)) {
      const phone = this.phoneByLid.get(jid);
      return phone ? { jid: phoneJid(phone), lid: jid, name, phone } : { jid, lid: jid, name, phone: null };
    }
    const phone = phoneOfJid(jid) ?? null;
    return { jid, lid: (phone && this.lidByPhone.get(phone)) ?? null, name, phone };
  }
}
