// The persistentvolume-binder controller (pkg/controller/volume/persistentvolume):
// one queue of claims and one of volumes, one worker each (a claim sync is not
// reentrant: two at once could bind one PV twice), every object synced again
// each --pvclaimbinder-sync-period. The rules live in sync-claim.ts and
// sync-volume.ts; the writes, and the cache of what was just written (newer
// than the informers until their watch catches up), in writes.ts.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import { runWorkers, type RateLimitingQueue, type SharedIndexInformer } from '../../../shared/informers';
import { cachesSynced, every, go, queueFor } from '../../app/controller-util';
import { durationOption, keyOf, unwrap, type Obj } from '../util/base';
import { POD_PVC_INDEX, podClaimKeys } from '../util/volumes';
import { BinderWrites } from './writes';
import { syncClaim } from './sync-claim';
import { syncVolume } from './sync-volume';

export const PV_CONTROLLER = 'persistentvolume-controller';

export class PersistentVolumeBinder {
  readonly volumes: SharedIndexInformer<Obj>;
  readonly claims: SharedIndexInformer<Obj>;
  readonly classes: SharedIndexInformer<Obj>;
  readonly pods: SharedIndexInformer<Obj>;
  readonly nodes: SharedIndexInformer<Obj>;
  readonly claimQueue: RateLimitingQueue<string>;
  readonly volumeQueue: RateLimitingQueue<string>;
  readonly recorder: EventRecorderLike;
  readonly writes: BinderWrites;
  readonly enableDynamicProvisioning: boolean;

  constructor(
    readonly ctx: ControllerContext,
    readonly syncPeriodMs: number,
  ) {
    const inf = ctx.informers;
    this.volumes = inf.forResource<Obj>('persistentvolumes');
    this.claims = inf.forResource<Obj>('persistentvolumeclaims');
    this.classes = inf.forResource<Obj>('storageclasses.storage.k8s.io');
    this.pods = inf.forResource<Obj>('pods', { indexers: { [POD_PVC_INDEX]: podClaimKeys } });
    this.nodes = inf.forResource<Obj>('nodes');
    this.claimQueue = queueFor<string>(ctx, 'claims');
    this.volumeQueue = queueFor<string>(ctx, 'volumes');
    this.recorder = ctx.recorder(PV_CONTROLLER);
    this.writes = new BinderWrites(ctx, this);
    this.enableDynamicProvisioning = ctx.options.enableDynamicProvisioning ?? true;

    this.volumes.addEventHandler({
      onAdd: (pv) => this.volumeQueue.add(pv.metadata.name!),
      onUpdate: (_o, pv) => this.volumeQueue.add(pv.metadata.name!),
      onDelete: (o) => {
        const pv = unwrap(o);
        this.writes.forgetVolume(pv.metadata.name!);
        // Its claim, if any, is now Lost.
        const ref = pv.spec?.claimRef;
        if (ref?.name) this.claimQueue.add(`${ref.namespace}/${ref.name}`);
      },
    });
    this.claims.addEventHandler({
      onAdd: (pvc) => this.claimQueue.add(keyOf(pvc)),
      onUpdate: (_o, pvc) => this.claimQueue.add(keyOf(pvc)),
      onDelete: (o) => {
        const pvc = unwrap(o);
        this.writes.forgetClaim(keyOf(pvc));
        // Its volume is now Released.
        if (pvc.spec?.volumeName) this.volumeQueue.add(pvc.spec.volumeName);
      },
    });
  }

  /** The newest copy known of a volume: the informer's or the one just written. */
  volume(name: string): Obj | undefined {
    return this.writes.newerVolume(this.volumes.lister().get(name));
  }

  claim(key: string): Obj | undefined {
    return this.writes.newerClaim(this.claims.lister().get(key));
  }

  allVolumes(): Obj[] {
    return this.volumes
      .lister()
      .list()
      .map((pv) => this.writes.newerVolume(pv)!);
  }

  class(name: string): Obj | undefined {
    return this.classes.lister().get(name);
  }

  /** Pods (not terminated) that reference the claim. */
  podsUsing(pvc: Obj): Obj[] {
    return this.pods.indexer
      .byIndex(POD_PVC_INDEX, keyOf(pvc))
      .filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  }

  event(obj: Obj, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.recorder.event(obj, type, reason, reason, note);
  }

  private resync(): void {
    for (const pvc of this.claims.lister().list()) this.claimQueue.add(keyOf(pvc));
    for (const pv of this.volumes.lister().list()) this.volumeQueue.add(pv.metadata.name!);
  }

  start(): void {
    const { ctx } = this;
    go(ctx, 'persistentvolume-binder', async () => {
      const synced = await cachesSynced(
        ctx,
        'persistent volume',
        this.volumes,
        this.claims,
        this.classes,
        this.pods,
        this.nodes,
      );
      if (!synced) return;
      every(ctx, this.syncPeriodMs, 'persistent volume resync', () => this.resync());
      const log = ctx.log.child({ controller: PV_CONTROLLER });
      const onError = (key: string, err: unknown) =>
        log.v(2)?.info('sync failed, requeued', { key, err: String(err) });
      await Promise.all([
        runWorkers(this.volumeQueue, (name) => this.syncVolumeKey(name), {
          workers: 1,
          signal: ctx.signal,
          onError,
        }),
        runWorkers(this.claimQueue, (key) => this.syncClaimKey(key), {
          workers: 1,
          signal: ctx.signal,
          onError,
        }),
      ]);
    });
  }

  private async syncVolumeKey(name: string): Promise<void> {
    const pv = this.volume(name);
    if (pv) await syncVolume(this, pv);
  }

  private async syncClaimKey(key: string): Promise<void> {
    const pvc = this.claim(key);
    if (pvc) await syncClaim(this, pvc);
  }
}

export function startPersistentVolumeBinder(ctx: ControllerContext): PersistentVolumeBinder {
  const b = new PersistentVolumeBinder(ctx, durationOption(ctx, 'pvclaimbinderSyncPeriod', 15_000));
  b.start();
  return b;
}

export const persistentVolumeBinderController: ControllerDescriptor = {
  name: 'persistentvolume-binder',
  aliases: ['persistentvolume-binder-controller'],
  start: (ctx) => void startPersistentVolumeBinder(ctx),
};
