// Drawing a view: each game's layout, piles and cards, in plain DOM + CSS.
// Every pile element has data-pile="<address>" and every card data-card="<card text>".
// Rendering takes a view and marks and emits nothing: input is main.mjs's business.

import { fitTable, keepFitted } from './fit.mjs';
import { cardInfo } from './view.mjs';

const RANK_NAMES = { A: 'ace', J: 'jack', Q: 'queen', K: 'king' };
const SUIT_NAMES = { C: 'clubs', D: 'diamonds', H: 'hearts', S: 'spades' };

/** "7 of hearts", "queen of spades" for "7H", "QS": what a screen reader says. */
export function cardName(card) {
  const info = cardInfo(card);
  return info ? `${RANK_NAMES[info.rank] || info.rank} of ${SUIT_NAMES[info.suit]}` : String(card);
}

export const GAME_TITLES = {
  empress_of_italy: 'Empress of Italy',
  colorado: 'Colorado',
  gloucestershire: 'Gloucestershire',
  matrimony: 'Matrimony',
  balcony: 'Balcony',
};

/** Pile kinds as players call them (labels, accessible names, the rules panel). */
export const KIND_NAMES = {
  foundation: 'Foundations',
  tableau: 'Tableau',
  reserve: 'Reserve',
  stock: 'Stock',
  waste: 'Waste',
  bouquet: 'Bouquet',
};

const range = (from, to) => Array.from({ length: to - from }, (_, i) => from + i);
const F = (i) => `foundation[${i}]`;
const T = (i) => `tableau[${i}]`;
/** Cards per row of Gloucestershire's fanned bouquet. */
const BOUQUET_ROW = 13;

// Empty-foundation captions: a reading aid only (the server decides what is legal).
const MATRIMONY_STARTS = ['Q♦ ↑', 'J♦ ↓', 'J♥ ↓', 'J♥ ↓', '10♠ ↓', '10♠ ↓', '10♣ ↓', '10♣ ↓'];

const stacks = (from, to, empty) => range(from, to).map((i) => ({ pile: F(i), kind: 'stack', empty }));
const columns = (from, to) => range(from, to).map((i) => ({ pile: T(i), kind: 'down' }));

/**
 * Each game's table: rows of slots. A row is {label?: [pile kinds], slots}. A slot is
 * {pile, kind, span?, empty?} or {info: name} or {gap: n}. kind: "stack" (one on another),
 * "down" (a column fanned downwards), "row" (fanned to the right), "fan" (fanned in rows of
 * BOUQUET_ROW), "stock". `tall`: the table's usual height in card heights (wide screens size
 * the cards to fit it). `phone` is the layout for narrow screens (default: the same).
 */
