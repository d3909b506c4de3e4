// Writes the generated parts of docs/ from the code (run after `npm run build`): the action table.
import { readFileSync, writeFileSync } from 'node:fs';
import { withActionTable } from '../dist/cli/action-table.js';

const page = new URL('../docs/playbooks.md', import.meta.url);
writeFileSync(page, withActionTable(readFileSync(page, 'utf8')));
