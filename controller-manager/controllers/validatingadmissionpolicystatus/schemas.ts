// Kinds and schemas for the policy type checker, from the apiserver as
// kube-controller-manager gets them: resources to kinds through discovery (the
// RESTMapper), schemas through the OpenAPI v3 documents (/openapi/v3 lists one
// per group-version with a content hash in its URL; a document is fetched
// again only when its hash changes, e.g. after a CRD changed).
import type { Client } from '../../../shared/client';
import { kindSchema, SchemaNotFoundError, type GroupVersionKind } from '../../../shared/cel/openapi-refs';
import type { GroupVersionResource, PolicySchemaSource } from '../../../shared/cel/policy-typecheck';
import type { Schema } from '../../../shared/cel/schema';

interface OpenAPIV3Index {
  paths?: Record<string, { serverRelativeURL?: string }>;
}

/** The last document of each group-version path ("apis/apps/v1", "api/v1") and its URL. */
export type DocumentCache = Map<string, { url: string; doc: unknown }>;

/** One check's view of the server: the /openapi/v3 index is read once, documents come from the cache. */
export class ServerSchemaSource implements PolicySchemaSource {
  private index?: Promise<OpenAPIV3Index>;

  constructor(
    private readonly client: Client,
    private readonly docs: DocumentCache,
    private readonly signal?: AbortSignal,
  ) {}

  async kindsFor(gvr: GroupVersionResource): Promise<GroupVersionKind[] | undefined> {
    const all = await this.client.discovery().serverResources();
    const hits = all.filter(
      (r) =>
        r.group === gvr.group &&
        r.version === gvr.version &&
        (r.resource === gvr.resource || r.singular === gvr.resource),
    );
    if (!hits.length) return undefined;
    return hits.map((r) => ({ group: r.group, version: r.version, kind: r.kind }));
  }

  refresh(): void {
    this.client.discovery().invalidate();
  }

  async schemaFor(gvk: GroupVersionKind): Promise<Schema | undefined> {
    const path = gvk.group ? `apis/${gvk.group}/${gvk.version}` : `api/${gvk.version}`;
    this.index ??= this.client.rest.request<OpenAPIV3Index>({
      method: 'GET',
      path: '/openapi/v3',
      signal: this.signal,
    });
    const index = await this.index;
    const url = index.paths?.[path]?.serverRelativeURL;
    if (!url) {
      this.docs.delete(path);
      return undefined;
    }
    let cached = this.docs.get(path);
    if (cached?.url !== url) {
      const u = new URL(url, 'https://apiserver.invalid');
      const doc = await this.client.rest.request({
        method: 'GET',
        path: u.pathname,
        query: Object.fromEntries(u.searchParams),
        accept: 'application/json',
        signal: this.signal,
      });
      cached = { url, doc };
      this.docs.set(path, cached);
    }
    try {
      return kindSchema(cached.doc, gvk);
    } catch (e) {
      if (e instanceof SchemaNotFoundError) return undefined;
      throw e;
    }
  }
}
