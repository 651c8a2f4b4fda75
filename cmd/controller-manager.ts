// tkube controller-manager: the control loops of the cluster (namespaces,
// garbage collection, nodes, workloads ...), run by whichever instance holds
// the kube-controller-manager lease.
import { runExecutable } from '../shared/options/command';
import { controllerManagerFlags, controllersHelp } from '../controller-manager/app/options';
import { ControllerSelection, allControllers } from '../controller-manager/app/controllers';
import { startControllerManager } from '../controller-manager/app/manager';
import { logger } from '../shared/log';

const log = logger('controller-manager');
const selection = new ControllerSelection(allControllers());

runExecutable({
  name: 'controller-manager',
  description:
    'The Kubernetes controller manager is a daemon that embeds the core control loops shipped with Kubernetes. ' +
    'A controller is a control loop that watches the shared state of the cluster through the apiserver and makes ' +
    'changes attempting to move the current state towards the desired state.',
  flags: controllerManagerFlags.map((f) =>
    f.name === 'controllers'
      ? { ...f, help: controllersHelp(selection.names(), selection.disabledByDefault()) }
      : f,
  ),
  log,
  // klog's "-v=2": commander reads a short option's "=2" as the value, so spell it --v=2.
  argv: (argv) => argv.map((a) => (/^-v=/.test(a) ? `--v=${a.slice(3)}` : a)),
  start: (values, control) =>
    startControllerManager(values, {
      onLeadershipLost: () => {
        if (control.stopping()) return;
        log.error('leaderelection lost');
        control.exit(1);
      },
      onFatal: () => control.exit(1),
    }),
  stopMessage: 'Requested to terminate, exiting',
});
