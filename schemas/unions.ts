import avro from 'avsc';

/**
 * avsc represents a union of several records "wrapped": `{"gateway.messages.TextContent": {...}}`.
 * Our code works with discriminated unions instead: `{kind: "text", ...}`, the kind being the
 * record's `kind` attribute in its `.avsc` file. This module compiles, once per type, the two
 * conversions; types without such unions convert by identity at no cost.
 */
export interface UnionCodec {
  toWire(value: unknown): unknown;
  fromWire(value: unknown): unknown;
}

type Convert = (value: unknown) => unknown;
interface Pair {
  to: Convert;
  from: Convert;
}

const identity: UnionCodec = { toWire: (v) => v, fromWire: (v) => v };

export function compileUnionCodec(type: avro.Type, kinds: ReadonlyMap<string, string>): UnionCodec {
  const pair = compile(type, kinds, new Map());
  return pair ? { toWire: pair.to, fromWire: pair.from } : identity;
}

function compile(type: avro.Type, kinds: ReadonlyMap<string, string>, seen: Map<avro.Type, Pair | null>): Pair | null {
  if (seen.has(type)) return seen.get(type) ?? null;
  seen.set(type, null);
  const pair = compileUncached(type, kinds, seen);
  seen.set(type, pair);
  return pair;
}

function compileUncached(type: avro.Type, kinds: ReadonlyMap<string, string>, seen: Map<avro.Type, Pair | null>): Pair | null {
  if (type instanceof avro.types.RecordType) {
    const fields = type.fields
      .map((field) => ({ name: field.name, pair: compile(field.type, kinds, seen) }))
      .filter((f): f is { name: string; pair: Pair } => f.pair !== null);
    if (fields.length === 0) return null;
    // Outgoing values belong to the caller: copy. Decoded values are fresh from avsc: convert in place.
    const to: Convert = (value) => {
      if (value === null || value === undefined) return value;
      const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
      for (const { name, pair } of fields) if (copy[name] !== undefined) copy[name] = pair.to(copy[name]);
      return copy;
    };
    const from: Convert = (value) => {
      if (value === null || value === undefined) return value;
      const record = value as Record<string, unknown>;
      for (const { name, pair } of fields) if (record[name] !== undefined) record[name] = pair.from(record[name]);
      return record;
    };
    return { to, from };
  }
  if (type instanceof avro.types.ArrayType) {
    const items = compile(type.itemsType, kinds, seen);
    if (!items) return null;
    return { to: (v) => (v as unknown[]).map(items.to), from: (v) => (v as unknown[]).map(items.from) };
  }
  if (type instanceof avro.types.MapType) {
    const values = compile(type.valuesType as avro.Type, kinds, seen);
    if (!values) return null;
    const map = (convert: Convert): Convert => (v) =>
      Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, convert(x)]));
    return { to: map(values.to), from: map(values.from) };
  }
  if (type instanceof avro.types.UnwrappedUnionType && type.types.length === 1) return compileSingle(type.types[0]!, kinds, seen);
  if (type instanceof avro.types.UnwrappedUnionType) {
    // Otherwise only ["null", X] unions are unwrapped by avsc here: convert the non-null branch.
    const branches = type.types.map((branch) => compile(branch, kinds, seen));
    const inner = branches.find((b): b is Pair => b !== null);
    if (!inner) return null;
    return { to: (v) => (v === null ? v : inner.to(v)), from: (v) => (v === null ? v : inner.from(v)) };
  }
  if (type instanceof avro.types.WrappedUnionType) return compileDiscriminated(type, kinds, seen);
  return null;
}

/**
 * A union of one record (the first branch of a union meant to grow), which avsc unwraps: its value
 * is the record itself, carrying its kind in code and not on the wire.
 */
function compileSingle(branch: avro.Type, kinds: ReadonlyMap<string, string>, seen: Map<avro.Type, Pair | null>): Pair | null {
  const kind = branch.name === undefined ? undefined : kinds.get(branch.name);
  const inner = compile(branch, kinds, seen);
  if (kind === undefined) return inner;
  return {
    to: (value) => {
      const { kind: _kind, ...rest } = value as { kind: string };
      return inner ? inner.to(rest) : rest;
    },
    from: (value) => {
      const converted = (inner ? inner.from(value) : value) as Record<string, unknown>;
      converted.kind = kind;
      return converted;
    },
  };
}

function compileDiscriminated(
  type: avro.types.WrappedUnionType,
  kinds: ReadonlyMap<string, string>,
  seen: Map<avro.Type, Pair | null>,
): Pair {
  const byName = new Map<string, { kind: string; pair: Pair | null }>();
  const byKind = new Map<string, { name: string; pair: Pair | null }>();
  for (const branch of type.types) {
    const name = branch.name;
    if (branch.typeName === 'null') continue;
    const kind = name === undefined ? undefined : kinds.get(name);
    if (name === undefined || kind === undefined) {
      throw new Error(`union branch ${name ?? branch.typeName} needs a "kind" attribute to be a discriminated union`);
    }
    if (byKind.has(kind)) throw new Error(`two branches of one union share the kind "${kind}"`);
    const pair = compile(branch, kinds, seen);
    byName.set(name, { kind, pair });
    byKind.set(kind, { name, pair });
  }
  return {
    // The branch keeps its `kind` on the way out: avsc writes a record's declared fields only, so
    // the value is wrapped as it is, without a copy that leaves the kind out.
    to: (value) => {
      if (value === null) return null;
      const { kind } = value as { kind: string };
      const branch = byKind.get(kind);
      if (!branch) throw new Error(`unknown kind "${kind}"; expected one of ${[...byKind.keys()].join(', ')}`);
      return { [branch.name]: branch.pair ? branch.pair.to(value) : value };
    },
    from: (value) => {
      if (value === null) return null;
      const wrapped = value as Record<string, unknown>;
      let name: string | undefined;
      for (const key in wrapped) {
        name = key;
        break;
      }
      const branch = name === undefined ? undefined : byName.get(name);
      if (!branch) throw new Error(`unknown union branch ${String(name)}`);
      const converted = (branch.pair ? branch.pair.from(wrapped[name!]) : wrapped[name!]) as Record<string, unknown>;
      converted.kind = branch.kind;
      return converted;
    },
  };
}
