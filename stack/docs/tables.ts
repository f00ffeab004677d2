import { ERRORS } from '../../api/errors.js';
import { accountEventTypes, streamOnlyEventTypes, webhookEventTypes } from '../../events/catalogue.js';
import { envelopeOf } from '../../events/envelope.js';
import { sampleEvent } from '../../events/samples.js';
import { defaultThresholds } from '../../processors/campaigns/thresholds.js';

/**
 * The reference tables that are facts of the code: the error catalogue, the event catalogue and
 * the campaigns' autopilot thresholds.
 * `npm run docs:generate` writes them into docs/ between markers; a unit test fails when the
 * committed tables differ from what this module renders.
 */

/** A generated table in a page: the page and the marker name around the table. */
export interface GeneratedTable {
  readonly page: string;
  readonly name: string;
  readonly render: () => string;
}

export const generatedTables: readonly GeneratedTable[] = [
  { page: 'docs/errors.md', name: 'errors', render: errorTable },
  { page: 'docs/events.md', name: 'events', render: eventTable },
  { page: 'docs/campaigns.md', name: 'autopilot', render: autopilotTable },
];

const cell = (text: string) => text.replaceAll('|', '\\|');
const code = (text: string) => `\`${text}\``;

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Every code of `api/errors.ts` in catalogue order, with its HTTP status and English message template. */
export function errorTable(): string {
  return table(
    ['code', 'HTTP', 'English message'],
    Object.entries(ERRORS).map(([name, error]) => [code(name), String(error.status), cell(error.message.en)]),
  );
}

const sampleOwner = { accountId: 'acc_sample', projectId: 'prj_sample', instanceId: 'inst_sample' };
const SHARED_ENVELOPE = new Set(['event_id', 'event_type', 'timestamp', 'payload']);

/**
 * Every event type of `events/catalogue.ts`: its scope, who receives it, and for webhook events
 * the payload and envelope fields of its sample (`events/samples.ts`, rendered by the real renderers).
 */
export function eventTable(): string {
  const webhookRows = webhookEventTypes.map((type) => {
    const envelope = envelopeOf(sampleEvent(type, sampleOwner, 'test'));
    const payload = Object.keys(envelope.payload as object);
    const extra = Object.keys(envelope).filter((key) => !SHARED_ENVELOPE.has(key));
    return [
      code(type),
      accountEventTypes.has(type) ? 'account' : 'project',
      'webhooks, `GET /stream`, `GET /webhooks/listen`',
      payload.map(code).join(', '),
      extra.map(code).join(', '),
    ];
  });
  const streamRows = streamOnlyEventTypes.map((type) => [code(type), 'project', '`GET /stream` only', 'see below', 'see below']);
  return table(['event', 'scope', 'received by', 'payload fields (of its sample)', 'envelope adds'], [...webhookRows, ...streamRows]);
}

const percent = (share: number) => `${Math.round(share * 10_000) / 100} %`;

/** Every rule of `processors/campaigns/thresholds.ts`, in the order the autopilot checks them, then the health rules. */
export function autopilotTable(): string {
  const { rates, health } = defaultThresholds;
  const rows = rates.map((rule) => [
    code(`${rule.rate}_rate`),
    rule.scope,
    'sends' in rule.window ? `last ${rule.window.sends} sends` : `last ${rule.window.minutes} minutes`,
    String(rule.min_sample),
    percent(rule.limit),
    rule.max_count === undefined ? '' : String(rule.max_count),
  ]);
  const healthRow = [code('number_unhealthy'), 'number', 'its latest status', '', `status ${health.pause_on.map(code).join(' or ')}`, ''];
  const rules = table(['reason', 'scope', 'window', 'min_sample', 'limit', 'max_count'], [...rows, healthRow]);
  return `${rules}

While a number warms, its number-scope limits and counts are multiplied by ${health.warming_factor} (counts rounded down, at least 1).`;
}

const startMarker = (name: string) => `<!-- generated:${name} start: npm run docs:generate writes this table from the code -->`;
const endMarker = (name: string) => `<!-- generated:${name} end -->`;

/** The generated table of a page, as committed; undefined when the markers are missing. */
export function committedTable(page: string, name: string): string | undefined {
  const start = page.indexOf(startMarker(name));
  const end = page.indexOf(endMarker(name));
  if (start < 0 || end < start) return undefined;
  return page.slice(start + startMarker(name).length, end).trim();
}

/** The page with its generated table replaced by `generated`. */
export function withTable(page: string, name: string, generated: string): string {
  const start = page.indexOf(startMarker(name));
  const end = page.indexOf(endMarker(name));
  if (start < 0 || end < start) throw new Error(`the markers of the ${name} table are missing`);
  return `${page.slice(0, start)}${startMarker(name)}\n${generated}\n${page.slice(end)}`;
}
