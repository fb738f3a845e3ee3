// The web client's view.mjs applies every playout of protocol/vectors.json exactly as the
// protocol says (DIFF.md §5): run with `node --test` by tests/web/test_view_ops.py.
// The deals come from the TypeScript SDK (clients/ts, built by scripts/install); the client
// itself deals nothing.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { dealView } from '../../clients/ts/dist/index.js';
import { OutOfSync, applyOps, cardLabel, parseMove, scoreOf } from '../../clients/web/static/view.mjs';

const vectors = JSON.parse(readFileSync(new URL('../../protocol/vectors.json', import.meta.url)));

test('every playout of the vectors replays to the same views', () => {
  const playouts = vectors.deals.playouts;
  assert.ok(playouts.length > 0);
  for (const playout of playouts) {
    const view = dealView(playout.game, playout.seed);
    playout.moves.forEach((move, i) => {
      const step = playout.after[i];
      applyOps(view, step.ops, move);
      const where = `${playout.game}/${playout.seed} move ${i} (${move})`;
      assert.deepEqual(view, step.view, where);
      assert.equal(scoreOf(view), step.score, where);
    });
  }
});

test('an op that does not fit the view is refused, not guessed', () => {
  const view = { foundations: [[]], tableau: [['7S']], stock: { count: 0 } };
  assert.throws(() => applyOps(view, [{ op: 'move', from: 'tableau[0]', to: 'foundation[0]', card: '8S' }]), OutOfSync);
  assert.throws(() => applyOps(view, [{ op: 'move', from: 'stock', to: 'tableau[0]', card: '8S' }]), OutOfSync);
  assert.throws(() => applyOps(view, [{ op: 'shuffle' }]), OutOfSync);
  assert.throws(() => applyOps(view, [{ op: 'set', pile: 'tableau[5]', cards: [] }]), OutOfSync);
});

test('move texts and card labels', () => {
  assert.deepEqual(parseMove('tableau[3]>foundation[0]'), { from: 'tableau[3]', to: 'foundation[0]' });
  assert.deepEqual(parseMove('stock > tableau[19]'), { from: 'stock', to: 'tableau[19]' });
  assert.equal(parseMove('deal'), null);
  assert.equal(parseMove('tableau[x]>waste'), null);
  assert.equal(cardLabel('10H'), '10♥');
  assert.equal(cardLabel('QS'), 'Q♠');
});
