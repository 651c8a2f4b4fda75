// The controller manager: clients from --kubeconfig/--master with the
// --kube-api-* settings — a root one (informers, events, tokens), one for the
// leader-election lock, one per controller (client-builder.ts) and the
// scheduler's — the secure port, leader election on a Lease, and — only while
// leading — one SharedInformerFactory and the enabled controllers.
// Losing the lease aborts the controllers' signal and, like
// kube-controller-manager, ends the process (onLeadershipLost).
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { logger, type Logger } from '../../shared/log';
import type { FlagValues } from '../../shared/options/flags';
import { featureGates } from '../../shared/options/feature-gates';
import {
  Client,
  inClusterConfig,
  loadKubeconfig,
  type ClientConfig,
  type ClientOptions,
  type KubeObject,
} from '../../shared/client';
import { SharedInformerFactory } from '../../shared/informers';
import {
  JITTER_FACTOR,
  LOCK_TYPES,
  LeaderHealthzAdaptor,
  newComponentElector,
  leaderElectionClientTimeoutMs,
} from '../../shared/leaderelection';
import { EventBroadcaster, type EventRecorder } from '../../shared/events';
import { MetricsRegistry, checkShowHiddenVersion } from '../../shared/metrics/registry';
import { processMetrics } from '../../shared/metrics/process';
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../controller';
import { ControllerSelection, allControllers } from './controllers';
import { HealthChecks, SecureServer } from './server';
import { newQueue, setQueueMetricsProvider } from './workqueue';
import { sleep } from './controller-util';
import {
  ServiceAccountClientBuilder,
  SimpleClientBuilder,
  controllerClientName,
  type ControllerClientBuilder,
} from './client-builder';

const log = logger('controller-manager');

export const KCM_VERSION = 'v1.36.3';

/**
 * Reflector settings of the manager's informers: client-go 1.35's, a watch-list
 * start (sendInitialEvents) falling back to LIST then WATCH.
 */
export const INFORMER_REFLECTOR_OPTIONS = { useWatchList: true };
const MANAGER = 'kube-controller-manager';

export interface ManagerOptions {
  /** The controllers to choose from (default: the core and workload lists). */
  descriptors?: ControllerDescriptor[];
  /** Leadership was lost (not stopped): kube-controller-manager exits 1 here. */
  onLeadershipLost?: () => void;
  /** A controller failed to start: kube-controller-manager exits 1 here (default: stop). */
  onFatal?: (err: unknown) => void;
  /** Time source for controllers (ctx.now). */
  now?: () => number;
  /** The client configuration, instead of --kubeconfig/--master (an apiserver's own loopback client). */
  config?: ClientConfig;
}

export interface RunningControllerManager {
  identity: string;
  /** The secure port actually bound (0 when not serving). */
  port: number;
  client: Client;
  metrics: MetricsRegistry;
  isLeader(): boolean;
  /** Resolves once this instance leads and its controllers have started. */
  leading: Promise<void>;
  /**
   * Stops controllers, gives the lease up, closes the port. Requests still in flight once the
   * controllers have returned get clientGraceMs (default: the client's 1 s) before they are cut.
   */
  stop(opts?: { clientGraceMs?: number }): Promise<void>;
}

/** The client configuration: --kubeconfig (or the in-cluster one), --master overriding its server. */
export function clientConfig(values: FlagValues): ClientConfig {
  let cfg: ClientConfig | undefined = values.kubeconfig ? loadKubeconfig(values.kubeconfig) : undefined;
  if (!cfg && !values.master) {
    log.warn(
      'Neither --kubeconfig nor --master was specified. Using the inClusterConfig. This might not work.',
    );
    cfg = inClusterConfig();
    if (!cfg)
      throw new Error(
        'unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined',
      );
  }
  if (values.master) cfg = cfg ? { ...cfg, server: values.master } : { server: values.master };
  return cfg!;
}

