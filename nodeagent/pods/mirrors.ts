// Mirror pods: how this node's static pods show in the API (the kubelet's
// mirror pod manager). The mirrors the watch reports are kept by
// namespace/name; missing ones are created (owned by the Node), outdated or
// orphaned ones deleted. The mirror object itself is made in static.ts.
import type { ResourceClient } from '../../shared/client/resource';
import { isAlreadyExists, isConflict, isNotFound } from '../../shared/client/errors';
import type { KubeObject } from '../../shared/client/types';
import { logger } from '../../shared/log';
import { podKey, type PodRecord, type PodRecords } from './records';
import { mirrorMatches, mirrorPodFor } from './static';

const log = logger('nodeagent/pods');

export class MirrorPods {
  private readonly mirrors = new Map<string, KubeObject>();
  /** Creates and deletes in flight (not asked twice). */
  private readonly ops = new Set<string>();

  constructor(
    private readonly d: {
      /** Absent in standalone mode: no mirrors. */
      podsClient?: ResourceClient;
      nodeName: string;
      nodeUID(): string | undefined;
      records: PodRecords;
      /** False before every source listed once, and after stop. */
      ready(): boolean;
      requestSync(uid: string): void;
    },
  ) {}

  /** The mirror the API has under the pod's namespace/name, if any. */
  of(rec: PodRecord): KubeObject | undefined {
    return this.mirrors.get(podKey(rec.pod.metadata.namespace!, rec.pod.metadata.name!));
  }

  /** A mirror pod was added or changed in the API. */
  updated(pod: KubeObject): void {
    const key = podKey(pod.metadata.namespace!, pod.metadata.name!);
    const before = this.mirrors.get(key);
    this.mirrors.set(key, pod);
    const rec = this.d.records.staticByName(pod.metadata.namespace!, pod.metadata.name!);
    if (rec) {
      // A new mirror has none of the status written to the old one.
      if (before?.metadata.uid !== pod.metadata.uid) rec.lastSent = undefined;
      this.d.requestSync(rec.uid);
    }
    void this.sync();
  }

  /** A mirror pod is gone from the API. */
  removed(pod: KubeObject): void {
    const key = podKey(pod.metadata.namespace!, pod.metadata.name!);
    if (this.mirrors.get(key)?.metadata.uid === pod.metadata.uid) this.mirrors.delete(key);
    void this.sync();
  }

  /** Creates missing mirror pods, replaces stale ones and deletes orphans. */
  async sync(): Promise<void> {
    const podsClient = this.d.podsClient;
    if (!podsClient || !this.d.ready()) return;
    const nodeUID = this.d.nodeUID();
    if (!nodeUID) return;
    const wanted = new Map<string, PodRecord>();
    for (const r of this.d.records.values()) {
      if (r.source === 'api' || r.removed) continue;
      wanted.set(podKey(r.pod.metadata.namespace!, r.pod.metadata.name!), r);
    }
    for (const [key, mirror] of this.mirrors) {
      const r = wanted.get(key);
      if (r && mirrorMatches(mirror, r.pod) && !mirror.metadata.deletionTimestamp) continue;
      await this.op(`delete:${mirror.metadata.uid}`, async () => {
        log.info('deleting mirror pod', { pod: key, reason: r ? 'outdated' : 'no static pod' });
        await podsClient.namespace(mirror.metadata.namespace!).delete(mirror.metadata.name!, {
          gracePeriodSeconds: 0,
          preconditions: { uid: mirror.metadata.uid },
        });
      });
    }
    for (const [key, r] of wanted) {
      if (this.mirrors.has(key)) continue;
      await this.op(`create:${key}`, async () => {
        log.info('creating mirror pod', { pod: key });
        const created = await podsClient
          .namespace(r.pod.metadata.namespace!)
          .create(mirrorPodFor(r.pod, { name: this.d.nodeName, uid: nodeUID }));
        if (!this.mirrors.has(key)) this.updated(created);
      });
    }
  }

  private async op(key: string, fn: () => Promise<void>): Promise<void> {
    if (this.ops.has(key)) return;
    this.ops.add(key);
    try {
      await fn();
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err) && !isAlreadyExists(err))
        log.error('mirror pod operation failed', { op: key, err: String(err) });
    } finally {
      this.ops.delete(key);
    }
  }
}
