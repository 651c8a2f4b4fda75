// tkube proxy: the service proxy of a tkube node (kube-proxy's job). It watches
// Services and EndpointSlices and programs this host's kernel (nftables, or
// iptables where nft is missing) so that ClusterIPs, NodePorts, external and
// load-balancer IPs reach the Services' endpoints.
import { runExecutable } from '../shared/options/command';
import { logger } from '../shared/log';
import { proxyFlags } from '../proxy/app/options';
import { cleanupProxy, resolveConfig, startProxy } from '../proxy/app/server';

const log = logger('proxy');

runExecutable({
  name: 'proxy',
  description:
    'The tkube service proxy runs on each node. It reflects Services as defined in the Kubernetes API on the node and does TCP, UDP and SCTP forwarding across a set of backends (kube-proxy of tkube).',
  flags: proxyFlags,
  log,
  // klog's "-v=2": commander reads a short option's "=2" as the value, so spell it --v=2.
  argv: (argv) => argv.map((a) => (/^-v=/.test(a) ? `--v=${a.slice(3)}` : a)),
  configure: (values) => resolveConfig(values),
  async start(cfg, control) {
    if (cfg.cleanup) {
      await cleanupProxy(cfg);
      control.exit(0);
      return { stop: async () => {} };
    }
    return startProxy(cfg);
  },
});
