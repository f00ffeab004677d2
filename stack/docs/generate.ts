import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedTables, withTable } from './tables.js';

// Compiled to dist/stack/docs/: the repository is three folders up.
const root = fileURLToPath(new URL('../../../', import.meta.url));

for (const { page, name, render } of generatedTables) {
  const file = path.join(root, page);
  const before = await readFile(file, 'utf8');
  const after = withTable(before, name, render());
  if (after !== before) await writeFile(file, after);
  console.log(`${page}: ${after === before ? 'up to date' : 'table rewritten'}`);
}
