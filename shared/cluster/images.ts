// A user's images brought into a running cluster without any registry on the
// internet (kind's `load image-archive`, k3s' `ctr images import` and
// auto-import folder): docker-archives (`docker save`), OCI archives and OCI
// layout directories (`skopeo copy ... oci-archive:|oci:`), imported into every
// node's containerd (namespace k8s.io, where the CRI looks) and pushed into the
// cluster's registry, so that a pull of the same name resolves there too (a pod
// on a node added later, or a pull policy of Always).
//
// skopeo does the reading and the pushing: the registry already needs it, it
// reads all three formats, and a push of it HEADs each blob first and uploads only
// what the registry lacks; `ctr images push` would need the image unpacked in a
// namespace first and cannot read an OCI layout, and a client of our own would
// redo uploads, mounts and digests. Each image goes to containerd as an OCI
// archive that skopeo writes under the image's full name: `ctr images import`
// keeps an OCI ref name as it is written ("me/app:dev" would stay un-normalised
// and the CRI, which asks for docker.io/me/app:dev, would never find it).
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { CriClient } from '../cri/client';
import { MIRRORED_REGISTRIES } from './containerd';
import { repositoryOf, SKOPEO_BIN } from './registry';

const CTR_BIN = '/usr/bin/ctr';

/**
 * The name the CRI gives an image (as kind normalises names): no "/" → library/; a first
 * component without "." or ":" and not localhost → docker.io/; no tag nor digest → :latest.
 */
export function normalizeImageName(name: string): string {
  let n = name.trim();
  const first = n.split('/')[0];
  const hasRegistry =
    n.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (!hasRegistry) n = `docker.io/${n.includes('/') ? n : `library/${n}`}`;
  const last = n.slice(n.lastIndexOf('/') + 1);
  if (!last.includes(':') && !last.includes('@')) n += ':latest';
  return n;
}

/** The registry host of a normalised name. */
export const registryOf = (name: string) => name.split('/')[0];

/** One image of an archive or layout: how skopeo reads it, and its full name. */
export interface ImageSource {
  path: string;
  /** skopeo's source reference, e.g. docker-archive:/x.tar:me/app:dev */
  from: string;
  name: string;
}

