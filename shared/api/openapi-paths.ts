// The operations of the served resources (one model), rendered as OpenAPI v2
// or v3 path items. kubectl reads mostly definitions, but `apply
// --validate=strict` checks that each kind's PATCH operation lists the
// fieldValidation query parameter in its v3 document, so paths matter.
import { featureGates } from '../options/feature-gates';
import type { GroupVersionKind, ResourceFacts } from './schema-types';
import { META } from './openapi-schema';

type ParamType = 'string' | 'integer' | 'boolean';
type QueryParam = [name: string, type: ParamType];

// Query parameters per action (Kubernetes 1.36 facts; shardSelector left out: tkube does not shard).
const LIST: QueryParam[] = [
  ['allowWatchBookmarks', 'boolean'],
  ['continue', 'string'],
  ['fieldSelector', 'string'],
  ['labelSelector', 'string'],
  ['limit', 'integer'],
  ['resourceVersion', 'string'],
  ['resourceVersionMatch', 'string'],
  ['sendInitialEvents', 'boolean'],
  ['timeoutSeconds', 'integer'],
  ['watch', 'boolean'],
];
const WRITE_ALL: QueryParam[] = [
  ['dryRun', 'string'],
  ['fieldManager', 'string'],
  ['fieldValidation', 'string'],
];
// fieldValidation is advertised only while the server honours it (ServerSideFieldValidation):
// kubectl validates on the client side otherwise.
const WRITE_NO_FV = WRITE_ALL.filter(([n]) => n !== 'fieldValidation');
const writeParams = () => (featureGates.enabled('ServerSideFieldValidation') ? WRITE_ALL : WRITE_NO_FV);
const patchParams = (): QueryParam[] => [...writeParams(), ['force', 'boolean']];
const DELETE: QueryParam[] = [
  ['dryRun', 'string'],
  ['gracePeriodSeconds', 'integer'],
  ['ignoreStoreReadErrorWithClusterBreakingPotential', 'boolean'],
  ['orphanDependents', 'boolean'],
  ['propagationPolicy', 'string'],
];
const DELETE_COLLECTION: QueryParam[] = [
  ...DELETE,
  ...LIST.filter(([n]) => n !== 'watch' && n !== 'allowWatchBookmarks'),
  // Bytewise, as Go sorts (localeCompare would also cost ~4 ms of ICU set-up at start).
].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

const JSON_TYPES = ['application/json', 'application/yaml'];
const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const STREAMS = ['application/json;stream=watch', `${PROTOBUF};stream=watch`];
const PATCH_TYPES = [
  'application/apply-patch+yaml',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
];

export interface Operation {
  method: 'get' | 'put' | 'post' | 'delete' | 'patch';
  action?: string;
  operationId: string;
  description: string;
  tag: string;
  gvk?: GroupVersionKind;
  query: QueryParam[];
  /** Definition name of the request body. */
  body?: string;
  bodyRequired?: boolean;
  /** Definition name of the response, or a plain string response. */
  response: string | { type: 'string' };
  codes: number[];
  consumes: string[];
  produces: string[];
}

export interface PathEntry {
  path: string;
  /** Path parameters in order, plus "pretty". */
  params: { name: string; in: 'path' | 'query'; description: string }[];
  ops: Operation[];
}

const cap = (s: string) => (s ? s[0].toUpperCase() + s.slice(1) : s);

