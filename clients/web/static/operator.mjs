// The operators' page (/operator, protocol/OPERATOR.md): its own sign-in with an operator
// token (kept for the tab only), the review queue with its filters, an item's evidence
// beside its moves stepped one by one, the decisions, the player actions and the trail.
// It calls the /v1/operator routes and the public replay; no player page links here.

const KEY = 'solitaire.operator-token';
const $ = (id) => document.getElementById(id);
const state = { token: sessionStorage.getItem(KEY), item: null, moves: [], step: 0 };

function say(text, kind = 'info') {
  $('message').textContent = text;
  $('message').dataset.kind = kind;
}

/** A JSON call; `signed` false for a public route (a player route refuses an operator token). */
async function call(method, path, body, signed = true) {
  const headers = { Accept: 'application/json' };
  if (signed) headers.Authorization = `Bearer ${state.token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const answer = await response.json().catch(() => null);
  if (!response.ok) {
    const error = new Error(answer?.error?.message || `HTTP ${response.status}`);
    error.code = answer?.error?.code;
    throw error;
  }
  return answer;
}

function cell(row, text) {
  const td = document.createElement('td');
  td.textContent = text;
  row.append(td);
  return td;
}

function when(ms) {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
}

// -- sign-in ----------------------------------------------------------------------------

async function signIn(token) {
  state.token = token;
  try {
    await call('GET', '/v1/operator/actions?limit=1');
  } catch (error) {
    state.token = null;
    sessionStorage.removeItem(KEY);
    say(error.code === 'operator_required' ? 'That is a player token, not an operator token.' : `Sign-in refused: ${error.message}`, 'error');
    $('token').focus();
    return;
  }
  sessionStorage.setItem(KEY, token);
  const name = token.split('.')[1];
  $('signed-in').textContent = `Signed in as ${name}.`;
  $('signed-in').hidden = false;
  $('sign-out').hidden = false;
  $('login').hidden = true;
  $('desk').hidden = false;
  say('');
  $('queue-heading').setAttribute('tabindex', '-1');
  $('queue-heading').focus();
  await loadTrail();
}

function signOut() {
  sessionStorage.removeItem(KEY);
  state.token = null;
  $('desk').hidden = true;
  $('login').hidden = false;
  $('signed-in').hidden = true;
  $('sign-out').hidden = true;
  $('token').value = '';
  $('token').focus();
}

// -- the queue --------------------------------------------------------------------------

function summary(item) {
  const names = item.signals.map((signal) => signal.name);
  const checks = (item.findings || []).map((finding) => finding.check);
  return [...names, ...checks].join(', ') || '-';
}

async function loadQueue() {
  const game = $('filter-game').value;
  const date = $('filter-date').value;
  const chosen = $('filter-state').value;
  const query = new URLSearchParams({ game, date });
  if (chosen) query.set('state', chosen);
  let page;
  try {
    page = await call('GET', `/v1/operator/reviews?${query}`);
  } catch (error) {
    say(`The queue could not be read: ${error.message}`, 'error');
    return;
  }
  $('queue-caption').textContent = `${page.total} item(s): ${game} ${date}${chosen ? `, ${chosen}` : ''}.`;
  const rows = page.items.map((item) => {
    const row = document.createElement('tr');
    cell(row, item.player_id);
    const open = document.createElement('button');
    open.type = 'button';
    open.textContent = item.game_id;
    open.dataset.testid = 'open-item';
    open.addEventListener('click', () => showItem(item));
    cell(row, '').append(open);
    cell(row, item.state);
    cell(row, summary(item));
    return row;
  });
  $('queue-rows').replaceChildren(...rows);
}

// -- an item: evidence beside its moves -----------------------------------------------------

async function showItem(item) {
  state.item = item;
  $('item').hidden = false;
  $('item-heading').textContent = `Attempt ${item.game_id} (${item.state})`;
  const facts = [
    ['Player', item.player_id],
    ['Game', `${item.game} ${item.date}`],
    ['Integrity', item.integrity],
    ['Clairvoyance checked', item.clairvoyance_checked ? 'yes' : 'no'],
    ['Decision', item.decision ? `${item.decision.decision} by ${item.decision.operator}: ${item.decision.reason}` : 'none yet'],
  ];
  $('item-facts').replaceChildren(
    ...facts.flatMap(([term, value]) => {
      const dt = document.createElement('dt');
      dt.textContent = term;
      const dd = document.createElement('dd');
      dd.textContent = value;
      return [dt, dd];
    }),
  );
  const evidence = [...item.signals.map((s) => [s.name, s.detail, s.evidence]), ...(item.findings || []).map((f) => [f.check, f.detail, { version: f.version }])];
  $('evidence').replaceChildren(
    ...evidence.map(([name, detail, data]) => {
      const li = document.createElement('li');
      const title = document.createElement('strong');
      title.textContent = `${name}: `;
      const pre = document.createElement('pre');
      pre.tabIndex = 0; // scrollable: reachable by keyboard
      pre.textContent = JSON.stringify(data, null, 1);
      li.append(title, detail, pre);
      return li;
    }),
  );
  if (!evidence.length) $('evidence').textContent = 'Nothing found.';
  $('player-id').textContent = item.player_id;
  $('player-state').textContent = '';
  $('replay-table').href = `/#/replay/${encodeURIComponent(item.game_id)}`;
  state.moves = [];
  $('replay-moves').replaceChildren();
  try {
    const exported = await call('GET', item.replay, undefined, false); // public once the day closed
    state.moves = exported.moves;
  } catch (error) {
    $('replay-position').textContent = `The replay could not be read: ${error.message}`;
  }
  renderMoves();
  step(0);
  $('item-heading').focus();
}

