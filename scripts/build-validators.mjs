// Writes dist/generated/validators/: every schema's validator compiled now, one file each, so that no
// command compiles one at start-up, and each loads only the ones it uses (see src/util/validators.ts);
// beside each, V8's code cache of it once it has run (on the example playbooks, for the playbook's).
// Run by `npm run build`, after tsc.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const target = new URL('../dist/generated/validators/', import.meta.url);
// An older build's validators must not be loaded while these are made (nor the one file older builds wrote).
rmSync(target, { recursive: true, force: true });
rmSync(new URL('../dist/generated/validators.js', import.meta.url), { force: true });
const { validatorFiles } = await import('../dist/app/validator-schemas.js');
const { builtScript } = await import('../dist/util/validators.js');
const files = await validatorFiles();
mkdirSync(target, { recursive: true });
for (const [file, text] of Object.entries(files)) writeFileSync(new URL(file, target), text);

const examples = new URL('../playbooks/', import.meta.url);
const playbooks = readdirSync(examples)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => parse(readFileSync(new URL(f, examples), 'utf8')));
for (const file of Object.keys(files).filter((f) => f.endsWith('.cjs'))) {
  const path = fileURLToPath(new URL(file, target));
  const { make, keep } = builtScript(path);
  const validate = make();
  // What the cache holds is what has been compiled: the code the example playbooks run through.
  for (const input of file === 'playbook.cjs' ? playbooks : [{}]) validate(input);
  keep();
}
