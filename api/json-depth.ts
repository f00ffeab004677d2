// How deeply a JSON text nests, read from the text itself before it is parsed: a body of
// `[[[[…` thousands deep parses, but every walk over the parsed value (the text rule, schema
// validation, hashing, logging) would recurse once per level and overflow the stack.

/** The deepest nesting a body may have, arrays and objects together; the deepest schema takes 5. */
export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * True when `text` opens more than `max` arrays or objects inside one another. Brackets inside
 * strings do not count; strings are skipped with `indexOf`, so a body of base64 is read at native
 * speed. Malformed JSON is not judged here: the parser refuses it after.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === QUOTE) {
      i = closingQuote(text, i);
      if (i === -1) return false;
    } else if (char === OPEN_ARRAY || char === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (char === CLOSE_ARRAY || char === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote that ends the string opened at `open`, or -1 when it never ends. */
function closingQuote(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  while (at !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
  return -1;
}
