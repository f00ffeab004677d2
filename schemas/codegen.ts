import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { brandedFields } from './ids.js';
import { loadSchemaFiles, schemasDir, type NamedSchema } from './load.js';

/**
 * Generates `schemas/records.ts`, the TypeScript shapes of the records in `schemas/`, so the
 * `.avsc` files stay the one source of truth. Run `npm run schemas:generate` after a change; a
 * unit test fails while the generated file is out of date.
 */
export function generateRecordTypes(named: ReadonlyMap<string, NamedSchema>): string {
  const shortNames = new Map<string, string>();
  for (const { fullName, json } of named.values()) {
    const short = String(json.name);
    const clash = shortNames.get(short);
    if (clash) throw new Error(`${fullName} and ${clash} share the short name ${short}`);
    shortNames.set(short, fullName);
  }
  const brands = new Set<string>();
  const out: string[] = [];
  for (const schema of [...named.values()].sort((a, b) => a.fullName.localeCompare(b.fullName))) {
    out.push(declaration(schema, named, brands));
  }
  const header = [
    '// Generated from schemas/**/*.avsc by `npm run schemas:generate`. Do not edit.',
    brands.size > 0 ? `import type { ${[...brands].sort().join(', ')} } from './ids.js';` : '',
    '',
  ];
  return [...header, ...out].join('\n');
}

function declaration(schema: NamedSchema, named: ReadonlyMap<string, NamedSchema>, brands: Set<string>): string {
  const { json } = schema;
  const name = String(json.name);
  const doc = typeof json.doc === 'string' ? `/** ${json.doc} */\n` : '';
  if (json.type === 'enum') {
    const symbols = (json.symbols as string[]).map((s) => `'${s}'`).join(', ');
    return `${doc}export const ${name}Values = [${symbols}] as const;\nexport type ${name} = (typeof ${name}Values)[number];\n`;
  }
  if (json.type === 'fixed') return `${doc}export type ${name} = Buffer;\n`;
  if (json.type !== 'record') throw new Error(`${schema.file}: a file must define a record, enum or fixed type`);
  const lines: string[] = [];
  if (typeof json.kind === 'string') lines.push(`  readonly kind: '${json.kind}';`);
  for (const field of json.fields as Array<{ name: string; type: unknown; doc?: string }>) {
    const brand = brandedFields[field.name as keyof typeof brandedFields];
    if (brand) brands.add(brand);
    const fieldDoc = field.doc ? `  /** ${field.doc} */\n` : '';
    lines.push(`${fieldDoc}  readonly ${field.name}: ${typeOf(field.type, named, brand)};`);
  }
  return `${doc}export interface ${name} {\n${lines.join('\n')}\n}\n`;
}

function typeOf(node: unknown, named: ReadonlyMap<string, NamedSchema>, brand: string | undefined): string {
  if (Array.isArray(node)) return node.map((branch) => typeOf(branch, named, brand)).join(' | ');
  if (typeof node === 'string') {
    const ref = named.get(node);
    if (ref) return String(ref.json.name);
    switch (node) {
      case 'null':
        return 'null';
      case 'boolean':
        return 'boolean';
      case 'int':
      case 'long':
      case 'float':
      case 'double':
        return 'number';
      case 'bytes':
        return 'Buffer';
      case 'string':
        return brand ?? 'string';
      default:
        throw new Error(`unknown type ${node}: refer to other files by full name`);
    }
  }
  const complex = node as Record<string, unknown>;
  switch (complex.type) {
    case 'array':
      return `ReadonlyArray<${typeOf(complex.items, named, brand)}>`;
    case 'map':
      return `Readonly<Record<string, ${typeOf(complex.values, named, brand)}>>`;
    case 'record':
    case 'enum':
    case 'fixed':
      throw new Error(`named type ${String(complex.name)} defined inline: give it a file of its own`);
    default:
      return typeOf(complex.type, named, brand);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const target = path.join(schemasDir, 'records.ts');
  writeFileSync(target, generateRecordTypes(loadSchemaFiles()));
  console.log(`wrote ${target}`);
}
