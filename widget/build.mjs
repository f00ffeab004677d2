// Bundles the browser code: the Connect component into one self-contained script
// (dist/widget/v1/connect.js), and the panels' page (dist/panel/app.js and app.css).
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new globalThis.URL('..', import.meta.url));
await build({
  absWorkingDir: root,
  entryPoints: ['widget/src/index.ts'],
  outfile: 'dist/widget/v1/connect.js',
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  sourcemap: 'linked',
  logLevel: 'warning',
});

await build({
  absWorkingDir: root,
  entryPoints: [
    { in: 'panel/src/index.tsx', out: 'app' },
    { in: 'panel/src/app.css', out: 'app' },
  ],
  outdir: 'dist/panel',
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2020'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  logLevel: 'warning',
});
