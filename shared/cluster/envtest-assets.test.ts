// The kube-apiserver asset's --help, which envtest runs before every start: the same text as
// the apiserver's own, answered from the text saved with the assets while no build is newer.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeEnvtestAssets } from './envtest-assets';
import { DIST, findOnPath } from './process';

describe('envtest assets: kube-apiserver --help', function () {
  this.timeout(30_000);
  let dir: string;

  before(function () {
    if (!findOnPath('etcd') || !findOnPath('kubectl')) this.skip();
    dir = mkdtempSync(join(tmpdir(), 'envtest-assets-'));
  });
  after(() => dir && rmSync(dir, { recursive: true, force: true }));

  it("prints the apiserver's own help and exits 0", () => {
    const { dir: assets } = writeEnvtestAssets(dir);
    const own = spawnSync(process.execPath, [join(DIST, 'cmd', 'apiserver.js'), '--help'], {
      encoding: 'utf8',
    });
    const asset = spawnSync(join(assets, 'kube-apiserver'), ['--help'], { encoding: 'utf8' });
    assert.equal(asset.status, 0, asset.stderr);
    assert.match(asset.stdout, /^\s*--etcd-servers\b/m);
    assert.equal(asset.stdout, own.stdout);
  });

  it('answers from the saved text, without starting node', () => {
    const { dir: assets } = writeEnvtestAssets(dir);
    const saved = join(assets, 'kube-apiserver.help');
    const text = readFileSync(saved, 'utf8');
    // A marker only the saved file holds: if node answered, it would not be there.
    writeFileSync(saved, `${text}  --saved-text-marker\n`);
    const asset = spawnSync(join(assets, 'kube-apiserver'), ['--help'], { encoding: 'utf8' });
    assert.equal(asset.status, 0, asset.stderr);
    assert.match(asset.stdout, /--saved-text-marker/);
  });
});
