// The landing: the five games as small pictures of their tables (drawn from the same pile
// layout the table uses), a line about each, and today's daily of each. The daily's state
// comes from GET /v1/daily/{game}; while the server is still choosing the deal (503
// daily_not_ready, a fresh server) it says so in words and tries again by itself.

import { SolitaireError } from '/static/sdk/index.js';
import { GAME_TITLES, pileRows } from './render.mjs';
import { errorText } from './words.mjs';

const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);
const SVG = 'http://www.w3.org/2000/svg';
/** How often, at most, a daily still being dealt is asked for again (then a button). */
const NOT_READY_TRIES = 20;

export const ONE_LINERS = Object.freeze({
  balcony: 'One deck: build down in alternating colours and bring the reserve home.',
  empress_of_italy: 'Four decks, sixteen foundations: the first card sets where they start.',
  colorado: 'Two decks, twenty piles that never build: place each card from the stock.',
  gloucestershire: 'Two decks around twice: build down with wrap, play the bouquet.',
  matrimony: 'Two decks, queen and jacks: sixteen redeals to marry the suits.',
});

/** The order games are offered in: the one-deck game first. */
export const LANDING_ORDER = ['balcony', 'empress_of_italy', 'colorado', 'gloucestershire', 'matrimony'];

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

/**
 * A picture of `game`'s table: its rows of piles as on the table, foundations as empty
 * slots, the stock face down, tableau piles as small fanned cards.
 */
export function tableThumbnail(game) {
  const rows = pileRows(game, false);
  const width = 160;
  const widest = Math.max(...rows.map((row) => row.length), 1);
  const gap = 2;
  const cardW = Math.min(18, (width - gap * (widest + 1)) / widest);
  const cardH = cardW * 1.4;
  const fan = cardH * 0.28;
  const rowHeights = rows.map((row) => (row.some((p) => p.startsWith('tableau')) && rows.length < 5 ? cardH + fan * 2 : cardH));
  const height = rowHeights.reduce((a, b) => a + b + gap * 2, gap * 2);
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'thumb', 'aria-hidden': 'true', focusable: 'false' });
  root.append(svg('rect', { x: 0, y: 0, width, height, rx: 6, class: 'thumb-felt' }));
  let y = gap * 2;
  let dealt = 0;
  rows.forEach((row, r) => {
    const rowWidth = row.length * cardW + (row.length - 1) * gap;
    let x = (width - rowWidth) / 2;
    for (const pile of row) {
      if (pile.startsWith('foundation')) {
        root.append(svg('rect', { x, y, width: cardW, height: cardH, rx: 2, class: 'thumb-slot' }));
      } else if (pile === 'stock') {
        root.append(svg('rect', { x, y, width: cardW, height: cardH, rx: 2, class: 'thumb-back' }));
      } else {
        const count = pile.startsWith('tableau') && rowHeights[r] > cardH ? 3 : 1;
        for (let k = 0; k < count; k += 1) {
          root.append(svg('rect', { x, y: y + k * fan, width: cardW, height: cardH, rx: 2, class: 'thumb-card' }));
        }
        // A suit on the top card, red and black in turn, as a table shows them.
        const suit = '♠♥♣♦'[(dealt += 1) % 4];
        const pip = svg('text', {
          x: x + cardW / 2,
          y: y + (count - 1) * fan + cardH * 0.68,
          'font-size': cardW * 0.62,
          'text-anchor': 'middle',
          class: suit === '♥' || suit === '♦' ? 'thumb-red' : 'thumb-black',
        });
        pip.textContent = suit;
        root.append(pip);
      }
      x += cardW + gap;
    }
    y += rowHeights[r] + gap * 2;
  });
  return root;
}

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

/**
 * Draw the landing's game cards into `[data-testid=landing-games]`. `hooks`: play(game),
 * daily(game), api (the SDK's RestClient, for the dailies' state).
 */
export function renderLanding(hooks) {
  const list = $('landing-games');
  if (!list || list.dataset.drawn) return;
  list.dataset.drawn = '1';
  list.replaceChildren(
    ...LANDING_ORDER.map((game) => {
      const item = el('li', null, 'game-card');
      item.dataset.testid = 'landing-game';
      item.dataset.game = game;
      const headingId = `landing-${game}`;
      const title = el('h3', GAME_TITLES[game]);
      title.id = headingId;
      const play = el('button', 'Play');
      play.type = 'button';
      play.dataset.testid = 'landing-play';
      play.setAttribute('aria-describedby', headingId);
      play.addEventListener('click', () => hooks.play(game));
      // The picture is a bigger target for the pointer; the Play button is the tab stop.
      const picture = el('div', null, 'thumb-button');
      picture.append(tableThumbnail(game));
      picture.addEventListener('click', () => hooks.play(game));
      const daily = el('p', "Today's daily: …", 'landing-daily');
      daily.dataset.testid = 'landing-daily';
      const dailyButton = el('button', "Today's daily");
      dailyButton.type = 'button';
      dailyButton.dataset.testid = 'landing-daily-play';
      dailyButton.setAttribute('aria-describedby', headingId);
      dailyButton.addEventListener('click', () => hooks.daily(game));
      const actions = el('p', null, 'landing-actions');
      actions.append(play, dailyButton);
      item.append(picture, title, el('p', ONE_LINERS[game], 'one-liner'), daily, actions);
      return item;
    }),
  );
  for (const game of LANDING_ORDER) loadDaily(hooks, game, NOT_READY_TRIES);
}

const retryTimers = {};

async function loadDaily(hooks, game, tries) {
  const line = document.querySelector(`[data-testid="landing-game"][data-game="${game}"] [data-testid="landing-daily"]`);
  if (!line) return;
  clearTimeout(retryTimers[game]);
  try {
    const today = await hooks.api.request('GET', `/v1/daily/${game}`);
    line.dataset.state = 'ready';
    line.textContent = today.winnable
      ? `Today's daily (${today.date}): a deal proven winnable.`
      : `Today's daily (${today.date}): the solver's best is ${today.proven_score} of ${today.total_cards} cards home.`;
  } catch (error) {
    if (error instanceof SolitaireError && error.code === 'daily_not_ready') {
      line.dataset.state = 'dealing';
      line.textContent = "Today's daily is being dealt: ready in a few seconds.";
      if (tries > 1) {
        retryTimers[game] = setTimeout(() => loadDaily(hooks, game, tries - 1), error.retryAfterMs || 2000);
      } else {
        const again = el('button', 'Try again', 'small');
        again.type = 'button';
        again.dataset.testid = 'landing-daily-retry';
        again.addEventListener('click', () => loadDaily(hooks, game, NOT_READY_TRIES));
        line.append(' ', again);
      }
      return;
    }
    line.dataset.state = 'error';
    line.textContent = `Today's daily: ${errorText(error)}`;
  }
}
