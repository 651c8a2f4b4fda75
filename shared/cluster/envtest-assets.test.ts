// The assets' --help, which envtest runs before every start: the same text as the
// executable's own, answered from the text saved with the assets while no build is newer;
// and the etcd asset: the installed etcd, or tkube's etcd where there is none or when asked.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
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

  it("is tkube's etcd with --etcd tkube: one exec of node, and --help offers --unsafe-no-fsync as envtest looks for it", () => {
    const { dir: assets, assets: what } = writeEnvtestAssets(dir, { etcd: 'tkube' });
    assert.equal(what.etcd, join(DIST, 'cmd', 'etcd.js'));
    const script = readFileSync(join(assets, 'etcd'), 'utf8');
    assert.match(script, /^exec .*cmd\/etcd\.js' "\$@"$/m);
    const help = spawnSync(join(assets, 'etcd'), ['--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^\s*--unsafe-no-fsync\b/m);
    assert.equal(help.stdout, readFileSync(join(assets, 'etcd.help'), 'utf8'));
  });

  it("links the installed etcd by default and with --etcd system, tkube's etcd where there is none", function () {
    const system = findOnPath('etcd');
    if (!system) {
      assert.throws(() => writeEnvtestAssets(dir, { etcd: 'system' }), /etcd is not installed/);
      assert.equal(writeEnvtestAssets(dir).assets.etcd, join(DIST, 'cmd', 'etcd.js'));
      return;
    }
    for (const etcd of ['system', undefined] as const) {
      writeEnvtestAssets(dir, { etcd: 'tkube' });
      const { dir: assets } = writeEnvtestAssets(dir, { etcd });
      assert.equal(readlinkSync(join(assets, 'etcd')), system, `--etcd ${etcd ?? 'auto'}`);
    }
    // With no etcd on PATH (only kubectl), auto is tkube's.
    const path = process.env.PATH;
    const bin = join(dir, 'path-without-etcd');
    mkdirSync(bin);
    symlinkSync(findOnPath('kubectl')!, join(bin, 'kubectl'));
    process.env.PATH = bin;
    try {
      assert.equal(writeEnvtestAssets(dir, { etcd: 'auto' }).assets.etcd, join(DIST, 'cmd', 'etcd.js'));
    } finally {
      process.env.PATH = path;
    }
  });
});
