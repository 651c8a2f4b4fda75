// A stand-in for the scheduler's VolumeBinding plugin until tkube's scheduler
// has it (being added separately): for a scheduled pod whose claim of a
// WaitForFirstConsumer class is still unbound, it writes what the plugin's
// PreBind writes, `volume.kubernetes.io/selected-node: <the pod's node>`, so
// the binder and the provisioner can act. Only e2e tests use it; remove it
// when the scheduler sets the annotation itself.
import type { Client } from '../../shared/client';

const SELECTED_NODE = 'volume.kubernetes.io/selected-node';

async function selectNodes(client: Client): Promise<void> {
  const classes = new Map<string, any>();
  for (const c of (await client.resource('storageclasses.storage.k8s.io').list()).items)
    classes.set(c.metadata.name!, c);
  const claims = client.resource('persistentvolumeclaims');
  for (const pod of (await client.resource('pods').list()).items) {
    const node = pod.spec?.nodeName;
    if (!node || pod.metadata.deletionTimestamp) continue;
    for (const v of pod.spec?.volumes ?? []) {
      const name =
        v.persistentVolumeClaim?.claimName ?? (v.ephemeral ? `${pod.metadata.name}-${v.name}` : undefined);
      if (!name) continue;
      let pvc: any;
      try {
        pvc = await claims.namespace(pod.metadata.namespace!).get(name);
      } catch {
        continue;
      }
      if (pvc.spec?.volumeName || pvc.metadata.annotations?.[SELECTED_NODE]) continue;
      if (classes.get(pvc.spec?.storageClassName)?.volumeBindingMode !== 'WaitForFirstConsumer') continue;
      await claims
        .namespace(pod.metadata.namespace!)
        .patch(name, { metadata: { annotations: { [SELECTED_NODE]: node } } }, 'merge');
    }
  }
}

/** Runs until stopped, every 300 ms. */
export function startVolumeBindingStandIn(client: Client): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await selectNodes(client).catch(() => {});
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
