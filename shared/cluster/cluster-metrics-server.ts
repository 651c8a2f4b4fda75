// metrics-server in a local cluster (`kubectl top`): its credentials and RBAC,
// then the process, ready once its APIService v1beta1.metrics.k8s.io answers.
import { writeMetricsServerCredentials } from './cluster-credentials';
import { metricsServerFlags } from './component-flags';
import type { ClusterPaths } from './data-dir';
import { withAdmin } from './bootstrap-objects';
import { ensureMetricsServerRBAC } from './metrics-server-rbac';
import { getWithKubeconfig, waitUntil, type Proc } from './process';

export interface MetricsServerOptions {
  paths: ClusterPaths;
  server: string;
  /** Starts the process under the cluster's supervision. */
  start(args: string[]): Proc;
  timeoutMs: number;
  extra?: string[];
}

export async function startMetricsServer(o: MetricsServerOptions): Promise<void> {
  await writeMetricsServerCredentials(o.paths, o.server);
  await withAdmin(o.paths.kubeconfig, ensureMetricsServerRBAC);
  const ms = o.start(metricsServerFlags(o.paths, o.extra));
  await waitUntil(
    async () =>
      (
        await getWithKubeconfig(
          o.paths.kubeconfig,
          '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io',
        )
      ).status === 200,
    o.timeoutMs,
    'metrics-server registered',
    ms.exited,
  );
}
