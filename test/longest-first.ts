import { statSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Test files longest first, also on a fresh clone (vitest orders by the durations it cached, and a
 * clone has none): the end-to-end files under test/cli/ wait the longest, so they start first, the
 * largest of them first; the quick unit files fill the gaps at the end.
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const weight = (f: TestSpecification) => (f.moduleId.includes('/test/cli/') ? 1e9 : 0) + statSync(f.moduleId).size;
    return [...files].sort((a, b) => weight(b) - weight(a));
  }
}
