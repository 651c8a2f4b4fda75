// What metrics-server may do in a cluster that authorizes with RBAC, as its
// own manifests grant it (and tkube's: it registers its Service and APIService
// itself, since its port is chosen at start): read the authentication
// ConfigMap, delegate authentication and authorization, read nodes, pods and
// the nodes' metrics through the apiserver's proxy. Applied by the launcher
// as the cluster admin before metrics-server starts.
import type { Client } from '../client/client';
import { createMissing } from './bootstrap-objects';

export const METRICS_SERVER_USER = 'system:metrics-server';

const KIND: Record<string, string> = {
  clusterroles: 'ClusterRole',
  clusterrolebindings: 'ClusterRoleBinding',
  rolebindings: 'RoleBinding',
};
const user = [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: METRICS_SERVER_USER }];

const objects: { resource: string; namespace?: string; obj: any }[] = [
  {
    resource: 'clusterroles',
    obj: {
      metadata: { name: METRICS_SERVER_USER, labels: { 'k8s-app': 'metrics-server' } },
      rules: [
        { apiGroups: [''], resources: ['nodes/metrics', 'nodes/proxy'], verbs: ['get'] },
        { apiGroups: [''], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] },
        // Registration of itself (tkube's metrics-server picks its port at start).
        { apiGroups: [''], resources: ['services'], verbs: ['get', 'create', 'update'] },
        {
          apiGroups: ['apiregistration.k8s.io'],
          resources: ['apiservices'],
          verbs: ['get', 'create', 'update'],
        },
      ],
    },
  },
  {
    resource: 'clusterroles',
    obj: {
      metadata: {
        name: 'system:aggregated-metrics-reader',
        labels: {
          'k8s-app': 'metrics-server',
          'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
          'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
          'rbac.authorization.k8s.io/aggregate-to-view': 'true',
        },
      },
      rules: [
        { apiGroups: ['metrics.k8s.io'], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] },
      ],
    },
  },
  {
    resource: 'clusterrolebindings',
    obj: {
      metadata: { name: METRICS_SERVER_USER, labels: { 'k8s-app': 'metrics-server' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: METRICS_SERVER_USER },
      subjects: user,
    },
  },
  {
    resource: 'clusterrolebindings',
    obj: {
      metadata: { name: 'metrics-server:system:auth-delegator', labels: { 'k8s-app': 'metrics-server' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: user,
    },
  },
  {
    resource: 'rolebindings',
    namespace: 'kube-system',
    obj: {
      metadata: { name: 'metrics-server-auth-reader', labels: { 'k8s-app': 'metrics-server' } },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: 'extension-apiserver-authentication-reader',
      },
      subjects: user,
    },
  },
];

/** Creates what is missing (an existing object is left as the admin may have changed it). */
export function ensureMetricsServerRBAC(client: Client): Promise<void> {
  return createMissing(
    client,
    objects.map(({ resource, namespace, obj }) => ({
      resource: `${resource}.rbac.authorization.k8s.io`,
      namespace,
      obj: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: KIND[resource], ...obj },
    })),
  );
}
