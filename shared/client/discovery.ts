// Discovery: which groups, versions and resources the server serves, from
// aggregated discovery (apidiscovery.k8s.io/v2, two requests) with a fallback
// to the per-group-version documents. The namespace controller and the
// garbage collector use it to find every deletable / watchable resource.
import type { RestClient } from './rest';
import { apiVersionOf, builtinResource, type ResolvedResource } from './gvr';
import { compareVersions } from '../api/catalog';
import { protobufSupported } from '../codec/protobuf';

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

export interface DiscoveredResource extends ResolvedResource {
  singular: string;
  verbs: string[];
  shortNames: string[];
  categories: string[];
  /** Subresource names ("status", "scale"). */
  subresources: string[];
  /** Whether this version is the group's preferred one. */
  preferred: boolean;
}

export interface DiscoveredGroup {
  name: string;
  /** Served versions, preferred first. */
  versions: string[];
  preferredVersion: string;
}

interface Snapshot {
  groups: DiscoveredGroup[];
  resources: DiscoveredResource[];
}

export class Discovery {
  private snapshot?: Promise<Snapshot>;

  constructor(private readonly rest: RestClient) {}

  /** Drops the cached answer; the next call asks the server again. */
  invalidate(): void {
    this.snapshot = undefined;
  }

  private load(): Promise<Snapshot> {
    if (!this.snapshot) {
      const p = this.fetch();
      this.snapshot = p;
      p.catch(() => {
        if (this.snapshot === p) this.snapshot = undefined;
      });
    }
    return this.snapshot;
  }

  async serverGroups(): Promise<DiscoveredGroup[]> {
    return (await this.load()).groups;
  }

  /** Every resource of every served group version (not subresources). */
  async serverResources(): Promise<DiscoveredResource[]> {
    return (await this.load()).resources;
  }

  /**
   * client-go's ServerPreferredResources: per group, each resource in the first of the group's
   * versions (in preference order) that serves it.
   */
  async serverPreferredResources(): Promise<DiscoveredResource[]> {
    const { groups, resources } = await this.load();
    const out: DiscoveredResource[] = [];
    for (const g of groups) {
      const seen = new Set<string>();
      for (const v of g.versions) {
        for (const r of resources) {
          if (r.group !== g.name || r.version !== v || seen.has(r.resource)) continue;
          seen.add(r.resource);
          out.push(r);
        }
      }
    }
    return out;
  }

  /** Preferred resources that support all the given verbs (e.g. ["list", "delete"]). */
  async resourcesWithVerbs(verbs: string[]): Promise<DiscoveredResource[]> {
    return (await this.serverPreferredResources()).filter((r) => verbs.every((v) => r.verbs.includes(v)));
  }

  /**
   * Resolves a kind, plural, singular or short name, optionally qualified by
   * group ("deployments.apps", "Deployment", "deploy") or a full "group/version/resource".
   * The preferred version wins; core before other groups for bare names.
   */
  async resolve(name: string, group?: string): Promise<DiscoveredResource> {
    const all = await this.serverResources();
    const parts = name.split('/');
    if (parts.length === 3 || parts.length === 2) {
      const [g, v, r] = parts.length === 3 ? parts : ['', parts[0], parts[1]];
      const hit = all.find((x) => x.group === g && x.version === v && x.resource === r);
      if (hit) return hit;
      throw new Error(`the server doesn't have a resource type "${name}"`);
    }
    let want = name;
    let wantGroup = group;
    if (wantGroup === undefined && name.includes('.')) {
      const i = name.indexOf('.');
      want = name.slice(0, i);
      wantGroup = name.slice(i + 1);
    }
    const lower = want.toLowerCase();
    const cands = all.filter(
      (r) =>
        (wantGroup === undefined || r.group === wantGroup) &&
        (r.resource === lower ||
          r.singular === lower ||
          r.kind === want ||
          r.kind.toLowerCase() === lower ||
          r.shortNames.includes(lower)),
    );
    if (!cands.length) throw new Error(`the server doesn't have a resource type "${name}"`);
    cands.sort(
      (a, b) =>
        (a.group === '' ? 0 : 1) - (b.group === '' ? 0 : 1) ||
        Number(b.preferred) - Number(a.preferred) ||
        compareVersions(a.version, b.version),
    );
    return cands[0];
  }

