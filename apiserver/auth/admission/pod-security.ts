// PodSecurity (k8s.io/pod-security-admission): the namespace labels
// pod-security.kubernetes.io/{enforce,audit,warn}[-version] choose a level
// (privileged, baseline, restricted). Pods that violate the enforce level are
// refused; audit violations become audit annotations, warn violations Warning
// headers. Workloads with pod templates are audited and warned, never refused.
// The checks of each level are in pod-security-checks.ts.
import type { Registry } from '../../registry/registry';
import type { AdmissionAttributes, AdmissionPlugin } from './types';
import { admissionForbidden, Lister } from './util';
import { evaluate, type Level, type Violation } from './pod-security-checks';
import { stringifyJSONInt64 } from '../../../shared/codec/json-int64';

export { evaluate } from './pod-security-checks';

const LEVELS: Level[] = ['privileged', 'baseline', 'restricted'];
const LABEL = 'pod-security.kubernetes.io/';

interface Policy {
  level: Level;
  version: string;
}

function describe(violations: Violation[]): string {
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const v of violations) {
    const s = v.detail ? `${v.reason} (${v.detail})` : v.reason;
    if (!seen.has(s)) parts.push(s);
    seen.add(s);
  }
  return parts.join(', ');
}

function policyOf(labels: Record<string, string> | undefined, mode: 'enforce' | 'audit' | 'warn'): Policy {
  const raw = labels?.[`${LABEL}${mode}`];
  const level: Level =
    raw === undefined ? 'privileged' : LEVELS.includes(raw as Level) ? (raw as Level) : 'restricted';
  const v = labels?.[`${LABEL}${mode}-version`];
  const version = v && /^(latest|v1\.\d+)$/.test(v) ? v : 'latest';
  return { level, version };
}

const policyString = (p: Policy) => `${p.level}:${p.version}`;

/** Pod template paths of workload resources (audited and warned only). */
const TEMPLATES: Record<string, (o: any) => any> = {
  '/replicationcontrollers': (o) => o.spec?.template,
  '/podtemplates': (o) => o.template,
  'apps/deployments': (o) => o.spec?.template,
  'apps/replicasets': (o) => o.spec?.template,
  'apps/statefulsets': (o) => o.spec?.template,
  'apps/daemonsets': (o) => o.spec?.template,
  'batch/jobs': (o) => o.spec?.template,
  'batch/cronjobs': (o) => o.spec?.jobTemplate?.spec?.template,
};

export class PodSecurity implements AdmissionPlugin {
  readonly name = 'PodSecurity';
  private readonly namespaces: Lister;

  constructor(registry: () => Registry) {
    this.namespaces = new Lister(registry, '', 'namespaces');
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
    if (!a.namespace || !a.object) return;
    const isPod = a.group === '' && a.resource === 'pods';
    const template = TEMPLATES[`${a.group}/${a.resource}`];
    if (!isPod && !template) return;
    if (isPod && a.subresource && a.subresource !== 'ephemeralcontainers') return;
    if (!isPod && a.subresource) return;
    let meta: any;
    let spec: any;
    if (isPod) {
      meta = a.object.metadata;
      spec = a.object.spec;
      // Updates that leave the pod spec alone (labels, annotations) are not re-evaluated.
      if (a.operation === 'UPDATE' && stringifyJSONInt64(a.oldObject?.spec) === stringifyJSONInt64(spec))
        return;
    } else {
      const t = template!(a.object);
      if (!t) return;
      meta = t.metadata;
      spec = t.spec;
      if (
        a.operation === 'UPDATE' &&
        a.oldObject &&
        stringifyJSONInt64(template!(a.oldObject)?.spec) === stringifyJSONInt64(spec)
      )
        return;
    }
    const ns = await this.namespaces.get('', a.namespace);
    const labels = ns?.metadata?.labels;
    const enforce = policyOf(labels, 'enforce');
    const audit = policyOf(labels, 'audit');
    const warn = policyOf(labels, 'warn');
    if (isPod && a.auditAnnotations) a.auditAnnotations[`${LABEL}enforce-policy`] = policyString(enforce);
    if (isPod) {
      const v = evaluate(enforce.level, meta, spec);
      if (v.length)
        throw admissionForbidden(a, `violates PodSecurity "${policyString(enforce)}": ${describe(v)}`);
    }
    const av = evaluate(audit.level, meta, spec);
    if (av.length && a.auditAnnotations)
      a.auditAnnotations[`${LABEL}audit-violations`] =
        `would violate PodSecurity "${policyString(audit)}": ${describe(av)}`;
    // A pod refused by enforce needs no warning; a pod passing enforce is warned about the warn level.
    const wv = evaluate(warn.level, meta, spec);
    if (wv.length && a.warnings) {
      const w = `would violate PodSecurity "${policyString(warn)}": ${describe(wv)}`;
      if (!a.warnings.includes(w)) a.warnings.push(w);
    }
  }
}
