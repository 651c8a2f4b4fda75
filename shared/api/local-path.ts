// rancher/local-path-provisioner's names, as k3s bundles it: the default
// StorageClass the launcher creates and the provisioner in the controller
// manager both use them.
export const LOCAL_PATH_PROVISIONER = 'rancher.io/local-path';
export const LOCAL_PATH_CLASS = 'local-path';
/** The provisioner's record of the node a volume's directory is on. */
export const ANN_LOCAL_PATH_SELECTED_NODE = 'local.path.provisioner/selected-node';
/** Where `{node}` stands for the node's name in --local-path-base-dir. */
export const NODE_PLACEHOLDER = '{node}';

/** The StorageClass k3s ships: the default class, WaitForFirstConsumer, reclaim Delete. */
export function localPathStorageClass(): any {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: {
      name: LOCAL_PATH_CLASS,
      annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
    },
    provisioner: LOCAL_PATH_PROVISIONER,
    volumeBindingMode: 'WaitForFirstConsumer',
    reclaimPolicy: 'Delete',
  };
}
