// Input on the table: clicks and taps, drag and drop, the keyboard. It turns what the player
// does into intents (moves) for main.mjs to send; it knows no rules: the legal moves it
// lights up and checks against are the server's.

import { cardName, pileDescription, pileName } from './render.mjs';
import { playSound } from './settings.mjs';
import { cardsAt, parseAddress } from './view.mjs';

/** Two clicks (or taps) on one card within this long: send it to a foundation. */
const DOUBLE_CLICK_MS = 400;
const DRAG_THRESHOLD_PX = 6;

/**
 * What input needs of the page (main.mjs): its state, and the acts it may ask for.
 * {state, $, phone: MediaQueryList, timing: {startedAt, moveAt}, currentLegalMoves(), owner(),
 *  playing(), shownView() (the table as drawn, a move ahead of the server while one is in
 *  flight), sendMove(move), say(text, kind), announce(text), render(), noteTiming(kind)}
 */
let page = null;
let state = null;
let timing = null;
const $ = (testid) => page.$(testid);
const currentLegalMoves = () => page.currentLegalMoves();
const owner = () => page.owner();
const playing = () => page.playing();
const sendMove = (move) => {
  if (move.includes('>')) playSound(); // the player's card put down
  page.sendMove(move);
};
const say = (text, kind) => page.say(text, kind);
const announce = (text) => page.announce(text);
const render = () => page.render();
const noteTiming = (kind) => page.noteTiming(kind);

/** A card is being dragged (auto-play waits for the drop). */
export function dragging() {
  return drag !== null;
}

export function legalFrom(address) {
  return (currentLegalMoves() || []).filter((text) => text.startsWith(`${address}>`));
}

export function canInteract() {
  return owner() && playing() && state.view !== null;
}

/** A move of the card at `address` to a foundation that takes it (the server's legal moves). */
export function homeMove(address) {
  return legalFrom(address).find((move) => move.split('>')[1].startsWith('foundation')) || null;
}

let lastClick = { address: null, at: 0 };

function onStockClick() {
  const legal = currentLegalMoves() || [];
  if (legal.includes('deal')) sendMove('deal');
  else if (legal.includes('redeal')) sendMove('redeal');
  else say('Nothing to deal.', 'info');
}

function onPileClick(address, onStockTopCard, clickCount = 1) {
  if (!canInteract()) return;
  const now = performance.now();
  // The browser's own count (`detail`) says a double click when this page was too busy to
  // see the two clicks within DOUBLE_CLICK_MS; the clock catches double taps.
  const again =
    lastClick.address === address && (clickCount >= 2 || now - lastClick.at < DOUBLE_CLICK_MS);
  lastClick = again ? { address: null, at: 0 } : { address, at: now };
  if (again) {
    const home = homeMove(address);
    if (home) {
      timing.moveAt = timing.startedAt;
      sendMove(home); // a double click or double tap: straight home
      return;
    }
  }
  if (address === 'stock' && !onStockTopCard && state.selected === null) {
    onStockClick();
    return;
  }
  if (state.selected === null) {
    // The table as the player sees it: a card moved a moment ago may be picked up already.
    const cards = cardsAt(page.shownView(), address);
    if (cards.length === 0) return;
    state.selected = address;
    const targets = legalFrom(address).map((move) => pileName(move.split('>')[1]));
    if (targets.length === 0) say('No legal move for that card.', 'info');
    announce(
      `${cardName(cards[cards.length - 1])} picked up from ${pileName(address)}; ` +
        (targets.length ? `it can go to ${targets.join(', ')}.` : 'it cannot move now.'),
    );
    render();
    noteTiming('select');
    return;
  }
  if (state.selected === address) {
    state.selected = null;
    render();
    return;
  }
  const move = `${state.selected}>${address}`;
  const legal = currentLegalMoves() || [];
  // Not a legal move from there, but one from here: the player chose another card. (While a
  // move is in flight the legal moves are the last table's: the move made is the intent.)
  if (state.pending === null && !legal.includes(move) && legalFrom(address).length > 0) {
    state.selected = address; // another card the player may move: choose it instead
    render();
    noteTiming('select');
    return;
  }
  timing.moveAt = timing.startedAt;
  lastClick = { address: null, at: 0 }; // a move made: the next click on that pile starts anew
  sendMove(move); // legal, or the server says why not (one made during a move waits its turn)
}

