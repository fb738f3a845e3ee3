// The client view of a game (protocol/VIEW.md) and how a patch's ops change it
// (protocol/DIFF.md §5). No rules here: the server decides, the client copies.

/** Thrown when an op does not fit the local view: the client must ask for the full view. */
export class OutOfSync extends Error {
  constructor(message) {
    super(message);
    this.name = 'OutOfSync';
  }
}

const ADDRESS_RE = /^(?:(foundation|tableau)\[(0|[1-9][0-9]*)\]|(reserve|stock|waste|bouquet))$/;

/** Parse a pile address: {kind, index} (index null for the single piles), or null. */
export function parseAddress(address) {
  const m = typeof address === 'string' ? ADDRESS_RE.exec(address) : null;
  if (!m) return null;
  return m[3] ? { kind: m[3], index: null } : { kind: m[1], index: Number(m[2]) };
}

/** Parse a card move text "from>to" (spaces allowed around the addresses), or null. */
export function parseMove(move) {
  if (typeof move !== 'string') return null;
  const parts = move.split('>');
  if (parts.length !== 2) return null;
  const from = parts[0].trim();
  const to = parts[1].trim();
  return parseAddress(from) && parseAddress(to) ? { from, to } : null;
}

/** The card array at a pile address of a view (not the stock, which is {count, top?}). */
export function pileAt(view, address) {
  const a = parseAddress(address);
  if (!a) throw new OutOfSync(`not a pile address: ${JSON.stringify(address)}`);
  const pile = a.index === null ? view[a.kind] : view[a.kind === 'foundation' ? 'foundations' : 'tableau']?.[a.index];
  if (!Array.isArray(pile)) throw new OutOfSync(`no pile ${address} in this view`);
  return pile;
}

/** The cards a pile address shows (the stock: its face-up top card, if any). */
export function cardsAt(view, address) {
  if (address === 'stock') {
    const top = view.stock && view.stock.top;
    return top ? [top] : [];
  }
  try {
    return pileAt(view, address);
  } catch {
    return [];
  }
}

/** Cards on the foundations. */
export function scoreOf(view) {
  return (view.foundations || []).reduce((sum, pile) => sum + pile.length, 0);
}

export function clone(value) {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

/** Only an `undo` puts a card back onto the stock (DIFF.md §3): face down, but Colorado's top. */
function putOnStock(view, card) {
  if (!view.stock) throw new OutOfSync('this game has no stock');
  view.stock.count += 1;
  if ('top' in view.stock) view.stock.top = card;
}

/**
 * Apply one move's ops, in order, to `view` in place (DIFF.md §5) and return it.
 * Throws OutOfSync when an op does not fit; the caller keeps its old copy and resyncs.
 */
export function applyOps(view, ops, move) {
  if (!Array.isArray(ops)) throw new OutOfSync('ops is not a list');
  for (const op of ops) {
    switch (op && op.op) {
      case 'move': {
        if (op.from === 'stock') {
          const stock = view.stock;
          if (!stock || !(stock.count > 0)) throw new OutOfSync('a card left an empty stock');
          if ('top' in stock && stock.top !== op.card) {
            throw new OutOfSync(`stock top is ${stock.top}, the op says ${op.card}`);
          }
          stock.count -= 1;
          if ('top' in stock) stock.top = null; // known again from the "reveal" that follows
        } else {
          const from = pileAt(view, op.from);
          const top = from[from.length - 1];
          if (top !== op.card) throw new OutOfSync(`top of ${op.from} is ${top}, the op says ${op.card}`);
          from.pop();
        }
        if (op.to === 'stock') putOnStock(view, op.card);
        else pileAt(view, op.to).push(op.card);
        break;
      }
      case 'reveal':
        if (op.pile !== 'stock' || !view.stock) throw new OutOfSync(`reveal of ${op.pile}`);
        view.stock.top = op.card;
        break;
      case 'set': {
        const pile = pileAt(view, op.pile);
        if (!Array.isArray(op.cards)) throw new OutOfSync('set without cards');
        pile.splice(0, pile.length, ...op.cards);
        break;
      }
      case 'redeals_left':
        if (!('redeals_left' in view) || !Number.isInteger(op.count)) throw new OutOfSync('redeals_left without redeals');
        view.redeals_left = op.count;
        break;
      default:
        throw new OutOfSync(`unknown op ${JSON.stringify(op && op.op)}`);
    }
  }
  if (move === 'redeal') {
    if (!(view.redeals_left > 0)) throw new OutOfSync('a redeal with no redeal left');
    view.redeals_left -= 1;
  }
  return view;
}

const SUITS = { C: '♣', D: '♦', H: '♥', S: '♠' };

/** {rank, suit, symbol, red} of a card text like "10H", or null. */
export function cardInfo(card) {
  const m = typeof card === 'string' ? /^(A|[2-9]|10|J|Q|K)([CDHS])$/.exec(card) : null;
  if (!m) return null;
  return { rank: m[1], suit: m[2], symbol: SUITS[m[2]], red: m[2] === 'D' || m[2] === 'H' };
}

/** "7♠" for "7S" (the card text itself when it is not a card). */
export function cardLabel(card) {
  const info = cardInfo(card);
  return info ? info.rank + info.symbol : String(card);
}

// -- protocol v2's compact patches (protocol/WEBSOCKET.md) ---------------------------------

const PILE_KINDS = { f: 'foundation', t: 'tableau', r: 'reserve', s: 'stock', w: 'waste', b: 'bouquet' };
const PILE_CODE = /^(?:([ft])(0|[1-9][0-9]?)|([rswb]))$/;

/** The pile address ("tableau[3]") of a compact pile code ("t3"). */
export function pileAddress(code) {
  const match = typeof code === 'string' ? PILE_CODE.exec(code) : null;
  if (!match) throw new OutOfSync(`not a pile code: ${JSON.stringify(code)}`);
  return match[3] ? PILE_KINDS[match[3]] : `${PILE_KINDS[match[1]]}[${match[2]}]`;
}

/** A patch's compact move ("t3>f0", "deal") in the normal form ("tableau[3]>foundation[0]"). */
export function moveText(move) {
  const [from, to] = move.split('>');
  return to === undefined ? move : `${pileAddress(from)}>${pileAddress(to)}`;
}

/** The ops of DIFF.md §3 from compact ops (["m", from, to, card], ["r", card], ["s", pile, cards]). */
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
 * A compact patch (a `patch` frame, or an `accepted`'s `patch`) in the long form this client
 * draws from: {from, to, move, ops, status (undefined: unchanged), redeals_left (undefined:
 * unchanged)}. The score is not sent: it is the cards on the foundations.
 */
export function longPatch(patch) {
  return {
    from: patch.v - 1,
    to: patch.v,
    move: moveText(patch.m),
    ops: expandOps(patch.o),
    status: patch.s,
    redeals_left: patch.r,
  };
}

