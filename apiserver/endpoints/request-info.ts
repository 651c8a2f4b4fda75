// Turns a request path and method into what it asks for, like k8s.io/apiserver's
// RequestInfoFactory: resource requests (/api/v1/..., /apis/g/v/...) get a verb,
// group, version, namespace, resource, name and subresource; everything else is
// a non-resource request (/healthz, /version, /openapi/v2 ...).

export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** get, list, watch, create, update, patch, delete, deletecollection (or the lowercase HTTP method). */
  verb: string;
  /** "api" or "apis" for resource requests. */
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** Path segments after the version. */
  parts: string[];
}

const namespaceSubresources = new Set(['status', 'finalize']);

function splitPath(path: string): string[] {
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  return trimmed ? trimmed.split('/') : [];
}

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
  };
  let parts = splitPath(path);
  if (parts.length < 1 || (parts[0] !== 'api' && parts[0] !== 'apis')) return info;
  info.apiPrefix = parts[0];
  parts = parts.slice(1);
  if (info.apiPrefix === 'apis') {
    if (parts.length < 1) return info;
    info.apiGroup = parts[0];
    parts = parts.slice(1);
  }
  if (parts.length < 1) return info;
  info.apiVersion = parts[0];
  parts = parts.slice(1);
  if (parts.length < 1) return info;
  info.isResourceRequest = true;

  // The legacy /watch/ prefix.
  const isWatchPath = parts[0] === 'watch';
  if (isWatchPath) parts = parts.slice(1);

  switch (method) {
    case 'POST':
      info.verb = 'create';
      break;
    case 'GET':
    case 'HEAD':
      info.verb = 'get';
      break;
    case 'PUT':
      info.verb = 'update';
      break;
    case 'PATCH':
      info.verb = 'patch';
      break;
    case 'DELETE':
      info.verb = 'delete';
      break;
    default:
      info.verb = '';
  }

  if (parts[0] === 'namespaces' && parts.length > 1) {
    info.namespace = parts[1];
    if (parts.length > 2 && !namespaceSubresources.has(parts[2])) parts = parts.slice(2);
  }
  info.parts = parts;
  if (parts.length >= 3) info.subresource = parts[2];
  if (parts.length >= 2) info.name = parts[1];
  if (parts.length >= 1) info.resource = parts[0];

  if (isWatchPath && info.verb === 'get') info.verb = 'watch';
  else if (info.verb === 'get' && !info.name) {
    // As Kubernetes' RequestInfoFactory: any watch value but "0" and "false" (any case) is a watch.
    const w = query.get('watch');
    info.verb = w !== null && isTrueQueryValue(w) ? 'watch' : 'list';
  } else if (info.verb === 'delete' && !info.name) info.verb = 'deletecollection';

  // A fieldSelector on metadata.name turns a watch/list of a collection into one of a single object.
  if ((info.verb === 'list' || info.verb === 'watch') && !info.name) {
    const fs = query.get('fieldSelector');
    const m = fs ? /(?:^|,)metadata\.name=([^,]+)$/.exec(fs) : null;
    if (m && fs!.split(',').length === 1) info.name = m[1];
  }
  return info;
}

/** A query boolean as Kubernetes converts it: "0" and any case of "false" are false, all else true. */
export const isTrueQueryValue = (v: string) => !(v === '0' || v.toLowerCase() === 'false');

/** Verbs that hold the connection open; exempt from max-in-flight and request timeouts. */
export function isLongRunning(info: RequestInfo, query: URLSearchParams): boolean {
  if (info.verb === 'watch') return true;
  const sub = info.subresource;
  if (sub === 'proxy' || sub === 'exec' || sub === 'attach' || sub === 'portforward') return true;
  if (sub === 'log' && isTrueQueryValue(query.get('follow') ?? 'false')) return true;
  return false;
}

export const isMutating = (verb: string) =>
  verb === 'create' ||
  verb === 'update' ||
  verb === 'patch' ||
  verb === 'delete' ||
  verb === 'deletecollection';
