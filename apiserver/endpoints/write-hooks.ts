// What every write adds on top of the store: managedFields (apiserver/apply)
// and admission (apiserver/auth/admission), in Kubernetes' order: field
// manager, mutating admission, then (after validation) validating admission.
import type { WriteHooks } from '../registry/store';
import type { AdmissionAttributes, AdmissionChain } from '../auth/admission/types';
import type { Scope, WriteContext } from './scope';
import { resetFieldsFor, update as recordUpdate } from '../apply';

/** Records the managedFields of a create or update (patches record their own, in apiserver/apply). */
function recordOwnership(s: Scope, w: WriteContext, obj: any, old: any | null): any {
  const info = s.served.info;
  const sub = s.sub?.name ?? '';
  const resetFields = resetFieldsFor(
    { group: info.group, resource: info.resource, hasStatusSubresource: s.served.subresources.has('status') },
    sub,
  );
  const next = recordUpdate(old ? s.served.fromStorage(old) : null, s.served.fromStorage(obj), {
    manager: s.ctx.fieldManager,
    apiVersion: w.apiVersion,
    kind: info.kind,
    subresource: sub || undefined,
    resetFields,
    now: s.ctx.now,
    model: s.served.fieldModel,
  });
  // Through a conversion webhook the stored form takes I/O (a promise); otherwise it is immediate.
  if (s.served.prepareWrite) return s.served.prepareWrite(next).then(() => s.served.toStorage(next));
  return s.served.toStorage(next);
}

export function makeWriteHooks(admission: AdmissionChain) {
  return (s: Scope, w: WriteContext): WriteHooks => {
    const info = s.served.info;
    const sub = s.sub;
    const attrs = (obj: any, old: any | null): AdmissionAttributes => ({
      operation: w.operation,
      group: info.group,
      version: info.version,
      resource: info.resource,
      subresource: sub?.name ?? '',
      kind: sub ? sub.kind : info.kind,
      namespace: s.ctx.namespace,
      name: obj?.metadata?.name ?? s.info.name,
      object: obj ? s.served.fromStorage(obj) : obj,
      oldObject: old ? s.served.fromStorage(old) : null,
      dryRun: s.ctx.dryRun,
      user: s.ctx.user,
      warnings: s.ctx.warnings,
      auditAnnotations: s.ctx.auditAnnotations,
    });
    return {
      async mutate(obj, old) {
        let out = obj;
        if (s.served.prepare) await s.served.prepare([obj, old].filter(Boolean));
        if (w.operation !== 'DELETE' && !w.patchType) {
          out = recordOwnership(s, w, out, old);
          if (s.served.prepare) await s.served.prepare([(out = await out)]);
        }
        const a = attrs(out, old);
        await admission.admit(a);
        if (s.served.prepareWrite) await s.served.prepareWrite(a.object);
        return s.served.toStorage(a.object);
      },
      async validate(obj, old) {
        if (s.served.prepare) await s.served.prepare([obj, old].filter(Boolean));
        await admission.validate(attrs(obj, old));
      },
    };
  };
}
