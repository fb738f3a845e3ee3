// Words for the player: the rules panel, the walkthrough, what a move did, why a game ended.
// Pure functions of a view (and DOM filling for the rules panel); no networking here.

import { KIND_NAMES, cardName, pileCards, pileName } from './render.mjs';

/** "m:ss", or "h:mm:ss" from an hour on. */
export function formatClock(ms) {
  const total = Math.max(Math.floor((ms || 0) / 1000), 0);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

const FOUND_ALL = (total) => `All ${total} cards are on the foundations.`;

/** Why a finished game ended, in words (null while it is on). */
export function outcomeText(game, status, view, score, total) {
  if (status === 'won') return `You won: ${FOUND_ALL(total)}`;
  if (status === 'resigned') return `Resigned with ${score} of ${total} cards on the foundations.`;
  if (status !== 'stuck') return null;
  let why;
  if (game === 'matrimony') {
    why = 'No tableau card fits a foundation, the stock is empty and no redeal is left.';
  } else if (game === 'colorado') {
    why = 'No card can go to a foundation and the stock is empty.';
  } else if (game === 'gloucestershire') {
    why = 'No card can move: no tableau or bouquet card fits anywhere.';
  } else {
    why = 'No card can move and the stock is empty.';
  }
  return `Stuck: ${why} ${score} of ${total} cards reached the foundations.`;
}

/** The walkthrough's line for its suggested move ({from, to}; to null for a deal). */
export function walkthroughText(game, view, move) {
  if (move.to === null) {
    return 'Your first game: no card can move yet, so click the stock (or press Deal) to turn up a card.';
  }
  const cards = move.from === 'stock' ? [view.stock?.top].filter(Boolean) : pileCards(view, move.from);
  const card = cards.length ? cards[cards.length - 1] : null;
  const name = card ? `the ${cardName(card)}` : 'the top card';
  return (
    `Your first game: try moving ${name} from ${place(move.from)} to ${place(move.to)} (both marked). ` +
    'Click it, then click where it goes, or drag it. Rules explains the piles.'
  );
}

function place(address) {
  const m = /^(foundation|tableau)\[(\d+)\]$/.exec(address);
  if (m) return `${m[1] === 'foundation' ? 'foundation' : 'tableau pile'} ${Number(m[2]) + 1}`;
  return `the ${address}`;
}

/** What a patch did, for screen readers: "Moved 7 of hearts from Tableau 3 to Foundation 2." */
export function describeMove(move, ops, after) {
  if (move === 'deal') {
    const dealt = ops.filter((op) => op.op === 'move').map((op) => `${cardName(op.card)} to ${pileName(op.to)}`);
    return dealt.length ? `Dealt ${dealt.join(', ')}.` : 'Dealt.';
  }
  if (move === 'redeal') return `Redealt; ${after.redeals_left} redeals left.`;
  if (move === 'resign') return 'Resigned.';
  const moves = ops.filter((op) => op.op === 'move');
  if (!moves.length) return `Played ${move}.`;
  const [first, ...rest] = moves;
  const refills = rest.map((op) => ` ${pileName(op.to)} refilled with ${cardName(op.card)}.`);
  return `Moved ${cardName(first.card)} from ${pileName(first.from)} to ${pileName(first.to)}.${refills.join('')}`;
}

const AUTO_RULES = {
  colorado: 'the tableau never builds, so any card that fits a foundation goes there.',
  matrimony: 'the tableau never builds, so any card that fits a foundation goes there.',
  balcony: 'a card goes home when its foundation is no longer than the shortest one (nothing can need it on the tableau any more).',
  empress_of_italy:
    'a card goes home when its foundation is no longer than the shortest one (nothing can need it on the tableau any more).',
  gloucestershire:
    'a card goes home once both copies of the next lower rank of the other colour are on the foundations.',
};

/** Fill the rules panel for `game` from its GET /v1/games entry. */
export function renderRules({ title, summary, piles, auto, info, game, gameTitle }) {
  title.textContent = `${gameTitle}: rules`;
  piles.replaceChildren();
  if (!info) {
    summary.replaceChildren(item('The rules could not be loaded from the server; try again in a moment.'));
    auto.replaceChildren();
    return;
  }
  // Short lines, not one paragraph: a sentence each.
  summary.replaceChildren(...sentences(info.summary).map(item));
  for (const [kind, hint] of Object.entries(info.piles || {})) {
    const dt = document.createElement('dt');
    dt.textContent = KIND_NAMES[kind] || kind;
    const dd = document.createElement('dd');
    dd.textContent = hint;
    piles.append(dt, dd);
  }
  auto.replaceChildren(
    item('Won when every card is on the foundations; stuck when nothing can move (undo still works in a casual game).'),
    item('Double-click a card to send it home.'),
    item(`Auto-move (in the menu): ${AUTO_RULES[game] || ''}`),
    item('Auto-finish plays the last cards home once nothing is left to deal.'),
  );
}

function item(text) {
  const li = document.createElement('li');
  li.textContent = text;
  return li;
}

/** A rules summary's sentences ("4 decks. The first card…" -> two). */
export function sentences(text) {
  return text.split(/(?<=\.)\s+(?=[A-Z0-9'"])/).filter(Boolean);
}
