// The volume source fields of v1.Volume, in the order Kubernetes checks them:
// defaulting gives a volume with none an emptyDir, validation wants exactly one.

export const VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
];

/** The volume source fields set (not null) on a volume. */
export function volumeSourcesOf(volume: Record<string, unknown>): string[] {
  return VOLUME_SOURCES.filter((k) => volume[k] !== undefined && volume[k] !== null);
}
