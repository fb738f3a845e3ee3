// Auto-move and auto-finish: which of the server's legal moves the client may play by itself.
// The client still knows no rules: it only picks among the legal moves the server sent, by
// looking at the view. Each choice is sent as an ordinary move, one at a time.
//
// Auto-move (a setting, off by default) plays a card to a foundation only when no card could
// ever need it as a place to go on the tableau, so it never loses a won game:
// - Colorado, Matrimony: the tableau never builds, so nothing needs a tableau card: any move
//   to a foundation is safe (from a tableau pile, or Colorado's stock).
// - Balcony, Empress of Italy (alternating-colour foundations from the base rank, one card of
//   every position per foundation): the card that becomes the p-th above the base could only
//   host cards of position p-1; those are all home once every foundation holds at least p
//   cards. So: safe when the target foundation is no longer than the shortest foundation.
// - Gloucestershire (foundations in suit, twice round): a card of rank r could host the two
//   copies of rank r-1 of the other colour; safe once both other-colour foundations hold the
//   second copy, i.e. at least ((p - 1) mod 13) + 14 cards, p being the target's length.
//
// Auto-finish (a setting, on by default): once no card is left in a stock, waste, reserve or
// bouquet and no redeal is left (nothing hidden, nothing left to deal), the client plays cards
// home one at a time while a move to a foundation is legal.

import { cardInfo } from './view.mjs';

const RED = new Set(['D', 'H']);

function foundationIndex(address) {
  const m = /^foundation\[(\d+)\]$/.exec(address);
  return m ? Number(m[1]) : null;
}

function homeMoves(legal) {
  return legal.filter((move) => {
    const [from, to] = move.split('>');
    return to !== undefined && !from.startsWith('foundation') && foundationIndex(to) !== null;
  });
}

function safeBaseRank(view, target) {
  const lengths = view.foundations.map((pile) => pile.length);
  return lengths[target] <= Math.min(...lengths);
}

function safeGloucestershire(view, target, card) {
  const info = cardInfo(card);
  if (!info) return false;
  const p = view.foundations[target].length;
  const needed = ((p - 1 + 13) % 13) + 14;
  const others = view.foundations.filter((pile) => {
    const first = pile.length ? cardInfo(pile[0]) : null;
    return first && RED.has(first.suit) !== RED.has(info.suit);
  });
  return others.length === 2 && others.every((pile) => pile.length >= needed);
}

function topCard(view, address) {
  if (address === 'stock') return view.stock && view.stock.top;
  const m = /^(tableau)\[(\d+)\]$/.exec(address);
  const pile = m ? view.tableau[Number(m[2])] : view[address];
  return Array.isArray(pile) && pile.length ? pile[pile.length - 1] : null;
}

/** A safe auto-move among the legal moves, or null. */
export function safeMove(game, view, legal) {
  for (const move of homeMoves(legal)) {
    const [from, to] = move.split('>');
    const target = foundationIndex(to);
    if (game === 'colorado' || game === 'matrimony') return move;
    if (game === 'balcony' || game === 'empress_of_italy') {
      if (safeBaseRank(view, target)) return move;
    } else if (game === 'gloucestershire') {
      const card = topCard(view, from);
      if (card && safeGloucestershire(view, target, card)) return move;
    }
  }
  return null;
}

/** Whether nothing is left to deal or draw from: every card is on the tableau or home. */
export function onlyTableauLeft(view) {
  if (view.stock && view.stock.count > 0) return false;
  if (view.redeals_left > 0) return false; // Matrimony: its redeals still move the piles
  return ['waste', 'reserve', 'bouquet'].every((name) => !Array.isArray(view[name]) || view[name].length === 0);
}

/** The auto-finish move, or null. */
export function finishMove(view, legal) {
  if (!onlyTableauLeft(view)) return null;
  return homeMoves(legal)[0] || null;
}
