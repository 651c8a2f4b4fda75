// tkube nodeagent: the kubelet of a tkube cluster. It registers a Node, keeps
// its status and lease, serves the kubelet's ports and runs the pods bound to
// it (and static pods) through a container runtime — the fake one by default.
import { runExecutable } from '../shared/options/command';
import { flagWasSet } from '../shared/options/flags';
import { logger } from '../shared/log';
import { nodeagentFlags } from '../nodeagent/app/options';
import { mergeKubeletConfiguration, resolveConfig } from '../nodeagent/app/config';
import { loadKubeletConfigFile } from '../nodeagent/app/kubelet-config-file';
import { startNodeAgent } from '../nodeagent/app/agent';

const log = logger('nodeagent');

const attrToFlag = (attr: string) => attr.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

runExecutable({
  name: 'nodeagent',
  description:
    'The tkube node agent is the primary "node agent" that runs on each node (the kubelet of tkube). It registers the node with the apiserver, reports its status and heartbeats, serves the kubelet API (ports 10250, 10255, 10248) and runs the pods bound to the node, and static pods from a manifest path or URL, through a container runtime.',
  flags: nodeagentFlags,
  log,
  // The command line wins over --config, so both are read before the agent starts.
  configure(values, cmd) {
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
    return resolveConfig(values, { explicit: setOnCommandLine });
  },
  // The simulated nodes' host is loaded only when asked for.
  start: async (cfg) =>
    cfg.simulatedNodes > 0
      ? (await import('../nodeagent/simulated/host.js')).startSimulatedNodes(cfg, cfg.simulatedNodes)
      : startNodeAgent(cfg),
});
