// The metrics.k8s.io/v1beta1 API as metrics-server serves it: discovery, and
// NodeMetrics and PodMetrics (get, list with label and field selectors), with
// Kubernetes' Status errors.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseLabelSelector, SelectorParseError } from '../shared/api/labels';
import { StatusError, type StatusDetails, type StatusReason } from '../shared/api/status';
import { rfc3339 } from '../shared/api/validation/gotime';
import { cpuQuantity, goDuration, memoryQuantity, type Usage } from './points';

export const GROUP = 'metrics.k8s.io';
export const VERSION = 'v1beta1';
export const GV = `${GROUP}/${VERSION}`;

export const RESOURCE_LIST = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: GV,
  resources: [
    { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
    { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
  ],
};

export interface NodeUsage {
  name: string;
  labels?: Record<string, string>;
  usage: Usage;
}

export interface PodUsage {
  namespace: string;
  name: string;
  labels?: Record<string, string>;
  containers: { name: string; usage: Usage }[];
}

/** What the API reads: the latest usage of nodes and pods. */
export interface MetricsSource {
  nodes(): NodeUsage[];
  pods(): PodUsage[];
}

export interface Request {
  method: string;
  path: string;
  query: URLSearchParams;
}

/** Resource attributes of a request, for authorization. */
export interface Attributes {
  verb: string;
  resource?: string;
  namespace?: string;
  name?: string;
  path: string;
}

export function attributesOf(r: Request): Attributes {
  const m =
    /^\/apis\/metrics\.k8s\.io\/v1beta1(?:\/namespaces\/([^/]+))?\/(nodes|pods)(?:\/([^/]+))?\/?$/.exec(
      r.path,
    );
  if (!m) return { verb: r.method.toLowerCase(), path: r.path };
  return {
    verb: m[3] ? 'get' : r.query.get('watch') === 'true' ? 'watch' : 'list',
    resource: m[2],
    namespace: m[1] ?? '',
    name: m[3] && decodeURIComponent(m[3]),
    path: r.path,
  };
}

/** A Status error as the apiserver writes it (Go's shape). */
function status(code: number, reason: StatusReason, message: string, details?: StatusDetails) {
  return new StatusError(code, reason, message, details).status;
}

const notFound = (resource: string, name: string) =>
  status(404, 'NotFound', `${resource}.metrics.k8s.io "${name}" not found`, {
    name,
    group: GROUP,
    kind: resource,
  });

function metadata(name: string, namespace: string | undefined, labels: Record<string, string> | undefined) {
  return {
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    creationTimestamp: rfc3339(new Date()),
    ...(labels && Object.keys(labels).length ? { labels } : {}),
  };
}

function nodeMetrics(n: NodeUsage) {
  return {
    metadata: metadata(n.name, undefined, n.labels),
    timestamp: rfc3339(new Date(n.usage.time)),
    window: goDuration(n.usage.windowMs),
    usage: { cpu: cpuQuantity(n.usage.nanoCores), memory: memoryQuantity(n.usage.memory) },
  };
}

function podMetrics(p: PodUsage) {
  const newest = Math.max(...p.containers.map((c) => c.usage.time));
  const window = Math.max(...p.containers.map((c) => c.usage.windowMs));
  return {
    metadata: metadata(p.name, p.namespace, p.labels),
    timestamp: rfc3339(new Date(newest)),
    window: goDuration(window),
    containers: p.containers.map((c) => ({
      name: c.name,
      usage: { cpu: cpuQuantity(c.usage.nanoCores), memory: memoryQuantity(c.usage.memory) },
    })),
  };
}

/** metadata.name and metadata.namespace field selectors (what metrics-server supports). */
function fieldFilter(text: string | null): ((name: string, ns: string) => boolean) | string {
  if (!text) return () => true;
  const reqs: { field: string; value: string; neg: boolean }[] = [];
  for (const part of text.split(',')) {
    const m = /^\s*(metadata\.name|metadata\.namespace)\s*(==|=|!=)\s*(.*?)\s*$/.exec(part);
    if (!m)
      return `"${part.split(/!?=/)[0].trim()}" is not a known field selector: only "metadata.name", "metadata.namespace"`;
    reqs.push({ field: m[1], value: m[3], neg: m[2] === '!=' });
  }
  return (name, ns) => reqs.every((r) => ((r.field === 'metadata.name' ? name : ns) === r.value) !== r.neg);
}

/** Answers one request: [status code, body]. */
export function serveMetrics(r: Request, src: MetricsSource): [number, unknown] {
  if (r.path === `/apis/${GV}` || r.path === `/apis/${GV}/`) return [200, RESOURCE_LIST];
  if (r.path === `/apis/${GROUP}` || r.path === `/apis/${GROUP}/`) {
    const gv = { groupVersion: GV, version: VERSION };
    return [200, { kind: 'APIGroup', apiVersion: 'v1', name: GROUP, versions: [gv], preferredVersion: gv }];
  }
  const a = attributesOf(r);
  if (!a.resource) return [404, status(404, 'NotFound', 'the server could not find the requested resource')];
  if (r.method !== 'GET')
    return [
      405,
      status(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`),
    ];
  if (a.verb === 'watch')
    return [
      405,
      status(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'),
    ];
  let selector;
  try {
    selector = parseLabelSelector(r.query.get('labelSelector'));
  } catch (err) {
    if (err instanceof SelectorParseError) return [400, status(400, 'BadRequest', err.message)];
    throw err;
  }
  const fields = fieldFilter(r.query.get('fieldSelector'));
  if (typeof fields === 'string') return [400, status(400, 'BadRequest', fields)];
  if (a.resource === 'nodes') {
    if (a.namespace)
      return [404, status(404, 'NotFound', 'the server could not find the requested resource')];
    const nodes = src.nodes();
    if (a.name) {
      const n = nodes.find((x) => x.name === a.name);
      return n
        ? [200, { kind: 'NodeMetrics', apiVersion: GV, ...nodeMetrics(n) }]
        : [404, notFound('nodes', a.name)];
    }
    const items = nodes
      .filter((n) => selector.matches(n.labels) && fields(n.name, ''))
      .sort((x, y) => (x.name < y.name ? -1 : 1))
      .map(nodeMetrics);
    return [200, { kind: 'NodeMetricsList', apiVersion: GV, metadata: {}, items }];
  }
  const pods = src.pods().filter((p) => !a.namespace || p.namespace === a.namespace);
  if (a.name) {
    const p = pods.find((x) => x.name === a.name);
    return p
      ? [200, { kind: 'PodMetrics', apiVersion: GV, ...podMetrics(p) }]
      : [404, notFound('pods', a.name)];
  }
  const items = pods
    .filter((p) => selector.matches(p.labels) && fields(p.name, p.namespace))
    .sort((x, y) => (x.namespace + '/' + x.name < y.namespace + '/' + y.name ? -1 : 1))
    .map(podMetrics);
  return [200, { kind: 'PodMetricsList', apiVersion: GV, metadata: {}, items }];
}

export function writeJSON(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
  res.end(JSON.stringify(body));
}

export function requestOf(req: IncomingMessage): Request {
  const url = new URL(req.url ?? '/', 'https://metrics-server');
  return { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams };
}
