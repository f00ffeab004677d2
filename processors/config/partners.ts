import { newSigningSecret } from '../../events/signature.js';
import { asEventId, newId } from '../../schemas/ids.js';
import type { Partner } from '../../schemas/records.js';
import type { Cipher } from '../../shared/cipher.js';
import type { Clock } from '../../shared/clock.js';
import { normalizeOrigin } from '../../shared/origin.js';
import { hashSecret, secretToken } from '../../shared/secret-token.js';
import type { PartnerEntry } from '../directory.js';
import { ConfigRefused } from './refused.js';
import { writeConfig, type ConfigWriter } from './write.js';

/** What the partner registry needs: the writer of `gw.config`, the cipher of the webhook secrets and the time of the records. */
export interface PartnerRegistry extends ConfigWriter {
  readonly cipher: Cipher;
  readonly clock: Clock;
}

/** What a platform administrator sets of a partner. */
export interface PartnerSettings {
  readonly name: string;
  readonly allowed_origins: readonly string[];
  readonly webhook_url: string | null;
  readonly key_scopes: readonly string[];
}

/** The partner, refused as `not_found` when there is none. */
export function partnerOf(registry: ConfigWriter, id: string): PartnerEntry {
  const partner = registry.directory.partners.get(id);
  if (partner === undefined) throw new ConfigRefused('not_found');
  return partner;
}

/** Writes a partner's full state and answers it as the directory now holds it. */
export async function writePartner(registry: ConfigWriter & { readonly clock: Clock }, id: string, partner: Omit<Partner, 'kind'>): Promise<PartnerEntry> {
  await writeConfig(registry, id, {
    event_id: asEventId(newId('cfg')),
    occurred_at: registry.clock(),
    account_id: null,
    project_id: null,
    instance_id: null,
    entity_id: id,
    entity: { kind: 'partner', ...partner },
  });
  return partnerOf(registry, id);
}

/** The stored fields of a partner entry, to write it again with some changed. */
export function storedPartner({ id: _, created_at: __, ...partner }: PartnerEntry): Omit<Partner, 'kind'> {
  return partner;
}

/** Registers a partner (spec 2.7); its secret and webhook secret are returned once, only their hash and ciphertext kept. */
export async function registerPartner(
  registry: PartnerRegistry,
  input: { readonly slug: string } & Pick<PartnerSettings, 'name' | 'allowed_origins'> & Partial<PartnerSettings>,
): Promise<{ readonly partner: PartnerEntry; readonly partnerSecret: string; readonly webhookSecret: string }> {
  if ([...registry.directory.partners.values()].some((p) => p.slug === input.slug)) throw new ConfigRefused('invalid_request', `slug: ${input.slug} is taken`);
  const partnerSecret = secretToken('svc_partner_');
  const webhookSecret = newSigningSecret();
  const partner = await writePartner(registry, newId('ptn'), {
    slug: input.slug,
    name: input.name,
    logo_url: null,
    allowed_origins: origins(input.allowed_origins),
    webhook_url: webhookUrl(input.webhook_url),
    key_scopes: [...(input.key_scopes ?? [])],
    secret_hash: hashSecret(partnerSecret),
    webhook_secret_ciphertext: registry.cipher.seal(webhookSecret),
    active: true,
  });
  return { partner, partnerSecret, webhookSecret };
}

/** Changes what is given of a partner's name, origins, webhook URL and scopes. */
export async function changePartner(registry: PartnerRegistry, id: string, change: Partial<PartnerSettings>): Promise<PartnerEntry> {
  const current = partnerOf(registry, id);
  return writePartner(registry, id, {
    ...storedPartner(current),
    ...(change.name === undefined ? {} : { name: change.name }),
    ...(change.allowed_origins === undefined ? {} : { allowed_origins: origins(change.allowed_origins) }),
    ...(change.webhook_url === undefined ? {} : { webhook_url: webhookUrl(change.webhook_url) }),
    ...(change.key_scopes === undefined ? {} : { key_scopes: [...change.key_scopes] }),
  });
}

/** A new partner secret; the previous one stops at once. */
export async function rotatePartnerSecret(registry: PartnerRegistry, id: string): Promise<string> {
  const current = partnerOf(registry, id);
  const partnerSecret = secretToken('svc_partner_');
  await writePartner(registry, id, { ...storedPartner(current), secret_hash: hashSecret(partnerSecret) });
  return partnerSecret;
}

/** A new partner webhook secret; the previous one stops at once. */
export async function rotatePartnerWebhookSecret(registry: PartnerRegistry, id: string): Promise<string> {
  const current = partnerOf(registry, id);
  const webhookSecret = newSigningSecret();
  await writePartner(registry, id, { ...storedPartner(current), webhook_secret_ciphertext: registry.cipher.seal(webhookSecret) });
  return webhookSecret;
}

/** Deactivates (sessions stop opening, its keys answer `connect_revoked`) or reactivates a partner. */
export async function setPartnerActive(registry: PartnerRegistry, id: string, active: boolean): Promise<PartnerEntry> {
  return writePartner(registry, id, { ...storedPartner(partnerOf(registry, id)), active });
}

function origins(list: readonly string[]): string[] {
  const normal = list.map((origin) => {
    const value = normalizeOrigin(origin);
    if (value === undefined) throw new ConfigRefused('invalid_request', `allowed_origins: ${origin} is not an origin (scheme://host[:port])`);
    return value;
  });
  return [...new Set(normal)];
}

function webhookUrl(url: string | null | undefined): string | null {
  if (url === null || url === undefined) return null;
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (parsed === undefined || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) throw new ConfigRefused('invalid_request', 'webhook_url: an http(s) URL');
  return parsed.toString();
}
