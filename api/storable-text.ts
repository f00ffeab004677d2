// The edge's one rule for text: every string the API accepts must be storable and encodable
// everywhere it goes. Postgres `text` refuses NUL ("invalid byte sequence for encoding UTF8: 0x00"),
// HTTP headers and C-string consumers cut or refuse it, and a lone UTF-16 surrogate has no UTF-8
// encoding at all (Avro, Kafka and Postgres would each replace or refuse it differently).

// eslint-disable-next-line no-control-regex -- finding NUL is the point
const NUL = /\u0000/;
/** In `u` mode a paired surrogate is one code point, so this matches lone surrogates only. */
const LONE_SURROGATE = /\p{Cs}/u;

export type TextProblem = 'contains a NUL character' | 'contains a lone UTF-16 surrogate';

export function textProblem(text: string): TextProblem | undefined {
  if (NUL.test(text)) return 'contains a NUL character';
  if (LONE_SURROGATE.test(text)) return 'contains a lone UTF-16 surrogate';
  return undefined;
}

export interface UnstorableText {
  /** Where the string is, in Fastify's validation style: `body/media/mimetype`, `params/id`, `querystring/q`. */
  readonly field: string;
  readonly problem: TextProblem;
}

/**
 * The first string (value or object key) in `value` that breaks the rule, depth first. `skip`
 * names fields whose strings the route checks itself (they are not walked). The walk keeps its
 * own stack, so no depth of nesting can overflow the call stack.
 */
export function findUnstorableText(value: unknown, field: string, skip: ReadonlySet<string> = new Set()): UnstorableText | undefined {
  // Each entry: the field holding it, its key there (none for the root) and its value.
  const pending: [parent: string, key: string | undefined, value: unknown][] = [[field, undefined, value]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [parent, key, item] = next;
    const keyProblem = key === undefined ? undefined : textProblem(key);
    if (keyProblem !== undefined) return { field: parent, problem: keyProblem };
    const at = key === undefined ? parent : `${parent}/${key}`;
    if (skip.has(at)) continue;
    if (typeof item === 'string') {
      const problem = textProblem(item);
      if (problem !== undefined) return { field: at, problem };
    } else if (typeof item === 'object' && item !== null) {
      const entries: [string, unknown][] = Array.isArray(item) ? item.map((inner, index) => [String(index), inner]) : Object.entries(item);
      // Pushed last to first, so the first entry is looked at first, as a recursive walk would.
      for (let i = entries.length - 1; i >= 0; i--) pending.push([at, entries[i]![0], entries[i]![1]]);
    }
  }
  return undefined;
}
