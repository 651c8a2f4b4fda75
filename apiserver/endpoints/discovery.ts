// Discovery: /api, /apis, /apis/<group>, /api/v1 and /apis/<group>/<version>
// (APIVersions, APIGroupList, APIGroup, APIResourceList), and aggregated
// discovery (apidiscovery.k8s.io/v2 APIGroupDiscoveryList), which kubectl 1.32 asks for first.
import { createHash } from 'node:crypto';
import { compareVersions } from '../../shared/api/catalog';
import type { Registry, ServedResource } from '../registry/registry';
import { builtinPriority, CRD_PRIORITY } from '../aggregator/priorities';

export const AGGREGATED_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
export const AGGREGATED_V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

interface GroupInfo {
  name: string;
  versions: string[];
  preferred: string;
  resources: Map<string, ServedResource[]>;
}

// kube-apiserver lists groups in this order (others follow alphabetically).
const GROUP_ORDER = [
  '',
  'apiregistration.k8s.io',
  'apps',
  'events.k8s.io',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'networking.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'storage.k8s.io',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'scheduling.k8s.io',
  'coordination.k8s.io',
  'node.k8s.io',
  'discovery.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'resource.k8s.io',
];

function groupRank(g: string): number {
  const i = GROUP_ORDER.indexOf(g);
  return i < 0 ? GROUP_ORDER.length : i;
}

/** Resource → APIResource (with its subresources as "pods/status" entries). */
function apiResources(list: ServedResource[]): any[] {
  const out: any[] = [];
  for (const s of list.slice().sort((a, b) => a.info.resource.localeCompare(b.info.resource))) {
    const i = s.info;
    const r: any = {
      name: i.resource,
      singularName: i.singular,
      namespaced: i.namespaced,
      kind: i.kind,
      verbs: i.verbs,
    };
    if (i.shortNames?.length) r.shortNames = i.shortNames;
    if (i.categories?.length) r.categories = i.categories;
    r.storageVersionHash = storageVersionHash(i.group, i.version, i.kind);
    out.push(r);
    for (const sub of s.subresources.values()) {
      const sr: any = {
        name: `${i.resource}/${sub.name}`,
        singularName: '',
        namespaced: i.namespaced,
        kind: sub.kind,
        verbs: sub.verbs,
      };
      if (sub.group !== i.group) sr.group = sub.group;
      if (sub.version !== i.version) sr.version = sub.version;
      out.push(sr);
    }
  }
  return out;
}

function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest('base64').slice(0, 11);
}

/** A group/version served by another server through the aggregation layer. */
export interface ExternalVersion {
  group: string;
  version: string;
  groupPriorityMinimum: number;
  versionPriority: number;
  available: boolean;
  /** Its APIResourceList, once read from the server. */
  resources?: { resources?: any[] };
}

interface ExternalGroup {
  name: string;
  priority: number;
  versions: ExternalVersion[];
}

/** Aggregated groups, versions ordered by versionPriority, then as Kubernetes orders versions. */
function externalGroups(list: ExternalVersion[]): ExternalGroup[] {
  const byGroup = new Map<string, ExternalGroup>();
  for (const v of list) {
    let g = byGroup.get(v.group);
    if (!g) byGroup.set(v.group, (g = { name: v.group, priority: 0, versions: [] }));
    g.priority = Math.max(g.priority, v.groupPriorityMinimum);
    g.versions.push(v);
  }
  for (const g of byGroup.values())
    g.versions.sort((a, b) => b.versionPriority - a.versionPriority || compareVersions(a.version, b.version));
  return [...byGroup.values()];
}

