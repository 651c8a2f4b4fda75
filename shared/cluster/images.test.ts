// What `tkube image load` reads: image names normalised as the CRI asks for them,
// the named images of a docker-archive, an OCI archive and an OCI layout (made by
// skopeo from the offline busybox), and clear errors for what it cannot load.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { busyboxAs, testImagesDir, runtimeTestsUnavailable } from '../../nodeagent/cri/testing';
import { autoImportEntries, humanSize, imagesIn, moveBuiltImages, normalizeImageName } from './images';
import { registryMissing } from './registry';

describe('shared/cluster: images for tkube image load', () => {
  it('normalises names as the CRI does', () => {
    const cases: [string, string][] = [
      ['busybox', 'docker.io/library/busybox:latest'],
      ['me/app:dev', 'docker.io/me/app:dev'],
      ['docker.io/me/app:dev', 'docker.io/me/app:dev'],
      ['quay.io/x/y', 'quay.io/x/y:latest'],
      ['localhost/app', 'localhost/app:latest'],
      ['127.0.0.1:5000/me/app:1', '127.0.0.1:5000/me/app:1'],
      ['busybox@sha256:abc', 'docker.io/library/busybox@sha256:abc'],
    ];
    for (const [from, to] of cases) assert.equal(normalizeImageName(from), to, from);
  });

  it('sizes as crictl prints them', () => {
    assert.equal(humanSize(1_474_560), '1.47MB');
    assert.equal(humanSize(999), '999B');
    assert.equal(humanSize(2_500_000_000), '2.5GB');
  });

  it("moves an old data dir's built offline images out of the auto-import folder, once", () => {
    const d = mkdtempSync(join(tmpdir(), 'tkube-images-old-'));
    try {
      const [images, offline] = [join(d, 'images'), join(d, 'offline-images')];
      mkdirSync(images);
      for (const f of ['busybox.oci.tar', 'pause.oci.tar', 'mine.tar']) writeFileSync(join(images, f), f);
      moveBuiltImages(images, offline);
      assert.deepEqual(readdirSync(images), ['mine.tar']);
      assert.deepEqual(readdirSync(offline).sort(), ['busybox.oci.tar', 'pause.oci.tar']);
      // A user's own busybox.oci.tar later is the user's.
      for (const f of ['busybox.oci.tar', 'pause.oci.tar']) writeFileSync(join(images, f), f);
      moveBuiltImages(images, offline);
      assert.equal(readdirSync(images).length, 3);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });

  describe('archives and layouts', function () {
    this.timeout(60_000);
    let dir: string;
    const copy = busyboxAs;

    before(function () {
      const why = registryMissing() ?? runtimeTestsUnavailable();
      if (why) {
        console.warn(`skipping the image archive tests: ${why}`);
        this.skip();
      }
      dir = mkdtempSync(join(tmpdir(), 'tkube-images-'));
    });
    after(() => dir && rmSync(dir, { recursive: true, force: true }));

    it('names the images of a docker-archive, an OCI archive and an OCI layout', () => {
      copy(`docker-archive:${join(dir, 'd.tar')}:me/app:dev`);
      copy(`oci-archive:${join(dir, 'o.tar')}:quay.io/me/app:oci`);
      copy(`oci:${join(dir, 'layout')}:me/app:dir`);
      assert.deepEqual(
        imagesIn(join(dir, 'd.tar')).map((i) => [i.name, i.from]),
        [['docker.io/me/app:dev', `docker-archive:${join(dir, 'd.tar')}:docker.io/me/app:dev`]],
      );
      assert.deepEqual(
        imagesIn(join(dir, 'o.tar')).map((i) => [i.name, i.from]),
        [['quay.io/me/app:oci', `oci-archive:${join(dir, 'o.tar')}:quay.io/me/app:oci`]],
      );
      assert.deepEqual(
        imagesIn(join(dir, 'layout')).map((i) => i.name),
        ['docker.io/me/app:dir'],
      );
      // The offline images name themselves with containerd's annotation.
      assert.deepEqual(
        imagesIn(join(testImagesDir(), 'busybox.oci.tar')).map((i) => i.name),
        ['docker.io/library/busybox:latest', 'docker.io/library/busybox:1.35'],
      );
    });

    it('says what is wrong with what it cannot load', () => {
      copy(`oci-archive:${join(dir, 'tag-only.tar')}:v1`);
      assert.throws(() => imagesIn(join(dir, 'tag-only.tar')), /has only a tag, no name/);
      writeFileSync(join(dir, 'junk.tar'), 'not a tar');
      assert.throws(() => imagesIn(join(dir, 'junk.tar')), /not a tar archive/);
      mkdirSync(join(dir, 'empty'));
      assert.throws(() => imagesIn(join(dir, 'empty')), /no OCI image layout/);
      assert.throws(() => imagesIn(join(dir, 'missing.tar')), /no such file or directory/);
    });

    it('takes *.tar files and OCI layouts from the auto-import folder, and lists what it ignores', () => {
      const auto = join(dir, 'auto');
      mkdirSync(auto);
      copy(`docker-archive:${join(auto, 'a.tar')}:me/a:1`);
      copy(`oci:${join(auto, 'b')}:me/b:1`);
      writeFileSync(join(auto, 'notes.txt'), '');
      mkdirSync(join(auto, 'sub'));
      assert.deepEqual(autoImportEntries(auto), {
        load: [join(auto, 'a.tar'), join(auto, 'b')],
        ignored: ['notes.txt', 'sub'],
      });
    });
  });
});
