// A KUBEBUILDER_ASSETS directory for controller-runtime's envtest: kube-apiserver
// is tkube's apiserver with the controller manager in its process (envtest starts
// none), etcd and kubectl are the ones installed here, linked. Each asset is ONE
// process once started: the script execs node, so envtest's SIGTERM (to the
// process, or to its group since v0.24) reaches the server and nothing stays behind.
// `kube-apiserver --help`, which envtest runs before every start only to look for a flag,
// is answered from the help text saved here (no node at all) while no build is newer.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DIST, findOnPath } from './process';

export interface EnvtestAssets {
  dir: string;
  /** What each asset is: a script or the path a link points to. */
  assets: Record<'kube-apiserver' | 'etcd' | 'kubectl', string>;
}

/** A POSIX shell word. */
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function link(target: string, path: string): void {
  rmSync(path, { force: true });
  symlinkSync(target, path);
}

function withoutExtraCACerts(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

export function writeEnvtestAssets(dirArg: string): EnvtestAssets {
  const dir = resolve(dirArg);
  const etcd = findOnPath('etcd');
  if (!etcd)
    throw new Error("etcd is not installed (scripts/setup.sh --with-etcd installs Debian's etcd-server)");
  const kubectl = findOnPath('kubectl');
  if (!kubectl) throw new Error('kubectl is not on PATH (envtest --use-env wants all three assets)');
  mkdirSync(dir, { recursive: true });
  const apiserver = join(DIST, 'cmd', 'apiserver.js');
  if (!existsSync(apiserver)) throw new Error(`${apiserver} is missing: run npm run build`);
  const script = join(dir, 'kube-apiserver');
  const help = join(dir, 'kube-apiserver.help');
  // Any build rewrites the build info; without one, the saved text is never trusted.
  const buildInfo = join(DIST, '.tsbuildinfo');
  const built = existsSync(buildInfo) ? buildInfo : apiserver;
  const helpRun = spawnSync(process.execPath, [apiserver, '--help'], {
    encoding: 'utf8',
    env: withoutExtraCACerts(),
  });
  if (helpRun.status !== 0) throw new Error(`${apiserver} --help failed: ${helpRun.stderr}`);
  rmSync(script, { force: true });
  writeFileSync(help, helpRun.stdout);
  writeFileSync(
    script,
    [
      '#!/bin/sh',
      "# envtest's kube-apiserver: tkube's apiserver, running the controller manager in its process.",
      '# Written by tkube envtest-assets.',
      `if [ "$*" = --help ]; then`,
      `  [ ${quote(help)} -nt ${quote(built)} ] && exec cat ${quote(help)}`,
      '  # Help needs no trust store: parsing the extra CA certificates costs node ~70 ms.',
      '  unset NODE_EXTRA_CA_CERTS',
      'fi',
      `exec ${quote(process.execPath)} ${quote(apiserver)} --run-controller-manager "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(script, 0o755);
  link(etcd, join(dir, 'etcd'));
  link(kubectl, join(dir, 'kubectl'));
  return { dir, assets: { 'kube-apiserver': apiserver, etcd, kubectl } };
}
