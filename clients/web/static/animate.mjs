// Card motion by FLIP (first, last, invert, play): measure where cards were before a redraw,
// redraw, then play each moved card from its old place to its new one with a transform.
// Only transforms are animated (no layout work per frame); nothing moves when the player
// asks for reduced motion.

const MOVE_MS = 200;
const DEAL_MS = 260;
const DEAL_STAGGER_MS = 12;
const DEAL_STAGGER_MAX_MS = 500;

const reducedMotion = window.matchMedia('(prefers-reduced-motion: reduce)');

export function motionAllowed() {
  return !reducedMotion.matches;
}

function pileNode(root, address) {
  return root.querySelector(`[data-pile="${CSS.escape(address)}"]`);
}

/**
 * Before a redraw that applies `ops` (DIFF.md ops): the old rectangles of the cards those
 * ops touch, by card text (a list per text: the decks have duplicates), and the piles' rects.
 */
export function measure(root, ops) {
  if (!motionAllowed() || !Array.isArray(ops) || ops.length === 0) return null;
  const piles = new Set();
  for (const op of ops) {
    if (op.op === 'move') piles.add(op.from).add(op.to);
    else if (op.op === 'set') piles.add(op.pile);
    else if (op.op === 'reveal') piles.add(op.pile);
  }
  const cards = new Map();
  const pileRects = new Map();
  for (const address of piles) {
    const node = pileNode(root, address);
    if (!node) continue;
    pileRects.set(address, node.getBoundingClientRect());
    for (const card of node.querySelectorAll(':scope > .card[data-card]')) {
      const list = cards.get(card.dataset.card) || [];
      list.push(card.getBoundingClientRect());
      cards.set(card.dataset.card, list);
    }
  }
  return { piles, cards, pileRects, ops };
}

/** Card animations started since the page loaded (read by the tests via window.__client). */
export const motion = { played: 0 };

function play(node, dx, dy, duration, delay = 0) {
  if (Math.abs(dx) < 0.5 && Math.abs(dy) < 0.5) return;
  motion.played += 1;
  node.animate(
    [
      { transform: `translate(${dx}px, ${dy}px)`, zIndex: 400 },
      { transform: 'translate(0, 0)', zIndex: 400 },
    ],
    { duration, delay, easing: 'cubic-bezier(.2,.7,.3,1)', fill: 'backwards' },
  );
}

/** After the redraw: play every touched card from where it was (or from its source pile). */
export function animateFrom(root, before) {
  if (!before) return;
  const from = new Map(); // card text -> source pile of a move op (for cards new to the DOM)
  for (const op of before.ops) if (op.op === 'move') from.set(op.card, op.from);
  const used = new Map();
  for (const address of before.piles) {
    const node = pileNode(root, address);
    if (!node) continue;
    for (const card of node.querySelectorAll(':scope > .card[data-card]')) {
      const text = card.dataset.card;
      const rect = card.getBoundingClientRect();
      const olds = before.cards.get(text) || [];
      const index = used.get(text) || 0;
      let old = null;
      if (from.has(text)) {
        // The moved card: from its old place on the source pile.
        const source = before.pileRects.get(from.get(text));
        old = olds.length ? nearest(olds, before.pileRects.get(from.get(text))) : source;
      } else if (index < olds.length) {
        old = olds[index];
        used.set(text, index + 1);
      }
      if (old) play(card, old.left - rect.left, old.top - rect.top, MOVE_MS);
    }
  }
}

/** The rect of `rects` closest to `target` (the copy of a duplicated card that was moved). */
function nearest(rects, target) {
  if (!target) return rects[rects.length - 1];
  let best = rects[0];
  let bestDistance = Infinity;
  for (const rect of rects) {
    const distance = Math.hypot(rect.left - target.left, rect.top - target.top);
    if (distance < bestDistance) {
      best = rect;
      bestDistance = distance;
    }
  }
  return best;
}

/** A new table: every card flies in from the stock (or the top left), one after another. */
export function animateDeal(root) {
  if (!motionAllowed()) return;
  const origin = (root.querySelector('[data-pile="stock"]') || root).getBoundingClientRect();
  const cards = root.querySelectorAll('.pile > .card[data-card]:not(.under)');
  const stagger = Math.min(DEAL_STAGGER_MS, DEAL_STAGGER_MAX_MS / Math.max(cards.length, 1));
  cards.forEach((card, i) => {
    const rect = card.getBoundingClientRect();
    play(card, origin.left - rect.left, origin.top - rect.top, DEAL_MS, i * stagger);
  });
}
