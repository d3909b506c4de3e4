import type { RunOutput } from './output.js';

/** What a task's answers hold that is a secret (login links, command output), in the files its tasks name (mode 0600). */
export const privateFiles: RunOutput = {
  name: 'private files',
  async files({ playbook }) {
    if (!playbook) return [];
    const { privateOutputFiles } = await import('../secret-outputs.js');
    return privateOutputFiles(playbook);
  },
  async write({ playbook, plan, results, io, quiet }) {
    if (!playbook || !plan || !results) return;
    const { writePrivateOutputs } = await import('../secret-outputs.js');
    for (const line of writePrivateOutputs(playbook, plan, results)) if (!quiet) io.stdout.write(`${line}\n`);
  },
};
