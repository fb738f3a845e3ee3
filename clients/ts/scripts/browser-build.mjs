// The browser build: dist/browser/ is dist/*.js with the one dependency (@msgpack/msgpack)
// imported from a copy next to it, so a page loads the SDK without a bundler or an import map
// (a strict Content-Security-Policy forbids inline import maps).
// Run by `npm run build` after tsc.

import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const browser = join(dist, 'browser');
const require = createRequire(join(root, 'package.json'));
const msgpackEsm = join(dirname(require.resolve('@msgpack/msgpack/package.json')), 'dist.esm');

rmSync(browser, { recursive: true, force: true });
mkdirSync(browser, { recursive: true });
// The modules only (its .d.ts, source maps and build info are for editors and bundlers).
cpSync(msgpackEsm, join(browser, 'msgpack'), {
  recursive: true,
  filter: (source) => statSync(source).isDirectory() || source.endsWith('.mjs'),
});
let rewritten = 0;
for (const name of readdirSync(dist)) {
  if (!name.endsWith('.js')) continue;
  const text = readFileSync(join(dist, name), 'utf8');
  const out = text.replace(/from '@msgpack\/msgpack'/g, () => {
    rewritten += 1;
    return "from './msgpack/index.mjs'";
  });
  if (/from '[^./]/.test(out)) throw new Error(`${name} imports a bare module the browser cannot resolve`);
  writeFileSync(join(browser, name), out);
}
if (rewritten !== 1) throw new Error(`expected one import of @msgpack/msgpack, found ${rewritten}`);