// -- the keyboard: the table is one tab stop; arrows move between piles -----------------------

const MOVES_FOCUS = new Set(['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'Home', 'End']);

/** The piles as drawn, row by row (top to bottom), each row left to right. */
function visualRows() {
  return [...$('table').querySelectorAll('.row')]
    .map((row) => [...row.querySelectorAll(':scope > [data-pile]')])
    .filter((row) => row.length)
    .map((row) => row.map((node) => ({ address: node.dataset.pile, rect: node.getBoundingClientRect() })))
    .map((row) => row.sort((a, b) => a.rect.left - b.rect.left));
}

const centre = (rect) => rect.left + rect.width / 2;

/** Up and down keep to the column they started from (down then up comes back). */
let column = null; // {x, at}: the x of a run of up/down moves, and the pile it reached

/**
 * The pile an arrow key goes to from `address`, by the table's layout on screen: left and
 * right along the row (stopping at its ends), Home and End to its ends, up and down to the
 * row above or below, to the pile nearest the column (the leftmost of two as near).
 */
export function neighbour(address, key) {
  const rows = visualRows();
  const r = rows.findIndex((row) => row.some((pile) => pile.address === address));
  if (r < 0) return address;
  const row = rows[r];
  const i = row.findIndex((pile) => pile.address === address);
  if (key === 'ArrowLeft' || key === 'ArrowRight' || key === 'Home' || key === 'End') {
    column = null;
    const to = { ArrowLeft: i - 1, ArrowRight: i + 1, Home: 0, End: row.length - 1 }[key];
    return row[Math.min(Math.max(to, 0), row.length - 1)].address;
  }
  const next = rows[r + (key === 'ArrowDown' ? 1 : -1)];
  if (!next) return address;
  const x = column && column.at === address ? column.x : centre(row[i].rect);
  let best = next[0];
  for (const pile of next) {
    if (Math.abs(centre(pile.rect) - x) < Math.abs(centre(best.rect) - x) - 0.5) best = pile;
  }
  column = { x, at: best.address };
  return best.address;
}

function onTableKey(event) {
  const pile = event.target.closest && event.target.closest('[data-pile]');
  if (!pile || !state.view) return;
  const address = pile.dataset.pile;
  if (MOVES_FOCUS.has(event.key) && !event.altKey && !event.ctrlKey && !event.metaKey) {
    event.preventDefault();
    focusPile(neighbour(address, event.key));
  } else if (event.key === 'Enter' || event.key === ' ') {
    event.preventDefault();
    if (!canInteract()) {
      announce(pileDescription(address, state.view));
      return;
    }
    if (address === 'stock' && state.selected === null && !state.view.stock?.top) {
      onStockClick();
      return;
    }
    if (state.selected === null && homeMove(address) && event.shiftKey) {
      sendMove(homeMove(address)); // Shift+Enter: straight home, like a double click
      return;
    }
    onPileClick(address, address === 'stock');
  }
}

function focusPile(address) {
  state.focus = address;
  const table = $('table');
  for (const node of table.querySelectorAll('[data-pile]')) {
    node.tabIndex = node.dataset.pile === address ? 0 : -1;
  }
  table.querySelector(`[data-pile="${CSS.escape(address)}"]`)?.focus();
}

let drag = null;
let suppressClick = false;

function onPointerDown(event) {
  if (event.button !== 0 || !canInteract()) return;
  // The top card where it rests (a card in flight over it is not what the player took).
  const pile = pileUnder(event);
  const card = pile && pile.querySelector(':scope > .card.top');
  if (!card || !within(restingRect(pile, card), event.clientX, event.clientY)) return;
  drag = { pointerId: event.pointerId, from: pile.dataset.pile, card, x: event.clientX, y: event.clientY, ghost: null, over: null };
}

function startDrag(event) {
  const rect = drag.card.getBoundingClientRect();
  const ghost = drag.card.cloneNode(true);
  ghost.classList.add('ghost');
  ghost.removeAttribute('data-testid');
  ghost.style.width = `${rect.width}px`;
  ghost.style.height = `${rect.height}px`;
  drag.dx = event.clientX - rect.left;
  drag.dy = event.clientY - rect.top;
  document.body.append(ghost);
  drag.ghost = ghost;
  state.selected = drag.from;
  render();
  document.body.classList.add('dragging');
}

function onPointerMove(event) {
  if (!drag || event.pointerId !== drag.pointerId) return;
  if (!drag.ghost) {
    if (Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < DRAG_THRESHOLD_PX) return;
    startDrag(event);
  }
  event.preventDefault();
  drag.ghost.style.transform = `translate(${event.clientX - drag.dx}px, ${event.clientY - drag.dy}px)`;
  const over = pileAt(event.clientX, event.clientY);
  if (over !== drag.over) {
    document.querySelectorAll('.pile.hover').forEach((node) => node.classList.remove('hover'));
    if (over) document.querySelector(`[data-pile="${over}"]`)?.classList.add('hover');
    drag.over = over;
  }
}

/**
 * The pile under a point of the screen, by the piles' own boxes: piles stay where they are
 * drawn while cards fly over them (a move's animation), so a click during one lands on the
 * pile the player aimed at, not on the card passing by. Outside every box (a card's edge
 * sticking out): the pile of the element there.
 */
export function pileAtPoint(x, y) {
  const table = $('table');
  for (const node of table.querySelectorAll('[data-pile]')) {
    if (within(node.getBoundingClientRect(), x, y)) return node;
  }
  const node = document.elementFromPoint(x, y);
  const pile = node && node.closest('[data-pile]');
  return pile && table.contains(pile) ? pile : null;
}

/** A card's box where the layout puts it, whatever animation moves it now. */
function restingRect(pile, card) {
  const box = pile.getBoundingClientRect();
  const left = box.left + card.offsetLeft;
  const top = box.top + card.offsetTop;
  return { left, top, right: left + card.offsetWidth, bottom: top + card.offsetHeight };
}

const within = (rect, x, y) => x >= rect.left && x < rect.right && y >= rect.top && y < rect.bottom;

/** The pile a pointer event is on (a click from the keyboard has no point: its target's). */
function pileUnder(event) {
  if (event.detail === 0 && event.clientX === 0 && event.clientY === 0) {
    return event.target.closest && event.target.closest('[data-pile]');
  }
  return pileAtPoint(event.clientX, event.clientY);
}

function pileAt(x, y) {
  const pile = pileAtPoint(x, y);
  return pile ? pile.dataset.pile : null;
}

function endDrag(event, drop) {
  if (!drag || event.pointerId !== drag.pointerId) return;
  const { ghost, from } = drag;
  drag = null;
  if (!ghost) return; // a click, handled by the click listener
  ghost.remove();
  document.body.classList.remove('dragging');
  document.querySelectorAll('.pile.hover').forEach((node) => node.classList.remove('hover'));
  suppressClick = true;
  setTimeout(() => {
    suppressClick = false;
  }, 0);
  const to = drop ? pileAt(event.clientX, event.clientY) : null;
  if (to && to !== from && parseAddress(to)) {
    sendMove(`${from}>${to}`); // legal or not: the server decides, and says why not
  } else {
    state.selected = null;
    render();
  }
}

function onTableClick(event) {
  timing.startedAt = event.timeStamp;
  if (suppressClick) {
    suppressClick = false;
    return;
  }
  const pile = pileUnder(event);
  if (!pile) {
    if (state.selected) {
      state.selected = null;
      render();
    }
    return;
  }
  state.focus = pile.dataset.pile;
  // A face-up stock card covers the whole stock: a click on the stock is on it.
  onPileClick(pile.dataset.pile, Boolean(pile.querySelector(':scope > .stock-top')), event.detail);
}

// -- single-key shortcuts: one keymap, documented in the rules dialog -------------------------

/**
 * Key -> what it does: the buttons it presses (the first shown and enabled), or `submit`, a
 * form it sends. A key does nothing while the player types, a dialog is open or a modifier
 * (other than Shift) is held; a button not on the page (Restart in a ranked daily) is skipped.
 */
export const KEYMAP = {
  u: { buttons: ['undo'], what: 'Undo the last move (also Ctrl+Z)' },
  h: { buttons: ['hint'], what: 'Hint: a move worth playing' },
  d: { buttons: ['deal', 'redeal'], what: 'Deal from the stock (or redeal)' },
  r: { buttons: ['restart'], what: 'Restart this deal' },
  n: { submit: 'new-game-form', what: 'New game (the game and seed chosen in the menu)' },
  '?': { buttons: ['rules-open-game', 'rules-open'], what: 'Rules and these keys' },
};

/** The table's own keys, for the same list. */
const TABLE_KEYS = [
  ['Tab', 'To the table (first: “Skip to table”), then on to the buttons'],
  ['← → ↑ ↓', 'Between piles: along a row, to the row above or below'],
  ['Home, End', 'To the first or last pile of the row'],
  ['Enter, Space', 'Pick up the top card, put it down on the pile chosen'],
  ['Shift+Enter', 'Send the card home to a foundation'],
  ['Esc', 'Put the card down'],
];

function shown(node) {
  return Boolean(node) && !node.hidden && !node.disabled && node.getClientRects().length > 0;
}

function onShortcut(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
  const typing = event.target.closest && event.target.closest('input, select, textarea, [contenteditable]');
  if (typing || document.querySelector('dialog[open]')) return;
  const entry = KEYMAP[event.key.length === 1 ? event.key.toLowerCase() : ''];
  if (!entry || (state.page && state.page !== 'game')) return;
  if (entry.submit) {
    event.preventDefault();
    $(entry.submit).requestSubmit();
    return;
  }
  const button = entry.buttons.map((testid) => $(testid)).find(shown);
  if (!button) return;
  event.preventDefault();
  button.click();
}

/** The keys, listed in the rules dialog; the buttons say theirs (aria-keyshortcuts). */
function documentKeys() {
  const list = $('rules-keys');
  const rows = [
    ...Object.entries(KEYMAP).map(([key, entry]) => [key.toUpperCase(), entry.what]),
    ...TABLE_KEYS,
  ];
  list.replaceChildren(
    ...rows.flatMap(([key, what]) => {
      const dt = document.createElement('dt');
      const kbd = document.createElement('kbd');
      kbd.textContent = key;
      dt.append(kbd);
      const dd = document.createElement('dd');
      dd.textContent = what;
      return [dt, dd];
    }),
  );
  for (const [key, entry] of Object.entries(KEYMAP)) {
    for (const testid of entry.buttons || []) {
      const button = $(testid);
      if (!button) continue;
      const shortcut = key === '?' ? 'Shift+?' : key.toUpperCase();
      const others = (button.getAttribute('aria-keyshortcuts') || '').split(' ').filter(Boolean);
      button.setAttribute('aria-keyshortcuts', [...new Set([...others, shortcut])].join(' '));
    }
  }
}

/** "Skip to table": to the table's tab stop (the pile last on), else to the main area. */
function onSkip(event) {
  event.preventDefault(); // no hash change: the page's routes live in the hash
  const pile = $('table').querySelector('[data-pile][tabindex="0"]') || $('table').querySelector('[data-pile]');
  if (pile) {
    focusPile(pile.dataset.pile);
    return;
  }
  const main = document.querySelector('main');
  main.tabIndex = -1;
  main.focus();
}

/** Listen to the table (and the window, for drags that leave it). */
export function wireInput(context) {
  page = context;
  state = context.state;
  timing = context.timing;
  const table = $('table');
  table.addEventListener('click', onTableClick);
  table.addEventListener('pointerdown', onPointerDown);
  window.addEventListener('pointermove', onPointerMove, { passive: false });
  window.addEventListener('pointerup', (event) => endDrag(event, true));
  window.addEventListener('pointercancel', (event) => endDrag(event, false));
  table.addEventListener('keydown', onTableKey);
  // A card put down with Esc: the next tap on it is a new first tap, not a double tap.
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') lastClick = { address: null, at: 0 };
  });
  document.addEventListener('keydown', onShortcut);
  $('skip-link').addEventListener('click', onSkip);
  documentKeys();
  table.addEventListener('focusin', (event) => {
    const pile = event.target.closest && event.target.closest('[data-pile]');
    if (pile) state.focus = pile.dataset.pile;
  });
}