  /** The resource serving a kind in a group version ("apps/v1", "Deployment"): what owner references need. */
  async resourceForKind(apiVersion: string, kind: string): Promise<DiscoveredResource | undefined> {
    return (await this.serverResources()).find((r) => r.apiVersion === apiVersion && r.kind === kind);
  }

  private async fetch(): Promise<Snapshot> {
    const [core, named] = await Promise.all([
      this.rest.raw({ method: 'GET', path: '/api', accept: `${AGGREGATED}, application/json` }),
      this.rest.raw({ method: 'GET', path: '/apis', accept: `${AGGREGATED}, application/json` }),
    ]);
    const ct = (r: typeof core) => String(r.headers['content-type'] ?? '');
    if (ct(core).includes('as=APIGroupDiscoveryList') && ct(named).includes('as=APIGroupDiscoveryList')) {
      const out: Snapshot = { groups: [], resources: [] };
      for (const r of [core, named]) fromAggregated(JSON.parse(r.body.toString('utf8')), out);
      return out;
    }
    return this.fetchLegacy(JSON.parse(core.body.toString('utf8')), JSON.parse(named.body.toString('utf8')));
  }

  private async fetchLegacy(core: any, named: any): Promise<Snapshot> {
    const groups: DiscoveredGroup[] = [];
    const coreVersions: string[] = core?.versions ?? [];
    if (coreVersions.length)
      groups.push({ name: '', versions: coreVersions, preferredVersion: coreVersions[0] });
    for (const g of named?.groups ?? []) {
      const versions = (g.versions ?? []).map((v: any) => v.version);
      groups.push({ name: g.name, versions, preferredVersion: g.preferredVersion?.version ?? versions[0] });
    }
    const lists = await Promise.all(
      groups.flatMap((g) =>
        g.versions.map(async (v) => {
          const path = g.name ? `/apis/${g.name}/${v}` : `/api/${v}`;
          const list = await this.rest.request<any>({ method: 'GET', path });
          return { g, v, list };
        }),
      ),
    );
    const resources: DiscoveredResource[] = [];
    for (const { g, v, list } of lists) {
      const subs = new Map<string, string[]>();
      for (const r of list?.resources ?? []) {
        const [base, sub] = String(r.name).split('/');
        if (sub) subs.set(base, [...(subs.get(base) ?? []), sub]);
      }
      for (const r of list?.resources ?? []) {
        if (String(r.name).includes('/')) continue;
        resources.push({
          group: g.name,
          version: v,
          resource: r.name,
          apiVersion: apiVersionOf(g.name, v),
          kind: r.kind,
          namespaced: !!r.namespaced,
          protobuf: false,
          singular: r.singularName || r.kind.toLowerCase(),
          verbs: r.verbs ?? [],
          shortNames: r.shortNames ?? [],
          categories: r.categories ?? [],
          subresources: subs.get(r.name) ?? [],
          preferred: v === g.preferredVersion,
        });
      }
    }
    return { groups, resources: markProtobuf(resources) };
  }
}

function fromAggregated(list: any, out: Snapshot): void {
  const start = out.resources.length;
  for (const item of list?.items ?? []) {
    const name: string = item.metadata?.name ?? '';
    const versions: string[] = (item.versions ?? []).map((v: any) => v.version);
    if (!versions.length) continue;
    out.groups.push({ name, versions, preferredVersion: versions[0] });
    for (const v of item.versions) {
      for (const r of v.resources ?? []) {
        const kind = r.responseKind?.kind ?? '';
        out.resources.push({
          group: name,
          version: v.version,
          resource: r.resource,
          apiVersion: apiVersionOf(name, v.version),
          kind,
          namespaced: r.scope === 'Namespaced',
          protobuf: false,
          singular: r.singularResource || kind.toLowerCase(),
          verbs: r.verbs ?? [],
          shortNames: r.shortNames ?? [],
          categories: r.categories ?? [],
          subresources: (r.subresources ?? []).map((s: any) => s.subresource),
          preferred: v.version === versions[0],
        });
      }
    }
  }
  markProtobuf(out.resources, start);
}

function markProtobuf(list: DiscoveredResource[], from = 0): DiscoveredResource[] {
  for (let i = from; i < list.length; i++) {
    const r = list[i];
    r.protobuf = !!builtinResource(r) && protobufSupported(r.apiVersion, r.kind);
  }
  return list;
}
