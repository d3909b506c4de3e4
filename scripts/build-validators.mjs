// Writes dist/generated/validators.js: every schema's validator compiled now, so that no command
// compiles one at start-up (see src/util/validators.ts). Run by `npm run build`, after tsc.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';

const target = new URL('../dist/generated/validators.js', import.meta.url);
// An older build's validators must not be loaded while these are made.
rmSync(target, { force: true });
const { validatorsModule } = await import('../dist/app/validator-schemas.js');
mkdirSync(new URL('./', target), { recursive: true });
writeFileSync(target, await validatorsModule());
