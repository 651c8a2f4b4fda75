// PUT of an object (update, or create when the type allows it) and of an object-shaped subresource.
import { badRequest } from '../../../shared/api/status';
import { readObject } from '../decode';
import { encodeObject } from '../encoding';
import { respond } from '../respond';
import type { Scope } from '../scope';
import { checkNamespace } from './create';
import { jsonClone } from '../../../shared/api/json-value';

export async function handleUpdate(s: Scope): Promise<void> {
  const info = s.served.info;
  const sub = s.sub;
  if (sub?.custom?.update) {
    const apiVersion = sub.group ? `${sub.group}/${sub.version}` : sub.version;
    const body = await readObject(s, { apiVersion, kind: sub.kind }, 'UpdateOptions');
    checkName(s, body);
    const out = await sub.custom.update(
      s.ctx,
      s.info.name,
      body,
      s.served,
      s.hooks({ operation: 'UPDATE', apiVersion: info.groupVersion }),
    );
    respond(s, out.created ? 201 : 200, encodeObject(s.rep, out.obj));
    return;
  }
  const obj = await readObject(s, { apiVersion: info.groupVersion, kind: info.kind }, 'UpdateOptions');
  checkNamespace(s, obj);
  checkName(s, obj);
  if (s.served.prepareWrite) await s.served.prepareWrite(obj);
  const desired = s.served.toStorage(obj);
  const out = await s.served.store.update(
    s.ctx,
    s.info.name,
    () => jsonClone(desired),
    s.hooks({ operation: 'UPDATE', apiVersion: info.groupVersion }),
    { sub: sub?.strategy },
  );
  if (s.served.prepare) await s.served.prepare([out.obj]);
  respond(s, out.created ? 201 : 200, encodeObject(s.rep, s.served.fromStorage(out.obj)));
}

function checkName(s: Scope, obj: any): void {
  const name = obj.metadata?.name;
  if (!name) (obj.metadata ??= {}).name = s.info.name;
  else if (name !== s.info.name) {
    throw badRequest(`the name of the object (${name}) does not match the name on the URL (${s.info.name})`);
  }
}
