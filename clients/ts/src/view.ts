// The client view of a table (protocol/VIEW.md) and how a move's ops change it
// (protocol/DIFF.md §5), in both the long form of DIFF.md §3 and the compact form of the
// WebSocket protocol v2 (protocol/WEBSOCKET.md). No rules here: the server decides.

import { type GameName, type Table, dealTable, gameLayout } from './deals.js';
import type { CompactOp, Op } from './schema.js';

/** The stock as a client sees it: a count, plus the face-up top card in Colorado. */
export interface StockView {
  count: number;
  top?: string | null;
}

/** The client view of a table (VIEW.md): never a face-down card. */
export interface View {
  foundations: string[][];
  tableau: string[][];
  reserve?: string[];
  stock?: StockView;
  waste?: string[];
  bouquet?: string[];
  base_rank?: string;
  redeals_left?: number;
}

/** An op of DIFF.md §3 (long form, as in protocol/vectors.json), and the compact op of the
 * protocol v2 (move, reveal of Colorado's stock top, set): generated from the server's
 * schemas (schema.ts). */
export type { CompactOp, Op };

/** Thrown when an op does not fit the local view: the client must ask for the full view. */
export class OutOfSync extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutOfSync';
  }
}

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The client view of a full table (VIEW.md §2): the stock becomes {count} (Colorado: {count, top}). */
export function viewOfTable(game: string, table: Table): View {
  const view = clone(table) as unknown as View;
  if (Array.isArray(table.stock)) {
    view.stock = { count: table.stock.length };
    if (gameLayout(game).stock_face_up) view.stock.top = table.stock.length ? table.stock[table.stock.length - 1]! : null;
  }
  return view;
}

/** The view of `game` freshly dealt from `seed`. */
export function dealView(game: GameName | string, seed: string): View {
  return viewOfTable(game, dealTable(game, seed));
}

/** Number of cards on the foundations (the score) of a table or a view. */
export function scoreOf(state: { foundations: string[][] }): number {
  return state.foundations.reduce((sum, pile) => sum + pile.length, 0);
}

const ADDRESS_RE = /^(?:(foundation|tableau)\[(0|[1-9][0-9]?)\]|(reserve|stock|waste|bouquet))$/;

/** A parsed pile address: {kind, index} (index null for the single piles), or null. */
export function parseAddress(address: string): { kind: string; index: number | null } | null {
  const m = typeof address === 'string' ? ADDRESS_RE.exec(address) : null;
  if (!m) return null;
  return m[3] ? { kind: m[3], index: null } : { kind: m[1]!, index: Number(m[2]) };
}

/** A card move text "from>to" (spaces allowed around the addresses) as {from, to}, or null. */
export function parseMove(move: string): { from: string; to: string } | null {
  if (typeof move !== 'string') return null;
  const parts = move.split('>');
  if (parts.length !== 2) return null;
  const from = parts[0]!.trim();
  const to = parts[1]!.trim();
  return parseAddress(from) && parseAddress(to) ? { from, to } : null;
}

type PileHolder = { foundations: string[][]; tableau: string[][] } & Partial<Record<'reserve' | 'waste' | 'bouquet', string[]>>;

/** The card array at a pile address of a view or table (not a view's stock, which is {count, top?}). */
export function pileAt(state: PileHolder | View | Table, address: string): string[] {
  const a = parseAddress(address);
  if (!a) throw new OutOfSync(`not a pile address: ${JSON.stringify(address)}`);
  const holder = state as unknown as Record<string, unknown>;
  const pile = a.index === null ? holder[a.kind] : (holder[a.kind === 'foundation' ? 'foundations' : 'tableau'] as unknown[] | undefined)?.[a.index];
  if (!Array.isArray(pile)) throw new OutOfSync(`no pile ${address} here`);
  return pile as string[];
}

function takeFromStock(state: View | Table, card: string): void {
  const stock = state.stock;
  if (Array.isArray(stock)) {
    // A full table: the stock's top is its last card.
    const top = stock.pop();
    if (top !== card) throw new OutOfSync(`stock top is ${top}, op says ${card}`);
    return;
  }
  if (!stock || !(stock.count > 0)) throw new OutOfSync('a card left an empty stock');
  if ('top' in stock && stock.top !== card) throw new OutOfSync(`stock top is ${stock.top}, op says ${card}`);
  stock.count -= 1;
  if ('top' in stock) stock.top = null; // unknown until the "reveal" op that follows
}

