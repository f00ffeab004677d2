import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../shared/repo-root.js';

/** An Avro schema as JSON: a primitive or full name, a union (array), or a complex type (object). */
export type AvroJson = string | AvroJson[] | { [key: string]: unknown };

export interface NamedSchema {
  readonly fullName: string;
  readonly file: string;
  readonly json: Record<string, unknown>;
}

export const schemasDir = path.join(repoRoot, 'schemas');

/** Reads every `.avsc` file under `schemas/`: one named type a file, its namespace as folders. */
export function loadSchemaFiles(dir: string = schemasDir): ReadonlyMap<string, NamedSchema> {
  const named = new Map<string, NamedSchema>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.avsc')) continue;
    const file = path.join(entry.parentPath, entry.name);
    const json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const fullName = `${String(json.namespace)}.${String(json.name)}`;
    const expected = path.join(dir, ...fullName.split('.')) + '.avsc';
    if (expected !== file) throw new Error(`${file} defines ${fullName}; it belongs in ${expected}`);
    named.set(fullName, { fullName, file, json });
  }
  return named;
}

/**
 * Inlines every referenced named type at its first use, so the result is a self-contained schema
 * the registry can store and check for compatibility without schema references.
 */
export function composeSchema(fullName: string, named: ReadonlyMap<string, NamedSchema>): AvroJson {
  const defined = new Set<string>();
  const inline = (node: unknown, trail: readonly string[]): AvroJson => {
    if (typeof node === 'string') {
      const ref = named.get(node);
      if (!ref) return node;
      if (defined.has(node)) return node;
      if (trail.includes(node)) throw new Error(`circular reference: ${[...trail, node].join(' -> ')}`);
      defined.add(node);
      return inline(ref.json, [...trail, node]);
    }
    if (Array.isArray(node)) return node.map((branch) => inline(branch, trail));
    if (node === null || typeof node !== 'object') throw new Error(`not an Avro schema: ${JSON.stringify(node)}`);
    const copy: Record<string, unknown> = { ...(node as Record<string, unknown>) };
    if (Array.isArray(copy.fields)) {
      copy.fields = (copy.fields as Record<string, unknown>[]).map((field) => ({ ...field, type: inline(field.type, trail) }));
    }
    if ('items' in copy) copy.items = inline(copy.items, trail);
    if ('values' in copy) copy.values = inline(copy.values, trail);
    return copy;
  };
  if (!named.has(fullName)) throw new Error(`no schema named ${fullName} in schemas/`);
  return inline(fullName, []);
}

/** The `kind` attribute of each record that is a branch of a discriminated union. */
export function unionKinds(named: ReadonlyMap<string, NamedSchema>): ReadonlyMap<string, string> {
  const kinds = new Map<string, string>();
  for (const schema of named.values()) {
    if (typeof schema.json.kind === 'string') kinds.set(schema.fullName, schema.json.kind);
  }
  return kinds;
}
