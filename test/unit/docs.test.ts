import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../../api/errors.js';
import { committedTable, generatedTables } from '../../stack/docs/tables.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (page: string) => readFileSync(path.join(root, page), 'utf8');
const pages = ['README.md', ...readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** Fenced blocks and inline code spans, which hold examples rather than links. */
const CODE = /```[\s\S]*?```|`[^`\n]*`/g;
/** Inline links and images: `[text](target)`, `![alt](target "title")`. */
const LINK = /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const URL_PATTERN = /\bhttps?:\/\/[^\s)`'"<>\]]+/g;
/** Hosts an example may name: this machine, and names reserved for documentation (RFC 2606). */
const EXAMPLE_HOST = /^(localhost|127\.0\.0\.1|\[::1\]|([\w-]+\.)*example\.(com|org|net)|[\w.-]+\.(test|invalid|example))$/;

const inRepository = (file: string) => !path.relative(root, file).startsWith('..') && existsSync(file);

/** GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as hyphens. */
const anchorsOf = (page: string) =>
  new Set([...page.replace(/```[\s\S]*?```/g, '').matchAll(/^#+ (.+)$/gm)].map((match) => match[1]!.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replaceAll(' ', '-')));

/** The host of a URL as written; `new URL` refuses placeholders such as `$PORT`. */
const hostOf = (url: string) => url.replace(/^https?:\/\//, '').split(/[/:?#]/)[0] ?? '';

describe('the README and docs/', () => {
  it('keeps the README at most 200 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(200);
  });

  it.each(pages)('%s links only to files of the repository', (page) => {
    const prose = read(page).replace(CODE, '');
    const broken = [...prose.matchAll(LINK)]
      .map((match) => match[1]!)
      .filter((target) => !target.startsWith('#'))
      .filter((target) => /^[a-z][a-z0-9+.-]*:/i.test(target) || !inRepository(path.join(root, path.dirname(page), decodeURI(target.split('#')[0]!))));
    expect(broken).toEqual([]);
    expect(prose.match(URL_PATTERN) ?? []).toEqual([]);
  });

  it.each(pages)('%s links only to headings that exist', (page) => {
    const missing = [...read(page).replace(CODE, '').matchAll(LINK)]
      .map((match) => match[1]!)
      .filter((target) => target.includes('#') && !/^[a-z][a-z0-9+.-]*:/i.test(target))
      .filter((target) => {
        const [file = '', anchor = ''] = target.split('#');
        const linked = file === '' ? page : path.relative(root, path.join(root, path.dirname(page), file));
        return !anchorsOf(read(linked)).has(anchor);
      });
    expect(missing).toEqual([]);
  });

  it.each(pages)('%s names only example hosts in its code', (page) => {
    const code = (read(page).match(CODE) ?? []).join('\n');
    const outside = (code.match(URL_PATTERN) ?? []).filter((url) => !EXAMPLE_HOST.test(hostOf(url)));
    expect(outside).toEqual([]);
  });

  it.each(generatedTables)('$page holds the $name table the code generates (npm run docs:generate)', ({ page, name, render }) => {
    expect(committedTable(read(page), name)).toBe(render());
  });

  it('explains every code of the error catalogue, and no other', () => {
    const explained = read('docs/errors.md').split('## When each code is answered')[1] ?? '';
    const codes = [...explained.matchAll(/^\| `(\w+)` \|/gm)].map((match) => match[1]);
    expect(codes.sort()).toEqual(Object.keys(ERRORS).sort());
  });
});
