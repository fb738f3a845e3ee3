// Drawing a view: each game's layout, piles and cards, in plain DOM + CSS.
// Every pile element has data-pile="<address>" and every card data-card="<card text>".

import { cardInfo, cardLabel } from './view.mjs';

export const GAME_TITLES = {
  empress_of_italy: 'Empress of Italy',
  colorado: 'Colorado',
  gloucestershire: 'Gloucestershire',
  matrimony: 'Matrimony',
  balcony: 'Balcony',
};

const range = (from, to) => Array.from({ length: to - from }, (_, i) => from + i);
const F = (i) => `foundation[${i}]`;
const T = (i) => `tableau[${i}]`;

// Empty-foundation captions: a reading aid only (the server decides what is legal).
const MATRIMONY_STARTS = ['Q♦ ↑', 'J♦ ↓', 'J♥ ↓', 'J♥ ↓', '10♠ ↓', '10♠ ↓', '10♣ ↓', '10♣ ↓'];

/**
 * Each game's table: rows of slots. A slot is {pile, kind, span?, caption?} or
 * {info: name} or {gap: n}. kind: "stack" (one on another), "down" (a column fanned
 * downwards), "row" (fanned to the right), "stock".
 */
const LAYOUTS = {
  balcony: {
    cols: 7,
    depth: 4.6,
    rows: [
      [
        { pile: 'stock', kind: 'stock' },
        { pile: 'waste', kind: 'stack' },
        { info: 'base_rank' },
        ...range(0, 4).map((i) => ({ pile: F(i), kind: 'stack', empty: 'base' })),
      ],
      [{ pile: 'reserve', kind: 'row', span: 7, caption: 'Reserve' }],
      range(0, 7).map((i) => ({ pile: T(i), kind: 'down' })),
    ],
  },
  empress_of_italy: {
    cols: 11,
    depth: 4.2,
    rows: [
      [
        { pile: 'stock', kind: 'stock' },
        { pile: 'waste', kind: 'stack' },
        { pile: 'reserve', kind: 'row', span: 8, caption: 'Reserve' },
        { info: 'base_rank' },
      ],
      range(0, 8).map((i) => ({ pile: F(i), kind: 'stack', empty: 'base' })),
      range(8, 16).map((i) => ({ pile: F(i), kind: 'stack', empty: 'base' })),
      range(0, 11).map((i) => ({ pile: T(i), kind: 'down' })),
    ],
  },
  colorado: {
    cols: 10,
    depth: 2.6,
    rows: [
      [
        { pile: 'stock', kind: 'stock' },
        { gap: 1 },
        ...range(0, 4).map((i) => ({ pile: F(i), kind: 'stack', empty: 'A ↑' })),
        ...range(4, 8).map((i) => ({ pile: F(i), kind: 'stack', empty: 'K ↓' })),
      ],
      range(0, 10).map((i) => ({ pile: T(i), kind: 'down' })),
      range(10, 20).map((i) => ({ pile: T(i), kind: 'down' })),
    ],
  },
  gloucestershire: {
    cols: 8,
    depth: 5,
    rows: [
      [{ gap: 2 }, ...range(0, 4).map((i) => ({ pile: F(i), kind: 'stack', empty: 'A' })), { gap: 2 }],
      [{ pile: 'bouquet', kind: 'row', span: 8, caption: 'Bouquet' }],
      range(0, 8).map((i) => ({ pile: T(i), kind: 'down' })),
    ],
  },
  matrimony: {
    cols: 8,
    depth: 2.8,
    rows: [
      [{ pile: 'stock', kind: 'stock' }, { info: 'redeals_left', span: 2 }],
      range(0, 8).map((i) => ({ pile: F(i), kind: 'stack', empty: MATRIMONY_STARTS[i] })),
      range(0, 8).map((i) => ({ pile: T(i), kind: 'down' })),
      range(8, 16).map((i) => ({ pile: T(i), kind: 'down' })),
    ],
  },
};

export function layoutOf(game) {
  return LAYOUTS[game] || null;
}