/** Only an `undo` puts a card back onto the stock (DIFF.md §3): face down, but Colorado's top. */
function putOnStock(state: View | Table, card: string): void {
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
 * Apply the long-form ops of one move, in order, to a view (or to a full table), in place;
 * returns it. `move` is the move's text: after a "redeal", redeals_left goes down by one
 * (DIFF.md §5). Throws OutOfSync when an op does not fit the state.
 */
export function applyOps<S extends View | Table>(state: S, ops: readonly Op[], move?: string): S {
  if (!Array.isArray(ops)) throw new OutOfSync('ops is not a list');
  for (const op of ops) {
    switch (op?.op) {
      case 'move': {
        if (op.from === 'stock') {
          takeFromStock(state, op.card);
        } else {
          const from = pileAt(state, op.from);
          const top = from[from.length - 1];
          if (top !== op.card) throw new OutOfSync(`top of ${op.from} is ${top}, op says ${op.card}`);
          from.pop();
        }
        if (op.to === 'stock') putOnStock(state, op.card);
        else pileAt(state, op.to).push(op.card);
        break;
      }
      case 'reveal': {
        if (op.pile !== 'stock' || !state.stock) throw new OutOfSync(`reveal of ${op.pile}`);
        if (Array.isArray(state.stock)) {
          const top = state.stock.length ? state.stock[state.stock.length - 1] : null;
          if (top !== op.card) throw new OutOfSync(`stock top is ${top}, reveal says ${op.card}`);
        } else {
          state.stock.top = op.card;
        }
        break;
      }
      case 'set': {
        if (!Array.isArray(op.cards)) throw new OutOfSync('set without cards');
        const pile = pileAt(state, op.pile);
        pile.splice(0, pile.length, ...op.cards);
        break;
      }
      case 'redeals_left': {
        if (!('redeals_left' in state) || !Number.isInteger(op.count)) throw new OutOfSync('this game has no redeals');
        state.redeals_left = op.count;
        break;
      }
      default:
        throw new OutOfSync(`unknown op ${JSON.stringify((op as { op?: unknown } | null)?.op)}`);
    }
  }
  if (move === 'redeal') {
    if (!(typeof state.redeals_left === 'number' && state.redeals_left > 0)) throw new OutOfSync('a redeal with no redeal left');
    state.redeals_left -= 1;
  }
  return state;
}

// ---- The compact form of the protocol v2 ----

const SINGLE_CODES: Record<string, string> = { r: 'reserve', s: 'stock', w: 'waste', b: 'bouquet' };
const SINGLE_ADDRESSES: Record<string, string> = { reserve: 'r', stock: 's', waste: 'w', bouquet: 'b' };
const CODE_RE = /^(?:([ft])(0|[1-9][0-9]?)|([rswb]))$/;

/** The pile address of a compact pile code: "f0" → "foundation[0]", "t3" → "tableau[3]", "w" → "waste". */
export function expandPile(code: string): string {
  const m = typeof code === 'string' ? CODE_RE.exec(code) : null;
  if (!m) throw new OutOfSync(`not a pile code: ${JSON.stringify(code)}`);
  if (m[3]) return SINGLE_CODES[m[3]]!;
  return `${m[1] === 'f' ? 'foundation' : 'tableau'}[${m[2]}]`;
}

/** The compact pile code of a pile address: "foundation[0]" → "f0" (the inverse of expandPile). */
export function compactPile(address: string): string {
  const a = parseAddress(address);
  if (!a) throw new RangeError(`not a pile address: ${JSON.stringify(address)}`);
  return a.index === null ? SINGLE_ADDRESSES[a.kind]! : `${a.kind[0]}${a.index}`;
}

/** The normal move text of a compact one: "t3>f0" → "tableau[3]>foundation[0]"; "deal" stays. */
export function expandMove(move: string): string {
  const parts = typeof move === 'string' ? move.split('>') : [];
  if (parts.length !== 2) return move;
  return `${expandPile(parts[0]!)}>${expandPile(parts[1]!)}`;
}

/** The long-form ops of compact ones. */
export function expandOps(ops: readonly CompactOp[]): Op[] {
  if (!Array.isArray(ops)) throw new OutOfSync('ops is not a list');
  return ops.map((op): Op => {
    if (!Array.isArray(op)) throw new OutOfSync(`not a compact op: ${JSON.stringify(op)}`);
    switch (op[0]) {
      case 'm':
        if (op.length !== 4 || typeof op[3] !== 'string') throw new OutOfSync('a move op is [m, from, to, card]');
        return { op: 'move', from: expandPile(op[1]), to: expandPile(op[2]), card: op[3] };
      case 'r':
        if (op.length !== 2 || !(typeof op[1] === 'string' || op[1] === null)) throw new OutOfSync('a reveal op is [r, card]');
        return { op: 'reveal', pile: 'stock', card: op[1] };
      case 's':
        if (op.length !== 3 || !Array.isArray(op[2])) throw new OutOfSync('a set op is [s, pile, cards]');
        return { op: 'set', pile: expandPile(op[1]), cards: [...op[2]] };
      default:
        throw new OutOfSync(`unknown op ${JSON.stringify(op[0])}`);
    }
  });
}

/** The fields of a compact patch that change a view (a `patch` frame, or `accepted.patch`). */
export interface CompactChange {
  m: string;
  o: CompactOp[];
  r?: number;
}

/**
 * Apply a compact patch to a view (or full table), in place; returns it. Matrimony's
 * redeals_left is taken from the patch's `r` when present (it is the authority).
 */
export function applyCompact<S extends View | Table>(state: S, patch: CompactChange): S {
  applyOps(state, expandOps(patch.o), undefined);
  if (patch.r !== undefined) {
    if (!('redeals_left' in state) || !Number.isInteger(patch.r)) throw new OutOfSync('redeals_left in a game without redeals');
    state.redeals_left = patch.r;
  }
  return state;
}

const SUIT_SYMBOLS: Record<string, string> = { C: '♣', D: '♦', H: '♥', S: '♠' };

/** {rank, suit, symbol, red} of a card text like "10H", or null. */
export function cardInfo(card: string): { rank: string; suit: string; symbol: string; red: boolean } | null {
  const m = typeof card === 'string' ? /^(A|[2-9]|10|J|Q|K)([CDHS])$/.exec(card) : null;
  if (!m) return null;
  return { rank: m[1]!, suit: m[2]!, symbol: SUIT_SYMBOLS[m[2]!]!, red: m[2] === 'D' || m[2] === 'H' };
}

/** "7♠" for "7S" (the card text itself when it is not a card). */
export function cardLabel(card: string): string {
  const info = cardInfo(card);
  return info ? info.rank + info.symbol : String(card);
}
