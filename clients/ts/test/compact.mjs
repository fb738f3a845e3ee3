// Test helpers: the compact form of the protocol v2 (WEBSOCKET.md) from the long form of
// DIFF.md, as pure functions, so the vectors and the v1 recordings drive the SDK's v2 code.

import { compactPile } from '../dist/index.js';

/** The compact op of a long-form op (null for redeals_left, which a v2 patch carries as `r`). */
export function compactOp(op) {
  switch (op.op) {
    case 'move':
      return ['m', compactPile(op.from), compactPile(op.to), op.card];
    case 'reveal':
      return ['r', op.card];
    case 'set':
      return ['s', compactPile(op.pile), [...op.cards]];
    case 'redeals_left':
      return null;
    default:
      throw new Error(`unknown op ${op.op}`);
  }
}

/** The compact move text: "tableau[3]>foundation[0]" → "t3>f0"; deal, redeal, resign, undo unchanged. */
export function compactMove(move) {
  const parts = move.split('>');
  return parts.length === 2 ? `${compactPile(parts[0].trim())}>${compactPile(parts[1].trim())}` : move;
}

/**
 * The compact patch of one move: `ops` long-form, `redealsBefore`/`redealsAfter` Matrimony's
 * redeals_left around it (undefined elsewhere), `status` set only when it changed.
 */
export function compactPatch({ gameId, version, move, ops, status, redealsBefore, redealsAfter }) {
  const patch = { g: gameId, v: version, m: compactMove(move), o: ops.map(compactOp).filter((op) => op !== null) };
  if (status !== undefined) patch.s = status;
  if (redealsAfter !== undefined && redealsAfter !== redealsBefore) patch.r = redealsAfter;
  return patch;
}
