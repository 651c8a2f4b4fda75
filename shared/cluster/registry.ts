// The cluster's image registry on 127.0.0.1 (kind's "local registry", k3s'
// embedded mirror): Debian's docker-registry, i.e. the CNCF distribution
// registry 2.8, which already does everything users need — push, pull,
// manifest lists and OCI indexes, HEAD requests, cross-repository blob mounts,
// resumable uploads — where serving the distribution API ourselves would redo
// uploads, mounts and content checks for no gain. It holds the offline images
// (pushed with skopeo at start) and is every node's containerd mirror.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { procOf, waitUntil, type Proc } from './process';

export const REGISTRY_BIN = '/usr/bin/docker-registry';
export const SKOPEO_BIN = '/usr/bin/skopeo';

/** What must be installed for the local registry. */
export function registryMissing(): string | undefined {
  for (const f of [REGISTRY_BIN, SKOPEO_BIN]) if (!existsSync(f)) return `${f} is not installed`;
  return undefined;
}

export interface RegistryOptions {
  /** Its storage, config and log live here. */
  dataDir: string;
  port: number;
  /** OCI archives (*.tar, as scripts/build-images.sh writes) pushed under their image names. */
  imagesDir?: string;
  detached?: boolean;
}

export interface RunningRegistry {
  proc: Proc;
  /** host:port, as image names and containerd's hosts.toml name it. */
  host: string;
  /** http://host:port */
  endpoint: string;
}

/** docker.io/library/busybox:latest → library/busybox:latest; registry.k8s.io/pause:3.10 → pause:3.10. */
export function repositoryOf(image: string): string {
  const first = image.split('/')[0];
  const hasRegistry =
    image.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  const rest = hasRegistry ? image.slice(first.length + 1) : image;
  return rest.includes('/') || hasRegistry ? rest : `library/${rest}`;
}

/** The image names of an OCI archive (its index's io.containerd.image.name annotations), with their tags. */
function namesIn(archive: string): { name: string; ref: string }[] {
  const index = JSON.parse(execFileSync('tar', ['-xOf', archive, './index.json'], { encoding: 'utf8' }));
  return (index.manifests ?? [])
    .map((m: any) => ({
      name: m.annotations?.['io.containerd.image.name'],
      ref: m.annotations?.['org.opencontainers.image.ref.name'],
    }))
    .filter((n: any) => n.name && n.ref);
}

/** Copies each image of the OCI archives in dir into the registry under its repository path. */
export function pushArchives(registryHost: string, dir: string): string[] {
  const pushed: string[] = [];
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.tar')) continue;
    for (const { name, ref } of namesIn(join(dir, f))) {
      const to = `${registryHost}/${repositoryOf(name)}`;
      execFileSync(
        SKOPEO_BIN,
        [
          'copy',
          '--quiet',
          '--insecure-policy',
          '--dest-tls-verify=false',
          `oci-archive:${join(dir, f)}:${ref}`,
          `docker://${to}`,
        ],
        { stdio: 'pipe' },
      );
      pushed.push(name);
    }
  }
  return pushed;
}

export async function startRegistry(o: RegistryOptions): Promise<RunningRegistry> {
  const missing = registryMissing();
  if (missing)
    throw new Error(`the cluster's registry: ${missing} (scripts/setup.sh --with-runtime installs it)`);
  mkdirSync(join(o.dataDir, 'data'), { recursive: true });
  const host = `127.0.0.1:${o.port}`;
  const config = join(o.dataDir, 'config.yml');
  writeFileSync(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: warn',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${JSON.stringify(join(o.dataDir, 'data'))}`,
      // Pushed tags can be replaced and removed, as on a developer's registry.
      '  delete:',
      '    enabled: true',
      'http:',
      `  addr: ${host}`,
      '',
    ].join('\n'),
  );
  const logFile = join(o.dataDir, 'registry.log');
  const out = openSync(logFile, 'a');
  const child = spawn(REGISTRY_BIN, ['serve', config], { stdio: ['ignore', out, out], detached: o.detached });
  closeSync(out);
  const proc = procOf('registry', child, logFile, o.detached);
  const endpoint = `http://${host}`;
  try {
    await waitUntil(
      async () => (await fetch(`${endpoint}/v2/`)).ok,
      20_000,
      `the registry on ${host}`,
      proc.exited,
    );
    if (o.imagesDir) pushArchives(host, o.imagesDir);
  } catch (err) {
    await proc.stop('SIGKILL');
    throw err;
  }
  return { proc, host, endpoint };
}
