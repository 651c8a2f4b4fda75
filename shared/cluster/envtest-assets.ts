// A KUBEBUILDER_ASSETS directory for controller-runtime's envtest: kube-apiserver
// is tkube's apiserver with the controller manager in its process (envtest starts
// none), etcd is tkube's etcd stand-in (or, asked for, the etcd installed here, linked),
// kubectl the one on PATH, linked. Each asset is ONE process once started: the scripts
// exec node, so envtest's SIGTERM (to the process, or to its group since v0.24) reaches
// the server and nothing stays behind. `--help`, which envtest runs before every start
// only to look for a flag, is answered from the help text saved here (no node at all)
// while no build is newer.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DIST, V8_FLAGS, findOnPath } from './process';

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

/**
 * Which etcd the etcd asset is: tkube's stand-in (dist/cmd/etcd.js, the default), or the etcd
 * on PATH (Debian's etcd-server). envtest is ready seconds sooner on tkube's: it honours
 * --unsafe-no-fsync, which etcd 3.4 lacks, so the apiserver's bootstrap writes are not each
 * fsynced; a real etcd starts on a tenth of the CPU and half the memory of a node process
 * (docs/performance.md, "tkube's etcd").
 */
export type EtcdChoice = 'tkube' | 'system';

/**
 * Writes <dir>/<name>: a script that execs `node <script> <args> "$@"`, with `--help` answered
 * from <dir>/<name>.help (saved now) while no build is newer.
 */
function writeNodeAsset(
  dir: string,
  name: string,
  script: string,
  args: string[],
  what: string,
  o: { v8Flags?: readonly string[]; trustStore?: boolean } = {},
): void {
  if (!existsSync(script)) throw new Error(`${script} is missing: run npm run build`);
  const path = join(dir, name);
  const help = join(dir, `${name}.help`);
  // Any build rewrites the build info; without one, the saved text is never trusted.
  const buildInfo = join(DIST, '.tsbuildinfo');
  const built = existsSync(buildInfo) ? buildInfo : script;
  const helpRun = spawnSync(process.execPath, [script, '--help'], {
    encoding: 'utf8',
    env: withoutExtraCACerts(),
  });
  if (helpRun.status !== 0) throw new Error(`${script} --help failed: ${helpRun.stderr}`);
  rmSync(path, { force: true });
  writeFileSync(help, helpRun.stdout);
  writeFileSync(
    path,
    [
      '#!/bin/sh',
      `# envtest's ${name}: ${what}.`,
      '# Written by tkube envtest-assets.',
      `if [ "$*" = --help ]; then`,
      `  [ ${quote(help)} -nt ${quote(built)} ] && exec cat ${quote(help)}`,
      '  # Help needs no trust store: parsing the extra CA certificates costs node ~70 ms.',
      '  unset NODE_EXTRA_CA_CERTS',
      'fi',
      ...(o.trustStore === false
        ? ['# It dials no TLS server: no trust store to parse at start either.', 'unset NODE_EXTRA_CA_CERTS']
        : []),
      `exec ${[process.execPath, ...(o.v8Flags ?? []), script, ...args].map(quote).join(' ')} "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(path, 0o755);
}

export function writeEnvtestAssets(dirArg: string, opts: { etcd?: EtcdChoice } = {}): EnvtestAssets {
  const dir = resolve(dirArg);
  const systemEtcd = opts.etcd === 'system' ? findOnPath('etcd') : undefined;
  if (opts.etcd === 'system' && !systemEtcd)
    throw new Error("etcd is not installed (scripts/setup.sh --with-etcd installs Debian's etcd-server)");
  const kubectl = findOnPath('kubectl');
  if (!kubectl) throw new Error('kubectl is not on PATH (envtest --use-env wants all three assets)');
  mkdirSync(dir, { recursive: true });
  const apiserver = join(DIST, 'cmd', 'apiserver.js');
  writeNodeAsset(
    dir,
    'kube-apiserver',
    apiserver,
    ['--run-controller-manager'],
    "tkube's apiserver, running the controller manager in its process",
  );
  let etcd: string;
  if (systemEtcd) {
    rmSync(join(dir, 'etcd.help'), { force: true });
    link(systemEtcd, join(dir, 'etcd'));
    etcd = systemEtcd;
  } else {
    etcd = join(DIST, 'cmd', 'etcd.js');
    writeNodeAsset(dir, 'etcd', etcd, [], "tkube's etcd, the etcd v3 API on tkube's own store", {
      v8Flags: V8_FLAGS.etcd,
      trustStore: false,
    });
  }
  link(kubectl, join(dir, 'kubectl'));
  return { dir, assets: { 'kube-apiserver': apiserver, etcd, kubectl } };
}
