// GET of one object (or of an object-shaped subresource such as /status).
import { encodeCached, encodeObject } from '../encoding';
import { respond } from '../respond';
import type { Scope } from '../scope';

export async function handleGet(s: Scope): Promise<void> {
  const custom = s.sub?.custom;
  if (custom?.get) {
    const obj = await custom.get(s.ctx, s.info.name, s.served);
    respond(s, 200, encodeObject(s.rep, obj));
    return;
  }
  const rv = s.query.get('resourceVersion') ?? undefined;
  const o = await s.served.store.reader.get(s.ctx, s.info.name, rv);
  if (s.served.prepare) await s.served.prepare([o.obj]);
  respond(s, 200, encodeCached(s.rep, s.served, o));
}
