// The SDK's accounts against a real server: the token renewed on its own once half its
// lifetime passed (the SDK's clock is moved; the server's is not), and the account routes.
// Prints one JSON summary line. Usage: node test/live/accounts.mjs <server-url>

import { RestClient, SolitaireError, TOKEN_LIFETIME, tokenExpires } from '../../dist/index.js';

const baseUrl = process.argv[2];
const DAY = 24 * 3600 * 1000;
let now = Date.now();
const kept = [];
const rest = new RestClient({ baseUrl, onToken: (token) => kept.push(token), now: () => now });
const summary = { tokensKept: [], errors: [] };

await rest.createPlayer({ name: 'Ts Renewer' });
summary.tokensKept.push(kept.length);
now += 14 * DAY; // under half the lifetime
await rest.me();
summary.tokensKept.push(kept.length);
now += 2 * DAY; // past half: the next call renews first
const me = await rest.me();
summary.tokensKept.push(kept.length);
summary.name = me.name;
summary.renewedLifetime = tokenExpires(rest.token) - Math.floor(Date.now() / 1000) > TOKEN_LIFETIME - 60;

const { code } = await rest.createTransferCode();
const device = new RestClient({ baseUrl });
const moved = await device.redeemTransferCode(code);
summary.samePlayer = moved.player_id === me.player_id && device.token !== null;
try {
  await device.redeemTransferCode(code);
} catch (error) {
  summary.errors.push(error instanceof SolitaireError ? error.code : String(error));
}
summary.exported = (await device.exportAccount()).account.player_id === me.player_id;
await device.signOutEverywhere();
try {
  await rest.me();
} catch (error) {
  summary.errors.push(error instanceof SolitaireError ? error.code : String(error));
}
const other = new RestClient({ baseUrl });
await other.createPlayer();
summary.deleted = (await other.deleteAccount()).deleted === true && other.token === null;
console.log(JSON.stringify(summary));
