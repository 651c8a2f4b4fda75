// What the apiserver loads to start: not CEL (cel-js and the Kubernetes CEL libraries, ~80 ms
// of CPU) until a CEL rule is compiled, nor the controller manager (loaded by
// --run-controller-manager after ready). A module list, not a time.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const DIST = join(__dirname, '..', '..');

describe('apiserver: modules it loads only on first use', function () {
  this.timeout(30_000);

  it('builds the server without CEL or the controller manager; CEL loads with its first environment', () => {
    const script = `
      const loaded = (re) => Object.keys(require.cache).filter((f) => re.test(f));
      const cel = /node_modules[\\\\/]@marcbachmann[\\\\/]cel-js[\\\\/]|shared[\\\\/]cel[\\\\/]library[\\\\/]index\\.js$/;
      const cm = /controller-manager[\\\\/]/;
      require(${JSON.stringify(join(DIST, 'apiserver', 'server', 'app.js'))});
      const atStart = { cel: loaded(cel), cm: loaded(cm) };
      require(${JSON.stringify(join(DIST, 'shared', 'cel', 'engine.js'))}).newEnvironment();
      console.log(JSON.stringify({ atStart, celAfter: loaded(cel).length > 0 }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
    assert.deepEqual(out, { atStart: { cel: [], cm: [] }, celAfter: true });
  });
});
