// The conformance driver of the TypeScript SDK (clients/ts, its build in dist/): runs every
// case of a conformance kit (or those named) through the SDK's Connection and GameCopy and
// prints one JSON summary line; exit status 1 when a case failed.
// Usage: node --experimental-websocket tools/conformance/drivers/ts_client.mjs KIT_URL [--agent NAME] [CASE ...]
// (Node 22 needs no flag.) tools/conformance/README.md describes what a driver does.

import { createHash } from 'node:crypto';

import { Connection } from '../../../clients/ts/dist/index.js';

/** JSON with every object's keys sorted, no spaces: the canonical JSON of protocol/STATE.md. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 of the canonical JSON of the copy's status, version and view. */
function viewHash(copy) {
  const text = canonical({ status: copy.status, version: copy.version, view: copy.view });
  return createHash('sha256').update(text, 'ascii').digest('hex');
}

function withTimeout(promise, ms) {
  let timer;
  const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('timeout')), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function until(predicate, ms) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timeout');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function failure(error) {
  if (error?.message === 'timeout') return { outcome: 'timeout' };
  if (typeof error?.code === 'string') return { outcome: error.name === 'MoveError' || error.kind === 'move' ? 'rejected' : 'error', code: error.code };
  return { outcome: 'error', code: null, detail: String(error) };
}

class Driver {
  constructor(start) {
    this.start = start;
    this.timeout = start.timeout_ms;
    this.connection = null;
    this.states = [];
    this.last = new Map();
    this.errors = [];
  }

  noteState(copy) {
    if (copy.version === null) return;
    const hash = viewHash(copy);
    const key = JSON.stringify([copy.version, copy.status, hash, copy.legalMoves]);
    if (this.last.get(copy.id) === key) return;
    this.last.set(copy.id, key);
    this.states.push({ game_id: copy.id, version: copy.version, status: copy.status, hash, legal_moves: copy.legalMoves });
  }

  follow(copy) {
    copy.on('change', () => this.noteState(copy));
    this.noteState(copy);
  }

  async take(action) {
    try {
      return await this.takeStep(action);
    } catch (error) {
      return failure(error);
    }
  }

  async takeStep(action) {
    const gameId = this.start.game_id;
    if (action.do === 'open') {
      const connection = new Connection({
        url: this.start.ws_url,
        token: this.start.token,
        reconnectFirstMs: 20,
        reconnectMaxMs: 500,
        connectTimeoutMs: this.timeout,
      });
      connection.on('error', (error) => this.errors.push(error.code));
      this.connection = connection;
      await withTimeout(connection.connect(), this.timeout);
      if (gameId !== null) this.follow(await withTimeout(connection.subscribe(gameId), this.timeout));
      return { outcome: 'ok' };
    }
    const connection = this.connection;
    if (connection === null) return { outcome: 'error', code: null, detail: 'no connection' };
    if (action.do === 'subscribe') {
      this.follow(await withTimeout(connection.subscribe(action.game_id), this.timeout));
      return { outcome: 'ok' };
    }
    const copy = connection.game(gameId);
    if (action.do === 'sync') {
      await until(() => copy.version !== null && copy.version >= action.version, this.timeout);
      return { outcome: 'ok' };
    }
    if (action.do === 'move') {
      let move = action.move;
      if (move === undefined) {
        // Unknown after another tab's move: ask on this socket (WEBSOCKET.md, "Other tabs").
        if (copy.legalMoves === null) await withTimeout(connection.subscribe(gameId), this.timeout);
        await until(() => copy.legalMoves !== null, this.timeout);
        move = copy.legalMoves[0];
      }
      const options = {};
      if (action.version !== undefined) options.version = action.version;
      if (action.move_id !== undefined) options.moveId = action.move_id;
      try {
        const accepted = await withTimeout(connection.move(gameId, move, options), this.timeout);
        return { outcome: 'accepted', version: accepted.version, duplicate: accepted.duplicate };
      } catch (error) {
        if (typeof error?.code === 'string' && error.code !== 'network') return { outcome: 'rejected', code: error.code };
        throw error;
      }
    }
    return { outcome: 'error', code: null, detail: `unknown step ${action.do}` };
  }

  pendingStates() {
    if (this.connection) {
      const copy = this.start.game_id === null ? undefined : this.connection.game(this.start.game_id);
      if (copy) this.noteState(copy);
    }
    const states = this.states;
    this.states = [];
    return states;
  }
}

async function post(url, body) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function runCase(kit, caseId, agent) {
  const start = await post(`${kit}/cases/${caseId}/runs`, { agent });
  const driver = new Driver(start);
  const report = `${kit}/runs/${start.run}/report`;
  try {
    for (const [index, action] of start.steps.entries()) {
      const result = await driver.take(action);
      // The errors surfaced since the last report (the kit may send one meanwhile).
      const step = { index, ...result, errors: driver.errors };
      driver.errors = [];
      await post(report, { states: driver.pendingStates(), step });
    }
  } finally {
    driver.connection?.close();
  }
  return post(report, { states: driver.pendingStates(), done: true });
}

const args = process.argv.slice(2);
let agent = 'ts-sdk';
const agentAt = args.indexOf('--agent');
if (agentAt >= 0) {
  agent = args[agentAt + 1];
  args.splice(agentAt, 2);
}
const [kitUrl, ...named] = args;
if (!kitUrl) {
  console.error('usage: ts_client.mjs KIT_URL [--agent NAME] [CASE ...]');
  process.exit(2);
}
const kit = kitUrl.replace(/\/$/, '');
const cases = named.length ? named : (await (await fetch(`${kit}/cases`)).json()).cases.map((c) => c.id);
const failed = {};
for (const caseId of cases) {
  const verdict = await runCase(kit, caseId, agent);
  if (!verdict.passed) failed[caseId] = verdict.failures;
}
console.log(JSON.stringify({ agent, cases: cases.length, failed }));
process.exit(Object.keys(failed).length ? 1 : 0);
