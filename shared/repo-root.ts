import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** The repository root, whether running from `dist/` or from the TypeScript sources. */
export const repoRoot = (() => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const parts = here.split(path.sep);
  const dist = parts.lastIndexOf('dist');
  return dist >= 0 ? parts.slice(0, dist).join(path.sep) : path.resolve(here, '..');
})();
