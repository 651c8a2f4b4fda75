// apps/v1, batch/v1 and autoscaling/v2 defaults, Kubernetes 1.36.
import { asArr, asObj, ensureObj, registerDefaults, setIfUnset, type Obj } from './defaults-registry';

const APPS = 'io.k8s.api.apps.v1.';
const BATCH = 'io.k8s.api.batch.v1.';
const AUTOSCALING = 'io.k8s.api.autoscaling.v2.';

registerDefaults(APPS + 'Deployment', (d) => {
  const s = ensureObj(d, 'spec');
  setIfUnset(s, 'replicas', 1);
  const strategy = ensureObj(s, 'strategy');
  setIfUnset(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const ru = ensureObj(strategy, 'rollingUpdate');
    setIfUnset(ru, 'maxUnavailable', '25%');
    setIfUnset(ru, 'maxSurge', '25%');
  }
  setIfUnset(s, 'revisionHistoryLimit', 10);
  setIfUnset(s, 'progressDeadlineSeconds', 600);
});

registerDefaults(APPS + 'ReplicaSet', (rs) => setIfUnset(ensureObj(rs, 'spec'), 'replicas', 1));

registerDefaults(APPS + 'DaemonSet', (ds) => {
  const s = ensureObj(ds, 'spec');
  const us = ensureObj(s, 'updateStrategy');
  setIfUnset(us, 'type', 'RollingUpdate');
  if (us.type === 'RollingUpdate') {
    const ru = ensureObj(us, 'rollingUpdate');
    setIfUnset(ru, 'maxUnavailable', 1);
    if (ru.maxSurge === undefined || ru.maxSurge === null) ru.maxSurge = 0;
  }
  setIfUnset(s, 'revisionHistoryLimit', 10);
});

registerDefaults(APPS + 'StatefulSet', (sts) => {
  const s = ensureObj(sts, 'spec');
  setIfUnset(s, 'podManagementPolicy', 'OrderedReady');
  const us = ensureObj(s, 'updateStrategy');
  if (!us.type) {
    us.type = 'RollingUpdate';
    ensureObj(us, 'rollingUpdate');
  }
  const ru = asObj(us.rollingUpdate);
  // maxUnavailable is not defaulted: the MaxUnavailableStatefulSet gate is off in 1.36.
  if (us.type === 'RollingUpdate' && ru && (ru.partition === undefined || ru.partition === null))
    ru.partition = 0;
  const retention = ensureObj(s, 'persistentVolumeClaimRetentionPolicy');
  setIfUnset(retention, 'whenDeleted', 'Retain');
  setIfUnset(retention, 'whenScaled', 'Retain');
  setIfUnset(s, 'replicas', 1);
  setIfUnset(s, 'revisionHistoryLimit', 10);
});

registerDefaults(BATCH + 'Job', (job) => {
  const s = ensureObj(job, 'spec');
  const unset = (k: string) => s[k] === undefined || s[k] === null;
  if (unset('completions') && unset('parallelism')) {
    s.completions = 1;
    s.parallelism = 1;
  }
  setIfUnset(s, 'parallelism', 1);
  if (unset('backoffLimit')) s.backoffLimit = unset('backoffLimitPerIndex') ? 6 : 2147483647;
  const labels = asObj(asObj(asObj(s.template)?.metadata)?.labels);
  const meta = ensureObj(job, 'metadata');
  if (labels && Object.keys(asObj(meta.labels) ?? {}).length === 0) meta.labels = { ...labels };
  setIfUnset(s, 'completionMode', 'NonIndexed');
  if (unset('suspend')) s.suspend = false;
  const pfp = asObj(s.podFailurePolicy);
  if (pfp)
    for (const r of asArr(pfp.rules))
      for (const c of asArr(asObj(r)?.onPodConditions)) if (asObj(c)) setIfUnset(asObj(c)!, 'status', 'True');
  setIfUnset(s, 'podReplacementPolicy', pfp ? 'Failed' : 'TerminatingOrFailed');
});

registerDefaults(BATCH + 'CronJob', (cj) => {
  const s = ensureObj(cj, 'spec');
  setIfUnset(s, 'concurrencyPolicy', 'Allow');
  if (s.suspend === undefined || s.suspend === null) s.suspend = false;
  setIfUnset(s, 'successfulJobsHistoryLimit', 3);
  setIfUnset(s, 'failedJobsHistoryLimit', 1);
});

const scaleUp = (): Obj => ({
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
});
const scaleDown = (): Obj => ({
  selectPolicy: 'Max',
  policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
});

/** copyHPAScalingRules: the user's fields over the defaults. */
function scalingRules(given: unknown, defaults: Obj): Obj {
  const g = asObj(given);
  if (!g) return defaults;
  for (const k of ['selectPolicy', 'stabilizationWindowSeconds', 'policies', 'tolerance'])
    if (g[k] !== undefined && g[k] !== null) defaults[k] = g[k];
  return defaults;
}

registerDefaults(AUTOSCALING + 'HorizontalPodAutoscaler', (hpa) => {
  const s = ensureObj(hpa, 'spec');
  setIfUnset(s, 'minReplicas', 1);
  if (asArr(s.metrics).length === 0)
    s.metrics = [
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
      },
    ];
  const b = asObj(s.behavior);
  if (b) {
    b.scaleUp = scalingRules(b.scaleUp, scaleUp());
    b.scaleDown = scalingRules(b.scaleDown, scaleDown());
  }
});
