// The OpenAPI documents kubectl reads: /openapi/v2 (JSON, or gnostic
// protobuf), the /openapi/v3 index and one /openapi/v3/<path> document per
// group-version. Built from the schema source on first request and memoised;
// CRDs add their own schemas through extraDefinitions / extraSchemas.
import { createHash } from 'node:crypto';
import { encodeOpenAPIV2Protobuf } from './openapi-gnostic';
import {
  gvPrefix,
  operationRefs,
  resourcePaths,
  type DefinitionResolver,
  type PathEntry,
} from './openapi-paths';
import { renderPath } from './openapi-render';
import { COMMON_DEFINITIONS, META, reachableSchemas, type Flavor, type Schema } from './openapi-schema';
import { builtinResources } from './catalog';
import { allTypes, definitionOf, formatAPIVersion, gvkKey, parseAPIVersion } from './schema';
import type { ResourceFacts } from './schema-types';

export type { Schema } from './openapi-schema';
export { encodeOpenAPIV2Protobuf, OPENAPI_V2_PROTOBUF } from './openapi-gnostic';

export interface OpenAPIOptions {
  /** info.version (Kubernetes serves its git version there). */
  version?: string;
}

const SECURITY = {
  BearerToken: { type: 'apiKey', name: 'authorization', in: 'header', description: 'Bearer token.' },
};

/** Definition names by x-kubernetes-group-version-kind, built-ins first, then extras. */
function resolver(extra: Record<string, Schema>): DefinitionResolver {
  let byGVK: Map<string, string> | undefined;
  return (gvk) => {
    const d = definitionOf(gvk);
    if (d) return d;
    if (!byGVK) {
      byGVK = new Map();
      for (const [name, s] of Object.entries(extra)) {
        for (const g of s['x-kubernetes-group-version-kind'] ?? []) byGVK.set(gvkKey(g), name);
      }
    }
    return byGVK.get(gvkKey(gvk));
  };
}

const isBuiltin = (r: ResourceFacts) => allTypes()[r.definition] !== undefined;

/** "v1" → "api/v1", "apps/v1" → "apis/apps/v1"; a path form is returned as is. */
export function groupVersionPath(groupVersion: string): string {
  if (groupVersion.startsWith('api/') || groupVersion.startsWith('apis/')) return groupVersion;
  const { group, version } = parseAPIVersion(groupVersion);
  return gvPrefix(group, version).slice(1);
}

function groupByGV(resources: readonly ResourceFacts[]): Map<string, ResourceFacts[]> {
  const m = new Map<string, ResourceFacts[]>();
  for (const r of resources) {
    const gv = formatAPIVersion(r.group, r.version);
    const list = m.get(gv);
    if (list) list.push(r);
    else m.set(gv, [r]);
  }
  return m;
}

/** Definitions a set of resources needs: kinds, lists, subresource kinds, operation bodies and responses. */
function roots(
  resources: readonly ResourceFacts[],
  resolve: DefinitionResolver,
  paths: Iterable<PathEntry>,
): Set<string> {
  const out = new Set<string>(COMMON_DEFINITIONS);
  for (const r of resources) {
    out.add(r.definition);
    const list = resolve({ group: r.group, version: r.version, kind: r.kind + 'List' });
    if (list) out.add(list);
    for (const s of r.subresources ?? []) {
      const d = resolve({ group: s.group ?? r.group, version: s.version ?? r.version, kind: s.kind });
      if (d) out.add(d);
    }
  }
  for (const ref of operationRefs(paths)) out.add(ref);
  return out;
}

function schemasFor(
  rootNames: Set<string>,
  flavor: Flavor,
  extra: Record<string, Schema>,
): Record<string, Schema> {
  const { schemas, missing } = reachableSchemas(rootNames, flavor, extra);
  if (missing.length) throw new Error(`openapi: unresolved definitions: ${missing.sort().join(', ')}`);
  return schemas;
}

function sortedPaths(entries: Iterable<PathEntry>, flavor: Flavor): Record<string, Schema> {
  const all = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const out: Record<string, Schema> = {};
  for (const e of all) out[e.path] = renderPath(e, flavor);
  return out;
}

function discoveryPath(path: string, operationId: string, response: string, tag: string): PathEntry {
  return {
    path,
    params: [],
    ops: [
      {
        method: 'get',
        operationId,
        description: 'Discovery information.',
        tag,
        query: [],
        response,
        codes: [200],
        consumes: ['application/json', 'application/yaml'],
        produces: ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'],
      },
    ],
  };
}

