// tkube envtest-assets: a KUBEBUILDER_ASSETS directory for controller-runtime's envtest.
import { Command, Option } from 'commander';
import { writeEnvtestAssets } from '../shared/cluster/envtest-assets';

export function envtestAssetsCommand(): Command {
  return new Command('envtest-assets')
    .description(
      "write kube-apiserver (tkube's apiserver with the controllers envtest lacks: namespace deletion, garbage collection ...), etcd (the installed one, or tkube's stand-in when there is none) and kubectl into a directory for KUBEBUILDER_ASSETS",
    )
    .requiredOption('--dir <dir>', 'the directory to write (created if missing)')
    .addOption(
      new Option(
        '--etcd <which>',
        "the etcd asset: system (the etcd on PATH, e.g. Debian's etcd-server), tkube (tkube's etcd stand-in), or auto (system when there is one, else tkube)",
      )
        .choices(['auto', 'tkube', 'system'])
        .default('auto'),
    )
    .action((o) => {
      const { dir, assets } = writeEnvtestAssets(o.dir, { etcd: o.etcd === 'auto' ? undefined : o.etcd });
      console.error(`kube-apiserver → ${assets['kube-apiserver']}`);
      console.error(`etcd → ${assets.etcd}`);
      console.error(`kubectl → ${assets.kubectl}`);
      console.log(`export KUBEBUILDER_ASSETS=${dir}`);
    });
}
