// Test helper of the workload controllers: a real apiserver in-process, a
// ControllerContext like the manager's (client, shared informers, event
// recorder, a clock tests can move), the controllers under test started on it,
// and a fake node agent that does what a kubelet would (pods Running and Ready,
// terminating pods removed) so rollouts can progress.
import { setMaxListeners } from 'node:events';
import { startTestAPIServer, type TestAPIServer } from '../../apiserver/server/testing';
import { Client, isNotFound, isConflict, type KubeObject } from '../../shared/client';
import { SharedInformerFactory, type SharedIndexInformer } from '../../shared/informers';
import { EventBroadcaster } from '../../shared/events';
import { logger } from '../../shared/log';
import type { FlagValues } from '../../shared/options/flags';
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../controller';
import { deleteWith } from './util/status';

export interface RecordedEvent {
  controller: string;
  kind?: string;
  namespace?: string;
  name?: string;
  type: string;
  reason: string;
  note: string;
}

/** A clock that follows real time plus an offset tests can move forward. */
export class TestClock {
  offsetMs = 0;
  now = (): number => Date.now() + this.offsetMs;
  advance(ms: number): void {
    this.offsetMs += ms;
  }
  /** Sets the clock to an absolute time. */
  set(ms: number): void {
    this.offsetMs = ms - Date.now();
  }
}

export interface NodeOptions {
  labels?: Record<string, string>;
  taints?: { key: string; value?: string; effect: string }[];
  /** allocatable (and capacity): cpu, memory, pods ... */
  allocatable?: Record<string, string>;
  ready?: boolean;
  unschedulable?: boolean;
}

export interface KubeletOptions {
  /** Which bound pods become Running and Ready (default: all). */
  ready?: (pod: KubeObject) => boolean;
  /** Also run pods no scheduler bound (tests without the scheduler). */
  unbound?: boolean;
}

export class TestEnv {
  readonly events: RecordedEvent[] = [];
  readonly clock = new TestClock();
  readonly factory: SharedInformerFactory;
  readonly ctx: ControllerContext;
  private readonly ac = new AbortController();
  private readonly broadcaster: EventBroadcaster;
  private kubeletInformer?: SharedIndexInformer<KubeObject>;
  kubeletOptions: KubeletOptions = {};
  private ipSeq = 1;
  private readonly inflight = new Set<string>();

  private constructor(
    readonly srv: TestAPIServer,
    readonly client: Client,
    options: FlagValues,
  ) {
    // Every informer and controller listens to the signal, as in the manager.
    setMaxListeners(0, this.ac.signal);
    // Like the manager's factory (watch-list streams first).
    this.factory = new SharedInformerFactory(client, { reflector: { useWatchList: true } });
    this.broadcaster = new EventBroadcaster(client, { qps: -1 });
    const events = this.events;
    const broadcaster = this.broadcaster;
    this.ctx = {
      client,
      informers: this.factory,
      options,
      signal: this.ac.signal,
      log: logger('controller-manager'),
      now: this.clock.now,
      recorder(controller: string): EventRecorderLike {
        const rec = broadcaster.newRecorder(controller, `${controller}-test`);
        return {
          event(regarding, type, reason, action, note, related) {
            events.push({
              controller,
              kind: regarding?.kind,
              namespace: regarding?.metadata?.namespace ?? regarding?.namespace,
              name: regarding?.metadata?.name ?? regarding?.name,
              type,
              reason,
              note,
            });
            rec.eventf(regarding, related, type, reason, action, note);
          },
        };
      },
    };
  }

  static async start(options: FlagValues = {}, apiserverFlags: FlagValues = {}): Promise<TestEnv> {
    const srv = await startTestAPIServer(apiserverFlags);
    // The manager runs with --cluster-api-qps 20; tests are not rate limited.
    const client = Client.create(srv.config, { qps: -1 });
    return new TestEnv(srv, client, options);
  }

  /** Starts controllers (descriptors' start), then the informers, and waits for their caches. */
  async run(...controllers: ControllerDescriptor[]): Promise<void> {
    for (const c of controllers) await c.start(this.ctx);
    this.factory.start(this.ac.signal);
    await this.factory.waitForCacheSync(this.ac.signal);
  }

  /** Starts the fake node agent (call before run() or after; it starts the pod informer itself). */
  startKubelet(opts: KubeletOptions = {}): void {
    this.kubeletOptions = opts;
    const inf = (this.kubeletInformer = this.factory.forResource<KubeObject>('pods'));
    const handle = (pod: KubeObject) => void this.kubeletAct(pod);
    inf.addEventHandler({ onAdd: handle, onUpdate: (_o, n) => handle(n) });
    this.factory.start(this.ac.signal);
  }

  private async kubeletAct(pod: KubeObject): Promise<void> {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    if (this.inflight.has(key)) return;
    const pods = this.client.resource('pods').namespace(pod.metadata.namespace!);
    this.inflight.add(key);
    try {
      if (pod.metadata.deletionTimestamp) {
        if (pod.spec?.nodeName) await deleteWith(pods, pod.metadata.name!, { gracePeriodSeconds: 0 });
        return;
      }
      if ((!pod.spec?.nodeName && !this.kubeletOptions.unbound) || pod.status?.phase !== 'Pending') return;
      const ready = this.kubeletOptions.ready ? this.kubeletOptions.ready(pod) : true;
      if (!ready) return;
      await this.setPodRunning(pod, true);
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    } finally {
      this.inflight.delete(key);
    }
  }