function groupCamel(group: string): string {
  if (!group) return 'Core';
  return group
    .replace(/\.k8s\.io$/, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map(cap)
    .join('');
}

export function tagOf(group: string, version: string): string {
  const g = groupCamel(group);
  return `${g[0].toLowerCase()}${g.slice(1)}_${version}`;
}

export function gvPrefix(group: string, version: string): string {
  return group ? `/apis/${group}/${version}` : `/api/${version}`;
}

/** Resolves a kind to its definition name (built-in or extra). */
export type DefinitionResolver = (gvk: GroupVersionKind) => string | undefined;

const VERB_METHOD: Record<string, Operation['method']> = {
  get: 'get',
  create: 'post',
  update: 'put',
  patch: 'patch',
  delete: 'delete',
};

/** The operations of one group-version's resources, keyed by path. */
export function resourcePaths(
  group: string,
  version: string,
  resources: readonly ResourceFacts[],
  resolve: DefinitionResolver,
  protobuf: (r: ResourceFacts) => boolean,
): Map<string, PathEntry> {
  const out = new Map<string, PathEntry>();
  const prefix = gvPrefix(group, version);
  const G = groupCamel(group) + cap(version);
  const tag = tagOf(group, version);
  const pretty = { name: 'pretty', in: 'query' as const, description: 'Pretty-print the output.' };
  const nsParam = { name: 'namespace', in: 'path' as const, description: 'Namespace of the objects.' };
  const nameParam = (kind: string) => ({
    name: 'name',
    in: 'path' as const,
    description: `Name of the ${kind}.`,
  });
  const entry = (path: string, params: PathEntry['params']): PathEntry => {
    let e = out.get(path);
    if (!e) out.set(path, (e = { path, params: [...params, pretty], ops: [] }));
    return e;
  };

  entry(`${prefix}/`, []).ops.push({
    method: 'get',
    operationId: `get${G}APIResources`,
    description: `Resources served in ${group || 'core'}/${version}.`,
    tag,
    query: [],
    response: `${META}.APIResourceList`,
    codes: [200],
    consumes: JSON_TYPES,
    produces: [...JSON_TYPES, PROTOBUF],
  });

  for (const r of resources) {
    const gvk = { group: r.group, version: r.version, kind: r.kind };
    const def = r.definition;
    const listDef = resolve({ ...gvk, kind: r.kind + 'List' });
    const pb = protobuf(r);
    const produces = pb ? [...JSON_TYPES, PROTOBUF] : JSON_TYPES;
    const streaming = [...produces, ...(pb ? STREAMS : STREAMS.slice(0, 1))];
    const patchTypes = pb ? PATCH_TYPES : PATCH_TYPES.filter((t) => !t.startsWith('application/strategic'));
    const verbs = new Set(r.verbs);
    const ns = r.namespaced ? 'Namespaced' : '';
    const scope = r.namespaced ? [nsParam] : [];
    const collection = r.namespaced
      ? `${prefix}/namespaces/{namespace}/${r.resource}`
      : `${prefix}/${r.resource}`;
    const item = `${collection}/{name}`;
    const op = (o: Omit<Operation, 'tag' | 'consumes' | 'produces'> & Partial<Operation>): Operation => ({
      tag,
      consumes: ['*/*'],
      produces,
      ...o,
    });

    const coll = entry(collection, scope);
    if (verbs.has('list') && listDef) {
      coll.ops.push(
        op({
          method: 'get',
          action: 'list',
          operationId: `list${G}${ns}${r.kind}`,
          description: `Lists or watches ${r.kind} objects.`,
          gvk,
          query: LIST,
          response: listDef,
          codes: [200],
          produces: streaming,
        }),
      );
      if (r.namespaced) {
        entry(`${prefix}/${r.resource}`, []).ops.push(
          op({
            method: 'get',
            action: 'list',
            operationId: `list${G}${r.kind}ForAllNamespaces`,
            description: `Lists or watches ${r.kind} objects in all namespaces.`,
            gvk,
            query: LIST,
            response: listDef,
            codes: [200],
            produces: streaming,
          }),
        );
      }
    }
    if (verbs.has('create')) {
      coll.ops.push(
        op({
          method: 'post',
          action: 'post',
          operationId: `create${G}${ns}${r.kind}`,
          description: `Creates a ${r.kind}.`,
          gvk,
          query: writeParams(),
          body: def,
          bodyRequired: true,
          response: def,
          codes: [200, 201, 202],
        }),
      );
    }
    if (verbs.has('deletecollection')) {
      coll.ops.push(
        op({
          method: 'delete',
          action: 'deletecollection',
          operationId: `deleteCollection${G}${ns}${r.kind}`,
          description: `Deletes a collection of ${r.kind} objects.`,
          gvk,
          query: DELETE_COLLECTION,
          body: `${META}.DeleteOptions`,
          response: `${META}.Status`,
          codes: [200],
        }),
      );
    }
    if (coll.ops.length === 0) out.delete(collection);

    const it = entry(item, [nameParam(r.kind), ...scope]);
    if (verbs.has('get')) {
      it.ops.push(
        op({
          method: 'get',
          action: 'get',
          operationId: `read${G}${ns}${r.kind}`,
          description: `Reads a ${r.kind}.`,
          gvk,
          query: [],
          response: def,
          codes: [200],
        }),
      );
    }
    if (verbs.has('update')) {
      it.ops.push(
        op({
          method: 'put',
          action: 'put',
          operationId: `replace${G}${ns}${r.kind}`,
          description: `Replaces a ${r.kind}.`,
          gvk,
          query: writeParams(),
          body: def,
          bodyRequired: true,
          response: def,
          codes: [200, 201],
        }),
      );
    }
    if (verbs.has('patch')) {
      it.ops.push(
        op({
          method: 'patch',
          action: 'patch',
          operationId: `patch${G}${ns}${r.kind}`,
          description: `Partially updates a ${r.kind}.`,
          gvk,
          query: patchParams(),
          body: `${META}.Patch`,
          bodyRequired: true,
          response: def,
          codes: [200, 201],
          consumes: patchTypes,
        }),
      );
    }
    if (verbs.has('delete')) {
      it.ops.push(
        op({
          method: 'delete',
          action: 'delete',
          operationId: `delete${G}${ns}${r.kind}`,
          description: `Deletes a ${r.kind}.`,
          gvk,
          query: DELETE,
          body: `${META}.DeleteOptions`,
          response: `${META}.Status`,
          codes: [200, 202],
        }),
      );
    }
    if (it.ops.length === 0) out.delete(item);

    if (verbs.has('watch')) {
      const watch = (path: string, params: PathEntry['params'], action: string, id: string) =>
        entry(path, params).ops.push(
          op({
            method: 'get',
            action,
            operationId: id,
            description: `Watches ${r.kind} objects (deprecated path).`,
            gvk,
            query: LIST,
            response: `${META}.WatchEvent`,
            codes: [200],
            produces: streaming,
          }),
        );
      const wcoll = r.namespaced
        ? `${prefix}/watch/namespaces/{namespace}/${r.resource}`
        : `${prefix}/watch/${r.resource}`;
      watch(wcoll, scope, 'watchlist', `watch${G}${ns}${r.kind}List`);
      watch(`${wcoll}/{name}`, [nameParam(r.kind), ...scope], 'watch', `watch${G}${ns}${r.kind}`);
      if (r.namespaced)
        watch(`${prefix}/watch/${r.resource}`, [], 'watchlist', `watch${G}${r.kind}ListForAllNamespaces`);
    }

    for (const s of r.subresources ?? []) {
      const sgvk = { group: s.group ?? r.group, version: s.version ?? r.version, kind: s.kind };
      const sdef = resolve(sgvk);
      const Sub = s.name
        .split(/[^A-Za-z0-9]+/)
        .map(cap)
        .join('');
      const params = [nameParam(r.kind), ...scope];
      const paths =
        s.connect && s.name === 'proxy'
          ? [`${item}/${s.name}`, `${item}/${s.name}/{path}`]
          : [`${item}/${s.name}`];
      for (const path of paths) {
        const withPath = path.endsWith('{path}');
        const e = entry(
          path,
          withPath ? [...params, { name: 'path', in: 'path', description: 'Path to proxy to.' }] : params,
        );
        for (const v of s.verbs) {
          const method = VERB_METHOD[v];
          if (!method) continue;
          if (s.connect) {
            e.ops.push(
              op({
                method,
                action: 'connect',
                operationId: `connect${G}${cap(method)}${ns}${r.kind}${Sub}${withPath ? 'WithPath' : ''}`,
                description: `Connects to ${s.name} of a ${r.kind}.`,
                gvk: sgvk,
                query: [],
                response: { type: 'string' },
                codes: [200],
                consumes: ['*/*'],
                produces: ['*/*'],
              }),
            );
            continue;
          }
          const verbWord = { get: 'read', post: 'create', put: 'replace', patch: 'patch', delete: 'delete' }[
            method
          ];
          const response = sdef ?? { type: 'string' as const };
          e.ops.push(
            op({
              method,
              action: method === 'post' ? 'post' : method === 'put' ? 'put' : v,
              operationId: `${verbWord}${G}${ns}${r.kind}${Sub}`,
              description: `${cap(verbWord)}s ${s.name} of a ${r.kind}.`,
              gvk: sgvk,
              query:
                method === 'patch'
                  ? patchParams()
                  : method === 'get'
                    ? []
                    : method === 'delete'
                      ? DELETE
                      : writeParams(),
              body: method === 'patch' ? `${META}.Patch` : method === 'get' ? undefined : sdef,
              bodyRequired: method !== 'get' && method !== 'delete',
              response,
              codes: method === 'post' ? [200, 201, 202] : method === 'get' ? [200] : [200, 201],
              consumes: method === 'patch' ? patchTypes : ['*/*'],
            }),
          );
        }
        if (e.ops.length === 0) out.delete(path);
      }
    }
  }
  return out;
}

/** Definition names the operations refer to. */
export function operationRefs(paths: Iterable<PathEntry>): Set<string> {
  const refs = new Set<string>();
  for (const e of paths) {
    for (const o of e.ops) {
      if (o.body) refs.add(o.body);
      if (typeof o.response === 'string') refs.add(o.response);
    }
  }
  return refs;
}
