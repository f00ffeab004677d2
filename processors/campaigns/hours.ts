/** HH:MM, 00:00 to 23:59 (24:00 ends a day). */
export const HOURS_PATTERN = '^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$';

/**
 * The SQL condition "now is within the sending hours" for a recipient row with a `time_zone`
 * column, the campaign's zone `$zone`, and the window `$from`..`$to` (to exclusive; a window
 * whose end is before its start runs past midnight). Parameters are given by number.
 */
export function withinHoursSql(zone: string, from: string, to: string): string {
  const local = `(now() AT TIME ZONE coalesce(time_zone, ${zone}))::time`;
  return `(${from}::text IS NULL OR CASE WHEN ${from}::time < ${to}::time
      THEN ${local} >= ${from}::time AND ${local} < ${to}::time
      ELSE ${local} >= ${from}::time OR ${local} < ${to}::time END)`;
}
