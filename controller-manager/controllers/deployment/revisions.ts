// Revisions of a Deployment: finding or creating the ReplicaSet of the current
// template (numbered past every old one, hash collisions counted), keeping the
// Deployment's revision annotation in step, and deleting old sets beyond
// revisionHistoryLimit.
import { isAlreadyExists, isNotFound } from '../../../shared/client';
import { errMessage, type Obj } from '../util/base';
import { controllerRef, isControlledBy } from '../util/controller-ref';
import { computeHash } from '../util/hash';
import { APPS_V1, type DeploymentSync } from './sync';
import * as u from './util';
import { jsonClone } from '../../../shared/api/json-value';

/**
 * Sets the Deployment's revision annotation when it differs: an update at the cached
 * resourceVersion (a conflict requeues), the verb the deployment-controller role grants.
 */
async function setDeploymentRevision(s: DeploymentSync, revision: string): Promise<void> {
  if (s.d.metadata.annotations?.[u.REVISION_ANNOTATION] === revision) return;
  const copy = jsonClone(s.d);
  copy.metadata.annotations = { ...copy.metadata.annotations, [u.REVISION_ANNOTATION]: revision };
  const updated = await s.c.clients.d.namespace(s.ns).update(copy);
  s.d = { ...s.d, metadata: updated.metadata };
}

/** getAllReplicaSetsAndSyncRevision. */
export async function allAndSyncRevision(
  s: DeploymentSync,
  create: boolean,
): Promise<{ newRS?: Obj; olds: Obj[] }> {
  const found = u.findNewReplicaSet(s.d, s.sets);
  const olds = s.sets.filter((rs) => rs !== found);
  const newRS = await getNewReplicaSet(s, found, olds, create);
  return { newRS, olds: s.sets.filter((rs) => rs.metadata.uid !== newRS?.metadata.uid) };
}

