// The local-path provisioner (rancher/local-path-provisioner v0.0.37 on the
// sig-storage external-provisioner library): a claim the persistentvolume-
// binder handed to `rancher.io/local-path` (its storage-provisioner
// annotation) gets, once the scheduler chose a node (selected-node), a
// directory <base>/pvc-<uid>_<namespace>_<claim> on that node and a PV
// `pvc-<uid>` pinned to the node's hostname label; a Released PV of ours with
// reclaim Delete loses its directory, then the PV object goes.
//
// Upstream runs a helper pod on the node for mkdir and rm -rf. A tkube node
// is a process on this host, its files under the cluster's data dir, so the
// controller manager (on the same host) does both directly. The base dir is
// --local-path-base-dir, `{node}` standing for the node's name; without it
// the provisioner does not run.
import { chmodSync, mkdirSync, realpathSync, rmSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { isAlreadyExists, isNotFound, type ResourceClient } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import {
  ANN_LOCAL_PATH_SELECTED_NODE,
  LOCAL_PATH_PROVISIONER,
  NODE_PLACEHOLDER,
} from '../../../shared/api/local-path';
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import { QueueController, errMessage, keyOf, unwrap, type Obj } from '../util/base';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_DYNAMICALLY_PROVISIONED,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  claimClass,
} from '../util/volumes';

const HOSTNAME_LABEL = 'kubernetes.io/hostname';
const CLAIM = 'claim/';
const VOLUME = 'volume/';

/** The PV name the external-provisioner library gives a claim's volume. */
export const provisionedVolumeName = (pvc: Obj) => `pvc-${pvc.metadata.uid}`;

export class LocalPathProvisioner extends QueueController {
  private readonly claims: SharedIndexInformer<Obj>;
  private readonly volumes: SharedIndexInformer<Obj>;
  private readonly classes: SharedIndexInformer<Obj>;
  private readonly nodes: SharedIndexInformer<Obj>;
  private readonly pvClient: ResourceClient<Obj>;
  private readonly recorder: EventRecorderLike;

  constructor(
    ctx: ControllerContext,
    private readonly baseDirPattern: string,
  ) {
    // One worker: two syncs of one claim at once could both create its directory and PV.
    super(ctx, { name: 'local-path-provisioner', workers: 1 });
    const inf = ctx.informers;
    this.claims = inf.forResource<Obj>('persistentvolumeclaims');
    this.volumes = inf.forResource<Obj>('persistentvolumes');
    this.classes = inf.forResource<Obj>('storageclasses.storage.k8s.io');
    this.nodes = inf.forResource<Obj>('nodes');
    this.pvClient = ctx.client.resource<Obj>('persistentvolumes');
    this.recorder = ctx.recorder(LOCAL_PATH_PROVISIONER);
    this.waitFor(this.claims, this.volumes, this.classes, this.nodes);
    this.claims.addEventHandler({
      onAdd: (c) => this.enqueue(CLAIM + keyOf(c)),
      onUpdate: (_o, c) => this.enqueue(CLAIM + keyOf(c)),
    });
    this.volumes.addEventHandler({
      onAdd: (v) => this.enqueue(VOLUME + v.metadata.name),
      onUpdate: (_o, v) => this.enqueue(VOLUME + v.metadata.name),
      onDelete: (v) => this.log.v(4)?.info('volume deleted', { name: unwrap(v).metadata.name }),
    });
  }

  /** The base directory of volumes on a node. */
  baseDir(node: string): string {
    return resolve(this.baseDirPattern.split(NODE_PLACEHOLDER).join(node));
  }

  protected async sync(key: string): Promise<void> {
    if (key.startsWith(CLAIM)) {
      const pvc = this.claims.lister().get(key.slice(CLAIM.length));
      if (pvc) await this.syncClaim(pvc);
    } else {
      const pv = this.volumes.lister().get(key.slice(VOLUME.length));
      if (pv) await this.syncVolume(pv);
    }
  }

