// Canonical JSON and the state hash of protocol/STATE.md.

import type { Table } from './deals.js';
import { sha256Hex } from './sha256.js';

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
    return sorted;
  }
  return value;
}

/**
 * Canonical JSON (STATE.md §1): keys sorted, no whitespace, DEL and non-ASCII as \uXXXX (lowercase),
 * the same text as Python's json.dumps(doc, sort_keys=True, separators=(",", ":")). Integers only.
 */
export function canonicalJson(value: unknown): string {
  // Object.keys(...).sort() orders by UTF-16 code unit, which equals code point order for
  // the ASCII keys of state documents. Python escapes every code unit outside printable
  // ASCII; JSON.stringify has already escaped the control characters below 0x20 the same way.
  return JSON.stringify(sortKeys(value)).replace(
    /[\u007f-\uffff]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** SHA-256 hex of the canonical JSON of {game, seed, status, table} (the full table, not a view). */
export function stateHash(game: string, seed: string, status: string, table: Table): string {
  return sha256Hex(canonicalJson({ game, seed, status, table }));
}

/** The genesis link of a game's hash chain (AUDIT.md §2): dealHash is the state hash of the deal. */
export function genesisLink(gameId: string, game: string, dealHash: string): string {
  return sha256Hex(['genesis', gameId, game, dealHash].join('\n'));
}

/** The link of the move that made `version` (AUDIT.md §2), from the link before it. */
export function nextLink(previous: string, version: number, move: string, serverTime: number, stateHash: string): string {
  return sha256Hex([previous, String(version), move, String(serverTime), stateHash].join('\n'));
}
