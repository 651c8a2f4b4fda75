// Where a local cluster keeps each component's files in its data directory: one place,
// so the launcher, the credentials, the command lines and `tkube down` agree, and a
// restart finds what the last run wrote.
import { join } from 'node:path';

export function clusterPaths(dataDir: string) {
  const certDir = join(dataDir, 'apiserver', 'certs');
  return {
    /** The user's (admin) kubeconfig, written by the apiserver. */
    kubeconfig: join(dataDir, 'kubeconfig'),
    logDir: join(dataDir, 'logs'),
    /** The apiserver's certificates; its CA signs every component's client certificate. */
    certDir,
    caCert: join(certDir, 'ca.crt'),
    caKey: join(certDir, 'ca.key'),
    apiserverData: join(dataDir, 'apiserver', 'data'),
    frontProxy: join(dataDir, 'front-proxy'),
    controllerManagerKubeconfig: join(dataDir, 'controller-manager', 'kubeconfig'),
    // The scheduler runs inside the controller manager, but as kube-scheduler's own user.
    schedulerKubeconfig: join(dataDir, 'controller-manager', 'scheduler.kubeconfig'),
    metricsServerKubeconfig: join(dataDir, 'metrics-server', 'kubeconfig'),
    dnsKubeconfig: join(dataDir, 'dns', 'kubeconfig'),
    /** The service proxy's kubeconfig (system:kube-proxy). */
    proxyKubeconfig: join(dataDir, 'proxy', 'kubeconfig'),
    /** Host settings the cluster changed (sysctls), with their values before, to restore. */
    hostSettings: join(dataDir, 'host-settings.json'),
    /** The offline images the launcher builds (scripts/build-images.sh): busybox, pause. */
    offlineImages: join(dataDir, 'offline-images'),
    /** The user's images, imported into every node and the registry at start (k3s' auto-import folder). */
    images: join(dataDir, 'images'),
    registry: join(dataDir, 'registry'),
    /** A node agent's root dir (by node name, or SIMULATED_NODES): its kubeconfig, pki, containerd. */
    nodeDir: (name: string) => join(dataDir, 'nodes', name),
    nodeKubeconfig: (name: string) => join(dataDir, 'nodes', name, 'kubeconfig'),
    /** A node's local-path volumes (the controller manager's --local-path-base-dir, with {node}). */
    nodeStorageDir: (name: string) => join(dataDir, 'nodes', name, 'storage'),
    /** What runs (PIDs, containerds, routes), for `tkube down` of a detached cluster. */
    stateFile: join(dataDir, 'cluster.json'),
  };
}

export type ClusterPaths = ReturnType<typeof clusterPaths>;
