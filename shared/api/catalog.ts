// The built-in resource catalog of Kubernetes 1.36, as served by tkube.
import type { ResourceFacts, SubresourceFacts } from './schema-types';
import { formatAPIVersion, resourceFacts } from './schema';

export type Stage = 'ga' | 'beta' | 'alpha';

export interface APIResourceInfo extends ResourceFacts {
  /** "v1" or "group/version". */
  groupVersion: string;
  listKind: string;
  stage: Stage;
}

/** ga for v1, v2...; beta for v1beta1...; alpha for v1alpha1... */
export function stageOf(version: string): Stage {
  if (/^v\d+$/.test(version)) return 'ga';
  if (/^v\d+beta\d+$/.test(version)) return 'beta';
  return 'alpha';
}

let builtins: APIResourceInfo[] | undefined;

export function builtinResources(): APIResourceInfo[] {
  return (builtins ??= resourceFacts().map((r) => ({
    ...r,
    groupVersion: formatAPIVersion(r.group, r.version),
    listKind: r.kind + 'List',
    stage: stageOf(r.version),
  })));
}

export function subresourceOf(r: ResourceFacts, name: string): SubresourceFacts | undefined {
  return r.subresources?.find((s) => s.name === name);
}

/** Orders versions like Kubernetes: GA > beta > alpha, then by major, then minor (v2 > v1, v1beta2 > v1beta1). */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [-1, 0, 0];
    const rank = m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0;
    return [rank, Number(m[1]), Number(m[3] ?? 0)];
  };
  const [ra, ma, na] = parse(a);
  const [rb, mb, nb] = parse(b);
  return rb - ra || mb - ma || nb - na || a.localeCompare(b);
}
