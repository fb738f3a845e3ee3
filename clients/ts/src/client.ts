// One object for an app: the REST client and the live connection sharing a player's token.

import { Connection, type ConnectionOptions, socketUrl } from './connection.js';
import type { GameCopy } from './game.js';
import { type FetchLike, RestClient } from './rest.js';

export interface ClientOptions {
  /** The server's base URL ("https://solitaire.example"; in a page the server serves: location.origin). */
  baseUrl: string;
  /** A saved token (from an earlier `register`). */
  token?: string | null;
  fetch?: FetchLike;
  /** Options of the live connection (its URL defaults to the base URL's /v2/ws). */
  socket?: Partial<ConnectionOptions>;
  /** Called with every new token (registered, renewed once half its 30 days passed, signed in): keep it. */
  onToken?: (token: string) => void;
  /** Renew the token on its own (default true). */
  autoRenew?: boolean;
}

export class SolitaireClient {
  readonly rest: RestClient;
  readonly connection: Connection;

  constructor(options: ClientOptions) {
    const restOptions: ConstructorParameters<typeof RestClient>[0] = {
      baseUrl: options.baseUrl,
      token: options.token ?? null,
      autoRenew: options.autoRenew ?? true,
      // A new token is the socket's too: its next (re)connection authenticates with it.
      onToken: (token) => {
        this.connection.setToken(token);
        options.onToken?.(token);
      },
    };
    if (options.fetch) restOptions.fetch = options.fetch;
    this.rest = new RestClient(restOptions);
    this.connection = new Connection({ url: socketUrl(options.baseUrl), token: options.token ?? null, ...options.socket });
  }

  get token(): string | null {
    return this.rest.token;
  }

  /** A new player (POST /v1/players); its token is used from now on, by REST and the socket. */
  async register(name?: string): Promise<{ player_id: string; token: string }> {
    const player = await this.rest.createPlayer(name === undefined ? {} : { name });
    if (this.connection.isOpen) await this.connection.authenticate(player.token);
    else this.connection.setToken(player.token);
    return player;
  }

  /** Connect (auth with the token), subscribe to a game and resolve to its live local copy. */
  async open(gameId: string): Promise<GameCopy> {
    // The token is sent first on every (re)opened socket, and the server reads in order:
    // the subscription that follows is the owner's when the token is the game's player's.
    this.connection.setToken(this.rest.token);
    if (!this.connection.isOpen) await this.connection.connect();
    return this.connection.subscribe(gameId);
  }

  /** Close the socket for good. */
  close(): void {
    this.connection.close();
  }
}
