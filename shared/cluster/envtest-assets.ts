// A KUBEBUILDER_ASSETS directory for controller-runtime's envtest: kube-apiserver
// is tkube's apiserver with the controller manager in its process (envtest starts
// none), etcd the etcd installed here (Debian's etcd-server) or, without one, tkube's
// etcd stand-in, kubectl the one on PATH, linked. Each asset is ONE process once started:
// the scripts exec, so envtest's SIGTERM (to the process, or to its group since v0.24)
// reaches the server and nothing stays behind. `--help`, which envtest runs before every
// start only to look for a flag, is answered from the help text saved here (no node at all)
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
 * Which etcd the etcd asset is: the etcd on PATH (Debian's etcd-server), the default when there
 * is one, or tkube's stand-in (dist/cmd/etcd.js), the default when there is none. Measured on a
 * quiet 2-core machine (docs/performance.md, "envtest"): the installed etcd is ready in 50–110 ms
 * on 24 MB, the stand-in (a node process) in 110–210 ms on ~60 MB; only on a busy disk is the
 * stand-in ahead, as it honours --unsafe-no-fsync and etcd 3.4 has none.
 */
export type EtcdChoice = 'tkube' | 'system';

/**
 * Raft timings for the installed etcd. One member on loopback elects itself only once its
 * election timeout (1 s, randomized, with the first ticks advanced) has passed: /health came
 * 230–820 ms after the start; with these, 50–110 ms. envtest passes neither flag.
 */
export const ETCD_ONE_MEMBER_TIMINGS = ['--heartbeat-interval=10', '--election-timeout=100'] as const;

/**
 * V8 for a test suite's apiserver, which lives seconds to minutes and does little work: no
 * optimizing tier and no baseline compiler (their compiles cost more CPU at start than they give
 * back, and their code and the binary's pages they touch stay resident), V8's memory-for-speed
 * trade (`--optimize-for-size`: a heap grown in smaller steps), a young generation of 1 MB
 * semi-spaces (the default grows them to 16 MB under a burst and keeps the pages), one V8 worker
 * thread. With the controllers running: 115 → 88–98 MB of RSS with `--no-opt` alone, → 84 MB;
 * after 4,000 ConfigMap creates 182–191 → 131–133 MB; a list of 4,000 ~2x the CPU (~25 → ~60 ms),
 * which a test suite rarely does. Not `--jitless`/`--lite-mode` (77 and 72 MB): they take
 * WebAssembly away, and undici's HTTP parser, which the apiserver's webhook and aggregator
 * calls use, is WebAssembly.
 */
const APISERVER_ASSET_V8_FLAGS = [
  '--no-opt',
  '--no-sparkplug',
  '--optimize-for-size',
  '--max-semi-space-size=1',
  '--v8-pool-size=1',
] as const;

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
  writeFileSync(help, helpRun.stdout);
  writeScript(path, [
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
  ]);
}

/** Writes an executable /bin/sh script of these lines. */
function writeScript(path: string, lines: string[]): void {
  rmSync(path, { force: true });
  writeFileSync(path, ['#!/bin/sh', ...lines, ''].join('\n'));
  chmodSync(path, 0o755);
}

export function writeEnvtestAssets(dirArg: string, opts: { etcd?: EtcdChoice } = {}): EnvtestAssets {
  const dir = resolve(dirArg);
  const systemEtcd = opts.etcd === 'tkube' ? undefined : findOnPath('etcd');
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
    { v8Flags: APISERVER_ASSET_V8_FLAGS },
  );
  let etcd: string;
  if (systemEtcd) {
    rmSync(join(dir, 'etcd.help'), { force: true });
    writeScript(join(dir, 'etcd'), [
      "# envtest's etcd: the etcd installed here, with raft timings for one member on loopback.",
      '# A small heap: Go collects at 25% growth instead of 100% (~2 MB less RSS), unless set.',
      ': "${GOGC:=25}"',
      'export GOGC',
      `exec ${[systemEtcd, ...ETCD_ONE_MEMBER_TIMINGS].map(quote).join(' ')} "$@"`,
    ]);
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
