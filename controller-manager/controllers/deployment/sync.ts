// The state of one Deployment sync and the writes every step shares. The steps
// themselves (revisions.ts, scaling.ts, rolling.ts, recreate.ts, status.ts)
// are functions of it, so each keeps reading the copies the last write left.
import { type Obj } from '../util/base';
import { updateStatus } from '../util/status';
import type { DeploymentController } from './deployment';
import * as u from './util';
import { jsonClone } from '../../../shared/api/json-value';

export const APPS_V1 = 'apps/v1';

/** One sync of one Deployment: d and its ReplicaSets are private copies kept current across writes. */
export class DeploymentSync {
  constructor(
    readonly c: DeploymentController,
    public d: Obj,
    readonly sets: Obj[],
  ) {}

  get ns(): string {
    return this.d.metadata.namespace!;
  }

  /** Replaces a set in this.sets after a write. */
  replaced(rs: Obj): Obj {
    const i = this.sets.findIndex((x) => x.metadata.uid === rs.metadata.uid);
    if (i >= 0) this.sets[i] = rs;
    else this.sets.push(rs);
    return rs;
  }

  async writeStatus(status: any): Promise<void> {
    const updated = await updateStatus(this.c.clients.d, this.d, status);
    if (updated) this.d = { ...this.d, metadata: updated.metadata, status: updated.status };
  }

  /** The current copies of newRS and olds after writes. */
  refresh(newRS: Obj | undefined, olds: Obj[]): { newRS?: Obj; olds: Obj[] } {
    const get = (rs: Obj) => this.sets.find((x) => x.metadata.uid === rs.metadata.uid) ?? rs;
    return { newRS: newRS && get(newRS), olds: olds.map(get) };
  }

  /** scaleReplicaSetAndRecordEvent; true when the size changed. */
  async scaleReplicaSet(rs: Obj, size: number, op?: 'up' | 'down'): Promise<boolean> {
    const d = this.d;
    const oldSize = u.replicasOf(rs);
    const sizeChange = oldSize !== size;
    const max = u.replicasOf(d) + u.maxSurge(d);
    if (!sizeChange && !u.replicasAnnotationsNeedUpdate(rs, u.replicasOf(d), max)) return false;
    const copy = jsonClone(rs);
    copy.spec.replicas = size;
    u.setReplicasAnnotations(copy, u.replicasOf(d), max);
    this.replaced(await this.c.clients.rs.namespace(this.ns).update(copy));
    if (sizeChange) {
      const dir = op ?? (oldSize < size ? 'up' : 'down');
      this.c.events.event(
        d,
        'Normal',
        'ScalingReplicaSet',
        'Scale',
        `Scaled ${dir} replica set ${rs.metadata.name} from ${oldSize} to ${size}`,
      );
    }
    return sizeChange;
  }

  async scaleIfNeeded(rs: Obj, size: number): Promise<boolean> {
    if (u.replicasOf(rs) === size) return false;
    return this.scaleReplicaSet(rs, size);
  }
}
