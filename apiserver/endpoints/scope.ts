// Everything a verb handler needs about one resource request.
import type { Req, Res } from '../server/http';
import { isTrueQueryValue, type RequestInfo } from './request-info';
import type { RequestContext } from '../registry/context';
import type { ServedResource, SubresourceDef } from '../registry/registry';
import type { Representation } from './encoding';
import type { WriteHooks } from '../registry/store';
import { badRequest } from '../../shared/api/status';
import { goParseInt64 } from '../../shared/codec/go-strconv';

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

/**
 * A boolean option of the query as Kubernetes converts it (runtime.Convert_Slice_string_To_bool):
 * "0" and any case of "false" are false, every other value (even "") is true.
 */
export function queryBool(q: URLSearchParams, name: string): boolean | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  return isTrueQueryValue(v);
}

/** An int64 option of the query: strconv.ParseInt's refusal is a 400 with Go's text. */
export function queryInt(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  try {
    return Number(goParseInt64(v));
  } catch (e) {
    throw badRequest((e as Error).message);
  }
}