function el(tag, className, attrs = {}) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(key, String(value));
  }
  return node;
}

/** A face-up card: rank and suit in the corners, a big suit in the middle. */
export function cardElement(card) {
  const info = cardInfo(card);
  const node = el('div', `card ${info && info.red ? 'red' : 'black'}`, {
    'data-card': card,
    'data-testid': 'card',
    title: cardLabel(card),
  });
  const index = el('span', 'idx');
  const rank = el('span', 'rank');
  rank.textContent = info ? info.rank : '?';
  const suit = el('span', 'suit');
  suit.textContent = info ? info.symbol : '';
  index.append(rank, suit);
  const pip = el('span', 'pip', { 'aria-hidden': 'true' });
  pip.textContent = info ? info.symbol : '';
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

function pileElement(slot, view, marks) {
  const address = slot.pile;
  const testid = `pile-${address.replace(/\[(\d+)\]/, '-$1')}`;
  const node = el('div', `pile ${slot.kind}`, { 'data-pile': address, 'data-testid': testid });
  if (slot.span) node.style.gridColumn = `span ${slot.span}`;
  if (address === marks.selected) node.classList.add('selected');
  if (marks.targets.has(address)) node.classList.add('target');
  if (marks.sources.has(address)) node.classList.add('source');

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
    const badge = el('span', 'badge', { 'data-testid': 'stock-count' });
    badge.textContent = String(stock.count);
    node.append(badge);
    node.title = stock.top ? `Stock: ${stock.count} cards, ${cardLabel(stock.top)} face up` : `Stock: ${stock.count} cards`;
    return node;
  }

  const cards = Array.isArray(view[address]) ? view[address] : pileCards(view, address);
  const n = cards.length;
  node.dataset.count = String(n);
  node.style.setProperty('--k', String(Math.max(n - 1, 0)));
  node.style.setProperty('--d', String(Math.max(n - 1, 1)));
  if (n === 0) {
    node.classList.add('empty');
    const caption = emptyCaption(slot, view);
    if (caption) {
      const label = el('span', 'empty-label');
      label.textContent = caption;
      node.append(label);
    }
  }
  // A stack draws only its top few cards (the rest are under them) but keeps them all in the DOM.
  cards.forEach((card, i) => {
    const node_ = cardElement(card);
    node_.style.setProperty('--i', String(i));
    if (slot.kind === 'stack' && i < n - 2) node_.classList.add('under');
    if (i === n - 1) node_.classList.add('top');
    node.append(node_);
  });
  if (slot.kind === 'stack' || slot.kind === 'row') {
    const badge = el('span', 'badge', { 'data-testid': `${testid}-count` });
    badge.textContent = String(n);
    if (slot.kind === 'stack' && n <= 1 && !address.startsWith('waste')) badge.hidden = true;
    node.append(badge);
  }
  if (slot.caption) {
    const caption = el('span', 'caption');
    caption.textContent = slot.caption;
    node.append(caption);
  }
  return node;
}

function pileCards(view, address) {
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
  if (slot.info === 'base_rank') {
    label.textContent = 'Base';
    value.textContent = view.base_rank ?? '–';
  } else if (slot.info === 'redeals_left') {
    label.textContent = 'Redeals left';
    value.textContent = String(view.redeals_left ?? '–');
  }
  node.append(label, value);
  return node;
}

/**
 * Draw `view` of `game` into `root` (replacing what was there).
 * marks: {selected: address|null, targets: Set, sources: Set}.
 */
export function renderTable(root, game, view, marks) {
  const layout = LAYOUTS[game];
  root.replaceChildren();
  if (!layout || !view) return;
  root.dataset.game = game;
  root.style.setProperty('--cols', String(layout.cols));
  root.style.setProperty('--depth', String(layout.depth));
  for (const row of layout.rows) {
    const rowNode = el('div', 'row');
    const columns = row.reduce((sum, slot) => sum + (slot.span || slot.gap || 1), 0);
    rowNode.style.setProperty('--row-cols', String(columns));
    for (const slot of row) {
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
}
