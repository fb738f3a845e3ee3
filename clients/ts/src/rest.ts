// The REST half of the protocol (protocol/REST.md; every route of GET /openapi.json), typed by
// the generated schema.ts. JSON bodies; errors become the typed errors of errors.ts.

import { ServerError, SolitaireError, errorFromMessage } from './errors.js';
import type { Operations } from './schema.js';

export type { Operations };
type Answer<K extends keyof Operations> = Operations[K]['response'];
type Body<K extends keyof Operations> = Operations[K] extends { body: infer B } ? B : Operations[K] extends { body?: infer B } ? B : never;
type Query<K extends keyof Operations> = Operations[K] extends { query: infer Q } ? Q : never;

/** The smallest `fetch` the client needs (the global one of browsers, React Native and Node 18+). */
export type FetchLike = (input: string, init: {
  method: string;
  headers: Record<string, string>;
  body?: string;
  cache?: 'no-store';
}) => Promise<{ ok: boolean; status: number; json(): Promise<unknown>; text(): Promise<string> }>;

export interface RestOptions {
  /** The server's base URL, e.g. "https://solitaire.example" ("" in a page served by the server). */
  baseUrl?: string;
  /** A player's token (from `createPlayer`); `setToken` changes it. */
  token?: string | null;
  /** A `fetch` implementation (default: the global one). */
  fetch?: FetchLike;
  /**
   * Renew the token on its own once half its lifetime (30 days) has passed: the next call
   * first asks POST /v1/players/me/token (default true; `renewToken` does it by hand).
   */
  autoRenew?: boolean;
  /** Called with every new token the client takes (created, renewed, signed in): keep it. */
  onToken?: (token: string) => void;
  /** The clock, Unix ms (default Date.now): for tests. */
  now?: () => number;
}

/** A token's lifetime in seconds (protocol/ACCOUNTS.md). */
export const TOKEN_LIFETIME = 30 * 24 * 3600;
const RENEW_PATH = '/v1/players/me/token';

/** When a token expires, Unix seconds (`v1.<player_id>.<expires>.<signature>`), or null. */
export function tokenExpires(token: string | null | undefined): number | null {
  const parts = (token ?? '').split('.');
  if (parts.length !== 4 || parts[0] !== 'v1' || !/^[0-9]+$/.test(parts[2] ?? '')) return null;
  return Number(parts[2]);
}

/** Query strings of the defined fields only. */
function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const pairs = Object.entries(query).filter(([, value]) => value !== undefined && value !== null);
  if (!pairs.length) return '';
  return `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&')}`;
}

const seg = encodeURIComponent;

/** A typed client of every REST route. Methods resolve to the answer's body or throw a SolitaireError. */
export class RestClient {
  readonly baseUrl: string;
  token: string | null;
  autoRenew: boolean;
  onToken: ((token: string) => void) | null;
  private readonly fetchImpl: FetchLike;
  private readonly now: () => number;
  private renewing: Promise<void> | null = null;

  constructor(options: RestOptions = {}) {
    this.baseUrl = (options.baseUrl ?? '').replace(/\/+$/, '');
    this.token = options.token ?? null;
    this.autoRenew = options.autoRenew ?? true;
    this.onToken = options.onToken ?? null;
    this.now = options.now ?? (() => Date.now());
    const globalFetch = globalThis.fetch as unknown as FetchLike | undefined;
    // A browser's fetch must be called on the window ("Illegal invocation" otherwise).
    const fetchImpl = options.fetch ?? globalFetch?.bind(globalThis);
    if (!fetchImpl) throw new TypeError('no fetch: pass options.fetch');
    this.fetchImpl = fetchImpl;
  }

  setToken(token: string | null): void {
    this.token = token;
  }

  private takeToken(answer: { token: string }): void {
    this.token = answer.token;
    this.onToken?.(answer.token);
  }

  /** Renew the token if half its lifetime has passed (one renewal at a time; a failed one
   * leaves the token as it is, and the call that asked goes on with it). */
  private async renewIfDue(): Promise<void> {
    const expires = tokenExpires(this.token);
    if (expires === null || this.now() / 1000 < expires - TOKEN_LIFETIME / 2) return;
    if (!this.renewing) {
      this.renewing = this.renewToken().then(
        () => undefined,
        () => undefined,
      ).finally(() => {
        this.renewing = null;
      });
    }
    await this.renewing;
  }

