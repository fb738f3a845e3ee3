// Validates an AsyncAPI document with the AsyncAPI parser (@asyncapi/parser), as CI does
// for the server's /asyncapi.json (tests/test_asyncapi.py).
// Usage: node scripts/validate-asyncapi.mjs FILE   (exit 0 when valid; the errors otherwise)
import { readFile } from 'node:fs/promises';
import { Parser } from '@asyncapi/parser';

const path = process.argv[2];
if (!path) {
  console.error('usage: validate-asyncapi.mjs FILE');
  process.exit(2);
}
const parser = new Parser();
const { document, diagnostics } = await parser.parse(await readFile(path, 'utf8'));
const errors = diagnostics.filter((d) => d.severity === 0);
for (const d of diagnostics) {
  console.log(`${['error', 'warning', 'info', 'hint'][d.severity]} ${d.code} at ${d.path.join('.')}: ${d.message}`);
}
if (document === undefined || errors.length > 0) {
  console.log(`invalid: ${errors.length} errors`);
  process.exit(1);
}
console.log(`valid: AsyncAPI ${document.version()}, ${document.allMessages().length} messages, ` +
  `${document.operations().length} operations`);
