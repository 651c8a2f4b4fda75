// kube-controller-manager's client builders: every controller gets a client
// of its own — its own --kube-api-qps/--kube-api-burst limiter, so one busy
// controller cannot queue another's requests (or the lease renewal) behind
// its own, and a user agent ending in its name. With
// --use-service-account-credentials each controller also authenticates as
// system:serviceaccount:kube-system:<its account>, with a token from the
// TokenRequest API that is renewed before it expires (client-go's
// DynamicControllerClientBuilder); the accounts are created when missing.
import { Client, isAlreadyExists, type ClientConfig, type ClientOptions } from '../../shared/client';
import type { Logger } from '../../shared/log';

export const SERVICE_ACCOUNT_NAMESPACE = 'kube-system';

/**
 * The name each controller's client is built with (kube: ClientOrDie("...")): its user-agent
 * suffix and, with --use-service-account-credentials, its service account in kube-system, bound
 * to the bootstrap role system:controller:<name>.
 */
export const CONTROLLER_CLIENT_NAMES: Record<string, string> = {
  serviceaccount: 'service-account-controller',
  'root-ca-cert-publisher': 'root-ca-cert-publisher',
  namespace: 'namespace-controller',
  garbagecollector: 'generic-garbage-collector',
  nodelifecycle: 'node-controller',
  // It has no role of its own in Kubernetes: it uses the node controller's.
  'taint-eviction-controller': 'node-controller',
  podgc: 'pod-garbage-collector',
  'ttl-after-finished': 'ttl-after-finished-controller',
  bootstrapsigner: 'bootstrap-signer',
  tokencleaner: 'token-cleaner',
  replicaset: 'replicaset-controller',
  replicationcontroller: 'replication-controller',
  deployment: 'deployment-controller',
  statefulset: 'statefulset-controller',
  daemonset: 'daemon-set-controller',
  job: 'job-controller',
  cronjob: 'cronjob-controller',
  endpoint: 'endpoint-controller',
  endpointslice: 'endpointslice-controller',
  resourcequota: 'resourcequota-controller',
  disruption: 'disruption-controller',
  horizontalpodautoscaling: 'horizontal-pod-autoscaler',
  'persistentvolume-binder': 'persistent-volume-binder',
  'persistentvolume-expander': 'expand-controller',
  // Not Kubernetes': upstream's account, given its ClusterRole by the launcher (local-path-storage.ts).
  'local-path-provisioner': 'local-path-provisioner-service-account',
};

/** The client name of a controller: the table's, else "<controller>-controller". */
export function controllerClientName(controller: string): string {
  return (
    CONTROLLER_CLIENT_NAMES[controller] ??
    (controller.endsWith('-controller') ? controller : `${controller}-controller`)
  );
}

/** client-go's defaults for controller tokens: an hour, renewed with 20% of it left. */
const TOKEN_EXPIRATION_SECONDS = 3600;
const TOKEN_LEEWAY = 0.2;
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 60_000;

export interface ClientBuilderOptions {
  /** The root credentials (--kubeconfig): the simple builder's clients and the token requests. */
  root: Client;
  /** Limits and content type of each client (--kube-api-qps, --kube-api-burst, --kube-api-content-type). */
  clientOptions: Omit<ClientOptions, 'userAgent' | 'rateLimiter'>;
  /** The user agent the name is appended to (kube-controller-manager/v1.36.3 (linux/amd64) kubernetes/...). */
  userAgent: string;
  log: Logger;
}

export interface ControllerClientBuilder {
  /** A client for the named user (resolves once its credentials are ready). */
  client(name: string, signal?: AbortSignal): Promise<Client>;
  close(): Promise<void>;
}

/** The root credentials for every client, each with its own limiter and user agent. */
export class SimpleClientBuilder implements ControllerClientBuilder {
  constructor(private readonly o: ClientBuilderOptions) {}

  client(name: string): Promise<Client> {
    return Promise.resolve(
      this.o.root.withOptions({ ...this.o.clientOptions, userAgent: `${this.o.userAgent}/${name}` }),
    );
  }

  async close(): Promise<void> {}
}

interface Token {
  value: string;
  /** Epoch ms. */
  expires: number;
}

/** Each name is a kube-system service account; its client sends a TokenRequest token. */
export class ServiceAccountClientBuilder implements ControllerClientBuilder {
  /** The root config without its client certificate or token: only the bearer token authenticates. */
  private readonly anonymous: Client;
  private readonly tokens = new Map<string, Token>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(private readonly o: ClientBuilderOptions) {
    const c = o.root.config;
    const anonymousConfig: ClientConfig = {
      server: c.server,
      caPem: c.caPem,
      insecure: c.insecure,
      serverName: c.serverName,
    };
    this.anonymous = Client.create(anonymousConfig, { ...o.clientOptions, http2: o.root.options.http2 });
  }

  async client(name: string, signal?: AbortSignal): Promise<Client> {
    await this.ensureServiceAccount(name, signal);
    if (!this.tokens.has(name)) await this.refresh(name, signal);
    return this.anonymous.withOptions({
      ...this.o.clientOptions,
      userAgent: `${this.o.userAgent}/${name}`,
      bearerToken: () => this.tokens.get(name)?.value,
    });
  }

  private async ensureServiceAccount(name: string, signal?: AbortSignal): Promise<void> {
    const sas = this.o.root.resource('serviceaccounts').namespace(SERVICE_ACCOUNT_NAMESPACE);
    try {
      await sas.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } }, { signal });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }

  private async requestToken(name: string, signal?: AbortSignal): Promise<Token> {
    const tr = await this.o.root
      .resource('serviceaccounts')
      .namespace(SERVICE_ACCOUNT_NAMESPACE)
      .createSubresource(
        name,
        'token',
        {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds: TOKEN_EXPIRATION_SECONDS },
        },
        { signal },
      );
    const value: string | undefined = tr?.status?.token;
    if (!value) throw new Error(`TokenRequest for ${name} returned no token`);
    const expires =
      Date.parse(tr.status.expirationTimestamp ?? '') || Date.now() + TOKEN_EXPIRATION_SECONDS * 1000;
    return { value, expires };
  }

  /** Fetches a token now and schedules its renewal (retries with back-off while it still holds). */
  private async refresh(name: string, signal?: AbortSignal, retryMs = RETRY_MIN_MS): Promise<void> {
    let next: number;
    try {
      const t = await this.requestToken(name, signal);
      this.tokens.set(name, t);
      const lifetime = t.expires - Date.now();
      next = Math.max(RETRY_MIN_MS, lifetime * (1 - TOKEN_LEEWAY));
      retryMs = RETRY_MIN_MS;
      this.o.log
        .v(2)
        ?.info('Got a service account token', { serviceAccount: name, expires: new Date(t.expires) });
    } catch (err) {
      // The first token is needed to start the controller: the caller sees the failure.
      if (!this.tokens.has(name)) throw err;
      this.o.log.error('Failed to renew a service account token', { serviceAccount: name, err: String(err) });
      next = retryMs;
      retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
    }
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.refresh(name, undefined, retryMs).catch(() => {});
    }, next);
    timer.unref();
    this.timers.add(timer);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await this.anonymous.close();
  }
}
