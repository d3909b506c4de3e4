/**
 * Secrets as a site's PHP error line may quote them, for the tests of the masking (src/util/secret-mask.ts)
 * and of every output a logged line reaches. Every value is made at run time from a seed, and every
 * token's prefix from parts, so that no file of the repository holds a string a secret scanner takes
 * for a credential (commit 3adab16).
 */

export const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const HEX = '0123456789abcdef';
const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** `n` characters of `alphabet`, the same for the same seed (mulberry32). */
export function madeUp(n: number, seed: number, alphabet = ALNUM): string {
  let s = seed >>> 0;
  let out = '';
  for (let i = 0; i < n; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    out += alphabet[((t ^ (t >>> 14)) >>> 0) % alphabet.length];
  }
  return out;
}

/** Parts joined: a token's well-known prefix, written so that no scanner reads it whole in this file. */
const p = (...parts: string[]) => parts.join('');

/**
 * Where a secret value stands in a line, by the name before it: `v` a value without spaces, quotes or
 * separators (`,` `;` `&` `)`), `q` one that may hold spaces and punctuation, as only quotes can.
 */
export interface ValueShape {
  label: string;
  quoted: boolean;
  line: (name: string, value: string) => string;
}

export const VALUE_SHAPES: readonly ValueShape[] = [
  { label: 'NAME=value', quoted: false, line: (n, v) => `${n}=${v}` },
  { label: 'NAME: value', quoted: false, line: (n, v) => `${n}: ${v}` },
  { label: 'NAME = value', quoted: false, line: (n, v) => `${n} = ${v},` },
  { label: 'print_r [name] => value', quoted: false, line: (n, v) => `Array ( [user] => wp [${n}] => ${v} )` },
  { label: '--name=value', quoted: false, line: (n, v) => `--${n}=${v}` },
  { label: "name='value'", quoted: true, line: (n, v) => `${n}='${v}'` },
  { label: 'name="value"', quoted: true, line: (n, v) => `${n}="${v}"` },
  { label: 'JSON "name": "value"', quoted: true, line: (n, v) => `{"user":"wp","${n}": "${v}"}` },
  { label: "PHP array 'name' => 'value'", quoted: true, line: (n, v) => `array ( 'user' => 'wp', '${n}' => '${v}', )` },
  { label: "define('NAME', 'value')", quoted: true, line: (n, v) => `define( '${n.toUpperCase()}', '${v}' )` },
  { label: 'escaped JSON', quoted: true, line: (n, v) => `body {\\"${n}\\":\\"${v}\\"}` },
  { label: 'new PDO password', quoted: true, line: (_n, v) => `PDO->__construct('mysql:host=db;dbname=wp', 'root', '${v}')` },
  { label: 'new PDO password (code)', quoted: true, line: (_n, v) => `new PDO("mysql:host=db;dbname=wp", "root", "${v}")` },
  { label: 'new mysqli password', quoted: true, line: (_n, v) => `new mysqli('localhost', 'wp', '${v}', 'wp')` },
  { label: 'mysqli_connect password', quoted: true, line: (_n, v) => `mysqli_connect("db.internal", "wp", "${v}")` },
  { label: 'mysqli_real_connect password', quoted: true, line: (_n, v) => `mysqli_real_connect(Object(mysqli), 'h', 'u', '${v}', 'wp')` },
  { label: 'URL user:password@', quoted: false, line: (_n, v) => `mysql://wp:${v}@db.internal/wp refused` },
  { label: 'URL query value', quoted: false, line: (n, v) => `GET https://api.example.test/v1/x?page=2&${n}=${v}&x=1 failed` },
  { label: 'Authorization: Bearer', quoted: false, line: (_n, v) => `Authorization: Bearer ${v}` },
  { label: 'Authorization: Basic', quoted: false, line: (_n, v) => `Authorization: Basic ${v}` },
  { label: 'Bearer alone', quoted: false, line: (_n, v) => `sent bearer ${v} to the API` },
  {
    label: 'Cookie: header',
    quoted: false,
    line: (_n, v) => `Cookie: wordpress_test_cookie=WP%20Cookie%20check; ${p('wordpress_logged', '_in_')}${madeUp(32, 5, HEX)}=${v}; x=1`,
  },
  { label: 'Set-Cookie: header', quoted: false, line: (_n, v) => `Set-Cookie: PHPSESSID=${v}; path=/; HttpOnly` },
  { label: 'WordPress login cookie', quoted: false, line: (_n, v) => `${p('wordpress_logged', '_in_')}${madeUp(32, 6, HEX)}=${v}` },
];

/** Names that say their value is secret, as sites write them. */
export const SECRET_NAMES = [
  'aws_secret_access_key',
  'WP_DB_PASSWORD',
  'DB_PASSWORD',
  'access_token',
  'AUTH_SALT',
  'NONCE_KEY',
  'api_key',
  'X-Api-Key',
  'client_secret',
  'passwd',
  'session_id',
  'PHPSESSID',
  'license_key',
  'password',
];

