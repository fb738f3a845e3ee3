// Reference JavaScript implementation of protocol/VIEW.md (the client view of a table) and
// protocol/DIFF.md §5 (applying a move's ops). ES module for Node 20+, no dependencies.

import { GAMES, dealTable } from './deals.mjs';

function clone(value) {
  return JSON.parse(JSON.stringify(value));
}

/** The client view of a full table (VIEW.md §2): the stock becomes {count} (Colorado: {count, top}). */
export function viewOfTable(game, table) {
  const view = clone(table);
  if (Array.isArray(table.stock)) {
    view.stock = { count: table.stock.length };
    if (GAMES[game].stock_face_up) {
      view.stock.top = table.stock.length ? table.stock[table.stock.length - 1] : null;
    }
  }
  return view;
}

/** The view of `game` freshly dealt from `seed`. */
export function dealView(game, seed) {
  return viewOfTable(game, dealTable(game, seed));
}

/** Number of cards on the foundations (the score) of a table or a view. */
export function scoreOf(state) {
  return state.foundations.reduce((sum, pile) => sum + pile.length, 0);
}

export class OutOfSync extends Error {
  constructor(message) {
    super(message);
    this.name = 'OutOfSync';
  }
}

const ADDRESS_RE = /^(?:(foundation|tableau)\[(0|[1-9][0-9]?)\]|(reserve|stock|waste|bouquet))$/;

/** The pile array at a pile address ("foundation[i]", "tableau[i]", "reserve", ...). */
export function pileAt(state, address) {
  const m = typeof address === 'string' ? ADDRESS_RE.exec(address) : null;
  if (!m) throw new OutOfSync(`not a pile address: ${JSON.stringify(address)}`);
  const pile = m[3] ? state[m[3]] : state[m[1] === 'foundation' ? 'foundations' : 'tableau']?.[Number(m[2])];
  if (pile === undefined) throw new OutOfSync(`no pile ${address} here`);
  return pile;
}

function takeFromStock(state, card) {
  const stock = state.stock;
  if (Array.isArray(stock)) {
    // A full table: the stock's top is its last card.
    const top = stock.pop();
    if (top !== card) throw new OutOfSync(`stock top is ${top}, op says ${card}`);
    return;
  }
  if (!stock || !(stock.count > 0)) throw new OutOfSync('the stock is empty');
  if ('top' in stock && stock.top !== card) throw new OutOfSync(`stock top is ${stock.top}, op says ${card}`);
  stock.count -= 1;
  if ('top' in stock) stock.top = null; // unknown until the "reveal" op that follows
}

/** An "undo" puts a card back onto the stock (face down, but Colorado's top). */
function putOnStock(state, card) {
  const stock = state.stock;
  if (Array.isArray(stock)) {
    stock.push(card);
    return;
  }
  if (!stock) throw new OutOfSync('this game has no stock');
  stock.count += 1;
  if ('top' in stock) stock.top = card;
}

/**
 * Apply the ops of one move, in order, to a view (or to a full table), in place; returns it.
 * `move` is the move's text: after a "redeal", redeals_left goes down by one (DIFF.md §5).
 * Throws OutOfSync when an op does not fit the state (the client should then ask for the view).
 */
export function applyOps(state, ops, move) {
  for (const op of ops) {
    switch (op.op) {
      case 'move': {
        if (op.from === 'stock') {
          takeFromStock(state, op.card);
        } else {
          const from = pileAt(state, op.from);
          const top = from.pop();
          if (top !== op.card) throw new OutOfSync(`top of ${op.from} is ${top}, op says ${op.card}`);
        }
        if (op.to === 'stock') putOnStock(state, op.card);
        else pileAt(state, op.to).push(op.card);
        break;
      }
      case 'reveal': {
        if (op.pile !== 'stock') throw new OutOfSync(`reveal of ${op.pile}`);
        if (Array.isArray(state.stock)) {
          const top = state.stock.length ? state.stock[state.stock.length - 1] : null;
          if (top !== op.card) throw new OutOfSync(`stock top is ${top}, reveal says ${op.card}`);
        } else {
          state.stock.top = op.card;
        }
        break;
      }
      case 'set': {
        const pile = pileAt(state, op.pile);
        pile.splice(0, pile.length, ...op.cards);
        break;
      }
      case 'redeals_left': {
        if (!('redeals_left' in state)) throw new OutOfSync('this game has no redeals');
        state.redeals_left = op.count;
        break;
      }
      default:
        throw new OutOfSync(`unknown op ${JSON.stringify(op.op)}`);
    }
  }
  if (move === 'redeal') {
    if (!(state.redeals_left > 0)) throw new OutOfSync('no redeal left');
    state.redeals_left -= 1;
  }
  return state;
}

const PILE_KINDS = { f: 'foundation', t: 'tableau', r: 'reserve', s: 'stock', w: 'waste', b: 'bouquet' };
const PILE_CODE = /^(?:([ft])(0|[1-9][0-9]?)|([rswb]))$/;

/** The pile address ("tableau[3]") of a compact pile code ("t3") of protocol v2 (WEBSOCKET.md). */
export function pileAddress(code) {
  const match = typeof code === 'string' ? PILE_CODE.exec(code) : null;
  if (!match) throw new OutOfSync(`not a pile code: ${JSON.stringify(code)}`);
  return match[3] ? PILE_KINDS[match[3]] : `${PILE_KINDS[match[1]]}[${match[2]}]`;
}

/** The ops of DIFF.md §3 from a patch's compact ops (["m", from, to, card], ["r", card], ["s", pile, cards]). */
export function expandOps(ops) {
  return ops.map((op) => {
    switch (Array.isArray(op) ? op[0] : null) {
      case 'm':
        return { op: 'move', from: pileAddress(op[1]), to: pileAddress(op[2]), card: op[3] };
      case 'r':
        return { op: 'reveal', pile: 'stock', card: op[1] };
      case 's':
        return { op: 'set', pile: pileAddress(op[1]), cards: op[2] };
      default:
        throw new OutOfSync(`unknown op ${JSON.stringify(op)}`);
    }
  });
}

/**
 * Apply a compact patch of protocol v2 (a `patch` message, or the `patch` of an `accepted`:
 * `m`, `o`, and `r` when Matrimony's redeals_left changes) to a view, in place; returns it.
 * The version check (v must be the view's version + 1) is the caller's.
 */
export function applyPatch(state, patch) {
  applyOps(state, expandOps(patch.o), patch.m);
  if ('r' in patch) state.redeals_left = patch.r; // the authority (a redeal, or its undo)
  return state;
}