/** v1 APIResource entries → aggregated discovery (v2) resources with their subresources. */
function toAggregatedResources(group: string, version: string, list: any[]): any[] {
  const top = new Map<string, any>();
  for (const r of list) {
    if (r.name.includes('/')) continue;
    const out: any = {
      resource: r.name,
      responseKind: { group: r.group ?? group, version: r.version ?? version, kind: r.kind },
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: r.singularName ?? '',
      verbs: r.verbs ?? [],
    };
    if (r.shortNames?.length) out.shortNames = r.shortNames;
    if (r.categories?.length) out.categories = r.categories;
    top.set(r.name, out);
  }
  for (const r of list) {
    const [parent, sub] = r.name.split('/');
    const p = sub && top.get(parent);
    if (!p) continue;
    (p.subresources ??= []).push({
      subresource: sub,
      responseKind: { group: r.group ?? group, version: r.version ?? version, kind: r.kind },
      verbs: r.verbs ?? [],
    });
  }
  return [...top.values()];
}

export class Discovery {
  private cache: { generation: number; groups: GroupInfo[] } | null = null;
  private generation = 0;
  private external: () => ExternalVersion[] = () => [];

  constructor(private readonly registry: Registry) {}

  /** The aggregation layer's groups, merged into /apis and aggregated discovery. */
  setExternal(source: () => ExternalVersion[]): void {
    this.external = source;
  }

  /** Where a served group sits among aggregated ones (its APIServices' groupPriorityMinimum). */
  private localPriority(g: GroupInfo): number {
    let p = 0;
    for (const v of g.versions) {
      const list = g.resources.get(v)!;
      const dynamic = list.some((s) => this.registry.isDynamic(s.info.group, v, s.info.resource));
      p = Math.max(p, dynamic ? CRD_PRIORITY.group : (builtinPriority(g.name, v)?.group ?? 0));
    }
    return p;
  }

