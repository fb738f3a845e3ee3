// The player's settings, kept in localStorage with the play settings (auto-move, auto-finish):
// theme, card back, felt, card size, sound. The panel is a dialog opened from the menu; every
// change takes effect at once and is stored at once.

/** Each setting: its choices (the first is the default) and the words the panel shows. */
export const CHOICES = {
  theme: { label: 'Theme', options: { system: 'As the system', light: 'Light', dark: 'Dark' } },
  back: { label: 'Card back', options: { blue: 'Blue', red: 'Red', green: 'Green', black: 'Black' } },
  felt: { label: 'Table', options: { green: 'Green felt', blue: 'Blue felt', red: 'Red felt', grey: 'Grey' } },
  cardSize: { label: 'Card size', options: { auto: 'Fit the screen', large: 'Large (on wide screens)' } },
};

/** The defaults of the settings this module adds (main.mjs keeps autoMove and autoFinish). */
export const DEFAULTS = { theme: 'system', back: 'blue', felt: 'green', cardSize: 'auto', sound: false };

const darkScheme = window.matchMedia('(prefers-color-scheme: dark)');
const SOUND_MS = 45;

/** Sounds played since the page loaded (read by the tests via window.__client). */
export const sound = { played: 0 };
let audio = null;

/**
 * What the settings need of the page: {settings (the live object, stored under `key`), key,
 * $, render(), changed(name) (after auto-move changes: auto-play may start)}.
 */
let page = null;

function valid(name, value) {
  return name in CHOICES ? value in CHOICES[name].options : typeof value === 'boolean';
}

/** Apply the look (theme, back, felt) to the document: CSS reads the data attributes. */
export function applyLook(settings) {
  const root = document.documentElement;
  const theme = settings.theme === 'system' ? (darkScheme.matches ? 'dark' : 'light') : settings.theme;
  root.dataset.theme = theme;
  root.dataset.themeSetting = settings.theme;
  root.dataset.back = settings.back;
  root.dataset.felt = settings.felt;
  root.style.colorScheme = theme;
}

/** A short click when a card is put down (Web Audio: no file to fetch), when sound is on. */
export function playSound() {
  if (!page || !page.settings.sound) return;
  sound.played += 1;
  try {
    audio = audio || new AudioContext();
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = 520;
    gain.gain.setValueAtTime(0.08, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.0001, audio.currentTime + SOUND_MS / 1000);
    tone.connect(gain).connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + SOUND_MS / 1000);
  } catch {
    // No audio device (or not allowed yet): the move is what matters.
  }
}

function save() {
  localStorage.setItem(page.key, JSON.stringify(page.settings));
}

function set(name, value) {
  if (!valid(name, value)) return;
  page.settings[name] = value;
  save();
  applyLook(page.settings);
  if (name === 'autoMove') {
    const box = page.$('auto-move');
    if (box) box.checked = value;
  }
  page.changed(name);
  page.render();
}

/** The panel's controls, drawn from CHOICES: a radio group per setting, two checkboxes. */
function buildPanel(form) {
  const groups = Object.entries(CHOICES).map(([name, { label, options }]) => {
    const fieldset = document.createElement('fieldset');
    const legend = document.createElement('legend');
    legend.textContent = label;
    fieldset.append(legend);
    for (const [value, words] of Object.entries(options)) {
      const item = document.createElement('label');
      const input = document.createElement('input');
      input.type = 'radio';
      input.name = name;
      input.value = value;
      input.dataset.testid = `setting-${name}-${value}`;
      input.addEventListener('change', () => set(name, value));
      item.append(input, ` ${words}`);
      fieldset.append(item);
    }
    return fieldset;
  });
  const toggles = document.createElement('fieldset');
  const legend = document.createElement('legend');
  legend.textContent = 'Play';
  toggles.append(legend);
  for (const [name, words] of [['sound', 'Sound when a card is put down'], ['autoMove', 'Auto-move safe cards home (default for new games)']]) {
    const item = document.createElement('label');
    const input = document.createElement('input');
    input.type = 'checkbox';
    input.name = name;
    input.dataset.testid = `setting-${name}`;
    input.addEventListener('change', () => set(name, input.checked));
    item.append(input, ` ${words}`);
    toggles.append(item);
  }
  form.replaceChildren(...groups, toggles);
}

/** Show the stored values in the panel's controls. */
function fillPanel(form) {
  for (const input of form.querySelectorAll('input')) {
    const value = page.settings[input.name];
    if (input.type === 'radio') input.checked = input.value === value;
    else input.checked = Boolean(value);
  }
}

/** Read the stored settings into `settings` (unknown or bad values: the defaults). */
export function loadInto(settings) {
  for (const [name, value] of Object.entries(DEFAULTS)) {
    if (!valid(name, settings[name])) settings[name] = value;
  }
  return settings;
}

export function wireSettings(context) {
  page = context;
  loadInto(page.settings);
  applyLook(page.settings);
  darkScheme.addEventListener('change', () => applyLook(page.settings));
  const dialog = page.$('settings-panel');
  const form = page.$('settings-form');
  buildPanel(form);
  page.$('settings-open').addEventListener('click', () => {
    fillPanel(form);
    page.closeMenu();
    dialog.showModal();
  });
}
