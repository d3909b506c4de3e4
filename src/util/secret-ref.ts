/**
 * A secret the playbook names by reference (`${HC_PING_URL}`): the playbook, the plan and the report
 * hold the reference, and the value is read from the environment only where it is used. Ping and
 * webhook URLs are secrets (a healthchecks URL is all it takes to ping its check; a Slack webhook
 * URL to post to its channel), and so are signing keys.
 */
const REF = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** The variable a `${VAR}` reference names, or undefined for any other text. */
export function refName(text: string): string | undefined {
  return REF.exec(text)?.[1];
}

/** A `${VAR}` reference resolved from `env` (undefined when unset); any other text as it is (`--ping URL` on a command line). */
export function resolveRef(text: string, env: Record<string, string | undefined>): string | undefined {
  const name = refName(text);
  return name === undefined ? text : env[name];
}

/** An http(s) URL, or why not, in words that never quote it (it is a secret). */
export function httpUrl(text: string): URL | { problem: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: 'is not a URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: `is a ${url.protocol.replace(':', '')} URL, not http(s)` };
  return url;
}
