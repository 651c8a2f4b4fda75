// The assets' --help, which envtest runs before every start: the same text as the
// executable's own, answered from the text saved with the assets while no build is newer;
// and the etcd asset: the installed etcd, or tkube's etcd without one or when asked for.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeEnvtestAssets } from './envtest-assets';
import { DIST, findOnPath, freePort, waitUntil } from './process';

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

  it("is the installed etcd by default (tkube's without one), exec'd with raft timings for one member", async function () {
    const system = findOnPath('etcd');
    const { dir: assets, assets: what } = writeEnvtestAssets(dir);
    if (!system) {
      assert.equal(what.etcd, join(DIST, 'cmd', 'etcd.js'));
      assert.throws(() => writeEnvtestAssets(dir, { etcd: 'system' }), /etcd is not installed/);
      return;
    }
    assert.equal(what.etcd, system);
    const script = readFileSync(join(assets, 'etcd'), 'utf8');
    assert.match(script, /^exec '[^']*etcd' '--heartbeat-interval=10' '--election-timeout=100' "\$@"$/m);
    assert.equal(existsSync(join(assets, 'etcd.help')), false, "no saved help: the installed etcd's own");
    // Started as envtest starts it, it takes the timings and answers /health.
    const port = await freePort();
    const data = mkdtempSync(join(tmpdir(), 'envtest-etcd-'));
    const url = `http://127.0.0.1:${port}`;
    const child = spawn(
      join(assets, 'etcd'),
      [
        `--advertise-client-urls=${url}`,
        `--data-dir=${data}`,
        `--listen-client-urls=${url}`,
        `--listen-peer-urls=http://127.0.0.1:${await freePort()}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    try {
      await waitUntil(
        async () => (await fetch(`${url}/health`).catch(() => undefined))?.ok,
        20_000,
        'etcd /health',
      );
      assert.match(stderr, /heartbeat[^\n]*10ms|"heartbeat-interval":"10ms"/);
      // One process: the script exec'd etcd.
      assert.match(
        readFileSync(`/proc/${child.pid}/cmdline`, 'utf8'),
        /^[^\0]*etcd\0--heartbeat-interval=10\0/,
      );
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(data, { recursive: true, force: true });
    }
    // And back: --etcd tkube replaces it with tkube's script.
    writeEnvtestAssets(dir, { etcd: 'tkube' });
    assert.match(readFileSync(join(assets, 'etcd'), 'utf8'), /cmd\/etcd\.js/);
  });
});
