// Talking to the server: JSON over REST (protocol/REST.md) and msgpack over one WebSocket
// (protocol/WEBSOCKET.md) that reconnects by itself.

import { decode, encode } from '/static/vendor/msgpack/index.mjs';

/** A REST failure: `code` from protocol/ERRORS.md (or "network"), `status` the HTTP status. */
export class ApiError extends Error {
  constructor(code, message, status, body) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = status;
    this.body = body;
  }
}

/** One REST call; resolves to the decoded JSON body, rejects with an ApiError. */
export async function rest(method, path, { token, body } = {}) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    });
  } catch (error) {
    throw new ApiError('network', `the server cannot be reached (${error.message})`, 0, null);
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = (data && data.error) || {};
    throw new ApiError(error.code || 'http', error.message || `HTTP ${response.status}`, response.status, data);
  }
  return data;
}

/** The WebSocket URL of this page's server. */
export function socketUrl() {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/v2/ws`;
}

const BACKOFF_FIRST_MS = 300;
const BACKOFF_MAX_MS = 5000;
const PING_EVERY_MS = 20000;
const SILENCE_LIMIT_MS = 45000;

/**
 * A WebSocket that speaks msgpack and reconnects with backoff after any close.
 * Callbacks: onopen(isReconnect), onmessage(message), onclose(), onstate(state) where state
 * is "connecting" (the first time), "open" or "offline" (waiting to reconnect).
 */
export class Socket {
  constructor(url, handlers) {
    this.url = url;
    this.handlers = handlers;
    this.ws = null;
    this.attempt = 0;
    this.opened = false;
    this.timer = null;
    this.pingTimer = null;
    this.lastHeard = 0;
    this.state = 'connecting';
  }

  start() {
    this.connect();
    window.addEventListener('online', () => this.reconnectNow());
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') this.reconnectNow();
    });
  }

  get isOpen() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  setState(state) {
    this.state = state;
    if (this.handlers.onstate) this.handlers.onstate(state);
  }

  connect() {
    clearTimeout(this.timer);
    this.timer = null;
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch {
      this.scheduleReconnect();
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws !== ws) return;
      const isReconnect = this.opened;
      this.opened = true;
      this.lastHeard = Date.now();
      this.setState('open');
      this.startPings();
      if (this.handlers.onopen) this.handlers.onopen(isReconnect);
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      this.lastHeard = Date.now();
      if (typeof event.data === 'string') return; // the protocol only sends binary frames
      let message;
      try {
        message = decode(new Uint8Array(event.data));
      } catch {
        return;
      }
      if (message && typeof message === 'object' && typeof message.type === 'string') {
        this.attempt = 0;
        this.handlers.onmessage(message);
      }
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.stopPings();
      if (this.handlers.onclose) this.handlers.onclose();
      this.scheduleReconnect();
    };
    ws.onerror = () => {}; // a close follows
  }

  scheduleReconnect() {
    if (this.timer !== null) return;
    this.setState(this.opened ? 'offline' : 'connecting');
    const base = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 10);
    const delay = base * (0.75 + Math.random() * 0.5);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect();
    }, delay);
  }

  /** Drop the connection and start over (it seems to be dead without knowing it). */
  restart() {
    if (this.ws !== null) this.ws.close();
  }

  /** Skip the backoff wait (the network is back, or the page is shown again). */
  reconnectNow() {
    if (this.ws === null && this.timer !== null) {
      this.attempt = 0;
      this.connect();
    }
  }

  startPings() {
    this.stopPings();
    this.pingTimer = setInterval(() => {
      if (!this.isOpen) return;
      if (Date.now() - this.lastHeard > SILENCE_LIMIT_MS) {
        this.ws.close(); // half-open: start over
        return;
      }
      this.send({ type: 'ping' });
    }, PING_EVERY_MS);
  }

  stopPings() {
    clearInterval(this.pingTimer);
    this.pingTimer = null;
  }

  /** Send one message; false when the socket is not open (nothing is queued). */
  send(message) {
    if (!this.isOpen) return false;
    this.ws.send(encode(message));
    return true;
  }
}
