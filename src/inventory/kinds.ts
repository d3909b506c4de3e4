/**
 * What differs by the kind of an installed item, as data: the listing read, the writes sent, the words
 * printed. Everything else (update policies, release age, staging first, checks, restore, outputs)
 * speaks of items and reads this table; a third kind is a new row, never a copy (ARCHITECTURE.md, "An
 * installed item has a kind").
 */

export const KINDS = ['theme', 'plugin', 'core'] as const;
export type Kind = (typeof KINDS)[number];

/**
 * The kind whose listing is the inventory of environments, read for every plan and every view (the
 * others are read where a task or a view needs them), and whose records and store keys were written
 * before kinds came: they name no kind, and still read as they did.
 */
export const BASE_KIND = 'theme' satisfies Kind;
/** The kinds read besides the base one. */
export const OTHER_KINDS: readonly Exclude<Kind, typeof BASE_KIND>[] = KINDS.filter((k) => k !== BASE_KIND);

/** A store key's kind part: nothing for the base kind (its keys are as they were), the kind for any other. */
export function keyKind(kind: Kind): [] | [Kind] {
  return kind === BASE_KIND ? [] : [kind];
}

export interface KindRow {
  kind: Kind;
  /** The plural as the API and the playbook say it: `with: { themes }`, the bulk body's `{ themes: [...] }`; the action is `<plural>.update`. */
  plural: 'themes' | 'plugins' | 'core';
  /**
   * The company listing's endpoint (theme-major pages, each with the environments it is on); for
   * WordPress itself, the site listing, which shows the version each environment runs.
   */
  listing: 'listThemes' | 'listPlugins' | 'listSites';
  /** An environment's own listing, where the kind has one: read where the company one cannot be used. */
  environmentListing?: 'listEnvironmentPlugins';
  /** The bulk update, where the kind has one: it names no version, and installs whatever is newest when the service runs it. */
  bulk?: 'bulkUpdateThemes' | 'bulkUpdatePlugins';
  /** The update of one item to the version the plan judged (WordPress: `wp core update --version=…` through WP-CLI). */
  pinned: 'updateTheme' | 'updatePlugin' | 'runWpCliCommand';
  /** The one item of a kind that has only one (WordPress itself): no slug to pick, its listing names none. */
  only?: string;
  /**
   * What makes an install exposed (`inventory --exposure`): a version the listing flags vulnerable, or,
   * where the service flags none (WordPress), being behind the newest version by more than a minor.
   */
  exposed: 'vulnerable' | 'behind';
  /** The heading of a monthly record's list of these updates. */
  heading: string;
  /** Where a PHP error names the item's files (`… in /www/x/public/wp-content/plugins/<slug>/…`). */
  codePath: string;
  /**
   * The pattern (regular-expression source) of an item's files in an error line, `folder` being the
   * pattern of its folder name: `wp-content/plugins/<folder>/`; WordPress's own have no folder of the
   * item (`wp-includes/`), so `folder` is not used.
   */
  filesPattern(folder: string): string;
  /**
   * The company listing shows a write once its operation ended, so one filtered read can confirm a
   * batch of them (themes). The plugin listing may lag hours behind (the vendor's staff: cached up to
   * 12 hours): its writes are confirmed by their operations, and `verify` reads each environment's own.
   */
  listingConfirms: boolean;
  /**
   * Where a write of the kind is read back from once its wave ended (run/verify.ts; the estimate counts
   * the same reads): the company listing (one read), each written environment's own listing (one read
   * each: the company listing lags behind a write), or the site listing (one read).
   */
  readBackFrom: 'company' | 'environments' | 'sites';
  /**
   * What most often keeps an item where it was when the service ran its update and the site did not
   * move (a `not_updated` step's reason ends with it): what a person should look at first.
   */
  notMoved: string;
  /** A slug glob a playbook example names, and a slug it matches (the stand-in environment validate expands on). */
  example: string;
  sample: string;
}

export const KIND_TABLE: Record<Kind, KindRow> = {
  theme: {
    kind: 'theme',
    plural: 'themes',
    listing: 'listThemes',
    bulk: 'bulkUpdateThemes',
    pinned: 'updateTheme',
    heading: 'Theme updates',
    codePath: 'wp-content/themes/',
    filesPattern: (folder) => `wp-content/themes/${folder}/`,
    listingConfirms: true,
    readBackFrom: 'company',
    exposed: 'vulnerable',
    notMoved: 'a premium theme needs its licence on the site',
    example: 'twenty*',
    sample: 'twentytwentyfour',
  },
  plugin: {
    kind: 'plugin',
    plural: 'plugins',
    listing: 'listPlugins',
    environmentListing: 'listEnvironmentPlugins',
    bulk: 'bulkUpdatePlugins',
    pinned: 'updatePlugin',
    heading: 'Plugin updates',
    codePath: 'wp-content/plugins/',
    filesPattern: (folder) => `wp-content/plugins/${folder}/`,
    listingConfirms: false,
    readBackFrom: 'environments',
    exposed: 'vulnerable',
    notMoved: 'a premium plugin needs its licence on the site',
    example: 'woo*',
    sample: 'woocommerce',
  },
  core: {
    kind: 'core',
    plural: 'core',
    listing: 'listSites',
    pinned: 'runWpCliCommand',
    only: 'wordpress',
    heading: 'WordPress updates',
    codePath: 'wp-includes/',
    filesPattern: () => 'wp-includes/',
    // The site listing shows the version once the command ran; a step is read back from it whatever.
    listingConfirms: false,
    readBackFrom: 'sites',
    exposed: 'behind',
    notMoved: "WordPress's files may not be writable by the update: look at the site",
    example: 'wordpress',
    sample: 'wordpress',
  },
};

/**
 * How a record (a release-age or staging decision, a store's line) names its item: one field named
 * for its kind, `{ theme: "astra" }`, `{ plugin: "akismet" }` or `{ core: "wordpress" }`. A theme's records read as they did
 * before plugins came, and no record can name an item without saying which kind it is.
 */
export type ItemRef = { theme: string } | { plugin: string } | { core: string };

export function refOf(kind: Kind, name: string): ItemRef {
  return { [kind]: name } as ItemRef;
}

/** The kind and name a record names; undefined for one that names none (a store line of another shape). */
export function itemOf(record: object): { kind: Kind; name: string } | undefined {
  for (const kind of KINDS) {
    const name = (record as Record<string, unknown>)[kind];
    if (typeof name === 'string') return { kind, name };
  }
  return undefined;
}

/** The field that names a record's item, copied into another record (a webhook's line of it). */
export function refFrom(record: ItemRef): ItemRef {
  const item = itemOf(record)!;
  return refOf(item.kind, item.name);
}

/** The name a record gives its item ('' when it gives none: the schemas make sure one is there). */
export function nameOf(record: object): string {
  return itemOf(record)?.name ?? '';
}

/** One key for (kind, name): the Maps of stores and tables use it, never an object field. */
export function itemKey(kind: Kind, name: string): string {
  return `${kind}\u0000${name}`;
}
