// The account panel of the "My games" page (protocol/ACCOUNTS.md): transfer codes (give one,
// enter one), the data export, "sign out everywhere" and deleting the account. `session` is
// main.mjs's {player(), asPlayer(method, path, body), adopt(player), forget()}.

import { RestClient, SolitaireError } from '/static/sdk/index.js';

const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);

/** Redemption needs no token: its own client, so the page's player is not sent. */
const anonymous = new RestClient();

function note(text, kind = 'info') {
  const line = $('account-note');
  line.textContent = text;
  line.dataset.kind = kind;
}

function reason(error) {
  return error instanceof SolitaireError ? `${error.message} (${error.code})` : String(error);
}

function time(ms) {
  return new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

/** Fill the panel from the account view (`GET /v1/players/me`; null: no player yet). */
export function showAccount(me) {
  const hasPlayer = me !== null;
  for (const id of ['transfer-give', 'account-export', 'account-signout', 'account-delete']) {
    $(id).disabled = !hasPlayer;
  }
  $('account-delete-confirm').hidden = true;
  const codes = me?.transfer_codes ?? [];
  $('account-codes').textContent = codes.length
    ? `Pending transfer codes: ${codes.length} (the last expires at ${time(codes[codes.length - 1].expires_at)}).`
    : 'No pending transfer code.';
  $('account-identity').textContent = me?.identity
    ? `Signed in with ${me.identity.issuer}.`
    : 'Anonymous player: to keep this account on another device, give yourself a transfer code.';
}

async function giveCode(session) {
  try {
    const { code, expires_at: expiresAt } = await session.asPlayer('POST', '/v1/players/me/transfer', {});
    $('transfer-code').textContent = code;
    $('transfer-code-row').hidden = false;
    note(`Enter this code on your other device before ${time(expiresAt)}. It works once.`);
    showAccount(await session.asPlayer('GET', '/v1/players/me'));
  } catch (error) {
    note(`No code: ${reason(error)}`, 'error');
  }
}

async function useCode(session, event) {
  event.preventDefault();
  const input = $('transfer-input');
  const code = input.value.trim();
  $('transfer-error').textContent = '';
  if (!code) {
    $('transfer-error').textContent = 'Type the code shown on your other device.';
    return;
  }
  try {
    const player = await anonymous.request('POST', '/v1/players/transfer', { body: { code }, token: null });
    session.adopt({ player_id: player.player_id, token: player.token });
    input.value = '';
    note(player.name ? `Welcome back, ${player.name}: this device is now your player.` : 'This device is now your player.');
    await session.refresh();
  } catch (error) {
    $('transfer-error').textContent =
      error instanceof SolitaireError && error.code === 'unknown_transfer_code'
        ? 'That code is wrong, used or expired (codes last 15 minutes).'
        : reason(error);
  }
}

async function exportData(session) {
  try {
    const data = await session.asPlayer('GET', '/v1/players/me/export');
    const blob = new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' });
    const link = $('account-export-link');
    if (link.href) URL.revokeObjectURL(link.href);
    link.href = URL.createObjectURL(blob);
    link.download = `solitaire-account-${data.account.player_id}.json`;
    link.hidden = false;
    note('Your data is ready: save the file.');
  } catch (error) {
    note(`No export: ${reason(error)}`, 'error');
  }
}

async function signOutEverywhere(session) {
  try {
    await session.asPlayer('DELETE', '/v1/players/me/tokens', {});
    session.forget();
    note('Signed out everywhere: every device of this player must sign in again.');
    await session.refresh();
  } catch (error) {
    note(`Not signed out: ${reason(error)}`, 'error');
  }
}

async function deleteAccount(session) {
  try {
    await session.asPlayer('DELETE', '/v1/players/me', { confirm: true });
    session.forget();
    note('Your account is deleted: your name and games are gone; ranked results stay on past boards, anonymously.');
    await session.refresh();
  } catch (error) {
    note(`Not deleted: ${reason(error)}`, 'error');
  }
}

/** Attach the panel's controls (once, at start). */
export function wireAccount(session) {
  $('transfer-give').addEventListener('click', () => giveCode(session));
  $('transfer-form').addEventListener('submit', (event) => useCode(session, event));
  $('account-export').addEventListener('click', () => exportData(session));
  $('account-signout').addEventListener('click', () => signOutEverywhere(session));
  $('account-delete').addEventListener('click', () => {
    $('account-delete-confirm').hidden = false;
    $('account-delete-confirm').focus();
  });
  $('account-delete-confirm').addEventListener('click', () => deleteAccount(session));
}
