// GET of a collection: label/field selectors, resourceVersion semantics, paging.
import type { ListOptions } from '../../registry/reads';
import { encodeList } from '../encoding';
import { respond } from '../respond';
import { queryInt, type Scope } from '../scope';
import { featureGates } from '../../../shared/options/feature-gates';

export function listOptions(q: URLSearchParams, apiVersion: string): ListOptions {
  // A limit of zero or below asks for no paging, as in Kubernetes' storage.
  const given = queryInt(q, 'limit');
  const limit = given !== undefined && given > 0 ? given : undefined;
  // Without APIListChunking, limit and continue are ignored: the whole list comes back.
  const chunking = featureGates.enabled('APIListChunking');
  return {
    labelSelector: q.get('labelSelector') ?? undefined,
    fieldSelector: q.get('fieldSelector') ?? undefined,
    apiVersion,
    resourceVersion: q.get('resourceVersion') ?? undefined,
    resourceVersionMatch: q.get('resourceVersionMatch') ?? undefined,
    limit: chunking ? limit : undefined,
    continue: chunking ? q.get('continue') || undefined : undefined,
  };
}

export async function handleList(s: Scope): Promise<void> {
  const result = await s.served.store.reader.list(s.ctx, listOptions(s.query, s.served.info.groupVersion));
  if (s.served.prepare) await s.served.prepare(result.items.map((i) => i.obj));
  const meta: { resourceVersion: string; continue: string; remainingItemCount?: number } = {
    resourceVersion: String(result.rv),
    continue: result.continue,
  };
  if (result.remainingItemCount !== undefined && featureGates.enabled('RemainingItemCount')) {
    meta.remainingItemCount = result.remainingItemCount;
  }
  respond(s, 200, encodeList(s.rep, s.served, meta, result.items));
}
