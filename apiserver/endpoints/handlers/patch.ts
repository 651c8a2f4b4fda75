// PATCH: JSON patch, merge patch, strategic merge patch and server-side apply
// (apiserver/apply), retried on conflicts like Kubernetes: the patch is
// re-applied to the fresh object. Apply creates the object when it is absent.
import { badRequest, notFound } from '../../../shared/api/status';
import {
  applyPatch,
  mergePatch,
  applyJSONPatch,
  applyStrategicMergePatch,
  parseApplyBody,
  patchKindOf,
  resetFieldsFor,
} from '../../apply';
import { parseMergePatch } from '../../apply/merge-patch';
import { definitionOf } from '../../../shared/api/schema';
import { readBody } from '../../server/http';
import { encodeObject } from '../encoding';
import { respond } from '../respond';
import { queryBool, type Scope } from '../scope';

export async function handlePatch(s: Scope): Promise<void> {
  const info = s.served.info;
  const kind = patchKindOf(String(s.req.headers['content-type'] ?? ''), !!info.definition);
  const body = await readBody(s.req, s.maxBodyBytes);
  if (body.length === 0) throw badRequest('the body of the request was empty');
  const force = queryBool(s.query, 'force');
  const sub = s.sub;
  if (sub?.custom?.get && sub.custom.update) {
    // Subresources with their own kind (scale): patch that object, then write it back.
    const current = await sub.custom.get(s.ctx, s.info.name, s.served);
    const definition = definitionOf({ group: sub.group, version: sub.version, kind: sub.kind });
    const patched =
      kind === 'merge'
        ? mergePatch(current, parseMergePatch(body))
        : kind === 'json'
          ? applyJSONPatch(current, body)
          : kind === 'apply'
            ? mergePatch(current, parseApplyBody(body))
            : applyStrategicMergePatch(current, body, definition);
    const out = await sub.custom.update(
      s.ctx,
      s.info.name,
      patched,
      s.served,
      s.hooks({ operation: 'UPDATE', apiVersion: info.groupVersion }),
    );
    respond(s, 200, encodeObject(s.rep, out.obj));
    return;
  }
  const resetFields = resetFieldsFor(
    { group: info.group, resource: info.resource, hasStatusSubresource: s.served.subresources.has('status') },
    sub?.name ?? '',
  );
  const out = await s.served.store.update(
    s.ctx,
    s.info.name,
    async (current) => {
      if (current && s.served.prepare) await s.served.prepare([current]);
      const live = current ? s.served.fromStorage(current) : null;
      if (!live && kind !== 'apply')
        throw notFound({ group: info.group, resource: info.resource }, s.info.name);
      const patched = applyPatch(kind, live, body, {
        manager: s.query.get('fieldManager') ?? undefined,
        userAgent: s.ctx.userAgent,
        force,
        apiVersion: info.groupVersion,
        kind: info.kind,
        subresource: sub?.name,
        resetFields,
        now: s.ctx.now,
        defaulter: s.served.store.defaulter,
        model: s.served.fieldModel,
      });
      if (s.served.prepareWrite) await s.served.prepareWrite(patched);
      return s.served.toStorage(patched);
    },
    s.hooks({ operation: 'UPDATE', apiVersion: info.groupVersion, patchType: kind, force }),
    { sub: sub?.strategy, allowCreate: kind === 'apply' },
  );
  if (s.served.prepare) await s.served.prepare([out.obj]);
  respond(s, out.created ? 201 : 200, encodeObject(s.rep, s.served.fromStorage(out.obj)));
}
