// Each component's client certificate and kubeconfig, signed by the apiserver's CA,
// under the user Kubernetes gives that component (what the authorizers expect).
import { writeComponentKubeconfig } from './credentials';
import type { ClusterPaths } from './data-dir';
import { METRICS_SERVER_USER } from './metrics-server-rbac';
import { nodeName, SIMULATED_NODES } from './node-addresses';

export interface ClusterCredentials {
  paths: ClusterPaths;
  server: string;
  nodes: number;
  /** One node agent hosts every node (--simulated-nodes). */
  simulated: boolean;
  controllerManager: boolean;
  /** Node i's name (default nodeName(i)). */
  nodeName?(i: number): string;
}

/** The controller manager's and scheduler's kubeconfigs, and the node agents'. */
export async function writeClusterCredentials(c: ClusterCredentials): Promise<void> {
  const write = (commonName: string, kubeconfig: string, organizations?: string[]) =>
    writeComponentKubeconfig({
      certDir: c.paths.certDir,
      server: c.server,
      subject: organizations ? { commonName, organizations } : { commonName },
      kubeconfig,
    });
  if (c.controllerManager) {
    await write('system:kube-controller-manager', c.paths.controllerManagerKubeconfig);
    await write('system:kube-scheduler', c.paths.schedulerKubeconfig);
  }
  if (c.simulated && c.nodes > 0) {
    // One process acts for every simulated node, which the Node authorizer would not allow a
    // node's identity: like kwok, the simulator is an administrator.
    await write('tkube:simulated-nodes', c.paths.nodeKubeconfig(SIMULATED_NODES), ['system:masters']);
  } else {
    for (let i = 0; i < c.nodes; i++) {
      const name = c.nodeName?.(i) ?? nodeName(i);
      await write(`system:node:${name}`, c.paths.nodeKubeconfig(name), ['system:nodes']);
    }
  }
}

/** metrics-server's kubeconfig, as the user its RBAC (metrics-server-rbac.ts) binds. */
export function writeMetricsServerCredentials(paths: ClusterPaths, server: string): Promise<void> {
  return writeComponentKubeconfig({
    certDir: paths.certDir,
    server,
    subject: { commonName: METRICS_SERVER_USER },
    kubeconfig: paths.metricsServerKubeconfig,
  });
}

/** The service proxy's kubeconfig, as kube-proxy's user (bound to system:node-proxier). */
export function writeProxyCredentials(paths: ClusterPaths, server: string): Promise<void> {
  return writeComponentKubeconfig({
    certDir: paths.certDir,
    server,
    subject: { commonName: 'system:kube-proxy' },
    kubeconfig: paths.proxyKubeconfig,
  });
}