  /** Patches a pod's status to Running (Ready or not), as a node agent would. */
  async setPodRunning(pod: KubeObject, ready: boolean): Promise<KubeObject> {
    const now = new Date(this.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const cond = (type: string, status: boolean) => ({
      type,
      status: status ? 'True' : 'False',
      lastProbeTime: null,
      lastTransitionTime: now,
    });
    const ip = `10.244.${(this.ipSeq >> 8) & 255}.${this.ipSeq++ & 255}`;
    const status = {
      phase: 'Running',
      podIP: pod.status?.podIP ?? ip,
      podIPs: [{ ip: pod.status?.podIP ?? ip }],
      hostIP: '192.168.0.1',
      startTime: pod.status?.startTime ?? now,
      conditions: [
        cond('Initialized', true),
        cond('Ready', ready),
        cond('ContainersReady', ready),
        cond('PodScheduled', true),
      ],
      containerStatuses: (pod.spec?.containers ?? []).map((c: any) => ({
        name: c.name,
        image: c.image,
        imageID: '',
        ready,
        restartCount: 0,
        started: true,
        state: { running: { startedAt: now } },
      })),
    };
    return this.client
      .resource('pods')
      .namespace(pod.metadata.namespace!)
      .patch(pod.metadata.name!, { status }, 'merge', { subresource: 'status' });
  }

  /** Ends a pod (Succeeded or Failed) with its containers terminated. */
  async setPodFinished(
    pod: KubeObject,
    phase: 'Succeeded' | 'Failed',
    exitCode = phase === 'Failed' ? 1 : 0,
  ) {
    const now = new Date(this.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const status = {
      phase,
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          lastProbeTime: null,
          lastTransitionTime: now,
          reason: 'PodCompleted',
        },
      ],
      containerStatuses: (pod.spec?.containers ?? []).map((c: any) => ({
        name: c.name,
        image: c.image,
        imageID: '',
        ready: false,
        restartCount: 0,
        started: false,
        state: {
          terminated: {
            exitCode,
            reason: phase === 'Failed' ? 'Error' : 'Completed',
            startedAt: now,
            finishedAt: now,
          },
        },
      })),
    };
    return this.client
      .resource('pods')
      .namespace(pod.metadata.namespace!)
      .patch(pod.metadata.name!, { status }, 'merge', { subresource: 'status' });
  }

  /** A Ready node with the given labels, taints and allocatable. */
  async createNode(name: string, o: NodeOptions = {}): Promise<KubeObject> {
    const nodes = this.client.resource('nodes');
    const node = await nodes.create({
      metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(o.labels ?? {}) } },
      spec: { taints: o.taints, unschedulable: o.unschedulable || undefined },
    });
    const alloc = { cpu: '4', memory: '8Gi', pods: '110', ...(o.allocatable ?? {}) };
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    // The apiserver registers nodes with the not-ready taint; the node lifecycle
    // controller (not started here) lifts it once the node is Ready.
    if (
      o.ready !== false &&
      (node.spec?.taints ?? []).some((t: any) => t.key === 'node.kubernetes.io/not-ready')
    ) {
      await nodes.patch(name, { spec: { taints: o.taints ?? null } }, 'merge');
    }
    await nodes.patch(
      name,
      {
        status: {
          capacity: alloc,
          allocatable: alloc,
          conditions: [
            {
              type: 'Ready',
              status: o.ready === false ? 'False' : 'True',
              reason: o.ready === false ? 'KubeletNotReady' : 'KubeletReady',
              lastHeartbeatTime: now,
              lastTransitionTime: now,
            },
          ],
        },
      },
      'merge',
      { subresource: 'status' },
    );
    return nodes.get(name);
  }

  async createNamespace(name: string): Promise<void> {
    await this.client.resource('namespaces').create({ metadata: { name } });
  }

  eventsFor(name: string, reason?: string): RecordedEvent[] {
    return this.events.filter((e) => e.name === name && (!reason || e.reason === reason));
  }

  /** Waits for an event about `name` with this reason (and a note passing the test). */
  async expectEvent(
    name: string,
    reason: string,
    note: (n: string) => boolean = () => true,
  ): Promise<RecordedEvent> {
    return waitFor(
      `event ${reason} about ${name}`,
      () => this.eventsFor(name, reason).find((e) => note(e.note)),
      5000,
    );
  }

  async stop(): Promise<void> {
    this.ac.abort();
    await this.factory.shutdown();
    await this.broadcaster.shutdown(1000);
    await this.client.close();
    await this.srv.stop();
  }
}

/** Polls cond every 25 ms until it returns a truthy value; throws with the last value after ms. */
export async function waitFor<T>(
  what: string,
  cond: () => T | Promise<T>,
  ms = 15_000,
): Promise<NonNullable<T>> {
  const start = Date.now();
  const end = start + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await cond();
      if (v) {
        if (process.env.TKUBE_TEST_TIMING)
          process.stderr.write(`waited ${Date.now() - start} ms for ${what}\n`);
        return v as NonNullable<T>;
      }
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) {
      throw new Error(
        `timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : last !== undefined ? ` (last: ${JSON.stringify(last)})` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}