/** The Swagger 2.0 document of /openapi/v2. */
export function buildOpenAPIV2(
  resources: readonly ResourceFacts[],
  extraDefinitions: Record<string, Schema> = {},
  opts: OpenAPIOptions = {},
): Schema {
  const resolve = resolver(extraDefinitions);
  const entries: PathEntry[] = [];
  const groups = new Set<string>();
  for (const [gv, rs] of groupByGV(resources)) {
    const { group, version } = parseAPIVersion(gv);
    if (group) groups.add(group);
    entries.push(...resourcePaths(group, version, rs, resolve, isBuiltin).values());
  }
  entries.push(discoveryPath('/api/', 'getCoreAPIVersions', `${META}.APIVersions`, 'core'));
  entries.push(discoveryPath('/apis/', 'getAPIVersions', `${META}.APIGroupList`, 'apis'));
  for (const g of groups) {
    entries.push(
      discoveryPath(
        `/apis/${g}/`,
        `get${g.replace(/\.k8s\.io$/, '').replace(/[^A-Za-z0-9]/g, '')}APIGroup`,
        `${META}.APIGroup`,
        g,
      ),
    );
  }
  entries.push(
    discoveryPath('/version/', 'getCodeVersion', 'io.k8s.apimachinery.pkg.version.Info', 'version'),
  );
  const names = roots(resources, resolve, entries);
  for (const n of Object.keys(extraDefinitions)) names.add(n);
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: opts.version ?? 'unversioned' },
    paths: sortedPaths(entries, 'v2'),
    definitions: schemasFor(names, 'v2', extraDefinitions),
    securityDefinitions: SECURITY,
    security: [{ BearerToken: [] }],
  };
}

/** The OpenAPI 3.0 document of one group-version ("v1", "apps/v1" or "apis/apps/v1"). */
export function buildOpenAPIV3(
  groupVersion: string,
  resources: readonly ResourceFacts[],
  extraSchemas: Record<string, Schema> = {},
  opts: OpenAPIOptions = {},
): Schema {
  const path = groupVersionPath(groupVersion);
  const mine = resources.filter((r) => groupVersionPath(formatAPIVersion(r.group, r.version)) === path);
  const parts = path.split('/');
  const [group, version] = parts[0] === 'api' ? ['', parts[1] ?? ''] : [parts[1] ?? '', parts[2] ?? ''];
  const resolve = resolver(extraSchemas);
  const entries = [...resourcePaths(group, version, mine, resolve, isBuiltin).values()];
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: opts.version ?? 'unversioned' },
    paths: sortedPaths(entries, 'v3'),
    components: {
      schemas: schemasFor(roots(mine, resolve, entries), 'v3', extraSchemas),
      securitySchemes: SECURITY,
    },
    security: [{ BearerToken: [] }],
  };
}

export interface OpenAPIV3Index {
  paths: Record<string, { serverRelativeURL: string }>;
}

/**
 * The /openapi/v3 index; hashOf gives each document's content hash (clients cache by it).
 * Without hashOf the built-in document of each group-version is built and hashed;
 * servers use OpenAPIService.v3Index(), which memoises the documents.
 */
