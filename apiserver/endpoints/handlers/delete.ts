// DELETE of an object (with DeleteOptions from the body or the query) and of a collection.
import { badRequest, successStatus } from '../../../shared/api/status';
import { readBody } from '../../server/http';
import type { DeleteOptions } from '../../registry/store';
import { bodyMediaType, parseBody } from '../decode';
import { encodeList, encodeObject } from '../encoding';
import { respond } from '../respond';
import { queryBool, queryInt, type Scope } from '../scope';
import { listOptions } from './list';
import { CachedObject } from '../../storage/cacher/cached-object';

const POLICIES = ['Orphan', 'Background', 'Foreground'];

export async function deleteOptions(s: Scope): Promise<DeleteOptions> {
  const opts: DeleteOptions = {};
  const body = await readBody(s.req, s.maxBodyBytes);
  if (body.length) {
    const o = parseBody(bodyMediaType(s), body);
    if (o && typeof o === 'object') {
      if (o.kind && o.kind !== 'DeleteOptions') throw badRequest(`expected DeleteOptions, got ${o.kind}`);
      if (o.gracePeriodSeconds !== undefined && o.gracePeriodSeconds !== null)
        opts.gracePeriodSeconds = Number(o.gracePeriodSeconds);
      if (o.preconditions) opts.preconditions = o.preconditions;
      if (o.propagationPolicy) opts.propagationPolicy = o.propagationPolicy;
      if (typeof o.orphanDependents === 'boolean') opts.orphanDependents = o.orphanDependents;
      if (Array.isArray(o.dryRun) && o.dryRun.includes('All')) s.ctx.dryRun = true;
    }
  }
  const q = s.query;
  const grace = queryInt(q, 'gracePeriodSeconds');
  if (grace !== undefined) opts.gracePeriodSeconds = grace;
  if (q.get('propagationPolicy')) opts.propagationPolicy = q.get('propagationPolicy')!;
  const orphan = queryBool(q, 'orphanDependents');
  if (orphan !== undefined) opts.orphanDependents = orphan;
  if (opts.propagationPolicy && !POLICIES.includes(opts.propagationPolicy)) {
    throw badRequest(
      `propagationPolicy: Unsupported value: "${opts.propagationPolicy}": supported values: "Foreground", "Background", "Orphan"`,
    );
  }
  if (opts.propagationPolicy && opts.orphanDependents !== undefined) {
    throw badRequest(
      'orphanDependents: Invalid value: "..": orphanDependents and deletionPropagation cannot be both set',
    );
  }
  if (opts.gracePeriodSeconds !== undefined && opts.gracePeriodSeconds < 0) opts.gracePeriodSeconds = 1;
  return opts;
}

export async function handleDelete(s: Scope): Promise<void> {
  const opts = await deleteOptions(s);
  const info = s.served.info;
  const { obj, deleted } = await s.served.store.delete(
    s.ctx,
    s.info.name,
    opts,
    s.hooks({ operation: 'DELETE', apiVersion: info.groupVersion }),
  );
  const code = !deleted && opts.orphanDependents === false ? 202 : 200;
  if (deleted && !s.served.store.strategy.returnDeletedObject) {
    const status = successStatus({
      name: s.info.name,
      group: info.group,
      kind: info.resource,
      uid: obj.metadata?.uid,
    });
    respond(s, code, encodeObject(s.rep, status));
    return;
  }
  if (s.served.prepare) await s.served.prepare([obj]);
  respond(s, code, encodeObject(s.rep, s.served.fromStorage(obj)));
}

export async function handleDeleteCollection(s: Scope): Promise<void> {
  const opts = await deleteOptions(s);
  const info = s.served.info;
  const lo = listOptions(s.query, info.groupVersion);
  const items = await s.served.store.deleteCollection(
    s.ctx,
    { labelSelector: lo.labelSelector, fieldSelector: lo.fieldSelector, apiVersion: lo.apiVersion },
    opts,
    s.hooks({ operation: 'DELETE', apiVersion: info.groupVersion }),
  );
  if (s.served.prepare) await s.served.prepare(items);
  const cached = items.map((o) => new CachedObject('', 0, o, { labels: {}, fields: {} }));
  respond(s, 200, encodeList(s.rep, s.served, { resourceVersion: '', continue: '' }, cached));
}
