import { existsSync, mkdirSync } from 'node:fs';
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
