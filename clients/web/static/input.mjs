// Input on the table: clicks and taps, drag and drop, the keyboard. It turns what the player
// does into intents (moves) for main.mjs to send; it knows no rules: the legal moves it
// lights up and checks against are the server's.

import { cardName, pileDescription, pileName, pileRows } from './render.mjs';
import { cardsAt, parseAddress } from './view.mjs';

/** Two clicks (or taps) on one card within this long: send it to a foundation. */
const DOUBLE_CLICK_MS = 400;
const DRAG_THRESHOLD_PX = 6;

/**
 * What input needs of the page (main.mjs): its state, and the acts it may ask for.
 * {state, $, phone: MediaQueryList, timing: {startedAt, moveAt}, currentLegalMoves(), owner(),
 *  playing(), sendMove(move), say(text, kind), announce(text), render(), noteTiming(kind)}
 */
let page = null;
let state = null;
let timing = null;
const $ = (testid) => page.$(testid);
const currentLegalMoves = () => page.currentLegalMoves();
const owner = () => page.owner();
const playing = () => page.playing();
const sendMove = (move) => page.sendMove(move);
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

function onPileClick(address, onStockTopCard) {
  if (!canInteract()) return;
  const now = performance.now();
  const again = lastClick.address === address && now - lastClick.at < DOUBLE_CLICK_MS;
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
    const cards = cardsAt(state.view, address);
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
  if (!legal.includes(move) && legalFrom(address).length > 0) {
    state.selected = address; // another card the player may move: choose it instead
    render();
    noteTiming('select');
    return;
  }
  timing.moveAt = timing.startedAt;
  sendMove(move); // legal, or the server says why not
}

// -- the keyboard: the table is one tab stop; arrows move between piles -----------------------

const ARROWS = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };

function onTableKey(event) {
  const pile = event.target.closest && event.target.closest('[data-pile]');
  if (!pile || !state.view) return;
  const address = pile.dataset.pile;
  if (event.key in ARROWS) {
    event.preventDefault();
    const rows = pileRows(state.game, page.phone.matches);
    const row = rows.findIndex((r) => r.includes(address));
    if (row < 0) return;
    const [dr, dc] = ARROWS[event.key];
    let next = address;
    if (dc) {
      const col = rows[row].indexOf(address) + dc;
      if (col >= 0 && col < rows[row].length) next = rows[row][col];
    } else {
      const target = rows[row + dr];
      if (target) {
        // The pile in that row nearest on screen (rows differ in length).
        const x = pile.getBoundingClientRect().left;
        next = target.reduce((best, candidate) => {
          const node = document.querySelector(`[data-pile="${CSS.escape(candidate)}"]`);
          const distance = node ? Math.abs(node.getBoundingClientRect().left - x) : Infinity;
          return distance < best.distance ? { address: candidate, distance } : best;
        }, { address: target[0], distance: Infinity }).address;
      }
    }
    focusPile(next);
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
  const card = event.target.closest('.card.top');
  const pile = card && card.closest('[data-pile]');
  if (!pile) return;
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

function pileAt(x, y) {
  const node = document.elementFromPoint(x, y);
  const pile = node && node.closest('[data-pile]');
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
  const pile = event.target.closest('[data-pile]');
  if (!pile) {
    if (state.selected) {
      state.selected = null;
      render();
    }
    return;
  }
  state.focus = pile.dataset.pile;
  onPileClick(pile.dataset.pile, Boolean(event.target.closest('.stock-top')));
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
  table.addEventListener('focusin', (event) => {
    const pile = event.target.closest && event.target.closest('[data-pile]');
    if (pile) state.focus = pile.dataset.pile;
  });
}
