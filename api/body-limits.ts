// Body limits, in bytes of the body as sent. A request over its route's limit is refused (413)
// before it is read to the end.

/** Every route but those below: the largest bodies (a pool of 500 ids, 1000 failing phones) take under 20 KiB. */
export const DEFAULT_BODY_LIMIT = 64 * 1024;

/** Text sends and sandbox messages: 65,536 characters of text, escaped in JSON, or 256 KiB of base64 sandbox media. */
export const TEXT_BODY_LIMIT = 512 * 1024;

/** A contact import: 1000 rows (spec 8.3) with names and tags. */
export const IMPORT_BODY_LIMIT = 4 * 1024 * 1024;

/** Media sends: base64 of up to 64 MiB is about 85.4 MiB, plus the JSON around it. */
export const MEDIA_BODY_LIMIT = 96 * 1024 * 1024;
