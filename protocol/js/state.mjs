// Reference JavaScript implementation of protocol/STATE.md: canonical JSON and the state hash.
// ES module for Node 20+, no dependencies.

import { createHash } from 'node:crypto';

function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted = {};
    for (const key of Object.keys(value).sort()) sorted[key] = sortKeys(value[key]);
    return sorted;
  }
  return value;
}

/**
 * Canonical JSON (STATE.md §1): keys sorted, no whitespace, DEL and non-ASCII as \uXXXX (lowercase),
 * the same text as Python's json.dumps(doc, sort_keys=True, separators=(",", ":")).
 * Integers only (no floats).
 */
export function canonicalJson(value) {
  // Object.keys(...).sort() orders by UTF-16 code unit, which equals code point order for
  // the ASCII keys of state documents.
  // Python escapes every code unit outside printable ASCII (0x20..0x7e); JSON.stringify has
  // already escaped the control characters below 0x20 the same way.
  return JSON.stringify(sortKeys(value)).replace(
    /[\u007f-\uffff]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** SHA-256 hex of the canonical JSON of {game, seed, status, table} (the full table, not a view). */
export function stateHash(game, seed, status, table) {
  const document = { game, seed, status, table };
  return createHash('sha256').update(canonicalJson(document), 'ascii').digest('hex');
}
