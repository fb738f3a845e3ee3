// Every game's deal from a seed (protocol/DEALS.md), for offline replays and audits.
// Written from DEALS.md; checked against protocol/vectors.json by test/deals.test.mjs.

import { cardText, rankOf, shuffledDeck } from './rng.js';

export type GameName = 'empress_of_italy' | 'colorado' | 'gloucestershire' | 'matrimony' | 'balcony';
export type SinglePile = 'reserve' | 'stock' | 'waste' | 'bouquet';

/** The layout facts of a game (DEALS.md §1). */
export interface GameLayout {
  readonly title: string;
  readonly decks: number;
  readonly foundations: number;
  readonly tableau: number;
  readonly piles: readonly SinglePile[];
  readonly foundation_size: number;
  readonly stock_face_up: boolean;
}

function layout(facts: GameLayout): GameLayout {
  return Object.freeze({ ...facts, piles: Object.freeze([...facts.piles]) });
}

/** The five games (DEALS.md §1): layout facts by protocol name. */
export const GAMES: Readonly<Record<GameName, GameLayout>> = Object.freeze({
  empress_of_italy: layout({
    title: 'Empress of Italy', decks: 4, foundations: 16, tableau: 11,
    piles: ['reserve', 'stock', 'waste'], foundation_size: 13, stock_face_up: false,
  }),
  colorado: layout({
    title: 'Colorado', decks: 2, foundations: 8, tableau: 20,
    piles: ['stock'], foundation_size: 13, stock_face_up: true,
  }),
  gloucestershire: layout({
    title: 'Gloucestershire', decks: 2, foundations: 4, tableau: 8,
    piles: ['bouquet'], foundation_size: 26, stock_face_up: false,
  }),
  matrimony: layout({
    title: 'Matrimony', decks: 2, foundations: 8, tableau: 16,
    piles: ['stock'], foundation_size: 13, stock_face_up: false,
  }),
  balcony: layout({
    title: 'Balcony', decks: 1, foundations: 4, tableau: 7,
    piles: ['reserve', 'stock', 'waste'], foundation_size: 13, stock_face_up: false,
  }),
});

export const GAME_NAMES: readonly GameName[] = Object.freeze(Object.keys(GAMES) as GameName[]);

/** A dealt table of card ids (piles bottom first; the stock's top is its last card). */
export interface IdTable {
  foundations: number[][];
  tableau: number[][];
  reserve?: number[];
  stock?: number[];
  waste?: number[];
  bouquet?: number[];
  base_rank?: number;
  redeals_left?: number;
}

/** The full table of DEALS.md §4: card texts, piles bottom first, the stock face down included. */
export interface Table {
  foundations: string[][];
  tableau: string[][];
  reserve?: string[];
  stock?: string[];
  waste?: string[];
  bouquet?: string[];
  base_rank?: string;
  redeals_left?: number;
}

const RANK_TEXT = ['A', '2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K'];
const QUEEN_OF_DIAMONDS = 24; // face = 13 * suit + rank - 1 = 13 * 1 + 11
const JACK_OF_DIAMONDS = 23;

/** The layout of `game`, or a RangeError for a name that is not one of the five. */
export function gameLayout(game: string): GameLayout {
  if (!Object.hasOwn(GAMES, game)) throw new RangeError(`unknown game: ${JSON.stringify(game)}`);
  return GAMES[game as GameName];
}

/** The stock from the cards left, in deck order: reversed, so that its top (last) is the next card. */
function stockOf(rest: number[]): number[] {
  return rest.slice().reverse();
}

function emptyTable(info: GameLayout): IdTable {
  const table: IdTable = {
    foundations: Array.from({ length: info.foundations }, () => []),
    tableau: Array.from({ length: info.tableau }, () => []),
  };
  for (const pile of info.piles) table[pile] = [];
  return table;
}

type Dealer = (deck: number[], t: IdTable) => void;

const DEALERS: Record<GameName, Dealer> = {
  balcony(deck, t) {
    t.foundations[0]!.push(deck[0]!);
    t.base_rank = rankOf(deck[0]!);
    t.reserve!.push(...deck.slice(1, 8));
    for (let i = 0; i < 7; i++) t.tableau[i]!.push(deck[8 + i]!);
    t.stock = stockOf(deck.slice(15));
  },

  empress_of_italy(deck, t) {
    const base = rankOf(deck[0]!);
    const bases = deck.filter((c) => rankOf(c) === base);
    const rest = deck.filter((c) => rankOf(c) !== base);
    bases.forEach((card, i) => t.foundations[i]!.push(card));
    t.base_rank = base;
    t.reserve!.push(...rest.slice(0, 19));
    for (let i = 0; i < 11; i++) t.tableau[i]!.push(rest[19 + i]!);
    t.stock = stockOf(rest.slice(30));
  },

  colorado(deck, t) {
    for (let i = 0; i < 20; i++) t.tableau[i]!.push(deck[i]!);
    t.stock = stockOf(deck.slice(20));
  },

  gloucestershire(deck, t) {
    let position = 0;
    for (let i = 0; i < 8; i++) {
      const size = 3 + i;
      t.tableau[i]!.push(...deck.slice(position, position + size));
      position += size;
    }
    t.bouquet = deck.slice(position); // deal order: the last card is the exposed one
  },

  matrimony(deck, t) {
    const rest = deck.slice();
    for (const [index, face] of [[0, QUEEN_OF_DIAMONDS], [1, JACK_OF_DIAMONDS]] as const) {
      const at = rest.findIndex((c) => c % 52 === face);
      t.foundations[index]!.push(rest[at]!);
      rest.splice(at, 1);
    }
    for (let i = 0; i < 16; i++) t.tableau[i]!.push(rest[i]!);
    t.stock = stockOf(rest.slice(16));
    t.redeals_left = 16;
  },
};

/**
 * The dealt table of `game` from `seed` as card ids (piles bottom first) plus base_rank
 * (a number 1..13) / redeals_left where the game has them.
 */
export function dealIds(game: string, seed: string): IdTable {
  const info = gameLayout(game);
  const deck = shuffledDeck(seed, info.decks);
  const table = emptyTable(info);
  DEALERS[game as GameName](deck, table);
  return table;
}

/** The table of DEALS.md §4 (card texts, piles bottom first) of `game` dealt from `seed`. */
export function dealTable(game: string, seed: string): Table {
  const ids = dealIds(game, seed);
  const texts = (pile: number[]): string[] => pile.map(cardText);
  const table: Table = {
    foundations: ids.foundations.map(texts),
    tableau: ids.tableau.map(texts),
  };
  for (const pile of gameLayout(game).piles) table[pile] = texts(ids[pile]!);
  if (ids.base_rank !== undefined) table.base_rank = RANK_TEXT[ids.base_rank - 1]!;
  if (ids.redeals_left !== undefined) table.redeals_left = ids.redeals_left;
  return table;
}
