// The default storage of a local cluster, as k3s bundles local-path-provisioner:
// the `local-path` StorageClass (the default class) and the RBAC of the
// provisioner's service account (its upstream ClusterRole), under which the
// controller manager's local-path-provisioner controller runs with
// --use-service-account-credentials. Applied by the launcher as the cluster
// admin before the controller manager starts; the per-node base dir is its
// --local-path-base-dir (component-flags.ts).
import { localPathStorageClass } from '../api/local-path';
import type { Client } from '../client/client';
import { isAlreadyExists } from '../client/errors';

/** The provisioner's service account in kube-system (upstream: local-path-provisioner-service-account). */
export const LOCAL_PATH_SERVICE_ACCOUNT = 'local-path-provisioner-service-account';

const RBAC = { group: 'rbac.authorization.k8s.io', version: 'v1' };
const read = ['get', 'list', 'watch'];

const objects: { api: { group: string; version: string; resource: string }; obj: any }[] = [
  {
    api: { group: 'storage.k8s.io', version: 'v1', resource: 'storageclasses' },
    obj: localPathStorageClass(),
  },
  {
    api: { ...RBAC, resource: 'clusterroles' },
    obj: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'local-path-provisioner-role' },
      rules: [
        {
          apiGroups: [''],
          resources: ['nodes', 'persistentvolumeclaims', 'configmaps', 'pods'],
          verbs: read,
        },
        {
          apiGroups: [''],
          resources: ['persistentvolumes'],
          verbs: [...read, 'create', 'patch', 'update', 'delete'],
        },
        { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
        { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: read },
      ],
    },
  },
  {
    api: { ...RBAC, resource: 'clusterrolebindings' },
    obj: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'local-path-provisioner-bind' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'local-path-provisioner-role',
      },
      subjects: [{ kind: 'ServiceAccount', name: LOCAL_PATH_SERVICE_ACCOUNT, namespace: 'kube-system' }],
    },
  },
];

/** Creates what is missing (an existing object is left as the admin may have changed it). */
export async function ensureLocalPathStorage(client: Client): Promise<void> {
  for (const { api, obj } of objects) {
    try {
      await client.resource(api).create(obj);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
}
