/**
 * The installed package's own folder (package.json, schemas/, playbooks/), from a module two levels
 * down: src/util/ when the tests run the sources, dist/util/ built, dist/bin/ bundled (the bundle's
 * modules all see its own URL: scripts/bundle-program.mjs refuses one deeper that reads import.meta).
 */
export const PACKAGE_ROOT = new URL('../../', import.meta.url);
