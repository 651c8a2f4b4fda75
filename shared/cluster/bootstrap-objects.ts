// Objects the launcher creates as the cluster admin before a component starts (its RBAC, its
// Service): created when missing, an existing one left as the admin may have changed it.
import type { Client } from '../client/client';
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
