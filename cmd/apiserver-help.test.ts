// `apiserver --help` loads nothing but the flag table: envtest runs `kube-apiserver --help`
// on every start (and greps it), so help must not pay for the server's modules.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('apiserver --help', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'tkube-help-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints every flag envtest passes and loads only commander and the flag table', () => {
    const preload = join(dir, 'record-modules.js');
    const loaded = join(dir, 'modules.txt');
    writeFileSync(
      preload,
      `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(loaded)}, Object.keys(require.cache).join('\\n')));`,
    );
    const r = spawnSync(process.execPath, ['-r', preload, join(__dirname, 'apiserver.js'), '--help'], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    for (const flag of [
      'allow-privileged',
      'authorization-mode',
      'bind-address',
      'cert-dir',
      'client-ca-file',
      'disable-admission-plugins',
      'etcd-servers',
      'secure-port',
      'service-account-issuer',
      'service-account-key-file',
      'service-account-signing-key-file',
      'service-cluster-ip-range',
      'advertise-address',
      'run-controller-manager',
    ])
      assert.match(r.stdout, new RegExp(`^\\s*--${flag}\\b`, 'm'), flag);
    const modules = readFileSync(loaded, 'utf8').split('\n').filter(Boolean);
    const packages = new Set(
      modules
        .filter((m) => m.includes('/node_modules/'))
        .map((m) => m.split('/node_modules/')[1].split('/')[0]),
    );
    assert.deepEqual([...packages], ['commander']);
    const own = modules.filter((m) => !m.includes('/node_modules/') && m !== preload);
    assert.ok(
      own.every((m) =>
        /\/dist\/(cmd\/apiserver|shared\/options\/[a-z-]+|apiserver\/server\/options\/[a-z-]+)\.js$/.test(m),
      ),
      own.join('\n'),
    );
  });
});
