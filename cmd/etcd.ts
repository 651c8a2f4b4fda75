// tkube etcd: a stand-in for etcd serving the etcd v3 API that kube-apiserver and tkube's
// etcd3 storage use, from tkube's own store in --data-dir (etcd/). It takes etcd's flags,
// so envtest (KUBEBUILDER_ASSETS) and etcd-style command lines start it unchanged. Nothing
// but the flag table is loaded for --help and --version.
import { runExecutable } from '../shared/options/command';
import { etcdFlags } from '../etcd/app/options';

const VERSION = '3.5.21';

/** Go's flag package takes -flag as --flag; commander does not. */
function argv(args: string[]): string[] {
  const out = args.map((a, i) => (i >= 2 && /^-[a-z][a-z-]+/.test(a) ? `-${a}` : a));
  if (out.slice(2).some((a) => a === '--version' || a === '--version=true')) {
    process.stdout.write(
      `etcd Version: ${VERSION}\nGit SHA: tkube\nGo Version: none (tkube, Node.js ${process.version})\nGo OS/Arch: ${process.platform}/${process.arch}\n`,
    );
    process.exit(0);
  }
  return out;
}

runExecutable({
  name: 'etcd',
  description:
    "tkube's etcd: the etcd v3 API (KV, Watch, Lease, Maintenance) of a single member, on tkube's own durable store.",
  flags: etcdFlags,
  log: 'etcd',
  argv,
  start: async (v) => {
    const { startEtcd } = await import('../etcd/app/app.js');
    return startEtcd(v);
  },
  stopMessage: 'received signal; shutting down',
});