  /** shouldProvision: asked of us, not bound, not going, a node chosen where the class waits for one. */
  private async syncClaim(pvc: Obj): Promise<void> {
    const a = pvc.metadata.annotations ?? {};
    const askedOf = a[ANN_STORAGE_PROVISIONER] ?? a[ANN_BETA_STORAGE_PROVISIONER];
    if (askedOf !== LOCAL_PATH_PROVISIONER || pvc.spec?.volumeName || pvc.metadata.deletionTimestamp) return;
    const cls = this.classes.lister().get(claimClass(pvc));
    if (!cls || cls.provisioner !== LOCAL_PATH_PROVISIONER) return;
    if (this.volumes.lister().get(provisionedVolumeName(pvc))) return;
    const node = a[ANN_SELECTED_NODE];
    // local-path needs a node: it works only with WaitForFirstConsumer, once the scheduler picked one.
    if (!node) return;
    this.event(
      pvc,
      'Normal',
      'Provisioning',
      `External provisioner is provisioning volume for claim "${keyOf(pvc)}"`,
    );
    let pv: Obj;
    try {
      pv = this.provision(pvc, cls, node);
    } catch (err) {
      this.event(
        pvc,
        'Warning',
        'ProvisioningFailed',
        `failed to provision volume with StorageClass "${cls.metadata.name}": ${errMessage(err)}`,
      );
      throw err;
    }
    try {
      await this.pvClient.create(pv);
    } catch (err) {
      if (isAlreadyExists(err)) return;
      throw err;
    }
    this.event(pvc, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${pv.metadata.name}`);
  }

  /** The directory made on the node and the PV that describes it (not yet created). */
  private provision(pvc: Obj, cls: Obj, nodeName: string): Obj {
    if (pvc.spec?.selector) throw new Error('claim.Spec.Selector is not supported');
    for (const m of pvc.spec?.accessModes ?? [])
      if (m !== 'ReadWriteOnce' && m !== 'ReadWriteOncePod')
        throw new Error('NodePath only supports ReadWriteOnce and ReadWriteOncePod (1 node) access modes');
    const node = this.nodes.lister().get(nodeName);
    if (!node) throw new Error(`nodes "${nodeName}" not found`);
    const name = provisionedVolumeName(pvc);
    const path = join(this.baseDir(nodeName), `${name}_${pvc.metadata.namespace}_${pvc.metadata.name}`);
    // The default setup script: mkdir -m 0777 -p (the mode exactly, whatever the umask).
    mkdirSync(path, { recursive: true });
    chmodSync(path, 0o777);
    const local =
      pvc.metadata.annotations?.volumeType === 'local' ||
      (pvc.metadata.annotations?.volumeType === undefined &&
        cls.metadata.annotations?.defaultVolumeType === 'local');
    const hostname = node.metadata.labels?.[HOSTNAME_LABEL] ?? nodeName;
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: {
        name,
        annotations: {
          [ANN_DYNAMICALLY_PROVISIONED]: LOCAL_PATH_PROVISIONER,
          [ANN_LOCAL_PATH_SELECTED_NODE]: nodeName,
        },
      },
      spec: {
        persistentVolumeReclaimPolicy: cls.reclaimPolicy ?? 'Delete',
        accessModes: pvc.spec?.accessModes,
        volumeMode: 'Filesystem',
        capacity: { storage: pvc.spec?.resources?.requests?.storage },
        ...(local ? { local: { path } } : { hostPath: { path, type: 'DirectoryOrCreate' } }),
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: HOSTNAME_LABEL, operator: 'In', values: [hostname] }] },
            ],
          },
        },
        claimRef: {
          kind: 'PersistentVolumeClaim',
          apiVersion: 'v1',
          namespace: pvc.metadata.namespace,
          name: pvc.metadata.name,
          uid: pvc.metadata.uid,
          resourceVersion: pvc.metadata.resourceVersion,
        },
        storageClassName: cls.metadata.name,
        ...(cls.mountOptions ? { mountOptions: cls.mountOptions } : {}),
      },
    };
  }

  /** A Released volume of ours with reclaim Delete: its directory removed, then the PV. */
  private async syncVolume(pv: Obj): Promise<void> {
    if (pv.metadata.annotations?.[ANN_DYNAMICALLY_PROVISIONED] !== LOCAL_PATH_PROVISIONER) return;
    if (pv.status?.phase !== 'Released' || pv.spec?.persistentVolumeReclaimPolicy !== 'Delete') return;
    if (pv.metadata.deletionTimestamp) return;
    const nodeName = pv.metadata.annotations?.[ANN_LOCAL_PATH_SELECTED_NODE];
    const path: string | undefined = pv.spec?.hostPath?.path ?? pv.spec?.local?.path;
    // Upstream skips the cleanup when the node is gone; the PV is deleted either way.
    if (nodeName && path && this.nodes.lister().get(nodeName)) {
      try {
        this.removeDirectory(nodeName, path);
      } catch (err) {
        this.event(pv, 'Warning', 'VolumeFailedDelete', errMessage(err));
        throw err;
      }
    }
    try {
      await this.pvClient.delete(pv.metadata.name!, {
        preconditions: { uid: pv.metadata.uid },
        signal: this.ctx.signal,
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** rm -rf of a volume's directory, never of anything outside the node's base dir. */
  private removeDirectory(nodeName: string, path: string): void {
    const base = this.baseDir(nodeName);
    let real: string;
    let realBase: string;
    try {
      real = realpathSync(path);
      realBase = realpathSync(base);
    } catch {
      return; // Already gone (with its base dir, perhaps).
    }
    // Only a direct child of the base dir is a volume's directory.
    const rel = relative(realBase, real);
    if (!rel || rel.startsWith('..') || rel.includes(sep))
      throw new Error(`refusing to delete ${path}: not a volume directory of ${base}`);
    rmSync(real, { recursive: true, force: true });
  }

  private event(o: Obj, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.recorder.event(o, type, reason, reason, note);
  }
}

export const localPathProvisionerController: ControllerDescriptor = {
  name: 'local-path-provisioner',
  start(ctx) {
    const base = ctx.options.localPathBaseDir;
    if (typeof base !== 'string' || !base) {
      ctx.log.v(1)?.info('--local-path-base-dir not set: the local-path provisioner does not run');
      return;
    }
    void new LocalPathProvisioner(ctx, base).run();
  },
};
