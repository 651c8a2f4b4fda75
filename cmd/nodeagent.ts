// tkube nodeagent: the kubelet of a tkube cluster. It registers a Node, keeps
// its status and lease, serves the kubelet's ports and runs the pods bound to
// it (and static pods) through a container runtime — the fake one by default.
import { Command } from 'commander';
import { addFlags, flagWasSet, readFlags } from '../shared/options/flags';
import { flushLogs, logger, setVerbosity } from '../shared/log';
import { nodeagentFlags } from '../nodeagent/app/options';
import { loadKubeletConfigFile, mergeKubeletConfiguration, resolveConfig } from '../nodeagent/app/config';
import { startNodeAgent } from '../nodeagent/app/agent';

const log = logger('nodeagent');

const attrToFlag = (attr: string) => attr.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

async function main(): Promise<void> {
  const cmd = addFlags(
    new Command('nodeagent')
      .description(
        'The tkube node agent is the primary "node agent" that runs on each node (the kubelet of tkube). It registers the node with the apiserver, reports its status and heartbeats, serves the kubelet API (ports 10250, 10255, 10248) and runs the pods bound to the node, and static pods from a manifest path or URL, through a container runtime.',
      )
      .helpOption('-h, --help', 'help for nodeagent')
      .allowExcessArguments(false),
    nodeagentFlags,
  );
  cmd.parse(process.argv);
  let cfg;
  try {
    const parsed = readFlags(cmd, nodeagentFlags);
    let values = parsed.values;
    for (const w of parsed.warnings) log.warn(w);
    const setOnCommandLine = (attr: string) => flagWasSet(cmd, attrToFlag(attr));
    if (values.config) {
      const merged = mergeKubeletConfiguration(
        values,
        loadKubeletConfigFile(values.config),
        setOnCommandLine,
      );
      for (const w of merged.warnings) log.warn(w);
      values = merged.values;
    }
    setVerbosity(values.v ?? 0);
    cfg = resolveConfig(values, { explicit: setOnCommandLine });
  } catch (err) {
    console.error(`Error: ${(err as Error).message}`);
    flushLogs();
    process.exit(1);
  }
  const running = await startNodeAgent(cfg);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info('received signal, shutting down', { signal });
    running
      .stop()
      .catch((err) => log.error('shutdown failed', { err: String(err) }))
      .finally(() => {
        flushLogs();
        process.exit(0);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  console.error(`Error: ${err instanceof Error ? err.message : String(err)}`);
  flushLogs();
  process.exit(1);
});
