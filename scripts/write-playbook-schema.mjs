// Writes schemas/playbook.schema.json from the actions (run after `npm run build`).
import { writeFileSync } from 'node:fs';
import { playbookSchema } from '../dist/playbook/schema.js';

writeFileSync(new URL('../schemas/playbook.schema.json', import.meta.url), `${JSON.stringify(playbookSchema(), null, 2)}\n`);
