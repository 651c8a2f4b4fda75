// Resource requests: resolves the served resource, checks the verb, builds
// the request context and negotiated representation, and dispatches to the
// handler of the verb.
import { badRequest, methodNotSupported, StatusError } from '../../shared/api/status';
import type { Registry, ServedResource } from '../registry/registry';
import type { RequestContext, UserInfo } from '../registry/context';
import type { WriteHooks } from '../registry/store';
import type { Req, Res } from '../server/http';
import { negotiateOutput, isPrettyPrint } from './negotiation';
import { parseIncludeObject } from '../../shared/codec/table';
import { managerOrUserAgent, validateFieldManager } from '../apply';
import { invalid } from '../../shared/api/status';
import type { RequestInfo } from './request-info';
import type { Scope, WriteContext } from './scope';
import { handleGet } from './handlers/get';
import { handleList } from './handlers/list';
import { handleWatch } from './handlers/watch';
import { handleCreate } from './handlers/create';
import { handleUpdate } from './handlers/update';
import { handlePatch } from './handlers/patch';
import { handleDelete, handleDeleteCollection } from './handlers/delete';
import { handleProxy } from './handlers/proxy';
import type { Representation } from './encoding';

export interface ResourceHandlerOptions {
  maxBodyBytes: number;
  minRequestTimeoutSeconds: number;
  /** Field manager and admission for writes; built by the server from apply/ and auth/admission. */
  writeHooks(s: Scope, w: WriteContext): WriteHooks;
  /** Whether Protobuf can encode the served resource. */
  protobufSupported(served: ServedResource): boolean;
  /** Counts a request to a deprecated version (apiserver_requested_deprecated_apis). */
  onDeprecatedRequest?(served: ServedResource, subresource: string): void;
}

const notFoundResource = () =>
  new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});

export class ResourceHandler {
  constructor(
    private readonly registry: Registry,
    private readonly opts: ResourceHandlerOptions,
  ) {}

  /** Builds the scope of a resource request (404/405/400 when it cannot be served). */
  scope(
    req: Req,
    res: Res,
    info: RequestInfo,
    query: URLSearchParams,
    user: UserInfo,
    abort?: { readonly signal: AbortSignal },
    auditAnnotations: Record<string, string> = {},
  ): Scope {
    const served = this.registry.lookup(info.apiGroup, info.apiVersion, info.resource);
    if (!served) throw notFoundResource();
    const namespaced = served.info.namespaced;
    if (!namespaced && info.namespace && info.resource !== 'namespaces') throw notFoundResource();
    if (namespaced && !info.namespace && !['list', 'watch'].includes(info.verb)) throw notFoundResource();
    let sub;
    if (info.subresource) {
      sub = served.subresources.get(info.subresource);
      if (!sub || (info.parts.length > 3 && !sub.connect)) throw notFoundResource();
    } else if (info.parts.length > 2) throw notFoundResource();
    const verb = info.verb;
    const allowed = sub ? sub.verbs : served.info.verbs;
    if (!allowed.includes(verb === 'watch' && !sub ? 'watch' : verb)) {
      throw methodNotSupported(
        {
          group: served.info.group,
          resource: sub ? `${served.info.resource}/${sub.name}` : served.info.resource,
        },
        verb,
      );
    }
    const userAgent = String(req.headers['user-agent'] ?? '');
    const dryRunValues = query.getAll('dryRun');
    for (const v of dryRunValues)
      if (v !== 'All' && v !== '') throw badRequest(`Invalid dryRun value: "${v}"; only "All" is supported`);
    const requestedManager = query.get('fieldManager') ?? undefined;
    if (requestedManager !== undefined) {
      const errs = validateFieldManager(requestedManager);
      if (errs.length)
        throw invalid(
          {
            group: 'meta.k8s.io',
            kind: verb === 'patch' ? 'PatchOptions' : verb === 'create' ? 'CreateOptions' : 'UpdateOptions',
          },
          '',
          errs,
        );
    }
    const fieldManager = managerOrUserAgent(requestedManager, userAgent);
    const ctx: RequestContext = {
      user,
      namespace: namespaced ? info.namespace : '',
      dryRun: dryRunValues.length > 0,
      fieldManager,
      userAgent,
      warnings: [],
      auditAnnotations,
      now: () => new Date(),
      get signal() {
        return abort?.signal;
      },
    };
    if (served.deprecation) {
      ctx.warnings.push(served.deprecation.warning);
      ctx.auditAnnotations['k8s.io/deprecated'] = 'true';
      if (served.deprecation.removedRelease)
        ctx.auditAnnotations['k8s.io/removed-release'] = served.deprecation.removedRelease;
      this.opts.onDeprecatedRequest?.(served, info.subresource);
    }
    const readVerb = verb === 'watch' ? 'watch' : verb === 'list' ? 'list' : 'get';
    const decision = negotiateOutput(String(req.headers.accept ?? ''), {
      verb: readVerb,
      protobuf: this.opts.protobufSupported(served),
      table: !sub && (verb === 'get' || verb === 'list' || verb === 'watch'),
    });
    const rep: Representation = {
      ...decision,
      pretty: decision.pretty || isPrettyPrint(query.get('pretty'), userAgent),
    };
    if (rep.as?.kind === 'Table') rep.includeObject = parseIncludeObject(query.get('includeObject'));
    const s: Scope = {
      req,
      res,
      info,
      query,
      served,
      sub,
      ctx,
      rep,
      maxBodyBytes: this.opts.maxBodyBytes,
      minRequestTimeoutSeconds: this.opts.minRequestTimeoutSeconds,
      hooks: (w) => this.opts.writeHooks(s, w),
    };
    return s;
  }

  async serve(s: Scope): Promise<void> {
    if (s.sub?.custom?.locate) return handleProxy(s);
    switch (s.info.verb) {
      case 'get':
        return handleGet(s);
      case 'list':
        return handleList(s);
      case 'watch':
        return handleWatch(s);
      case 'create':
        return handleCreate(s);
      case 'update':
        return handleUpdate(s);
      case 'patch':
        return handlePatch(s);
      case 'delete':
        return handleDelete(s);
      case 'deletecollection':
        return handleDeleteCollection(s);
      default:
        throw methodNotSupported(
          { group: s.served.info.group, resource: s.served.info.resource },
          s.info.verb,
        );
    }
  }
}
