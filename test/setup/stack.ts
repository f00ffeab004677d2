import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../stack/config.js';
import { repoRoot } from '../../shared/repo-root.js';
import { stackUp } from '../../stack/local/index.js';

/**
 * One running stack for the whole test run: started here if it is not up (idempotent), left
 * running afterwards so the next run starts fast (`gateway stack down` stops it).
 */
export default async function setup(): Promise<void> {
  if (!existsSync(path.join(repoRoot, 'dist', 'stack', 'cli.js'))) {
    throw new Error('dist/ is missing: run the tests with `npm test`, which builds first');
  }
  const config = loadConfig();
  const status = await stackUp({ root: config.stackRoot, log: (line) => console.log(`[stack] ${line}`) });
  const down = Object.entries(status).filter(([, s]) => !s.up);
  if (down.length > 0) throw new Error(`stack services down: ${down.map(([name]) => name).join(', ')}`);
}