function tarMembers(file: string): Set<string> {
  const out = execFileSync('tar', ['-tf', file], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Set(out.split('\n').map((m) => m.replace(/^\.\//, '')));
}

/** A JSON member of a tar, written as "x" or "./x" (tar -C dir . names it so). */
function tarFile(file: string, member: string): any {
  for (const m of [member, `./${member}`])
    try {
      return JSON.parse(execFileSync('tar', ['-xOf', file, m], { encoding: 'utf8', stdio: 'pipe' }));
    } catch {
      // the other spelling
    }
  throw new Error(`${file}: cannot read ${member}`);
}

/** An OCI index's named images: the containerd name annotation, else the ref name when it is a full name. */
function ociImages(path: string, transport: string, index: any): ImageSource[] {
  const out: ImageSource[] = [];
  for (const m of index.manifests ?? []) {
    const ref: string | undefined = m.annotations?.['org.opencontainers.image.ref.name'];
    const name: string | undefined = m.annotations?.['io.containerd.image.name'] ?? ref;
    if (!ref || !name) continue;
    if (!name.includes('/') && !name.includes(':'))
      throw new Error(
        `${path}: the image "${name}" has only a tag, no name: write it with a full name (skopeo copy ... ${transport}:${path}:NAME:TAG)`,
      );
    out.push({ path, from: `${transport}:${path}:${ref}`, name: normalizeImageName(name) });
  }
  return out;
}

/** What images a docker-archive, OCI archive or OCI layout dir holds, by name. */
export function imagesIn(path: string): ImageSource[] {
  if (!existsSync(path)) throw new Error(`${path}: no such file or directory`);
  let found: ImageSource[];
  if (statSync(path).isDirectory()) {
    if (!existsSync(join(path, 'oci-layout')) || !existsSync(join(path, 'index.json')))
      throw new Error(`${path}: a directory that is no OCI image layout (no oci-layout and index.json)`);
    found = ociImages(path, 'oci', JSON.parse(readFileSync(join(path, 'index.json'), 'utf8')));
  } else {
    let members: Set<string>;
    try {
      members = tarMembers(path);
    } catch {
      throw new Error(`${path}: not a tar archive (docker save or an OCI archive)`);
    }
    if (members.has('manifest.json')) {
      // docker save (also Docker 25's, which adds an OCI layout beside it).
      const manifest = tarFile(path, 'manifest.json') as { RepoTags?: string[] | null }[];
      found = manifest.flatMap((m) =>
        (m.RepoTags ?? []).map((tag) => ({
          path,
          from: `docker-archive:${path}:${tag}`,
          name: normalizeImageName(tag),
        })),
      );
    } else if (members.has('index.json') && members.has('oci-layout')) {
      found = ociImages(path, 'oci-archive', tarFile(path, 'index.json'));
    } else
      throw new Error(`${path}: neither a docker-archive (manifest.json) nor an OCI archive (index.json)`);
  }
  if (!found.length) throw new Error(`${path}: no named image in it (untagged images cannot be run by name)`);
  return found;
}

/** Where a cluster's images go: its nodes' containerds and its registry. */
export interface ImageTargets {
  nodes: { node: string; endpoint: string }[];
  /** The cluster's registry (host:port), if it has one. */
  registry?: string;
}

export interface LoadedImage {
  name: string;
  nodes: string[];
  /** Where in the cluster's registry it was pushed, or why not. */
  registry: string;
}

const skopeo = (args: string[]) =>
  execFileSync(SKOPEO_BIN, ['copy', '--quiet', '--insecure-policy', '--all', ...args], { stdio: 'pipe' });

const socketOf = (endpoint: string) => endpoint.replace(/^unix:\/\//, '');

/**
 * Each image of the paths imported into every node and pushed into the registry when a pull of
 * its name resolves there (a mirrored registry's name, or the registry's own host:port).
 */
export function loadImages(paths: string[], t: ImageTargets): LoadedImage[] {
  const sources = paths.flatMap((p) => imagesIn(p));
  const work = mkdtempSync(join(tmpdir(), 'tkube-image-load-'));
  const loaded: LoadedImage[] = [];
  try {
    for (const [i, src] of sources.entries()) {
      const archive = join(work, `${i}.tar`);
      run(() => skopeo([src.from, `oci-archive:${archive}:${src.name}`]), src);
      for (const n of t.nodes)
        run(
          () =>
            execFileSync(
              CTR_BIN,
              ['-a', socketOf(n.endpoint), '-n', 'k8s.io', 'images', 'import', '--all-platforms', archive],
              { stdio: 'pipe' },
            ),
          src,
          `node ${n.node}`,
        );
      const reg = registryOf(src.name);
      let registry: string;
      if (!t.registry) registry = 'no registry (the cluster has none)';
      else if (MIRRORED_REGISTRIES.includes(reg) || reg === t.registry) {
        const to = `${t.registry}/${repositoryOf(src.name)}`;
        run(() => skopeo(['--dest-tls-verify=false', `oci-archive:${archive}`, `docker://${to}`]), src, to);
        registry = to;
      } else registry = `not pushed: ${reg} is not mirrored by the cluster's registry`;
      rmSync(archive, { force: true });
      loaded.push({ name: src.name, nodes: t.nodes.map((n) => n.node), registry });
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return loaded;
}

function run(f: () => unknown, src: ImageSource, where?: string): void {
  try {
    f();
  } catch (err: any) {
    const why = String(err.stderr ?? err.message ?? err).trim();
    throw new Error(`${src.name} from ${basename(src.path)}${where ? ` into ${where}` : ''}: ${why}`, {
      cause: err,
    });
  }
}

/**
 * The auto-import folder's entries (k3s' agent/images): *.tar files and OCI layout directories;
 * anything else is listed in `ignored` (k3s logs "unhandled file type").
 */
export function autoImportEntries(dir: string): { load: string[]; ignored: string[] } {
  const load: string[] = [];
  const ignored: string[] = [];
  for (const f of existsSync(dir) ? readdirSync(dir).sort() : []) {
    const p = join(dir, f);
    if (f.toLowerCase().endsWith('.tar') && statSync(p).isFile()) load.push(p);
    else if (statSync(p).isDirectory() && existsSync(join(p, 'oci-layout'))) load.push(p);
    else ignored.push(f);
  }
  return { load, ignored };
}

/**
 * A data dir from before the auto-import folder kept the built offline images in images/: they
 * move to offline-images/, so that they are not taken for the user's and loaded on every start.
 */
export function moveBuiltImages(images: string, offlineImages: string): void {
  const built = ['busybox.oci.tar', 'pause.oci.tar'];
  if (existsSync(offlineImages) || !built.every((f) => existsSync(join(images, f)))) return;
  mkdirSync(offlineImages, { recursive: true });
  for (const f of built) renameSync(join(images, f), join(offlineImages, f));
}

/** Loads the auto-import folder (created when missing); says what it loaded and ignored. */
export function autoImport(dir: string, t: ImageTargets): string {
  mkdirSync(dir, { recursive: true });
  const own = autoImportEntries(dir);
  const loaded = loadImages(own.load, t);
  const ignored = own.ignored.length ? ` (ignored in ${dir}/: ${own.ignored.join(', ')})` : '';
  return (loaded.length ? `, ${loaded.length} of ${dir}/` : '') + ignored;
}

/** One image as a node's containerd lists it (crictl images' columns). */
export interface NodeImage {
  node: string;
  /** Repository (name without tag), tag, repo digest and image id, size in bytes. */
  image: string;
  tag: string;
  digest: string;
  id: string;
  size: number;
}

/** What every node's containerd holds (the CRI's ListImages, as `crictl images` shows it). */
export async function listNodeImages(nodes: ImageTargets['nodes']): Promise<NodeImage[]> {
  const out: NodeImage[] = [];
  for (const n of nodes) {
    const client = new CriClient({ runtimeEndpoint: n.endpoint, requestTimeoutMs: 10_000 });
    try {
      const res = await client.call('ListImages', {});
      for (const img of res.images) {
        const digest = img.repoDigests[0]?.split('@')[1] ?? '';
        const tags: string[] = img.repoTags.length ? img.repoTags : ['<none>:<none>'];
        for (const t of tags) {
          const at = t.lastIndexOf(':');
          out.push({
            node: n.node,
            image: t.slice(0, at),
            tag: t.slice(at + 1),
            digest,
            id: img.id,
            size: Number(img.size),
          });
        }
      }
    } finally {
      client.close();
    }
  }
  return out;
}

/** crictl's size format (go-units' HumanSizeWithPrecision(size, 3)): 1.47MB. */
export function humanSize(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let v = bytes;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${Number(v.toPrecision(3))}${units[u]}`;
}