  /** Served and aggregated groups in discovery order: aggregated ones before the first lower-priority served one. */
  private merged(): ({ local: GroupInfo } | { external: ExternalGroup })[] {
    const local = this.groups();
    const ext = externalGroups(this.external()).filter((e) => !local.some((l) => l.name === e.name));
    if (!ext.length) return local.map((l) => ({ local: l }));
    ext.sort((a, b) => b.priority - a.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const out: ({ local: GroupInfo } | { external: ExternalGroup })[] = [];
    let i = 0;
    for (const l of local) {
      const p = l.name === '' ? Infinity : this.localPriority(l);
      while (i < ext.length && ext[i].priority > p) out.push({ external: ext[i++] });
      out.push({ local: l });
    }
    while (i < ext.length) out.push({ external: ext[i++] });
    return out;
  }

  /** Call when served resources change (custom resources). */
  invalidate(): void {
    this.generation++;
    this.cache = null;
  }

  private groups(): GroupInfo[] {
    if (this.cache && this.cache.generation === this.generation) return this.cache.groups;
    const byGroup = new Map<string, GroupInfo>();
    for (const s of this.registry.all()) {
      const g = s.info.group;
      let gi = byGroup.get(g);
      if (!gi) byGroup.set(g, (gi = { name: g, versions: [], preferred: '', resources: new Map() }));
      if (!gi.resources.has(s.info.version)) {
        gi.resources.set(s.info.version, []);
        gi.versions.push(s.info.version);
      }
      gi.resources.get(s.info.version)!.push(s);
    }
    const groups = [...byGroup.values()];
    for (const g of groups) {
      g.versions.sort(compareVersions);
      g.preferred = g.versions[0];
    }
    groups.sort((a, b) => groupRank(a.name) - groupRank(b.name) || a.name.localeCompare(b.name));
    this.cache = { generation: this.generation, groups };
    return groups;
  }

  private group(name: string): GroupInfo | undefined {
    return this.groups().find((g) => g.name === name);
  }

  apiVersions(serverAddress: string): object {
    return {
      kind: 'APIVersions',
      versions: this.group('') ? ['v1'] : [],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    };
  }

  private groupObject(g: GroupInfo): object {
    return {
      name: g.name,
      versions: g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v })),
      preferredVersion: { groupVersion: `${g.name}/${g.preferred}`, version: g.preferred },
    };
  }

  apiGroupList(): object {
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: this.merged()
        .filter((g) => !('local' in g) || g.local.name !== '')
        .map((g) => ('local' in g ? this.groupObject(g.local) : externalGroupObject(g.external))),
    };
  }

  apiGroup(name: string): object | undefined {
    const g = this.group(name);
    if (g && g.name) return { kind: 'APIGroup', apiVersion: 'v1', ...this.groupObject(g) };
    const e = name ? externalGroups(this.external()).find((x) => x.name === name) : undefined;
    return e && { kind: 'APIGroup', apiVersion: 'v1', ...externalGroupObject(e) };
  }

  apiResourceList(group: string, version: string): object | undefined {
    const list = this.group(group)?.resources.get(version);
    if (!list) return undefined;
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: group ? `${group}/${version}` : version,
      resources: apiResources(list),
    };
  }

  /** Aggregated discovery document for /api (core) or /apis (named groups). */
  aggregated(core: boolean, version: 'v2' | 'v2beta1'): object {
    const items = this.merged()
      .filter((m) => ('local' in m ? (m.local.name === '') === core : !core))
      .map((m) => ('local' in m ? this.aggregatedGroup(m.local) : aggregatedExternal(m.external)))
      .filter((item) => item.versions.length);
    return {
      kind: 'APIGroupDiscoveryList',
      apiVersion: `apidiscovery.k8s.io/${version}`,
      metadata: {},
      items,
    };
  }

  private aggregatedGroup(g: GroupInfo) {
    return {
      metadata: { name: g.name, creationTimestamp: null },
      versions: g.versions.map((v) => ({
        version: v,
        resources: g.resources
          .get(v)!
          .slice()
          .sort((a, b) => a.info.resource.localeCompare(b.info.resource))
          .map((s) => {
            const i = s.info;
            const r: any = {
              resource: i.resource,
              responseKind: { group: i.group, version: i.version, kind: i.kind },
              scope: i.namespaced ? 'Namespaced' : 'Cluster',
              singularResource: i.singular,
              verbs: i.verbs,
            };
            if (i.shortNames?.length) r.shortNames = i.shortNames;
            if (i.categories?.length) r.categories = i.categories;
            const subs = [...s.subresources.values()];
            if (subs.length)
              r.subresources = subs.map((sub) => ({
                subresource: sub.name,
                responseKind: { group: sub.group, version: sub.version, kind: sub.kind },
                verbs: sub.verbs,
              }));
            return r;
          }),
        freshness: 'Current',
      })),
    };
  }
}

function externalGroupObject(g: ExternalGroup): object {
  const preferred = g.versions[0].version;
  return {
    name: g.name,
    versions: g.versions.map((v) => ({ groupVersion: `${g.name}/${v.version}`, version: v.version })),
    preferredVersion: { groupVersion: `${g.name}/${preferred}`, version: preferred },
  };
}

/** An aggregated group as aggregated discovery shows it: versions read at least once; Stale when unavailable now. */
function aggregatedExternal(g: ExternalGroup) {
  return {
    metadata: { name: g.name, creationTimestamp: null },
    versions: g.versions
      .filter((v) => v.resources)
      .map((v) => ({
        version: v.version,
        resources: toAggregatedResources(g.name, v.version, v.resources?.resources ?? []),
        freshness: v.available ? 'Current' : 'Stale',
      })),
  };
}

/** Which aggregated discovery version an Accept header asks for, if any. */
export function wantsAggregated(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  if (!accept) return undefined;
  for (const clause of accept.split(',')) {
    const c = clause.replace(/\s+/g, '');
    if (!c.includes('as=APIGroupDiscoveryList') || !c.includes('g=apidiscovery.k8s.io')) continue;
    if (c.includes('v=v2beta1')) return 'v2beta1';
    if (c.includes('v=v2')) return 'v2';
  }
  return undefined;
}