async function getNewReplicaSet(
  s: DeploymentSync,
  existing: Obj | undefined,
  olds: Obj[],
  create: boolean,
): Promise<Obj | undefined> {
  const d = s.d;
  const newRevision = u.maxRevision(olds) + 1n;
  if (existing) {
    const rs = jsonClone(existing);
    const annotationsUpdated = u.setNewReplicaSetAnnotations(d, rs, newRevision, true);
    const minReadyUpdate = (rs.spec?.minReadySeconds ?? 0) !== (d.spec?.minReadySeconds ?? 0);
    if (annotationsUpdated || minReadyUpdate) {
      rs.spec.minReadySeconds = d.spec?.minReadySeconds ?? 0;
      return s.replaced(await s.c.clients.rs.namespace(s.ns).update(rs));
    }
    await setDeploymentRevision(s, rs.metadata.annotations?.[u.REVISION_ANNOTATION] ?? String(newRevision));
    if (u.hasProgressDeadline(d) && !u.getDeploymentCondition(d.status, 'Progressing')) {
      const status = jsonClone(d.status ?? {});
      u.setDeploymentCondition(
        status,
        u.deploymentCondition(
          'Progressing',
          'True',
          u.FOUND_NEW_RS,
          `Found new replica set "${rs.metadata.name}"`,
          s.c.nowRFC(),
        ),
      );
      await s.writeStatus(status);
    }
    return rs;
  }
  if (!create) return undefined;

  const hash = computeHash(d.spec.template, d.status?.collisionCount);
  const template = jsonClone(d.spec.template);
  template.metadata = { ...(template.metadata ?? {}) };
  template.metadata.labels = { ...(template.metadata.labels ?? {}), [u.POD_TEMPLATE_HASH]: hash };
  const selector = jsonClone(d.spec.selector);
  selector.matchLabels = { ...(selector.matchLabels ?? {}), [u.POD_TEMPLATE_HASH]: hash };
  const rs: Obj = {
    apiVersion: APPS_V1,
    kind: 'ReplicaSet',
    metadata: {
      name: `${d.metadata.name}-${hash}`,
      namespace: s.ns,
      ownerReferences: [controllerRef(d, APPS_V1, 'Deployment')],
      labels: template.metadata.labels,
    },
    spec: { replicas: 0, minReadySeconds: d.spec?.minReadySeconds ?? 0, selector, template },
  };
  rs.spec.replicas = u.newRSNewReplicas(d, [...olds, rs], rs);
  u.setNewReplicaSetAnnotations(d, rs, newRevision, false);

  let created: Obj | undefined;
  let alreadyExists = false;
  try {
    created = await s.c.clients.rs.namespace(s.ns).create(rs);
  } catch (err) {
    if (isAlreadyExists(err)) {
      alreadyExists = true;
      let other = s.c.cachedReplicaSet(s.ns, rs.metadata.name!);
      if (!other) {
        try {
          other = await s.c.clients.rs.namespace(s.ns).get(rs.metadata.name!);
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }
      if (other && isControlledBy(other, d) && u.equalIgnoreHash(other.spec?.template, d.spec.template)) {
        created = jsonClone(other);
      } else {
        // A hash collision: count it, so the next hash differs.
        const status = jsonClone(d.status ?? {});
        status.collisionCount = (status.collisionCount ?? 0) + 1;
        await s.writeStatus(status);
        throw new Error(
          `replica set "${rs.metadata.name}" already exists with a different template (hash collision)`,
          { cause: err },
        );
      }
    } else {
      if (u.hasProgressDeadline(d)) {
        const status = jsonClone(d.status ?? {});
        u.setDeploymentCondition(
          status,
          u.deploymentCondition(
            'Progressing',
            'False',
            u.FAILED_RS_CREATE,
            `Failed to create new replica set "${rs.metadata.name}": ${errMessage(err)}`,
            s.c.nowRFC(),
          ),
        );
        await s.writeStatus(status);
      }
      throw err;
    }
  }
  const newRS = s.replaced(created!);
  if (!alreadyExists && u.replicasOf(newRS) > 0) {
    s.c.events.event(
      d,
      'Normal',
      'ScalingReplicaSet',
      'Scale',
      `Scaled up replica set ${newRS.metadata.name} from 0 to ${u.replicasOf(newRS)}`,
    );
  }
  await setDeploymentRevision(s, String(newRevision));
  if (!alreadyExists && u.hasProgressDeadline(d)) {
    const status = jsonClone(s.d.status ?? {});
    u.setDeploymentCondition(
      status,
      u.deploymentCondition(
        'Progressing',
        'True',
        u.NEW_RS_CREATED,
        `Created new replica set "${newRS.metadata.name}"`,
        s.c.nowRFC(),
      ),
    );
    await s.writeStatus(status);
  }
  return newRS;
}

/** cleanupDeployment: deletes the oldest idle sets beyond revisionHistoryLimit. */
export async function cleanupDeployment(s: DeploymentSync, olds: Obj[]): Promise<void> {
  const d = s.d;
  if (!u.hasRevisionHistoryLimit(d)) return;
  const cleanable = olds.filter((rs) => !rs.metadata.deletionTimestamp);
  const diff = cleanable.length - d.spec.revisionHistoryLimit;
  if (diff <= 0) return;
  cleanable.sort(u.byRevision);
  for (let i = 0; i < diff; i++) {
    const rs = cleanable[i];
    if (
      (rs.status?.replicas ?? 0) !== 0 ||
      u.replicasOf(rs) !== 0 ||
      (rs.metadata.generation ?? 0) > (rs.status?.observedGeneration ?? 0) ||
      rs.metadata.deletionTimestamp
    )
      continue;
    s.c.logger().v(2)?.info('deleting old replica set', { rs: rs.metadata.name });
    try {
      await s.c.clients.rs.namespace(s.ns).delete(rs.metadata.name!);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
