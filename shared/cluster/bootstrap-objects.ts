// Objects the launcher creates as the cluster admin before a component starts (its RBAC, its
// Service): created when missing, an existing one left as the admin may have changed it.
import { Client } from '../client/client';
import { loadKubeconfig } from '../client/kubeconfig';
import { isAlreadyExists } from '../client/errors';

export interface BootstrapObject {
  /** "clusterroles.rbac.authorization.k8s.io", "services" ... */
  resource: string;
  namespace?: string;
  obj: any;
}

export async function createMissing(client: Client, objects: BootstrapObject[]): Promise<void> {
  for (const { resource, namespace, obj } of objects) {
    let rc = client.resource(resource);
    if (namespace) rc = rc.namespace(namespace);
    try {
      await rc.create(obj);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
}

/** A bootstrap step (kubeadm's addons) done with the admin's credentials of a kubeconfig. */
export async function withAdmin(kubeconfig: string, step: (admin: Client) => Promise<void>): Promise<void> {
  const admin = Client.create(loadKubeconfig(kubeconfig), { http2: false });
  try {
    await step(admin);
  } finally {
    await admin.close();
  }
}
