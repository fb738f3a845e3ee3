// The client view of a game (protocol/VIEW.md): what the page needs of it to draw. How a
// patch changes a view (protocol/DIFF.md, WEBSOCKET.md) is the SDK's (clients/ts); no rules
// here: the server decides, the client copies.

import { pileAt } from '/static/sdk/index.js';

export { OutOfSync, applyOps, cardInfo, cardLabel, parseAddress, parseMove, scoreOf } from '/static/sdk/index.js';

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

export function clone(value) {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}
