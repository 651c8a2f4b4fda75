// The entry point: a Client per apiserver config. It owns the connection pool;
// clients derived with withOptions() share the pool but may have their own
// rate limit (the event recorder's --event-qps) or content type.
import { inClusterConfig, loadKubeconfig, type ClientConfig } from './kubeconfig';
import { RestClient, Transport, type ClientOptions } from './rest';
import { ResourceClient } from './resource';
import { Discovery } from './discovery';
import type { ResourceSpec } from './gvr';
import type { KubeObject } from './types';

export class Client {
  readonly rest: RestClient;
  private disco?: Discovery;

  private constructor(
    readonly config: ClientConfig,
    private readonly transport: Transport,
    readonly options: ClientOptions,
    private readonly owner: boolean,
  ) {
    this.rest = new RestClient(transport, options);
  }

  /** A client for config; close() it when done. */
  static create(config: ClientConfig, options: ClientOptions = {}): Client {
    const transport = new Transport(config, {
      http2: options.http2,
      connections: options.connections,
      clock: options.clock,
    });
    return new Client(config, transport, options, true);
  }

  /**
   * client-go's BuildConfigFromFlags: the kubeconfig file when given, else the
   * in-cluster service account, else an error.
   */
  static fromKubeconfigOrCluster(kubeconfig: string | undefined, options: ClientOptions = {}): Client {
    const cfg = kubeconfig ? loadKubeconfig(kubeconfig) : inClusterConfig();
    if (!cfg)
      throw new Error('no --kubeconfig given and not running in a cluster (KUBERNETES_SERVICE_HOST unset)');
    return Client.create(cfg, options);
  }

  /** A client on the same connections with other options (its own limiter unless one is passed). */
  withOptions(options: Omit<ClientOptions, 'http2' | 'connections'>): Client {
    const merged: ClientOptions = { ...this.options, rateLimiter: undefined, ...options };
    return new Client(this.config, this.transport, merged, false);
  }

  /** A resource type: {group, version, resource, namespaced?} or a built-in name ("pods", "deployments.apps"). */
  resource<T extends KubeObject = KubeObject>(spec: ResourceSpec | string): ResourceClient<T> {
    return new ResourceClient<T>(this.rest, spec);
  }

  /** The discovery helper (answers cached until invalidate()). */
  discovery(): Discovery {
    return (this.disco ??= new Discovery(this.rest));
  }

  /** Closes the connections (only the client that created them does); stop watches first. */
  async close(graceMs?: number): Promise<void> {
    if (this.owner) await this.transport.close(graceMs);
  }
}
