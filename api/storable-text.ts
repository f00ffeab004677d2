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
 * names fields whose strings the route checks itself (they are not walked).
 */
export function findUnstorableText(value: unknown, field: string, skip: ReadonlySet<string> = new Set()): UnstorableText | undefined {
  if (skip.has(field)) return undefined;
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem === undefined ? undefined : { field, problem };
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((item, index) => [String(index), item]) : Object.entries(value);
  for (const [key, item] of entries) {
    const keyProblem = textProblem(key);
    if (keyProblem !== undefined) return { field, problem: keyProblem };
    const found = findUnstorableText(item, `${field}/${key}`, skip);
    if (found !== undefined) return found;
  }
  return undefined;
}
