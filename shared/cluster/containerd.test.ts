// A node's containerd with registry mirrors from a k3s-style registries.yaml:
// an image only a local registry (Debian's docker-registry on 127.0.0.1, the
// image pushed with skopeo) serves is pulled under its docker.io name, as
// `image: busybox` with pull policy Always works on a machine without internet.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CriClient } from '../cri/client';
import {
  runtimeTestsUnavailable,
  startTestContainerd,
  testImagesDir,
  type TestContainerd,
} from '../../nodeagent/cri/testing';
import { freePort, waitUntil } from './process';
import { writeMirrors } from './containerd';
import { registryMissing, SKOPEO_BIN, startRegistry, type RunningRegistry } from './registry';
import type { Restart } from './supervisor';

describe('containerd registry mirrors (registries.yaml)', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-mirrors-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("writes containerd's hosts.toml for each mirrored registry", () => {
    const file = join(dir, 'registries.yaml');
    writeFileSync(
      file,
      'mirrors:\n  docker.io:\n    endpoint: ["http://127.0.0.1:5000"]\n  quay.io:\n    endpoint:\n      - https://127.0.0.1:5443\n',
    );
    writeMirrors(file, join(dir, 'certs.d'));
    const docker = readFileSync(join(dir, 'certs.d', 'docker.io', 'hosts.toml'), 'utf8');
    assert.match(docker, /^server = "https:\/\/registry-1\.docker\.io"$/m);
    assert.match(docker, /^\[host\."http:\/\/127\.0\.0\.1:5000"\]$/m);
    assert.match(docker, /capabilities = \["pull", "resolve"\]/);
    const quay = readFileSync(join(dir, 'certs.d', 'quay.io', 'hosts.toml'), 'utf8');
    assert.match(quay, /^server = "https:\/\/quay\.io"$/m);
    assert.match(quay, /^\[host\."https:\/\/127\.0\.0\.1:5443"\]$/m);
  });

  it("makes the cluster's registry every public registry's mirror, and with mirrorOnly its only endpoint", () => {
    const file = join(dir, 'registries.yaml');
    writeFileSync(file, 'mirrors:\n  docker.io:\n    endpoint: ["http://127.0.0.1:5999"]\n');
    const mirror = 'http://127.0.0.1:5001';
    writeMirrors(file, join(dir, 'only'), { endpoint: mirror, mirrorOnly: true });
    for (const host of ['docker.io', 'registry.k8s.io', 'k8s.gcr.io', 'gcr.io', 'ghcr.io', 'quay.io']) {
      const text = readFileSync(join(dir, 'only', host, 'hosts.toml'), 'utf8');
      assert.match(text, /^server = "http:\/\/127\.0\.0\.1:5001"$/m, `${host}: no upstream`);
      assert.match(text, /^\[host\."http:\/\/127\.0\.0\.1:5001"\]$/m, host);
      assert.doesNotMatch(text, /https:/, `${host}: nothing off the machine`);
    }
    const docker = readFileSync(join(dir, 'only', 'docker.io', 'hosts.toml'), 'utf8');
    assert.ok(
      docker.indexOf('127.0.0.1:5999') < docker.indexOf('[host."http://127.0.0.1:5001"]'),
      "the user's mirror first",
    );
    writeMirrors(undefined, join(dir, 'fallback'), { endpoint: mirror, mirrorOnly: false });
    const quay = readFileSync(join(dir, 'fallback', 'quay.io', 'hosts.toml'), 'utf8');
    assert.match(quay, /^server = "https:\/\/quay\.io"$/m, 'the upstream after the mirror');
    assert.match(quay, /^\[host\."http:\/\/127\.0\.0\.1:5001"\]$/m);
  });

  describe('pulling through a local registry', () => {
    let registry: RunningRegistry | undefined;
    let ctd: TestContainerd | undefined;
    let cri: CriClient | undefined;

    before(function () {
      const why = runtimeTestsUnavailable() ?? registryMissing();
      if (why) {
        console.warn(`skipping the registry mirror test: ${why}`);
        this.skip();
      }
    });

    after(async () => {
      cri?.close();
      await ctd?.cleanup();
      await registry?.proc.stop('SIGKILL');
    });

    it('pulls docker.io/library/mirrored:1 from the mirror on 127.0.0.1', async () => {
      registry = await startRegistry({ dataDir: join(dir, 'registry'), port: await freePort() });
      const port = registry.host.split(':')[1];
      execFileSync(
        SKOPEO_BIN,
        [
          'copy',
          '--insecure-policy',
          '--dest-tls-verify=false',
          `oci-archive:${join(testImagesDir(), 'busybox.oci.tar')}:latest`,
          `docker://${registry.host}/library/mirrored:1`,
        ],
        { stdio: 'pipe' },
      );
      const registries = join(dir, 'registries.yaml');
      writeFileSync(
        registries,
        `mirrors:\n  docker.io:\n    endpoint:\n      - "http://127.0.0.1:${port}"\n`,
      );
      ctd = await startTestContainerd({ registriesFile: registries });
      cri = new CriClient({ runtimeEndpoint: ctd.endpoint, requestTimeoutMs: 30_000 });
      const before = await cri.call('ImageStatus', { image: { image: 'docker.io/library/mirrored:1' } });
      assert.equal(before.image, null, 'not present before the pull');
      const pulled = await cri.call('PullImage', { image: { image: 'mirrored:1' } });
      assert.match(pulled.imageRef, /^sha256:/);
      const after = await cri.call('ImageStatus', { image: { image: 'docker.io/library/mirrored:1' } });
      assert.ok(after.image.repoTags.includes('docker.io/library/mirrored:1'), after.image.repoTags.join());
      assert.ok(
        after.image.repoDigests.some((d: string) => d.startsWith('docker.io/library/mirrored@sha256:')),
        'the digest the mirror served',
      );
    });
  });

  describe('supervision', () => {
    let ctd: TestContainerd | undefined;
    let cri: CriClient | undefined;

    before(function () {
      const why = runtimeTestsUnavailable();
      if (why) {
        console.warn(`skipping the containerd supervision test: ${why}`);
        this.skip();
      }
    });

    after(async () => {
      cri?.close();
      await ctd?.cleanup();
    });

    it('starts a containerd killed from outside again, on the same socket, with its images', async () => {
      const restarts: Restart[] = [];
      ctd = await startTestContainerd({
        supervise: {
          onRestart: (r) => restarts.push(r),
          backoff: { initialMs: 100, maxMs: 1000, resetAfterMs: 60_000 },
        },
      });
      cri = new CriClient({ runtimeEndpoint: ctd.endpoint, requestTimeoutMs: 5_000 });
      const first = ctd.pid;
      process.kill(first, 'SIGKILL');
      await waitUntil(async () => ctd!.pid !== first, 20_000, 'a new containerd process');
      const status: any = await waitUntil(
        () => cri!.call('ImageStatus', { image: { image: 'registry.k8s.io/pause:3.10' } }),
        20_000,
        'the restarted containerd answering',
      );
      assert.ok(status.image, 'the imported pause image is still there');
      assert.equal(restarts.length, 1);
      assert.match(restarts[0].why, /signal SIGKILL/);
      // stop() ends the supervision: the process stays down.
      const last = ctd.pid;
      await ctd.cleanup();
      ctd = undefined;
      await new Promise((r) => setTimeout(r, 300));
      assert.throws(() => process.kill(last, 0), 'containerd was stopped');
      assert.equal(restarts.length, 1, 'no restart after stop()');
    });
  });
});
