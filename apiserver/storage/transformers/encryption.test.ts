// Encryption at rest: values in the store are ciphertext with Kubernetes'
// prefixes and read back in clear through the API; key rotation; secretbox
// against a libsodium vector; configuration errors.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';
import { parseEncryptionConfig, resourceOfKey, ResourceTransformer } from './index';
import { secretboxOpen, secretboxSeal } from './secretbox';

const key = (n: number) => Buffer.alloc(32, n).toString('base64');

const CONFIG = (secretsProviders: string) => `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
${secretsProviders}
- resources: [configmaps]
  providers:
  - aesgcm: {keys: [{name: gcm1, secret: ${Buffer.alloc(16, 7).toString('base64')}}]}
- resources: ['*.apps']
  providers:
  - secretbox: {keys: [{name: box1, secret: ${key(9)}}]}
  - identity: {}
`;

describe('encryption at rest', function () {
  this.timeout(60_000);

  it('seals and opens like NaCl secretbox (libsodium vector)', () => {
    const k = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
    const nonce = Buffer.from(Array.from({ length: 24 }, (_, i) => 100 + i));
    const msg = Buffer.from(
      'The quick brown fox jumps over the lazy dog, and then some more bytes to cross one 64-byte block boundary!!',
    );
    const expected =
      '4979b3fff56e998caa58a828aa79429056d1fce94bc3a78adbdd41e658f3cd3858c540878ed3266bd52c2de26ff9e9fcc00ad4742e4de2c49179704e2072b301e1e4c67d7ca64a306e847369b4c0fb4421f23808bb1c3ce599ec6d9d33b0cdfc3af2ad3193d2197be6fea945148986addaab860e81bd5bb57a5a5e';
    const box = secretboxSeal(msg, nonce, k);
    assert.equal(box.toString('hex'), expected);
    assert.deepEqual(secretboxOpen(box, nonce, k), msg);
    box[20] ^= 1;
    assert.equal(secretboxOpen(box, nonce, k), null);
  });

  it('maps storage keys to resources and picks providers like Kubernetes', () => {
    assert.deepEqual(resourceOfKey('/registry/secrets/ns/a', '/registry'), {
      group: '',
      resource: 'secrets',
    });
    assert.deepEqual(resourceOfKey('/registry/apps/deployments/ns/a', '/registry'), {
      group: 'apps',
      resource: 'deployments',
    });
    assert.deepEqual(resourceOfKey('/registry/example.com/widgets/ns/a', '/registry'), {
      group: 'example.com',
      resource: 'widgets',
    });
    assert.deepEqual(resourceOfKey('/registry/namespaces/default', '/registry'), {
      group: '',
      resource: 'namespaces',
    });
    const t = new ResourceTransformer(
      parseEncryptionConfig(CONFIG(`  - aescbc: {keys: [{name: k1, secret: ${key(1)}}]}`)),
      '/registry',
    );
    const plain = Buffer.from('{"a":1}');
    const enc = t.toStorage(plain, '/registry/secrets/ns/a');
    assert.match(enc.toString('latin1'), /^k8s:enc:aescbc:v1:k1:/);
    assert.deepEqual(t.fromStorage(enc, '/registry/secrets/ns/a'), plain);
    assert.deepEqual(t.toStorage(plain, '/registry/pods/ns/a'), plain);
    const gcm = t.toStorage(plain, '/registry/configmaps/ns/a');
    assert.throws(() => t.fromStorage(gcm, '/registry/configmaps/ns/b'), 'the key is authenticated data');
  });

  it('refuses invalid configurations', () => {
    const bad = (providers: string) => () => parseEncryptionConfig(CONFIG(providers));
    assert.throws(
      bad(`  - aescbc: {keys: [{name: k1, secret: ${Buffer.alloc(10).toString('base64')}}]}`),
      /secret is not of the expected length, got 10/,
    );
    assert.throws(bad(`  - kms: {name: x}`), /kms/);
    assert.throws(bad(`  - rot13: {}`), /Unsupported value: "rot13"/);
    assert.throws(() => parseEncryptionConfig('kind: Nope'), /expected kind EncryptionConfiguration/);
  });

  describe('through the API', () => {
    let dataDir: string;
    let cfgDir: string;
    const secrets = '/api/v1/namespaces/default/secrets';
    const start = (providers: string) => {
      const file = join(cfgDir, `enc-${Date.now()}-${Math.random()}.yaml`);
      writeFileSync(file, CONFIG(providers));
      return startTestAPIServer({ encryptionProviderConfig: file, dataDir });
    };
    before(() => {
      dataDir = mkdtempSync(join(tmpdir(), 'tkube-enc-data-'));
      cfgDir = mkdtempSync(join(tmpdir(), 'tkube-enc-cfg-'));
    });
    after(() => {
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(cfgDir, { recursive: true, force: true });
    });

    it('stores ciphertext and serves clear text, per resource', async () => {
      const srv: TestAPIServer = await start(`  - aescbc: {keys: [{name: key1, secret: ${key(1)}}]}`);
      const api = testRequester(srv.config);
      try {
        const r = await api('POST', secrets, {
          body: {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 's1' },
            stringData: { password: 'hunter2' },
          },
        });
        assert.equal(r.status, 201, r.body.toString());
        const raw = (await srv.running.storage.get('/registry/secrets/default/s1')).kv!.value;
        assert.match(raw.toString('latin1'), /^k8s:enc:aescbc:v1:key1:/);
        assert.ok(!raw.includes(Buffer.from('aHVudGVyMg')) && !raw.includes(Buffer.from('hunter2')));
        assert.equal(
          (await api('GET', `${secrets}/s1`)).json.data.password,
          Buffer.from('hunter2').toString('base64'),
        );
        const list = await api('GET', `${secrets}?resourceVersion=0`);
        assert.ok(list.json.items.some((s: any) => s.metadata.name === 's1'));
        await api('POST', '/api/v1/namespaces/default/configmaps', {
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' }, data: { a: 'b' } },
        });
        const cmRaw = (await srv.running.storage.get('/registry/configmaps/default/c1')).kv!.value;
        assert.match(cmRaw.toString('latin1'), /^k8s:enc:aesgcm:v1:gcm1:/);
        assert.equal(
          (await api('GET', '/api/v1/namespaces/default/configmaps/c1?resourceVersion=0')).json.data.a,
          'b',
        );
        const dep = await api('POST', '/apis/apps/v1/namespaces/default/deployments', {
          body: {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: 'd1' },
            spec: {
              selector: { matchLabels: { a: 'b' } },
              template: {
                metadata: { labels: { a: 'b' } },
                spec: { containers: [{ name: 'c', image: 'x' }] },
              },
            },
          },
        });
        assert.equal(dep.status, 201, dep.body.toString());
        const depKey = (await srv.running.storage.range('/registry/apps/deployments/default/')).kvs[0];
        assert.match(depKey.value.toString('latin1'), /^k8s:enc:secretbox:v1:box1:/);
        assert.equal(
          (await api('GET', '/apis/apps/v1/namespaces/default/deployments/d1')).json.metadata.name,
          'd1',
        );
        const ns = (await srv.running.storage.get('/registry/namespaces/default')).kv!.value;
        assert.ok(!ns.toString('latin1').startsWith('k8s:enc:'));
      } finally {
        await api.close();
        await srv.stop();
      }
    });

    it('rotates keys: reads the old key, writes with the first', async () => {
      const srv = await start(
        `  - aescbc: {keys: [{name: key2, secret: ${key(2)}}, {name: key1, secret: ${key(1)}}]}`,
      );
      const api = testRequester(srv.config);
      try {
        const old = await api('GET', `${secrets}/s1`);
        assert.equal(old.status, 200, old.body.toString());
        assert.equal(old.json.data.password, Buffer.from('hunter2').toString('base64'));
        const raw = async () =>
          (await srv.running.storage.get('/registry/secrets/default/s1')).kv!.value.toString('latin1');
        assert.match(await raw(), /^k8s:enc:aescbc:v1:key1:/);
        const upd = await api('PUT', `${secrets}/s1`, {
          body: { ...old.json, data: { password: Buffer.from('new').toString('base64') } },
        });
        assert.equal(upd.status, 200, upd.body.toString());
        assert.match(await raw(), /^k8s:enc:aescbc:v1:key2:/);
      } finally {
        await api.close();
        await srv.stop();
      }
      // Without key1 and key2 the secret cannot be read, but the server still answers.
      const other = await start(`  - secretbox: {keys: [{name: other, secret: ${key(3)}}]}`);
      const api2 = testRequester(other.config);
      try {
        const r = await api2('GET', `${secrets}/s1`);
        assert.equal(r.status, 500);
        assert.equal(r.json.kind, 'Status');
      } finally {
        await api2.close();
        await other.stop();
      }
    });
  });
});
