// The API objects a pod's spec refers to, read with the agent's own client
// (its node identity, as the kubelet does): ConfigMaps and Secrets (read
// afresh on each use, so updates reach env of new containers and volumes on
// resync), Services (a shared informer, for the service environment
// variables), service account tokens (TokenRequest), and the claims and
// volumes behind persistentVolumeClaim volumes.
import type { Client } from '../../shared/client/client';
import { isNotFound } from '../../shared/client/errors';
import type { KubeObject } from '../../shared/client/types';
import { SharedInformerFactory, type SharedIndexInformer } from '../../shared/informers';

/** A referenced object is missing: kubelet's error text ("configmap \"x\" not found"). */
export class ObjectNotFound extends Error {
  constructor(kind: 'configmap' | 'secret', name: string) {
    super(`${kind} "${name}" not found`);
  }
}

export interface IssuedToken {
  token: string;
  /** ms since the epoch. */
  expiresAt: number;
}

/** How long to wait for the first list of services before giving up on this container start. */
const SERVICES_SYNC_WAIT_MS = 5000;

export class PodObjects {
  private factory?: SharedInformerFactory;
  private services?: SharedIndexInformer<KubeObject>;
  private readonly ac = new AbortController();

  constructor(private readonly client: Client | undefined) {}

  private async get(kind: 'configmap' | 'secret', ns: string, name: string): Promise<any> {
    if (!this.client) throw new ObjectNotFound(kind, name);
    try {
      return await this.client
        .resource(kind === 'configmap' ? 'configmaps' : 'secrets')
        .namespace(ns)
        .get(name);
    } catch (err) {
      if (isNotFound(err)) throw new ObjectNotFound(kind, name);
      throw err;
    }
  }

  configMap(ns: string, name: string): Promise<any> {
    return this.get('configmap', ns, name);
  }

  secret(ns: string, name: string): Promise<any> {
    return this.get('secret', ns, name);
  }

  /** A PersistentVolumeClaim, as the kubelet reads it (a GET each time: binding changes it). */
  async claim(ns: string, name: string): Promise<any> {
    if (!this.client) throw new Error(`persistentvolumeclaims "${name}" not found`);
    return this.client.resource('persistentvolumeclaims').namespace(ns).get(name);
  }

  async persistentVolume(name: string): Promise<any> {
    if (!this.client) throw new Error(`persistentvolumes "${name}" not found`);
    return this.client.resource('persistentvolumes').get(name);
  }

  /** Every Service of the cluster from the informer, started on first use (kubelet's service lister). */
  async allServices(): Promise<any[]> {
    if (!this.client) return [];
    if (!this.services) {
      this.factory = new SharedInformerFactory(this.client);
      this.services = this.factory.forResource('services');
      this.factory.start(this.ac.signal);
    }
    if (!this.services.hasSynced()) {
      const t = AbortSignal.timeout(SERVICES_SYNC_WAIT_MS);
      await this.services.whenSynced(AbortSignal.any([t, this.ac.signal]));
    }
    if (!this.services.hasSynced())
      throw new Error('services have not yet been read at least once, cannot construct envvars');
    return this.services.lister().list();
  }

  /** A token of the pod's service account bound to the pod (TokenRequest). */
  async requestToken(
    pod: any,
    serviceAccount: string,
    audiences: string[],
    expirationSeconds: number,
  ): Promise<IssuedToken> {
    if (!this.client) throw new Error('no API server to request a service account token from');
    const tr = await this.client
      .resource('serviceaccounts')
      .namespace(pod.metadata.namespace)
      .createSubresource(serviceAccount, 'token', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: {
          audiences,
          expirationSeconds,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid },
        },
      });
    return { token: tr.status.token, expiresAt: Date.parse(tr.status.expirationTimestamp) };
  }

  async close(): Promise<void> {
    this.ac.abort();
    await this.factory?.shutdown();
  }
}