export function buildOpenAPIV3Index(
  groupVersions: Iterable<string>,
  hashOf: (path: string) => string = (p) =>
    contentHash(JSON.stringify(buildOpenAPIV3(p, builtinResources()))),
): OpenAPIV3Index {
  const paths: OpenAPIV3Index['paths'] = {};
  for (const p of [...new Set([...groupVersions].map(groupVersionPath))].sort()) {
    paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${hashOf(p)}` };
  }
  return { paths };
}

/** Kubernetes' content hash: SHA-512, upper-case hex. */
export function contentHash(data: string | Buffer): string {
  return createHash('sha512').update(data).digest('hex').toUpperCase();
}

export interface Served {
  json: Buffer;
  /** Content hash (also the ETag, quoted). */
  hash: string;
}

/**
 * Memoised documents for the server: nothing is built before the first
 * request, each group-version document on its own, and setExtensions() (CRDs)
 * throws away only what it changes.
 */
export class OpenAPIService {
  private resources: readonly ResourceFacts[];
  private extraV2: Record<string, Schema> = {};
  private extraV3: Record<string, Schema> = {};
  private v2cache?: Served & { doc: Schema; pb?: Buffer };
  private readonly v3cache = new Map<string, Served>();
  private indexCache?: Buffer;
  /** Documents of aggregated APIs (other servers behind APIServices), by source. */
  private aggregated = new Map<string, AggregatedSpec>();

  constructor(
    builtin: readonly ResourceFacts[],
    private readonly opts: OpenAPIOptions = {},
  ) {
    this.resources = builtin;
  }

  /** Replaces the served resources and extra schemas; drops the documents they touch. */
  setResources(
    resources: readonly ResourceFacts[],
    extra: { v2?: Record<string, Schema>; v3?: Record<string, Schema> } = {},
  ): void {
    const before = groupByGV(this.resources);
    const after = groupByGV(resources);
    const changed = new Set<string>();
    for (const gv of new Set([...before.keys(), ...after.keys()])) {
      if (JSON.stringify(before.get(gv)) !== JSON.stringify(after.get(gv))) changed.add(groupVersionPath(gv));
    }
    if (extra.v3 && JSON.stringify(extra.v3) !== JSON.stringify(this.extraV3)) {
      // Extra schemas may be reachable from any group-version that names them.
      for (const [path] of this.v3cache) if (path.startsWith('apis/')) changed.add(path);
    }
    this.resources = resources;
    if (extra.v2) this.extraV2 = extra.v2;
    if (extra.v3) this.extraV3 = extra.v3;
    this.invalidate([...changed]);
  }

  /** Drops memoised documents (all, or those of some group-version paths). */
  invalidate(paths?: string[]): void {
    this.v2cache = undefined;
    this.indexCache = undefined;
    if (!paths) this.v3cache.clear();
    else for (const p of paths) this.v3cache.delete(groupVersionPath(p));
  }

  /**
   * The OpenAPI documents an aggregated API serves (undefined removes them):
   * its v2 paths and definitions are merged into /openapi/v2 (what is built in
   * wins a clash), its v3 document is served at its group-version path.
   */
  setAggregated(source: string, spec: AggregatedSpec | undefined): void {
    const before = this.aggregated.get(source);
    if (JSON.stringify(before) === JSON.stringify(spec)) return;
    if (spec) this.aggregated.set(source, spec);
    else this.aggregated.delete(source);
    this.invalidate([before?.groupVersionPath, spec?.groupVersionPath].filter((p): p is string => !!p));
  }

  v2(): Served {
    if (!this.v2cache) {
      const doc = buildOpenAPIV2(this.resources, this.extraV2, this.opts);
      for (const a of this.aggregated.values()) mergeV2(doc, a.v2);
      const json = Buffer.from(JSON.stringify(doc));
      this.v2cache = { doc, json, hash: contentHash(json) };
    }
    return this.v2cache;
  }

  /** application/com.github.proto-openapi.spec.v2@v1.0+protobuf */
  v2Protobuf(): Buffer {
    this.v2();
    const c = this.v2cache!;
    return (c.pb ??= encodeOpenAPIV2Protobuf(c.doc));
  }

  groupVersionPaths(): string[] {
    const paths = new Set([...groupByGV(this.resources).keys()].map(groupVersionPath));
    for (const a of this.aggregated.values()) if (a.v3) paths.add(a.groupVersionPath);
    return [...paths].sort();
  }

  /** The document of one group-version path, or undefined when nothing is served there. */
  v3(path: string): Served | undefined {
    const p = groupVersionPath(path);
    let c = this.v3cache.get(p);
    if (!c) {
      if (!this.groupVersionPaths().includes(p)) return undefined;
      const agg = [...this.aggregated.values()].find((a) => a.groupVersionPath === p && a.v3);
      if (agg && !groupByGV(this.resources).has(p.replace(/^apis\//, '').replace(/^api\//, ''))) {
        const json = Buffer.from(JSON.stringify(agg.v3));
        c = { json, hash: contentHash(json) };
        this.v3cache.set(p, c);
        return c;
      }
      const json = Buffer.from(JSON.stringify(buildOpenAPIV3(p, this.resources, this.extraV3, this.opts)));
      c = { json, hash: contentHash(json) };
      this.v3cache.set(p, c);
    }
    return c;
  }

  v3Index(): Buffer {
    return (this.indexCache ??= Buffer.from(
      JSON.stringify(buildOpenAPIV3Index(this.groupVersionPaths(), (p) => this.v3(p)!.hash)),
    ));
  }
}

/** What an aggregated API serves at /openapi/v2 and /openapi/v3/<its group-version path>. */
export interface AggregatedSpec {
  /** "apis/<group>/<version>" */
  groupVersionPath: string;
  v2?: Schema;
  v3?: Schema;
}

/** Adds an aggregated v2 document's paths and definitions that the served one does not have. */
function mergeV2(doc: Schema, add: Schema | undefined): void {
  if (!add) return;
  const paths = (doc.paths ??= {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries((add.paths ?? {}) as Record<string, unknown>))
    if (!(k in paths)) paths[k] = v;
  const defs = (doc.definitions ??= {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries((add.definitions ?? {}) as Record<string, unknown>))
    if (!(k in defs)) defs[k] = v;
}
