// Fitting a table into the viewport: the card width (--fit-cw) is the largest that lets the
// whole table (its tallest column included) fit below where it starts, without scrolling,
// and its widest row fit across. The table's height is about linear in the card width
// (cards, fans and gaps scale; the row labels do not), so two measurements give the line,
// and a few more shrink it while a fan's minimum step keeps it too tall.

/** The biggest card on a wide screen, in CSS px. "large" (the player's setting) sizes the
 * cards by the width alone, up to its bigger cap: the page may then scroll down. */
const CW_MAX = { auto: 118, large: 150 };
/** The smallest card drawn: below it the corner index is unreadable (a scroll is better). */
const CW_MIN = 22;
const BOTTOM_PX = 4;
const TRIES = 6;

const fitted = new Set();

/** The gap between piles, as the stylesheet's clamp(3px, 0.9vw, 8px) resolves it. */
function gapPx() {
  return Math.min(Math.max(window.innerWidth * 0.009, 3), 8);
}

function setWidth(root, cw) {
  root.style.setProperty('--fit-cw', `${cw.toFixed(2)}px`);
}

function measureHeight(root) {
  return Math.max(root.getBoundingClientRect().height, root.scrollHeight);
}

function room(root) {
  const top = root.getBoundingClientRect().top + window.scrollY;
  return {
    top,
    width: root.clientWidth,
    height: window.innerHeight - top - BOTTOM_PX,
    viewport: `${window.innerWidth}x${window.innerHeight}`,
  };
}

/**
 * Size the cards of `root` (a drawn table with --cols) to the room it has. `size`: "auto"
 * or "large" (the player's setting). Returns the card width chosen.
 */
export function fitTable(root, size = 'auto') {
  const cols = Number(root.style.getPropertyValue('--cols')) || 8;
  const gap = gapPx();
  root.style.setProperty('--gap', `${gap}px`);
  const space = room(root);
  const byWidth = (space.width - (cols - 1) * gap) / cols;
  const cap = Math.min(CW_MAX[size] || CW_MAX.auto, byWidth);
  if (size === 'large') {
    setWidth(root, Math.max(cap, CW_MIN));
    root.dataset.fit = JSON.stringify({ ...space, size, cw: Math.round(cap * 100) / 100 });
    remember(root);
    return cap;
  }
  // Two widths, two heights: the line through them says the width that fills the height.
  const a = Math.max(Math.min(cap, 60), CW_MIN);
  const b = a * 0.75;
  setWidth(root, a);
  const ha = measureHeight(root);
  setWidth(root, b);
  const hb = measureHeight(root);
  const slope = (ha - hb) / (a - b);
  let cw = slope > 0 ? b + (space.height - hb) / slope : cap;
  cw = Math.max(Math.min(cw, cap), CW_MIN);
  for (let i = 0; i < TRIES; i += 1) {
    setWidth(root, cw);
    const height = measureHeight(root);
    const wide = root.scrollWidth > root.clientWidth + 1;
    if ((height <= space.height && !wide) || cw <= CW_MIN) break;
    const ratio = wide ? root.clientWidth / root.scrollWidth : space.height / height;
    cw = Math.max(cw * Math.min(ratio, 0.98), CW_MIN);
  }
  root.dataset.fit = JSON.stringify({ ...space, size, cw: Math.round(cw * 100) / 100 });
  remember(root);
  return cw;
}

// What sits above a table (the header, the outcome, the walkthrough) may change size after
// it is drawn: the table moves down, so it is fitted again.
const above = new ResizeObserver(() => refitAll());

function remember(root) {
  if (fitted.has(root)) return;
  fitted.add(root);
  for (let node = root; node && node !== document.body; node = node.parentElement) {
    for (let before = node.previousElementSibling; before; before = before.previousElementSibling) {
      above.observe(before);
    }
  }
}

function refitAll() {
  cancelAnimationFrame(pendingFrame);
  pendingFrame = requestAnimationFrame(() => {
    for (const root of fitted) {
      if (root.isConnected && root.dataset.fit) keepFitted(root, JSON.parse(root.dataset.fit).size);
    }
  });
}

/**
 * After a partial redraw: fit again only when the room changed (a panel above appeared, the
 * window turned) or the table no longer fits (a column grew past its share).
 */
export function keepFitted(root, size = 'auto') {
  const before = root.dataset.fit ? JSON.parse(root.dataset.fit) : null;
  const space = room(root);
  const same =
    before &&
    before.size === size &&
    before.viewport === space.viewport &&
    Math.abs(before.top - space.top) < 1 &&
    Math.abs(before.width - space.width) < 1;
  if (same && (size === 'large' || measureHeight(root) <= space.height) && root.scrollWidth <= root.clientWidth + 1) return;
  fitTable(root, size);
}

let pendingFrame = 0;
window.addEventListener('resize', refitAll);
