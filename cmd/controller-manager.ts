// tkube controller-manager: the control loops of the cluster (namespaces,
// garbage collection, nodes, workloads ...), run by whichever instance holds
// the kube-controller-manager lease.
import { Command } from 'commander';
import { addFlags, readFlags, type FlagSpec } from '../shared/options/flags';
import { controllerManagerFlags, controllersHelp } from '../controller-manager/app/options';
import { ControllerSelection, allControllers } from '../controller-manager/app/controllers';
import { startControllerManager } from '../controller-manager/app/manager';
import { flushLogs, logger, setVerbosity } from '../shared/log';

const log = logger('controller-manager');

function exit(code: number): void {
  flushLogs();
  // Give pino's asynchronous destination a moment to drain.
  setTimeout(() => process.exit(code), 50);
}

async function main(): Promise<void> {
  const selection = new ControllerSelection(allControllers());
  const flags: FlagSpec[] = controllerManagerFlags.map((f) =>
    f.name === 'controllers'
      ? { ...f, help: controllersHelp(selection.names(), selection.disabledByDefault()) }
      : f,
  );
  const cmd = addFlags(
    new Command('controller-manager')
      .description(
        'The Kubernetes controller manager is a daemon that embeds the core control loops shipped with Kubernetes. ' +
          'A controller is a control loop that watches the shared state of the cluster through the apiserver and makes ' +
          'changes attempting to move the current state towards the desired state.',
      )
      .helpOption('-h, --help', 'help for controller-manager')
      .allowExcessArguments(false),
    flags,
  );
  // klog's "-v=2": commander reads a short option's "=2" as the value, so spell it --v=2.
  cmd.parse(process.argv.map((a) => (/^-v=/.test(a) ? `--v=${a.slice(3)}` : a)));
  let values;
  try {
    const parsed = readFlags(cmd, flags);
    values = parsed.values;
    for (const w of parsed.warnings) log.warn(w);
  } catch (err) {
    console.error(`Error: ${(err as Error).message}`);
    process.exit(1);
  }
  setVerbosity(values.v ?? 0);
  let stopping = false;
  const running = await startControllerManager(values, {
    onLeadershipLost: () => {
      if (stopping) return;
      log.error('leaderelection lost');
      exit(1);
    },
    onFatal: () => exit(1),
  });
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info('Requested to terminate, exiting', { signal });
    running
      .stop()
      .catch((err) => log.error('shutdown failed', { err: String(err) }))
      .finally(() => exit(0));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  console.error(`Error: ${err instanceof Error ? err.message : String(err)}`);
  flushLogs();
  process.exit(1);
});
