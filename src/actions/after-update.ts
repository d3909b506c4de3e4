/**
 * The commands that follow an update, by what was updated: a fixed table, the only place they come
 * from (real-service-notes.md, "After an update"). `wp core update` leaves WordPress's database as it
 * was: after an x.y release every site says "Database update required" until `wp core update-db`
 * runs. Some plugins have a step of their own. Nothing the service sends enters a command: a task
 * names slugs of this table (`with.after_update`, refused by the schema otherwise), and the run
 * sends the table's text. Each command matches the service's wp_command pattern (hosting-api-spec.md,
 * Limits); test/run/database-step.test.ts checks it.
 */

/** WordPress's own step, after every core write whose operation succeeded (and after a restore of one). */
export const CORE_DATABASE = 'wp core update-db';

/** `with.after_update` of `plugins.update`: the item slugs whose own step runs after a write updated them, and its commands in order. */
export const AFTER_UPDATE: Readonly<Record<string, readonly string[]>> = {
  woocommerce: ['wp wc update'],
};

/** The `with.after_update` field of `plugins.update`. */
export const afterUpdateField = {
  type: 'array',
  uniqueItems: true,
  minItems: 1,
  items: { enum: Object.keys(AFTER_UPDATE) },
  description: `plugin slugs whose own database step runs after a write of this task updated them, through WP-CLI, from a fixed list: ${Object.entries(
    AFTER_UPDATE,
  )
    .map(([slug, commands]) => `${slug} (${commands.map((c) => `\`${c}\``).join(', ')})`)
    .join('; ')}`,
};
