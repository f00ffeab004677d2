import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { repoRoot } from '../../shared/repo-root.js';

/** Debian's Chromium (`apt-get install chromium`; README); CHROMIUM_PATH points elsewhere. */
const EXECUTABLE = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(EXECUTABLE)) throw new Error(`Chromium is not at ${EXECUTABLE}: install it (apt-get install chromium) or set CHROMIUM_PATH`);
  return chromium.launch({
    executablePath: EXECUTABLE,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Screenshots of a test's steps, kept under test-artifacts/ (git-ignored), numbered in order. */
export function screenshots(name: string): (page: Page, step: string) => Promise<void> {
  const dir = path.join(repoRoot, 'test-artifacts', 'screenshots', name);
  mkdirSync(dir, { recursive: true });
  let n = 0;
  return async (page, step) => {
    n += 1;
    await page.screenshot({ path: path.join(dir, `${String(n).padStart(2, '0')}-${step}.png`), fullPage: true });
  };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's violations at every impact level, on the whole page or within the elements `include` selects. */
export async function axeViolations(page: Page, include?: string): Promise<{ id: string; impact: string; nodes: string[] }[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async (selector) => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(selector === null ? { exclude: [] } : { include: [[selector]] }, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  }, include ?? null);
}