const LAYOUTS = {
  balcony: {
    cols: 7,
    depth: 3.8,
    tall: 5.6,
    rows: [
      {
        label: ['stock', 'waste', 'foundation'],
        slots: [{ pile: 'stock', kind: 'stock' }, { pile: 'waste', kind: 'stack' }, { info: 'base_rank' }, ...stacks(0, 4, 'base')],
      },
      { label: ['reserve'], slots: [{ pile: 'reserve', kind: 'row', span: 7 }] },
      { label: ['tableau'], slots: columns(0, 7) },
    ],
  },
  empress_of_italy: {
    cols: 11,
    depth: 3.6,
    tall: 7.4,
    rows: [
      {
        label: ['stock', 'waste', 'reserve'],
        slots: [
          { pile: 'stock', kind: 'stock' },
          { pile: 'waste', kind: 'stack' },
          { pile: 'reserve', kind: 'row', span: 8 },
          { info: 'base_rank' },
        ],
      },
      { label: ['foundation'], slots: stacks(0, 8, 'base') },
      { slots: stacks(8, 16, 'base') },
      { label: ['tableau'], slots: columns(0, 11) },
    ],
    phone: {
      cols: 8,
      depth: 2.1,
      rows: [
        { label: ['stock', 'waste'], slots: [{ pile: 'stock', kind: 'stock' }, { pile: 'waste', kind: 'stack' }, { info: 'base_rank' }] },
        { label: ['reserve'], slots: [{ pile: 'reserve', kind: 'fan', span: 8 }] },
        { label: ['foundation'], slots: stacks(0, 8, 'base') },
        { slots: stacks(8, 16, 'base') },
        { label: ['tableau'], slots: columns(0, 6) },
        { slots: columns(6, 11) },
      ],
    },
  },
  colorado: {
    cols: 10,
    depth: 2.6,
    tall: 6.2,
    rows: [
      {
        label: ['stock', 'foundation'],
        slots: [{ pile: 'stock', kind: 'stock' }, { gap: 1 }, ...stacks(0, 4, 'A ↑'), ...stacks(4, 8, 'K ↓')],
      },
      { label: ['tableau'], slots: columns(0, 10) },
      { slots: columns(10, 20) },
    ],
    // Seven across: 20 columns in rows of 7, 7 and 6, the cards a finger's width.
    phone: {
      cols: 7,
      depth: 2.2,
      rows: [
        { label: ['stock', 'foundation'], slots: [{ pile: 'stock', kind: 'stock' }, { gap: 1 }, ...stacks(0, 4, 'A ↑')] },
        { slots: [{ gap: 3 }, ...stacks(4, 8, 'K ↓')] },
        { label: ['tableau'], slots: columns(0, 7) },
        { slots: columns(7, 14) },
        { slots: columns(14, 20) },
      ],
    },
  },
  gloucestershire: {
    cols: 8,
    depth: 4.2,
    tall: 8.4,
    rows: [
      { label: ['foundation'], slots: [{ gap: 2 }, ...stacks(0, 4, 'A'), { gap: 2 }] },
      { label: ['bouquet'], slots: [{ pile: 'bouquet', kind: 'fan', span: 8 }] },
      { label: ['tableau'], slots: columns(0, 8) },
    ],
  },
  matrimony: {
    cols: 8,
    depth: 2.8,
    tall: 7.6,
    rows: [
      { label: ['stock'], slots: [{ pile: 'stock', kind: 'stock' }, { info: 'redeals_left', span: 2 }] },
      { label: ['foundation'], slots: range(0, 8).map((i) => ({ pile: F(i), kind: 'stack', empty: MATRIMONY_STARTS[i] })) },
      { label: ['tableau'], slots: columns(0, 8) },
      { slots: columns(8, 16) },
    ],
  },
};

/** The layout of `game`, its phone variant when `compact`. */
export function layoutOf(game, compact = false) {
  const layout = LAYOUTS[game];
  if (!layout) return null;
  return compact && layout.phone ? layout.phone : layout;
}

/** Pile addresses in reading order (rows top to bottom, left to right): the keyboard's order. */
export function pileRows(game, compact = false) {
  const layout = layoutOf(game, compact);
  if (!layout) return [];
  return layout.rows.map((row) => row.slots.filter((slot) => slot.pile).map((slot) => slot.pile)).filter((row) => row.length);
}

function el(tag, className, attrs = {}) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(key, String(value));
  }
  return node;
}

/** A face-up card: rank and suit side by side in the corner (readable when buried), a big suit. */
export function cardElement(card) {
  const info = cardInfo(card);
  const node = el('div', `card ${info && info.red ? 'red' : 'black'}`, {
    'data-card': card,
    'data-testid': 'card',
    role: 'img',
    'aria-label': cardName(card),
  });
  // The glyphs are CSS generated content (attr()): the card's name is its aria-label, and a
  // pile's accessible name is not expected to repeat every glyph drawn on it.
  const index = el('span', 'idx', { 'aria-hidden': 'true' });
  const rank = el('span', 'rank', { 'data-glyph': info ? info.rank : '?' });
  const suit = el('span', 'suit', { 'data-glyph': info ? info.symbol : '' });
  index.append(rank, suit);
  const pip = el('span', 'pip', { 'aria-hidden': 'true', 'data-glyph': info ? info.symbol : '' });
  node.append(index, pip);
  return node;
}

function cardBack() {
  return el('div', 'card back', { 'aria-hidden': 'true' });
}

function emptyCaption(slot, view) {
  if (slot.empty === 'base') return view.base_rank || '';
  return slot.empty || '';
}