function renderMoves() {
  let previous = null;
  $('replay-moves').replaceChildren(
    ...state.moves.map((entry, index) => {
      const li = document.createElement('li');
      const gap = previous === null ? '' : ` (+${entry.server_time - previous} ms)`;
      previous = entry.server_time;
      li.textContent = `${entry.move}${gap}`;
      li.dataset.step = String(index + 1);
      return li;
    }),
  );
}

function step(to) {
  state.step = Math.max(0, Math.min(to, state.moves.length));
  const current = state.moves[state.step - 1];
  $('replay-position').textContent =
    state.step === 0 ? `At the deal, ${state.moves.length} moves.` : `Move ${state.step} of ${state.moves.length}: ${current.move}, at ${when(current.server_time)}.`;
  for (const li of $('replay-moves').children) {
    const here = Number(li.dataset.step) === state.step;
    li.classList.toggle('current', here);
    if (here) li.setAttribute('aria-current', 'step');
    else li.removeAttribute('aria-current');
  }
}

// -- decisions and player actions -------------------------------------------------------

function reason() {
  const text = $('reason').value.trim();
  if (!text) {
    say('A reason is required: it goes into the trail.', 'error');
    $('reason').focus();
  }
  return text;
}

async function act(label, method, path, body) {
  try {
    const answer = await call(method, path, body);
    say(`${label}: done.`);
    await loadTrail();
    return answer;
  } catch (error) {
    say(`${label}: ${error.message}`, 'error');
    return null;
  }
}

async function decide(decision) {
  const text = reason();
  if (!text || !state.item) return;
  const body = { decision, reason: text, code: $('code').value };
  const item = await act(decision === 'void' ? 'Void' : 'Clear', 'POST', `/v1/operator/reviews/${encodeURIComponent(state.item.game_id)}`, body);
  if (item) {
    await loadQueue();
    await showItem(item);
  }
}

async function playerAction(action) {
  const text = reason();
  if (!text || !state.item) return;
  const body = { reason: text };
  if (action === 'suspend' && $('until').value) body.until = new Date($('until').value).getTime();
  const path = `/v1/operator/players/${encodeURIComponent(state.item.player_id)}/${action}`;
  const player = await act($(action).textContent, 'POST', path, body);
  if (player) {
    const suspension = player.suspension;
    $('player-state').textContent =
      `Name: ${player.name ?? 'none'}. ` +
      (suspension ? `Suspended ${suspension.until ? `until ${when(suspension.until)}` : 'until lifted'}.` : 'Not suspended.');
  }
}

// -- the trail --------------------------------------------------------------------------

async function loadTrail() {
  let page;
  try {
    page = await call('GET', '/v1/operator/actions?limit=50');
  } catch (error) {
    say(`The trail could not be read: ${error.message}`, 'error');
    return;
  }
  $('trail-rows').replaceChildren(
    ...page.actions.map((entry) => {
      const row = document.createElement('tr');
      cell(row, when(entry.at));
      cell(row, entry.operator);
      cell(row, entry.action);
      cell(row, entry.game_id || entry.player_id || entry.details.operator || '-');
      cell(row, entry.reason);
      return row;
    }),
  );
}

// -- wiring -----------------------------------------------------------------------------

function start() {
  $('filter-date').value = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  $('login-form').addEventListener('submit', (event) => {
    event.preventDefault();
    signIn($('token').value.trim());
  });
  $('sign-out').addEventListener('click', signOut);
  $('filters').addEventListener('submit', (event) => {
    event.preventDefault();
    loadQueue();
  });
  $('replay-first').addEventListener('click', () => step(0));
  $('replay-back').addEventListener('click', () => step(state.step - 1));
  $('replay-next').addEventListener('click', () => step(state.step + 1));
  $('replay-last').addEventListener('click', () => step(state.moves.length));
  $('clear').addEventListener('click', () => decide('clear'));
  $('void').addEventListener('click', () => decide('void'));
  for (const action of ['suspend', 'unsuspend', 'reset-name', 'revoke-tokens']) {
    $(action).addEventListener('click', () => playerAction(action));
  }
  $('load-trail').addEventListener('click', loadTrail);
  window.__operator = state;
  if (state.token) signIn(state.token);
}

start();
