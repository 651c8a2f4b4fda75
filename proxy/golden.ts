// Golden files of the renderer tests, committed in proxy/testdata/ beside the tests;
// UPDATE_GOLDEN=1 rewrites them (then read the diff before committing it).
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Compiled tests run from dist/proxy; the goldens stay in the source tree.
const TESTDATA = join(__dirname, '..', '..', 'proxy', 'testdata');

export function assertGolden(file: string, actual: string): void {
  const path = join(TESTDATA, file);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(path, actual);
  assert.ok(existsSync(path), `golden ${path} missing (run with UPDATE_GOLDEN=1)`);
  assert.equal(actual, readFileSync(path, 'utf8'), `output differs from golden ${file}`);
}