/** client-go's DefaultKubernetesUserAgent for this binary (clients append "/<their name>"). */
function userAgent(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  return `${MANAGER}/${KCM_VERSION} (${process.platform}/${arch}) kubernetes/${GIT_COMMIT}`;
}

/** The commit in the user agent (kube's gitCommit; tkube's version info says "tkube" as the apiserver does). */
const GIT_COMMIT = 'tkube';

/** HTTP/1.1 connections per client of the controller manager (see `limits` below). */
export const CONTROLLER_CLIENT_CONNECTIONS = 128;

/** The scheduler runs in this process but with kube-scheduler's own client limits (--scheduler-kube-api-qps/-burst). */
const SCHEDULER = { controller: 'scheduler', clientName: 'kube-scheduler' };

/**
 * Informers' managedFields are dropped, as kube-controller-manager's transform does for its
 * shared and its metadata informers (the garbage collector's monitors use it too).
 */
export function trimManagedFields(obj: KubeObject): KubeObject {
  if (obj?.metadata?.managedFields) {
    const { managedFields: _drop, ...meta } = obj.metadata;
    return { ...obj, metadata: meta };
  }
  return obj;
}

function recorderAdapter(r: EventRecorder): EventRecorderLike {
  return {
    event: (regarding, type, reason, action, note, related) =>
      r.eventf(regarding, related ?? null, type, reason, action, note),
  };
}

function validateLeaderElection(values: FlagValues): void {
  if (!values.leaderElect) return;
  if (values.leaderElectLeaseDuration <= values.leaderElectRenewDeadline)
    throw new Error('leaderElection.leaseDuration: Invalid value: must be greater than renewDeadline');
  if (values.leaderElectRenewDeadline <= JITTER_FACTOR * values.leaderElectRetryPeriod)
    throw new Error(
      'leaderElection.renewDeadline: Invalid value: must be greater than retryPeriod*JitterFactor',
    );
  if (!(LOCK_TYPES as readonly string[]).includes(values.leaderElectResourceLock))
    throw new Error(
      `invalid --leader-elect-resource-lock "${values.leaderElectResourceLock}": must be one of ${LOCK_TYPES.join(', ')}`,
    );
}

