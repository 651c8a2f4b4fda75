// Group/version/resource references and what the client knows about built-in
// resources without asking the server (scope, kind, Protobuf support), from the
// same resource catalog the apiserver serves.
import { builtinResources, compareVersions, type APIResourceInfo } from '../api/catalog';
import { protobufSupported } from '../codec/protobuf';

export interface GroupVersionResource {
  /** "" for the core group. */
  group: string;
  version: string;
  /** Plural lower-case name, as in the URL ("pods", "deployments"). */
  resource: string;
}

export interface ResourceSpec extends GroupVersionResource {
  /** Whether objects live in namespaces; looked up in the built-in catalog when omitted. */
  namespaced?: boolean;
  /** Kind of the objects; looked up in the built-in catalog when omitted. */
  kind?: string;
}

/** What the client resolved for a resource. */
export interface ResolvedResource extends GroupVersionResource {
  namespaced: boolean;
  /** Kind of the objects ("" when unknown, e.g. a custom resource given without kind). */
  kind: string;
  /** "v1" or "group/version". */
  apiVersion: string;
  /** Whether the server can speak Protobuf for it (built-in kinds only). */
  protobuf: boolean;
}

export const apiVersionOf = (group: string, version: string) => (group ? `${group}/${version}` : version);

/** "/api/v1" or "/apis/<group>/<version>". */
export const groupVersionPath = (group: string, version: string) =>
  group ? `/apis/${group}/${version}` : `/api/${version}`;

let byGVR: Map<string, APIResourceInfo> | undefined;
let byName: Map<string, APIResourceInfo[]> | undefined;

function index(): void {
  if (byGVR) return;
  byGVR = new Map();
  byName = new Map();
  const add = (key: string, r: APIResourceInfo) => {
    const list = byName!.get(key);
    if (list) list.push(r);
    else byName!.set(key, [r]);
  };
  for (const r of builtinResources()) {
    byGVR.set(`${r.group}/${r.version}/${r.resource}`, r);
    const names = new Set([r.resource, r.singular, r.kind.toLowerCase(), ...(r.shortNames ?? [])]);
    for (const n of names) {
      add(n, r);
      if (r.group) add(`${n}.${r.group}`, r);
    }
  }
  for (const list of byName.values()) {
    // GA before beta before alpha; the core group before others for bare names ("events").
    list.sort(
      (a, b) => (a.group === '' ? 0 : 1) - (b.group === '' ? 0 : 1) || compareVersions(a.version, b.version),
    );
  }
}

/** The built-in catalog entry of a group/version/resource, if it is one. */
export function builtinResource(gvr: GroupVersionResource): APIResourceInfo | undefined {
  index();
  return byGVR!.get(`${gvr.group}/${gvr.version}/${gvr.resource}`);
}

/**
 * A built-in resource by name as kubectl accepts it: plural, singular, kind or
 * short name, optionally qualified by group ("deployments.apps", "deploy") or
 * given in full ("apps/v1/deployments", "v1/pods").
 */
export function lookupBuiltin(name: string): APIResourceInfo | undefined {
  index();
  const parts = name.split('/');
  if (parts.length === 3) return builtinResource({ group: parts[0], version: parts[1], resource: parts[2] });
  if (parts.length === 2) return builtinResource({ group: '', version: parts[0], resource: parts[1] });
  return byName!.get(name.toLowerCase())?.[0] ?? byName!.get(name)?.[0];
}

const resolved = new Map<string, ResolvedResource>();

/** Fills in scope, kind and Protobuf support of a resource spec (or built-in name). */
export function resolveResource(spec: ResourceSpec | string): ResolvedResource {
  if (typeof spec === 'string') {
    const info = lookupBuiltin(spec);
    if (!info)
      throw new Error(`unknown built-in resource "${spec}"; pass {group, version, resource, namespaced}`);
    spec = info;
  }
  const key = `${spec.group}/${spec.version}/${spec.resource}/${spec.namespaced ?? ''}/${spec.kind ?? ''}`;
  let r = resolved.get(key);
  if (!r) {
    const info = builtinResource(spec);
    const apiVersion = apiVersionOf(spec.group, spec.version);
    const kind = spec.kind ?? info?.kind ?? '';
    r = {
      group: spec.group,
      version: spec.version,
      resource: spec.resource,
      namespaced: spec.namespaced ?? info?.namespaced ?? false,
      kind,
      apiVersion,
      protobuf: !!info && protobufSupported(apiVersion, info.kind),
    };
    resolved.set(key, r);
  }
  return r;
}
