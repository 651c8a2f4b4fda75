// A custom resource's field labels (apiextensions' crConverter.ConvertFieldLabel): metadata.name,
// metadata.namespace when namespaced, and each version's own selectableFields.
import type { FieldLabels, LabelSet } from '../field-labels';
import { pathSegments, selectableValue } from './schema';
import type { CRD } from './types';

const refuse = (label: string) => `field label not supported: ${label}`;

export function crdFieldLabels(crd: CRD): FieldLabels {
  const meta = ['metadata.name', ...(crd.spec.scope === 'Namespaced' ? ['metadata.namespace'] : [])];
  const byVersion = new Map<string, LabelSet>();
  for (const v of crd.spec.versions) {
    const own = (v.selectableFields ?? []).map((f) => f.jsonPath.replace(/^\./, ''));
    const labels = Object.fromEntries([...meta, ...own].map((l) => [l, l]));
    byVersion.set(`${crd.spec.group}/${v.name}`, { labels, refuse });
  }
  const none: LabelSet = { labels: Object.fromEntries(meta.map((l) => [l, l])), refuse };
  // Values: the union of the versions' fields (one watch cache serves them all).
  const selectable = [...new Set([...byVersion.values()].flatMap((s) => Object.keys(s.labels)))].filter(
    (l) => !meta.includes(l),
  );
  const segs = selectable.map(pathSegments);
  return {
    forVersion: (gv) => byVersion.get(gv) ?? none,
    values: segs.length
      ? (obj) => Object.fromEntries(selectable.map((f, i) => [f, selectableValue(obj, segs[i])]))
      : undefined,
  };
}
