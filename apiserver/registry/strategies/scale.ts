// The scale subresource (autoscaling/v1 Scale) of workloads: spec.replicas,
// status.replicas and the selector, read from and written to the parent object.
import { conflict, notFound } from '../../../shared/api/status';
import { labelsToSelectorString, selectorFromObject } from '../../../shared/api/labels';
import type { CustomSubresource, ServedResource } from '../registry';

export interface ScalePaths {
  /** Where the replica count lives (default spec.replicas). */
  specReplicas?: string[];
  statusReplicas?: string[];
  /** Where the label selector lives: a LabelSelector object or (RC) a plain map. */
  selector?: string[];
  /** The selector as a string already (CRD labelSelectorPath). */
  selectorString?: boolean;
}

const at = (o: any, path: string[]) => path.reduce((v, k) => (v == null ? undefined : v[k]), o);

function selectorText(sel: any, isString: boolean): string {
  if (sel == null) return '';
  if (isString) return String(sel);
  if (sel.matchLabels !== undefined || sel.matchExpressions !== undefined)
    return selectorFromObject(sel)?.toString() ?? '';
  return labelsToSelectorString(sel);
}

export function toScale(obj: any, paths: ScalePaths = {}): any {
  const md = obj.metadata;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: md.name,
      namespace: md.namespace,
      uid: md.uid,
      resourceVersion: md.resourceVersion,
      creationTimestamp: md.creationTimestamp,
    },
    spec: { replicas: at(obj, paths.specReplicas ?? ['spec', 'replicas']) ?? 0 },
    status: {
      replicas: at(obj, paths.statusReplicas ?? ['status', 'replicas']) ?? 0,
      selector: selectorText(at(obj, paths.selector ?? ['spec', 'selector']), !!paths.selectorString),
    },
  };
}

export function scaleSubresource(paths: ScalePaths = {}): CustomSubresource {
  const specPath = paths.specReplicas ?? ['spec', 'replicas'];
  return {
    async get(ctx, name, served: ServedResource) {
      const o = await served.store.reader.get(ctx, name);
      return toScale(served.fromStorage(o.obj), paths);
    },
    async update(ctx, name, scale, served: ServedResource, hooks) {
      const replicas = scale.spec?.replicas ?? 0;
      const rv = scale.metadata?.resourceVersion;
      const out = await served.store.update(
        ctx,
        name,
        (current) => {
          if (!current) throw notFound({ group: served.info.group, resource: served.info.resource }, name);
          if (rv && rv !== current.metadata.resourceVersion)
            throw conflict({ group: served.info.group, resource: served.info.resource }, name);
          const obj = served.fromStorage(current);
          let target = obj;
          for (const k of specPath.slice(0, -1)) target = target[k] ??= {};
          target[specPath[specPath.length - 1]] = replicas;
          delete obj.metadata.resourceVersion;
          return served.toStorage(obj);
        },
        hooks,
      );
      return { obj: toScale(served.fromStorage(out.obj), paths), created: false };
    },
  };
}