/** "Tableau 3" for tableau[2], "Foundation 1" for foundation[0], "Stock" for stock. */
export function pileName(address) {
  const m = /^(foundation|tableau)\[(\d+)\]$/.exec(address);
  if (m) return `${m[1] === 'foundation' ? 'Foundation' : 'Tableau'} ${Number(m[2]) + 1}`;
  return KIND_NAMES[address] || address;
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The accessible name of a pile: "Tableau 3, 5 cards, top: 7 of hearts". */
export function pileDescription(address, view) {
  if (address === 'stock') {
    const stock = view.stock || { count: 0 };
    const top = stock.top ? `, face up: ${cardName(stock.top)}` : '';
    return `Stock, ${plural(stock.count, 'card')}${top}`;
  }
  const cards = pileCards(view, address);
  const top = cards.length ? `, top: ${cardName(cards[cards.length - 1])}` : ', empty';
  return `${pileName(address)}, ${plural(cards.length, 'card')}${top}`;
}

/** Set a pile node's marks: chosen source, legal targets and sources, hint, tab stop. */
function markPile(node, marks) {
  const address = node.dataset.pile;
  const selected = address === marks.selected;
  const hint = marks.hint;
  node.classList.toggle('selected', selected);
  node.classList.toggle('target', marks.targets.has(address));
  node.classList.toggle('source', marks.sources.has(address));
  node.classList.toggle('hint-from', Boolean(hint && hint.from === address));
  node.classList.toggle('hint-to', Boolean(hint && hint.to === address));
  node.setAttribute('aria-pressed', selected ? 'true' : 'false');
  node.tabIndex = address === marks.focus ? 0 : -1;
}

/** Only the marks changed (a card picked up, new legal moves): no pile is redrawn. */
export function updateMarks(root, marks) {
  for (const node of root.querySelectorAll('[data-pile]')) markPile(node, marks);
}

/**
 * After a patch: redraw only the piles at `addresses` (and the info boxes), then the marks
 * everywhere. Returns false when the table is not drawn with this layout (draw it all).
 */
export function redrawPiles(root, game, view, marks, addresses, { compact = false, fit = null } = {}) {
  const layout = layoutOf(game, compact);
  if (!layout || root.dataset.game !== game || root.dataset.layoutKey !== layoutKey(game, compact)) return false;
  const slots = new Map();
  for (const row of layout.rows) for (const slot of row.slots) if (slot.pile) slots.set(slot.pile, slot);
  for (const address of addresses) {
    const slot = slots.get(address);
    const old = root.querySelector(`[data-pile="${CSS.escape(address)}"]`);
    if (!slot || !old) return false;
    old.replaceWith(pileElement(slot, view, marks));
  }
  for (const row of layout.rows) {
    for (const slot of row.slots) {
      if (!slot.info) continue;
      const value = root.querySelector(`[data-testid="${slot.info.replace('_', '-')}"]`);
      if (value) value.textContent = infoValue(slot, view);
    }
  }
  updateMarks(root, marks);
  if (fit) keepFitted(root, fit);
  return true;
}

function layoutKey(game, compact) {
  return compact && LAYOUTS[game].phone ? 'phone' : 'wide';
}

function pileElement(slot, view, marks) {
  const address = slot.pile;
  const testid = `pile-${address.replace(/\[(\d+)\]/, '-$1')}`;
  const node = el('div', `pile ${slot.kind}`, {
    'data-pile': address,
    'data-testid': testid,
    role: 'button',
  });
  if (slot.span) node.style.gridColumn = `span ${slot.span}`;
  markPile(node, marks);
  node.setAttribute('aria-label', pileDescription(address, view));

  if (slot.kind === 'stock') {
    const stock = view.stock || { count: 0 };
    node.dataset.count = String(stock.count);
    if (stock.count > 0) {
      node.append(cardBack());
    } else {
      node.classList.add('empty');
    }
    if (stock.top) {
      const top = cardElement(stock.top);
      top.classList.add('top', 'stock-top');
      node.append(top);
    }
    const badge = el('span', 'badge', { 'data-testid': 'stock-count', 'aria-hidden': 'true' });
    badge.textContent = String(stock.count);
    node.append(badge);
    return node;
  }

  const cards = pileCards(view, address);
  const n = cards.length;
  node.dataset.count = String(n);
  node.style.setProperty('--k', String(Math.max(n - 1, 0)));
  node.style.setProperty('--d', String(Math.max(n - 1, 1)));
  if (slot.kind === 'fan') {
    const perRow = Math.min(BOUQUET_ROW, Math.max(n, 1));
    node.style.setProperty('--per-row', String(perRow));
    node.style.setProperty('--fan-rows', String(Math.max(Math.ceil(n / BOUQUET_ROW), 1)));
  }
  if (n === 0) {
    node.classList.add('empty');
    const caption = emptyCaption(slot, view);
    if (caption) {
      node.append(el('span', 'empty-label', { 'aria-hidden': 'true', 'data-glyph': caption }));
    }
  }
  // A stack draws only its top few cards (the rest are under them) but keeps them all in the DOM.
  cards.forEach((card, i) => {
    const cardNode = cardElement(card);
    cardNode.style.setProperty('--i', String(i));
    if (slot.kind === 'fan') {
      cardNode.style.setProperty('--col', String(i % BOUQUET_ROW));
      cardNode.style.setProperty('--line', String(Math.floor(i / BOUQUET_ROW)));
    }
    if (slot.kind === 'stack' && i < n - 2) cardNode.classList.add('under');
    if (i === n - 1) cardNode.classList.add('top');
    node.append(cardNode);
  });
  if (slot.kind === 'fan' && n > 0) {
    const mark = el('span', 'playable', { 'aria-hidden': 'true', 'data-testid': `${testid}-playable`, 'data-glyph': 'plays' });
    mark.style.setProperty('--col', String((n - 1) % BOUQUET_ROW));
    mark.style.setProperty('--line', String(Math.floor((n - 1) / BOUQUET_ROW)));
    node.append(mark);
  }
  if (slot.kind === 'stack' || slot.kind === 'row' || slot.kind === 'fan') {
    const badge = el('span', 'badge', { 'data-testid': `${testid}-count`, 'aria-hidden': 'true' });
    badge.textContent = String(n);
    if (slot.kind === 'stack' && n <= 1 && !address.startsWith('waste')) badge.hidden = true;
    node.append(badge);
  }
  return node;
}

/** The cards of a pile address (not the stock). */
export function pileCards(view, address) {
  if (Array.isArray(view[address])) return view[address];
  const m = /^(foundation|tableau)\[(\d+)\]$/.exec(address);
  if (!m) return [];
  const piles = view[m[1] === 'foundation' ? 'foundations' : 'tableau'] || [];
  return piles[Number(m[2])] || [];
}

function infoElement(slot, view) {
  const node = el('div', 'info');
  if (slot.span) node.style.gridColumn = `span ${slot.span}`;
  const label = el('span', 'info-label');
  const value = el('span', 'info-value', { 'data-testid': slot.info.replace('_', '-') });
  label.textContent = slot.info === 'base_rank' ? 'Base rank' : 'Redeals left';
  value.textContent = infoValue(slot, view);
  node.append(label, value);
  return node;
}

function infoValue(slot, view) {
  return String((slot.info === 'base_rank' ? view.base_rank : view.redeals_left) ?? '–');
}

function rowLabel(kinds, hints) {
  const node = el('div', 'row-label');
  for (const kind of kinds) {
    const part = el('span', 'label-part', { 'data-testid': `label-${kind}`, 'data-kind': kind });
    const name = el('b', 'row-name');
    name.textContent = KIND_NAMES[kind] || kind;
    const text = el('span', 'row-hint');
    part.append(name, text);
    node.append(part);
  }
  if (hints) updateHints(node, hints);
  return node;
}

/** Fill in the pile labels' one-line rules (they may arrive after the table is drawn). */
export function updateHints(root, hints) {
  for (const part of root.querySelectorAll('.label-part')) {
    const hint = hints && hints[part.dataset.kind];
    part.querySelector('.row-hint').textContent = hint ? `: ${hint}` : '';
  }
}

/**
 * Draw `view` of `game` into `root` (replacing what was there).
 * marks: {selected, targets: Set, sources: Set, focus: address with tabindex 0, hint?}.
 * options: {compact: phone layout, hints: pile kind -> one-line rule (GET /v1/games),
 * fit: null, or the card size setting ("auto", "large") to size the cards to the viewport}.
 */
export function renderTable(root, game, view, marks, { compact = false, hints = null, fit = null } = {}) {
  const layout = layoutOf(game, compact);
  root.replaceChildren();
  if (!layout || !view) return;
  root.dataset.game = game;
  root.dataset.layout = root.dataset.layoutKey = layoutKey(game, compact);
  root.style.setProperty('--cols', String(layout.cols));
  root.style.setProperty('--depth', String(layout.depth));
  root.style.setProperty('--tall', String(layout.tall || 6));
  for (const row of layout.rows) {
    if (row.label) root.append(rowLabel(row.label, hints));
    // A row of columns keeps the room of its deepest fan: the table does not jump as they grow.
    const rowNode = el('div', row.slots.some((slot) => slot.kind === 'down') ? 'row columns' : 'row');
    const count = row.slots.reduce((sum, slot) => sum + (slot.span || slot.gap || 1), 0);
    rowNode.style.setProperty('--row-cols', String(count));
    for (const slot of row.slots) {
      if (slot.gap) {
        const gap = el('div', 'gap');
        gap.style.gridColumn = `span ${slot.gap}`;
        rowNode.append(gap);
      } else if (slot.info) {
        rowNode.append(infoElement(slot, view));
      } else {
        rowNode.append(pileElement(slot, view, marks));
      }
    }
    root.append(rowNode);
  }
  if (fit) fitTable(root, fit);
}