/** Starts a controller manager from its flag values (what `tkube controller-manager` runs). */
export async function startControllerManager(
  values: FlagValues,
  opts: ManagerOptions = {},
): Promise<RunningControllerManager> {
  featureGates.set(values.featureGates);
  for (const w of featureGates.warnings) log.warn(w);
  const selection = new ControllerSelection(opts.descriptors ?? allControllers());
  const selectors: string[] = values.controllers?.length ? values.controllers : ['*'];
  const errs = selection.validate(selectors);
  if (errs.length) throw new Error(`[${errs.join(', ')}]`);
  validateLeaderElection(values);
  checkShowHiddenVersion(values.showHiddenMetricsForVersion, '1.36');

  const config = opts.config ?? clientConfig(values);
  const limits = {
    qps: values.kubeApiQps,
    burst: values.kubeApiBurst,
    contentType: values.kubeApiContentType,
    // HTTP/2 (client-go's one multiplexed connection). Where the server speaks only HTTP/1.1,
    // a connection carries one request at a time: unbounded, a client opened one per request in
    // flight, and at 5,000 nodes and ~67,000 pods the scheduler's bindings, arriving faster than
    // the apiserver answered, opened a TLS handshake each and starved the lease renewal's own
    // connection. This bound plays HTTP/2's stream limit (above the ~50 watches the garbage
    // collector's client holds).
    connections: CONTROLLER_CLIENT_CONNECTIONS,
  };
  // The root client: the shared informers, the manager's own events, service accounts and their tokens.
  const client = Client.create(config, { ...limits, userAgent: `${userAgent()}/shared-informers` });
  // The lease has a client (limiter and connection) of its own, so no controller's requests queue
  // before a renewal (with --leader-elect-thread, in a thread of its own, so no long turn of the
  // main event loop either), and a timeout below the renew deadline, so one hung request cannot
  // lose it: its one connection goes with the request that timed out, the retry opens a fresh one.
  // So HTTP/1.1: an HTTP/2 stream that timed out leaves its session, which may be the dead part.
  const electionClientOptions: ClientOptions = {
    ...limits,
    http2: false,
    connections: 1,
    userAgent: `${userAgent()}/leader-election`,
    timeoutMs: leaderElectionClientTimeoutMs(values.leaderElectRenewDeadline),
  };
  const builderOptions = { root: client, clientOptions: limits, userAgent: userAgent(), log };
  const clients: ControllerClientBuilder = values.useServiceAccountCredentials
    ? new ServiceAccountClientBuilder(builderOptions)
    : new SimpleClientBuilder(builderOptions);
  const schedulerClient = Client.create(
    values.schedulerKubeconfig
      ? { ...loadKubeconfig(values.schedulerKubeconfig), ...(values.master ? { server: values.master } : {}) }
      : config,
    {
      ...limits,
      qps: values.schedulerKubeApiQps,
      burst: values.schedulerKubeApiBurst,
      userAgent: `${userAgent()}/${SCHEDULER.clientName}`,
    },
  );
  const identity = `${hostname()}_${randomUUID()}`;
  const now = opts.now ?? (() => Date.now());

  const metrics = new MetricsRegistry({
    currentVersion: '1.36',
    showHiddenFor: values.showHiddenMetricsForVersion,
    disabled: values.disabledMetrics,
  });
  processMetrics(metrics);
  setQueueMetricsProvider(metrics);
  const leaderStatus = metrics.gauge({
    name: 'leader_election_master_status',
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    labels: ['name'],
  });
  const running = metrics.gauge({
    name: 'running_managed_controllers',
    help: 'Indicates where instances of a controller are currently running',
    labels: ['manager', 'name'],
  });
  const leaseName: string = values.leaderElectResourceName;
  if (values.leaderElect) leaderStatus.set({ name: leaseName }, 0);

  const adaptor = new LeaderHealthzAdaptor(20_000);
  const health = ['/healthz', '/livez', '/readyz'].map((p) => {
    const h = new HealthChecks(p).add('ping', () => {});
    if (values.leaderElect) h.add('leaderElection', () => adaptor.check());
    return h;
  });
  const authClient = (file: string | undefined) => (file ? Client.create(loadKubeconfig(file)) : undefined);
  const authnClient = authClient(values.authenticationKubeconfig);
  const authzClient = authClient(values.authorizationKubeconfig);
  const server =
    values.securePort > 0
      ? new SecureServer({
          bindAddress: values.bindAddress,
          port: values.securePort,
          certDir: values.certDir,
          tlsCertFile: values.tlsCertFile,
          tlsPrivateKeyFile: values.tlsPrivateKeyFile,
          tlsMinVersion: values.tlsMinVersion,
          clientCaFile: values.clientCaFile,
          alwaysAllowPaths: values.authorizationAlwaysAllowPaths ?? [],
          authnClient,
          authzClient,
          health,
          metrics,
        })
      : undefined;
  await server?.start();

  const broadcaster = new EventBroadcaster(client);
  const root = new AbortController();
  setMaxListeners(0, root.signal);
  let leader = false;
  let markLeading!: () => void;
  const leading = new Promise<void>((r) => (markLeading = r));

  /** Runs the controllers until signal aborts (the OnStartedLeading callback). */
  const run = async (signal: AbortSignal): Promise<void> => {
    // Every controller, informer and queue listens to this signal.
    setMaxListeners(0, signal);
    leader = true;
    if (values.leaderElect) leaderStatus.set({ name: leaseName }, 1);
    const resync = Math.round(values.minResyncPeriod * (1 + Math.random()));
    const informers = new SharedInformerFactory(client, {
      resyncPeriodMs: resync,
      transform: trimManagedFields,
      reflector: INFORMER_REFLECTOR_OPTIONS,
    });
    const base: Omit<ControllerContext, 'log' | 'client' | 'recorder'> = {
      informers,
      options: values,
      signal,
      now,
      newQueue: (name, rateLimiter) => newQueue(name, rateLimiter),
      metrics,
    };
    const started: string[] = [];
    // Each controller posts its events through its own client, as it does in Kubernetes.
    const broadcasters: EventBroadcaster[] = [];
    try {
      for (const d of selection.select(selectors)) {
        // A turn of the event loop between controllers: requests to an apiserver in this
        // process (the embedded manager) are answered while the others start.
        await new Promise<void>((r) => setImmediate(r));
        if (signal.aborted) break;
        const clog: Logger = log.child({ controller: d.name });
        clog.info('Starting controller');
        try {
          const own =
            d.name === SCHEDULER.controller
              ? schedulerClient
              : await clients.client(controllerClientName(d.name), signal);
          const events = new EventBroadcaster(own);
          broadcasters.push(events);
          await d.start({
            ...base,
            client: own,
            recorder: (controller) => recorderAdapter(events.newRecorder(controller, identity)),
            log: clog,
          });
        } catch (err) {
          log.error('Error starting controllers', { controller: d.name, err: String(err) });
          if (opts.onFatal) opts.onFatal(err);
          else void stop();
          return;
        }
        started.push(d.name);
        running.set({ manager: MANAGER, name: d.name }, 1);
        if (values.controllerStartInterval > 0)
          await sleep(values.controllerStartInterval * (1 + Math.random()), signal);
      }
      for (const d of selection.descriptors)
        if (!started.includes(d.name))
          log.v(1)?.info('Warning: controller is disabled', { controller: d.name });
      informers.start(signal);
      log.info('Started controllers', { controllers: started });
      markLeading();
      if (!signal.aborted)
        await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
    } finally {
      for (const name of started) running.set({ manager: MANAGER, name }, 0);
      await informers.shutdown();
      await Promise.all(broadcasters.map((b) => b.shutdown(2000)));
      leader = false;
      if (values.leaderElect) leaderStatus.set({ name: leaseName }, 0);
    }
  };

  let electing: Promise<void>;
  if (values.leaderElect) {
    const elector = newComponentElector({
      thread: values.leaderElectThread,
      config,
      clientOptions: electionClientOptions,
      lock: { namespace: values.leaderElectResourceNamespace, name: leaseName, identity },
      leaseDurationMs: values.leaderElectLeaseDuration,
      renewDeadlineMs: values.leaderElectRenewDeadline,
      retryPeriodMs: values.leaderElectRetryPeriod,
      releaseOnCancel: true,
      eventRecorder: broadcaster.newRecorder(MANAGER, identity),
      callbacks: {
        onStartedLeading: (signal) => run(signal),
        onNewLeader: (id) => {
          if (id !== identity) log.info('New leader elected', { identity: id });
        },
      },
    });
    adaptor.setLeaderElection(elector);
    electing = elector.run(root.signal).then(() => {
      if (root.signal.aborted) return;
      log.error('leaderelection lost');
      if (opts.onLeadershipLost) opts.onLeadershipLost();
      else void stop();
    });
  } else {
    electing = run(root.signal).catch((err) => {
      log.error('controllers stopped with an error', { err: String(err) });
      throw err;
    });
  }
  electing.catch(() => {});

  let stopping: Promise<void> | undefined;
  const stop = (opts: { clientGraceMs?: number } = {}): Promise<void> =>
    (stopping ??= (async () => {
      root.abort();
      await electing.catch(() => {});
      await broadcaster.shutdown(2000);
      await server?.stop();
      const grace = opts.clientGraceMs;
      await clients.close();
      await Promise.all([
        schedulerClient.close(grace),
        client.close(grace),
        authnClient?.close(grace),
        authzClient?.close(grace),
      ]);
    })());

  return {
    identity,
    get port() {
      return server?.port ?? 0;
    },
    client,
    metrics,
    isLeader: () => leader,
    leading,
    stop,
  };
}
