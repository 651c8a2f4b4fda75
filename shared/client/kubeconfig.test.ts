// Kubeconfig files in both formats tkube writes: YAML for people, JSON for its components.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKubeconfig, writeKubeconfig, type KubeconfigInput } from './kubeconfig';

describe('shared/client: kubeconfig files', () => {
  let dir: string;
  const input: KubeconfigInput = {
    server: 'https://127.0.0.1:6443',
    caPem: '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n',
    certPem: '-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n',
    keyPem: '-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n',
    userName: 'system:node:n1',
  };
  before(() => (dir = mkdtempSync(join(tmpdir(), 'tkube-kubeconfig-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads back the same configuration from YAML and from JSON', () => {
    writeKubeconfig(join(dir, 'people'), input);
    writeKubeconfig(join(dir, 'component'), input, 'json');
    assert.match(readFileSync(join(dir, 'people'), 'utf8'), /^apiVersion: v1$/m);
    const json = JSON.parse(readFileSync(join(dir, 'component'), 'utf8'));
    assert.equal(json.users[0].name, 'system:node:n1');
    const fromYAML = loadKubeconfig(join(dir, 'people'));
    assert.deepEqual(loadKubeconfig(join(dir, 'component')), fromYAML);
    assert.equal(fromYAML.server, input.server);
    assert.equal(fromYAML.caPem, input.caPem);
    assert.equal(fromYAML.keyPem, input.keyPem);
  });

  it('reads a JSON kubeconfig without loading the YAML parser, and a YAML one with it', () => {
    const loaded = (file: string) =>
      execFileSync(process.execPath, [
        '-e',
        `require(${JSON.stringify(require.resolve('./kubeconfig'))}).loadKubeconfig(${JSON.stringify(file)});` +
          `console.log(Object.keys(require.cache).some((m) => m.includes('node_modules/yaml/')))`,
      ])
        .toString()
        .trim();
    assert.equal(loaded(join(dir, 'component')), 'false');
    assert.equal(loaded(join(dir, 'people')), 'true');
  });
});
