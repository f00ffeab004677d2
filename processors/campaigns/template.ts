import type { CampaignState } from '../../schemas/records.js';

export type CampaignContent = CampaignState['content'];

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

/** A text with its `{{name}}` placeholders filled; a placeholder without a value becomes empty. */
export function fill(text: string, variables: Readonly<Record<string, string>>): string {
  return text.replace(PLACEHOLDER, (_, name: string) => variables[name] ?? '');
}

/** The placeholders a content uses, for checking an audience gives them. */
export function placeholdersOf(content: CampaignContent): Set<string> {
  const names = new Set<string>();
  mapTexts(content, (text) => {
    for (const match of text.matchAll(PLACEHOLDER)) names.add(match[1]!);
    return text;
  });
  return names;
}

/** A recipient's content: every text of the message filled, the stored media untouched. */
export function contentFor(content: CampaignContent, variables: Readonly<Record<string, string>>): CampaignContent {
  return mapTexts(content, (text) => fill(text, variables));
}

function mapTexts<T>(value: T, map: (text: string) => string): T {
  if (typeof value === 'string') return map(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => mapTexts(item, map)) as T;
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    // The kind names the branch, ids name buttons and rows the receiver answers with, media is stored bytes.
    out[key] = key === 'kind' || key === 'id' || key === 'media' ? field : mapTexts(field, map);
  }
  return out as T;
}
