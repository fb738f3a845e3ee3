// Typed errors: every code of protocol/ERRORS.md (as the generated schema lists them) has its
// family, and a REST error map or a WebSocket error/rejected becomes an instance of it (the
// live test, test_ts_sdk_live.py, meets them from a real server).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import {
  AuthError, ERROR_CODES, ERROR_FAMILIES, MoveError, NotFoundError, RateLimitError, RequestError,
  ServerError, SolitaireError, UnavailableError, errorFromCode, errorFromMessage,
} from '../dist/index.js';

test('the generated codes are those of ERRORS.md, each with a family', () => {
  const doc = readFileSync(new URL('../../../protocol/ERRORS.md', import.meta.url), 'utf8');
  const documented = [...doc.matchAll(/^\| `([a-z_]+)` \| (?:\d{3}|—) \|/gm)].map((m) => m[1]).sort();
  assert.deepEqual([...ERROR_CODES].sort(), documented);
  for (const code of ERROR_CODES) {
    const error = errorFromCode(code, 'why');
    assert.ok(error instanceof ERROR_FAMILIES[code], code);
    assert.ok(error instanceof SolitaireError, code);
    assert.equal(error.code, code);
    assert.equal(error.message, 'why');
  }
});

test('messages become typed errors with their fields', () => {
  const rejected = errorFromMessage({ type: 'rejected', move_id: 'm1', game_id: 'g', code: 'illegal_move', message: 'no', reason_code: 'not_accepted', version: 4 });
  assert.ok(rejected instanceof MoveError);
  assert.equal(rejected.name, 'MoveError');
  assert.equal(rejected.details.reason_code, 'not_accepted');
  assert.equal(rejected.details.version, 4);
  const limited = errorFromMessage({ code: 'rate_limited', message: 'slow down', limit: 'messages', retry_after_ms: 120 }, 429);
  assert.ok(limited instanceof RateLimitError);
  assert.equal(limited.retryAfterMs, 120);
  assert.equal(limited.status, 429);
  assert.ok(errorFromCode('unauthorized', 'x') instanceof AuthError);
  assert.ok(errorFromCode('unknown_game', 'x') instanceof NotFoundError);
  assert.ok(errorFromCode('missing_field', 'x') instanceof RequestError);
  assert.ok(errorFromCode('store_unavailable', 'x') instanceof UnavailableError);
  const unknown = errorFromCode('brand_new_code', 'x');
  assert.ok(unknown instanceof ServerError);
  assert.equal(unknown.code, 'unexpected');
});