  /**
   * One call: the decoded JSON answer, or a typed error (ServerError "network" when no answer
   * came). `token` overrides the client's token for this call (null: none).
   */
  async request<T>(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; token?: string | null } = {},
  ): Promise<T> {
    if (this.autoRenew && options.token === undefined && path !== RENEW_PATH) await this.renewIfDue();
    const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
    const token = options.token === undefined ? this.token : options.token;
    if (token) headers.Authorization = `Bearer ${token}`;
    const init: Parameters<FetchLike>[1] = { method, headers, cache: 'no-store' };
    if (options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(options.body);
    }
    let response;
    try {
      response = await this.fetchImpl(this.baseUrl + path, init);
    } catch (error) {
      throw new ServerError('network', `the server cannot be reached (${(error as Error).message})`);
    }
    let data: unknown = null;
    try {
      data = await response.json();
    } catch {
      data = null;
    }
    if (!response.ok) {
      const error = (data as { error?: Record<string, unknown> } | null)?.error;
      if (error && typeof error === 'object') throw errorFromMessage(error, response.status);
      throw new ServerError('unexpected', `HTTP ${response.status}`, response.status);
    }
    return data as T;
  }

  // ---- players ----

  /** POST /v1/players: a new player and its token (the client keeps the token). */
  async createPlayer(body: Body<'POST /v1/players'> = {}): Promise<Answer<'POST /v1/players'>> {
    const player = await this.request<Answer<'POST /v1/players'>>('POST', '/v1/players', { body });
    this.takeToken(player);
    return player;
  }

  // ---- accounts (protocol/ACCOUNTS.md) ----

  /** POST /v1/players/me/token: a fresh token for the current one (the client keeps it). */
  async renewToken(): Promise<Answer<'POST /v1/players/me/token'>> {
    const answer = await this.request<Answer<'POST /v1/players/me/token'>>('POST', RENEW_PATH, { body: {} });
    this.takeToken(answer);
    return answer;
  }

  /** DELETE /v1/players/me/tokens: sign out everywhere (this token too). */
  signOutEverywhere(): Promise<Answer<'DELETE /v1/players/me/tokens'>> {
    return this.request('DELETE', '/v1/players/me/tokens', { body: {} });
  }

  /** POST /v1/players/me/transfer: a one-time code (15 minutes) for moving to a new device. */
  createTransferCode(): Promise<Answer<'POST /v1/players/me/transfer'>> {
    return this.request('POST', '/v1/players/me/transfer', { body: {} });
  }

  /** POST /v1/players/transfer: on the new device, the code's player (the client keeps its token). */
  async redeemTransferCode(code: string): Promise<Answer<'POST /v1/players/transfer'>> {
    const answer = await this.request<Answer<'POST /v1/players/transfer'>>('POST', '/v1/players/transfer', { body: { code }, token: null });
    this.takeToken(answer);
    return answer;
  }

  /** POST /v1/players/login: sign in with an ID token of the server's identity provider. */
  async login(idToken: string): Promise<Answer<'POST /v1/players/login'>> {
    const answer = await this.request<Answer<'POST /v1/players/login'>>('POST', '/v1/players/login', { body: { id_token: idToken }, token: null });
    this.takeToken(answer);
    return answer;
  }

  /** POST /v1/players/me/identity: link an identity to this player (409 identity_taken). */
  linkIdentity(idToken: string): Promise<Answer<'POST /v1/players/me/identity'>> {
    return this.request('POST', '/v1/players/me/identity', { body: { id_token: idToken } });
  }

  /** GET /v1/players/me/export: everything the server keeps about the player. */
  exportAccount(): Promise<Answer<'GET /v1/players/me/export'>> {
    return this.request('GET', '/v1/players/me/export');
  }

  /** DELETE /v1/players/me: delete the account for good (the token stops working). */
  async deleteAccount(): Promise<Answer<'DELETE /v1/players/me'>> {
    const answer = await this.request<Answer<'DELETE /v1/players/me'>>('DELETE', '/v1/players/me', { body: { confirm: true } });
    this.token = null;
    return answer;
  }

  me(): Promise<Answer<'GET /v1/players/me'>> {
    return this.request('GET', '/v1/players/me');
  }

  setName(name: string | null): Promise<Answer<'PATCH /v1/players/me'>> {
    return this.request('PATCH', '/v1/players/me', { body: { name } });
  }

  myGames(query: Query<'GET /v1/players/me/games'> = {}): Promise<Answer<'GET /v1/players/me/games'>> {
    return this.request('GET', `/v1/players/me/games${queryString(query)}`);
  }

  myStats(): Promise<Answer<'GET /v1/players/me/stats'>> {
    return this.request('GET', '/v1/players/me/stats');
  }

  // ---- games and moves ----

  /** GET /v1/games: the five games with their rules summaries. */
  games(): Promise<Answer<'GET /v1/games'>> {
    return this.request('GET', '/v1/games');
  }

  /** POST /v1/games: start a casual game (or practise a closed day's challenge). */
  createGame(body: Body<'POST /v1/games'>): Promise<Answer<'POST /v1/games'>> {
    return this.request('POST', '/v1/games', { body });
  }

  game(id: string): Promise<Answer<'GET /v1/games/{id}'>> {
    return this.request('GET', `/v1/games/${seg(id)}`);
  }

  /** POST /v1/games/{id}/moves: a move made against `version` (a `move_id` makes a retry safe). */
  move(id: string, body: Body<'POST /v1/games/{id}/moves'>): Promise<Answer<'POST /v1/games/{id}/moves'>> {
    return this.request('POST', `/v1/games/${seg(id)}/moves`, { body });
  }

  hint(id: string, body: Body<'POST /v1/games/{id}/hint'> = {}): Promise<Answer<'POST /v1/games/{id}/hint'>> {
    return this.request('POST', `/v1/games/${seg(id)}/hint`, { body });
  }

  /** POST /v1/games/{id}/restart: a new casual game on the same deal (a ranked attempt: `restart_ranked`). */
  restart(id: string, body: Body<'POST /v1/games/{id}/restart'> = {}): Promise<Answer<'POST /v1/games/{id}/restart'>> {
    return this.request('POST', `/v1/games/${seg(id)}/restart`, { body });
  }

  log(id: string, query: Query<'GET /v1/games/{id}/log'> = {}): Promise<Answer<'GET /v1/games/{id}/log'>> {
    return this.request('GET', `/v1/games/${seg(id)}/log${queryString(query)}`);
  }

  replay(id: string): Promise<Answer<'GET /v1/games/{id}/replay'>> {
    return this.request('GET', `/v1/games/${seg(id)}/replay`);
  }

  verdict(id: string): Promise<Answer<'GET /v1/games/{id}/verdict'>> {
    return this.request('GET', `/v1/games/${seg(id)}/verdict`);
  }

  // ---- dailies, leaderboards, audit ----

  /** GET /v1/daily/{game}[/{date}]: today's challenge, or a day's. */
  daily(game: string, date?: string): Promise<Answer<'GET /v1/daily/{game}'>> {
    return this.request('GET', `/v1/daily/${seg(game)}${date ? `/${seg(date)}` : ''}`);
  }

  /** POST /v1/daily/{game}: start (or resume) today's ranked attempt. */
  startDaily(game: string, options: { installId?: string } = {}): Promise<Answer<'POST /v1/daily/{game}'>> {
    const headers: Record<string, string> = options.installId ? { 'X-Install-Id': options.installId } : {};
    return this.request('POST', `/v1/daily/${seg(game)}`, { body: {}, headers });
  }

  leaderboard(game: string, date: string, query: Query<'GET /v1/leaderboards/{game}/{date}'> = {}): Promise<Answer<'GET /v1/leaderboards/{game}/{date}'>> {
    return this.request('GET', `/v1/leaderboards/${seg(game)}/${seg(date)}${queryString(query)}`);
  }

  myRank(game: string, date: string, query: Query<'GET /v1/leaderboards/{game}/{date}/me'> = {}): Promise<Answer<'GET /v1/leaderboards/{game}/{date}/me'>> {
    return this.request('GET', `/v1/leaderboards/${seg(game)}/${seg(date)}/me${queryString(query)}`);
  }

  /** POST /v1/audit: audit a replay export, or a stored game by id. */
  audit(body: Body<'POST /v1/audit'>): Promise<Answer<'POST /v1/audit'>> {
    return this.request('POST', '/v1/audit', { body });
  }
}

export { SolitaireError };
