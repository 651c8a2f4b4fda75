// POST to a collection (create), and POST to a subresource (binding, eviction, token ...).
import { badRequest, methodNotSupported } from '../../../shared/api/status';
import { readObject } from '../decode';
import { encodeObject } from '../encoding';
import { respond } from '../respond';
import type { Scope } from '../scope';

export async function handleCreate(s: Scope): Promise<void> {
  if (s.sub) return createSubresource(s);
  const info = s.served.info;
  if (s.served.virtual) {
    const body = await readObject(s, { apiVersion: info.groupVersion, kind: info.kind });
    checkNamespace(s, body);
    respond(s, 201, encodeObject(s.rep, await s.served.virtual.create(s.ctx, body, s.served)));
    return;
  }
  const obj = await readObject(s, { apiVersion: info.groupVersion, kind: info.kind });
  checkNamespace(s, obj);
  if (s.served.prepareWrite) await s.served.prepareWrite(obj);
  const stored = await s.served.store.create(
    s.ctx,
    s.served.toStorage(obj),
    s.hooks({ operation: 'CREATE', apiVersion: info.groupVersion }),
  );
  if (s.served.prepare) await s.served.prepare([stored]);
  respond(s, 201, encodeObject(s.rep, s.served.fromStorage(stored)));
}

async function createSubresource(s: Scope): Promise<void> {
  const sub = s.sub!;
  if (!sub.custom?.create)
    throw methodNotSupported(
      { group: s.served.info.group, resource: `${s.served.info.resource}/${sub.name}` },
      'create',
    );
  const apiVersion = sub.group ? `${sub.group}/${sub.version}` : sub.version;
  const body = await readObject(s, { apiVersion, kind: sub.kind });
  if (body.metadata?.name && body.metadata.name !== s.info.name && sub.name !== 'binding') {
    throw badRequest(`name in URL does not match name in ${sub.kind} object`);
  }
  const out = await sub.custom.create(s.ctx, s.info.name, body, s.served);
  respond(s, out.status ?? 201, encodeObject(s.rep, out.obj));
}

/** The body's namespace must be empty or equal the URL's (Kubernetes answers 400 otherwise). */
export function checkNamespace(s: Scope, obj: any): void {
  const ns = obj.metadata?.namespace;
  if (!s.served.info.namespaced) return;
  if (ns && ns !== s.ctx.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
}
