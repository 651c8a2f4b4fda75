// Renders the operation model of openapi-paths.ts as OpenAPI v2 or v3 path items.
import type { GroupVersionKind } from './schema-types';
import type { Operation, PathEntry } from './openapi-paths';
import { REF_PREFIX, type Flavor, type Schema } from './openapi-schema';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  401: 'Unauthorized',
};

function gvkExt(gvk: GroupVersionKind) {
  return { group: gvk.group, kind: gvk.kind, version: gvk.version };
}

function renderOp(o: Operation, flavor: Flavor): Schema {
  const ref = (name: string) => ({ $ref: REF_PREFIX[flavor] + name });
  const body = o.body ? ref(o.body) : undefined;
  const resp = typeof o.response === 'string' ? ref(o.response) : { type: 'string' };
  const out: Schema = { description: o.description };
  if (flavor === 'v2') {
    out.consumes = o.consumes;
    out.produces = o.produces;
    out.schemes = ['https'];
  }
  out.tags = [o.tag];
  out.operationId = o.operationId;
  const params: Schema[] = o.query.map(([name, type]) =>
    flavor === 'v2'
      ? { uniqueItems: true, type, name, in: 'query' }
      : { name, in: 'query', schema: { type, uniqueItems: true } },
  );
  if (body && flavor === 'v2')
    params.push({ name: 'body', in: 'body', required: o.bodyRequired === true, schema: body });
  if (params.length) out.parameters = params;
  if (body && flavor === 'v3') {
    const content: Schema = {};
    for (const mt of o.method === 'patch' ? o.consumes : ['*/*']) content[mt] = { schema: body };
    out.requestBody = { content, ...(o.bodyRequired ? { required: true } : {}) };
  }
  const responses: Schema = {};
  for (const code of o.codes) {
    if (flavor === 'v2') responses[code] = { description: STATUS_TEXT[code], schema: resp };
    else {
      const content: Schema = {};
      for (const mt of o.produces) content[mt] = { schema: resp };
      responses[code] = { description: STATUS_TEXT[code], content };
    }
  }
  if (flavor === 'v2') responses[401] = { description: STATUS_TEXT[401] };
  out.responses = responses;
  if (o.action) out['x-kubernetes-action'] = o.action;
  if (o.gvk) out['x-kubernetes-group-version-kind'] = gvkExt(o.gvk);
  return out;
}

export function renderPath(e: PathEntry, flavor: Flavor): Schema {
  const item: Schema = {};
  for (const o of e.ops) item[o.method] = renderOp(o, flavor);
  item.parameters = e.params.map((p) =>
    flavor === 'v2'
      ? {
          uniqueItems: true,
          type: 'string',
          description: p.description,
          name: p.name,
          in: p.in,
          ...(p.in === 'path' ? { required: true } : {}),
        }
      : {
          name: p.name,
          in: p.in,
          description: p.description,
          ...(p.in === 'path' ? { required: true } : {}),
          schema: { type: 'string', uniqueItems: true },
        },
  );
  return item;
}
