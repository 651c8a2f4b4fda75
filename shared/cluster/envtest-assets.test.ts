// The assets' --help, which envtest runs before every start: the same text as the
// executable's own, answered from the text saved with the assets while no build is newer;
// and the etcd asset: tkube's etcd, or the installed etcd when asked for.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeEnvtestAssets } from './envtest-assets';
import { DIST, findOnPath } from './process';

describe('envtest assets: kube-apiserver --help', function () {
  this.timeout(30_000);
  let dir: string;

  before(function () {
    if (!findOnPath('kubectl')) this.skip();
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

describe('envtest assets: etcd', function () {
  this.timeout(30_000);
  let dir: string;

  before(function () {
    if (!findOnPath('kubectl')) this.skip();
    dir = mkdtempSync(join(tmpdir(), 'envtest-assets-'));
  });
  after(() => dir && rmSync(dir, { recursive: true, force: true }));

  it("is tkube's etcd by default: one exec of node, and --help offers --unsafe-no-fsync as envtest looks for it", () => {
    const { dir: assets, assets: what } = writeEnvtestAssets(dir);
    assert.equal(what.etcd, join(DIST, 'cmd', 'etcd.js'));
    const script = readFileSync(join(assets, 'etcd'), 'utf8');
    assert.match(script, /^exec .*cmd\/etcd\.js' "\$@"$/m);
    const help = spawnSync(join(assets, 'etcd'), ['--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^\s*--unsafe-no-fsync\b/m);
    assert.equal(help.stdout, readFileSync(join(assets, 'etcd.help'), 'utf8'));
  });

  it('links the installed etcd with --etcd system, and says so when there is none', function () {
    const system = findOnPath('etcd');
    if (!system) {
      assert.throws(() => writeEnvtestAssets(dir, { etcd: 'system' }), /etcd is not installed/);
      return;
    }
    const { dir: assets } = writeEnvtestAssets(dir, { etcd: 'system' });
    assert.equal(readlinkSync(join(assets, 'etcd')), system);
    // And back: the link is replaced by tkube's script.
    writeEnvtestAssets(dir);
    assert.match(readFileSync(join(assets, 'etcd'), 'utf8'), /cmd\/etcd\.js/);
  });
});
