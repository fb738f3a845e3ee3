// solitaire-sdk: the TypeScript client of the solitaire game server (protocol version 2).

export * from './client.js';
export * from './connection.js';
export * from './deals.js';
export * from './errors.js';
export * from './game.js';
export * from './messages.js';
export * from './rest.js';
export * from './rng.js';
export * from './state.js';
export * from './view.js';
export type * from './schema.js';
export { API_VERSION, ERROR_CODES } from './schema.js';
export { sha256Hex } from './sha256.js';
