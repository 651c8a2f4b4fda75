// Everything a verb handler needs about one resource request.
import type { Req, Res } from '../server/http';
import type { RequestInfo } from './request-info';
import type { RequestContext } from '../registry/context';
import type { ServedResource, SubresourceDef } from '../registry/registry';
import type { Representation } from './encoding';
import type { WriteHooks } from '../registry/store';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** What a write adds on top of the store: field manager and admission. */
export interface WriteContext {
  operation: Operation;
  /** For patches: the patch type, e.g. apply. */
  patchType?: string;
  /** apply: force=true */
  force?: boolean;
  /** The object body's apiVersion (for managedFields). */
  apiVersion: string;
}

export interface Scope {
  req: Req;
  res: Res;
  info: RequestInfo;
  query: URLSearchParams;
  served: ServedResource;
  sub?: SubresourceDef;
  ctx: RequestContext;
  /** The negotiated response representation. */
  rep: Representation;
  /** Request body limit in bytes. */
  maxBodyBytes: number;
  /** For watches: --min-request-timeout in seconds. */
  minRequestTimeoutSeconds: number;
  /** Field manager and admission for a write of this request. */
  hooks(w: WriteContext): WriteHooks;
}

/** Query booleans the way Kubernetes reads them: present and not "false"/"0". */
export function queryBool(q: URLSearchParams, name: string): boolean | undefined {
  if (!q.has(name)) return undefined;
  const v = q.get(name)!;
  return !(v === 'false' || v === '0' || v === 'False' || v === 'FALSE');
}

export function queryInt(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) return NaN;
  return n;
}
