import { asEventId, newId } from '../../schemas/ids.js';
import { partnerLogoId, type PartnerEntry, type PartnerLogoEntry } from '../directory.js';
import { partnerOf, storedPartner, writePartner, type PartnerRegistry } from './partners.js';
import { writeConfig } from './write.js';

/** A checked logo, its bytes already in the media store. */
export interface StoredLogo {
  readonly content_type: string;
  readonly sha256: string;
  readonly size: number;
  readonly storage_key: string;
}

/**
 * Makes `logo` the partner's logo: the `partner_logo` record first, then the partner with its
 * `logo_url`, so the URL never names bytes the log does not hold. Answers the logo it replaced
 * (whose stored bytes nothing reads any more).
 */
export async function setPartnerLogo(
  registry: Pick<PartnerRegistry, 'producer' | 'directory' | 'clock'>,
  partnerId: string,
  logo: StoredLogo,
  logoUrl: string,
): Promise<{ readonly partner: PartnerEntry; readonly replaced: PartnerLogoEntry | undefined }> {
  const partner = partnerOf(registry, partnerId);
  const replaced = registry.directory.partnerLogo(partner.id);
  const id = partnerLogoId(partner.id);
  await writeConfig(registry, id, {
    event_id: asEventId(newId('cfg')),
    occurred_at: registry.clock(),
    account_id: null,
    project_id: null,
    instance_id: null,
    entity_id: id,
    entity: { kind: 'partner_logo', partner_id: partner.id, ...logo },
  });
  return { partner: await writePartner(registry, partner.id, { ...storedPartner(partner), logo_url: logoUrl }), replaced };
}