/** Token shapes by the rule they come from (gitleaks' id), each made at run time from `seed`; `text`: the words around it, if any. */
export const TOKEN_SHAPES: readonly { id: string; token: (seed: number) => string; text?: (token: string) => string }[] = [
  { id: 'aws-access-token', token: (s) => p('AK', 'IA') + madeUp(16, s, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567') },
  { id: 'github-pat', token: (s) => p('gh', 'p_') + madeUp(36, s) },
  { id: 'github-app-token', token: (s) => p('gh', 's_') + madeUp(36, s) },
  { id: 'github-fine-grained-pat', token: (s) => p('github', '_pat_') + madeUp(22, s) + '_' + madeUp(59, s + 1) },
  { id: 'gitlab-pat', token: (s) => p('gl', 'pat-') + madeUp(20, s) },
  { id: 'slack-bot-token', token: (s) => p('xo', 'xb-') + madeUp(12, s, '0123456789') + '-' + madeUp(24, s + 1) },
  {
    id: 'slack-webhook-url',
    token: (s) => `T${madeUp(10, s)}/B${madeUp(10, s + 1)}/${madeUp(24, s + 2)}`,
    text: (t) => `POST https://${p('hooks.', 'slack.com')}/services/${t} failed`,
  },
  { id: 'stripe-access-token', token: (s) => p('sk', '_live_') + madeUp(24, s) },
  { id: 'stripe-access-token (restricted)', token: (s) => p('rk', '_test_') + madeUp(24, s) },
  { id: 'openai-api-key (project)', token: (s) => p('sk', '-proj-') + madeUp(48, s) },
  { id: 'anthropic-api-key', token: (s) => p('sk', '-ant-api03-') + madeUp(40, s) },
  { id: 'gcp-api-key', token: (s) => p('AI', 'za') + madeUp(35, s) },
  { id: 'jwt', token: (s) => [p('ey', 'J') + madeUp(30, s), p('ey', 'J') + madeUp(40, s + 1), madeUp(43, s + 2)].join('.') },
  { id: 'sendgrid-api-token', token: (s) => p('S', 'G.') + madeUp(22, s) + '.' + madeUp(43, s + 1) },
  { id: 'npm-access-token', token: (s) => p('np', 'm_') + madeUp(36, s) },
  { id: 'huggingface-access-token', token: (s) => p('h', 'f_') + madeUp(34, s, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ') },
  { id: 'twilio-api-key', token: (s) => p('S', 'K') + madeUp(32, s, HEX) },
  { id: 'shopify-access-token', token: (s) => p('shp', 'at_') + madeUp(32, s, HEX) },
  { id: 'digitalocean-pat', token: (s) => p('do', 'p_v1_') + madeUp(64, s, HEX) },
  { id: 'mailchimp-api-key', token: (s) => madeUp(32, s, HEX) + p('-u', 's6') },
  {
    id: 'private-key',
    token: (s) => `${p('-----BEGIN RSA ', 'PRIVATE KEY-----')}\\n${madeUp(64, s)}\\n${madeUp(40, s + 1)}\\n${p('-----END RSA ', 'PRIVATE KEY-----')}`,
  },
  { id: 'aws-amazon-bedrock-api-key-long-lived', token: (s) => p('AB', 'SK') + madeUp(120, s) },
  { id: 'gitlab-rrt', token: (s) => p('GR13', '48941') + madeUp(20, s) },
  { id: 'slack-app-token', token: (s) => p('xa', 'pp-1-') + madeUp(11, s) + '-' + madeUp(13, s + 1, HEX.slice(0, 10)) + '-' + madeUp(64, s + 2, HEX) },
  { id: 'pypi-upload-token', token: (s) => p('pypi-AgEIcHl', 'waS5vcmc') + madeUp(60, s) },
  { id: 'square-access-token', token: (s) => p('sq0', 'atp-') + madeUp(22, s) },
  {
    id: 'microsoft-teams-webhook',
    token: (s) => `https://${madeUp(8, s, LOWER_ALNUM)}.${p('webhook', '.office.com')}/webhookb2/${madeUp(36, s + 1, LOWER_ALNUM)}`,
  },
  { id: 'jwt-base64', token: (s) => p('ZX', 'lK') + madeUp(60, s) },
  { id: 'mailgun-private-api-token', token: (s) => p('ke', 'y-') + madeUp(32, s, HEX) },
  {
    id: 'webhook path',
    token: (s) => `T${madeUp(8, s)}/B${madeUp(8, s + 1)}/${madeUp(20, s + 2, LOWER_ALNUM)}9x`,
    text: (t) => `POST https://hooks.example.test/hooks/${t} failed`,
  },
  { id: 'path token', token: (s) => `${madeUp(30, s, HEX)}7f`, text: (t) => `GET /wp-login.php/reset/${t} failed` },
];

/**
 * The parts of a secret that must reach no output: its runs of 6 or more letters and digits (a
 * masked value shows none of it; one half masked shows some). `known`: text the line holds anyway
 * (a coincidence of a short random run with the words around it is no leak).
 */
export function secretParts(secret: string, known = ''): string[] {
  return (secret.match(/[A-Za-z0-9]{6,}/g) ?? []).filter((part) => !known.includes(part));
}
