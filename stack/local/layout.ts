import { mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../shared/repo-root.js';

/** Where the local stack keeps things: one ignored folder in the repo, downloads outside it. */
export interface Layout {
  readonly root: string;
  readonly logs: string;
  readonly data: string;
  readonly run: string;
  readonly conf: string;
  /** Downloads (Maven repository, unpacked distributions), shared by every checkout. */
  readonly cache: string;
}

export function layout(root?: string): Layout {
  const base = path.resolve(root ?? path.join(repoRoot, '.stack'));
  return {
    root: base,
    logs: path.join(base, 'logs'),
    data: path.join(base, 'data'),
    run: path.join(base, 'run'),
    conf: path.join(base, 'conf'),
    cache: path.resolve(process.env.GATEWAY_CACHE_DIR || path.join(homedir(), '.cache', 'messaging-gateway')),
  };
}

export function createFolders(l: Layout): void {
  for (const dir of [l.logs, l.data, l.run, l.conf, l.cache]) mkdirSync(dir, { recursive: true });
}

/** Writes a Java `.properties` file (regenerated on every start, never edited by hand). */
export function writeProperties(file: string, entries: Readonly<Record<string, string | number>>): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, Object.entries(entries).map(([key, value]) => `${key}=${value}\n`).join(''));
}
