// POST serviceaccounts/<name>/token (TokenRequest, authentication.k8s.io/v1):
// issues a bound service-account token for the API audiences (or the requested
// ones), valid expirationSeconds (default 1h, at least 10 minutes, capped by
// --service-account-max-token-expiration), optionally bound to a Pod, Secret
// or Node. Kubelet-style requests (3607s, pod-bound, API audiences) are
// extended to a year with --service-account-extend-token-expiration.
import { badRequest, conflict, invalid, isStatusError, notFound } from '../../../shared/api/status';
import type { FieldError } from '../../../shared/api/field-errors';
import type { RequestContext } from '../../registry/context';
import type { CustomSubresource, Registry, ServedResource } from '../../registry/registry';
import { rfc3339 } from '../../../shared/api/validation/gotime';
import { getObject, type BoundRefs, type TokenIssuer } from './tokens';

const GVK = { group: 'authentication.k8s.io', kind: 'TokenRequest' };
/** The kubelet's projected-token expiration that marks a token for extension. */
export const WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 60 * 60 + 7;
export const EXTENDED_EXPIRATION_SECONDS = 365 * 24 * 60 * 60;

export interface TokenRequestOptions {
  issuer: TokenIssuer;
  apiAudiences: string[];
  maxExpirationSeconds: number;
  extendExpiration: boolean;
  registry: () => Registry;
}

function parseAPIVersion(av: string | undefined): { group: string; version: string } {
  if (!av) return { group: '', version: '' };
  const i = av.indexOf('/');
  return i < 0 ? { group: '', version: av } : { group: av.slice(0, i), version: av.slice(i + 1) };
}

export function tokenRequestSubresource(o: TokenRequestOptions): CustomSubresource {
  return {
    async create(ctx: RequestContext, name: string, body: any, served: ServedResource) {
      const namespace = ctx.namespace;
      if (!namespace) throw badRequest('namespace is required');
      const md = body.metadata ?? {};
      if (md.name && md.name !== name)
        throw invalid(GVK, name, [
          {
            type: 'FieldValueInvalid',
            field: 'metadata.name',
            badValue: md.name,
            detail: 'must match the service account name if specified',
          },
        ]);
      if (md.namespace && md.namespace !== namespace)
        throw invalid(GVK, name, [
          {
            type: 'FieldValueInvalid',
            field: 'metadata.namespace',
            badValue: md.namespace,
            detail: 'must match the service account namespace if specified',
          },
        ]);
      let sa: any;
      try {
        sa = served.fromStorage((await served.store.reader.get(ctx, name)).obj);
      } catch (err) {
        if (isStatusError(err, 'NotFound')) throw notFound({ group: '', resource: 'serviceaccounts' }, name);
        throw err;
      }
      if (md.uid && md.uid !== sa.metadata.uid)
        throw conflict(
          { group: GVK.group, resource: GVK.kind },
          name,
          `the UID in the token request (${md.uid}) does not match the UID of the service account (${sa.metadata.uid})`,
        );
      const spec = { ...(body.spec ?? {}) };
      if (!Array.isArray(spec.audiences) || !spec.audiences.length) spec.audiences = [...o.apiAudiences];
      if (spec.expirationSeconds === undefined || spec.expirationSeconds === null)
        spec.expirationSeconds = 3600;
      const now = ctx.now();
      const errs: FieldError[] = [];
      if (typeof spec.expirationSeconds !== 'number' || spec.expirationSeconds < 600)
        errs.push({
          type: 'FieldValueInvalid',
          field: 'spec.expirationSeconds',
          badValue: spec.expirationSeconds,
          detail: 'may not specify a duration less than 10 minutes',
        });
      else if (spec.expirationSeconds > 2 ** 32)
        errs.push({
          type: 'FieldValueInvalid',
          field: 'spec.expirationSeconds',
          badValue: spec.expirationSeconds,
          detail: 'may not specify a duration larger than 2^32 seconds',
        });
      if (errs.length) throw invalid(GVK, '', errs);

      const registry = o.registry();
      const bound: BoundRefs = {};
      const ref = spec.boundObjectRef;
      if (ref) {
        const gv = parseAPIVersion(ref.apiVersion);
        let uid: string | undefined;
        if (gv.group === '' && ref.kind === 'Pod') {
          const pod = await getObject(registry, 'pods', namespace, ref.name);
          if (!pod) throw notFound({ group: '', resource: 'pods' }, ref.name);
          if ((pod.spec?.serviceAccountName ?? 'default') !== name)
            throw badRequest(
              `cannot bind token for serviceaccount ${JSON.stringify(name)} to pod running with different serviceaccount name.`,
            );
          bound.pod = pod;
          uid = pod.metadata.uid;
          const nodeName = pod.spec?.nodeName;
          if (nodeName)
            bound.node = (await getObject(registry, 'nodes', '', nodeName)) ?? {
              metadata: { name: nodeName },
            };
        } else if (gv.group === '' && ref.kind === 'Node') {
          const node = await getObject(registry, 'nodes', '', ref.name);
          if (!node) throw notFound({ group: '', resource: 'nodes' }, ref.name);
          bound.node = node;
          uid = node.metadata.uid;
        } else if (gv.group === '' && ref.kind === 'Secret') {
          const secret = await getObject(registry, 'secrets', namespace, ref.name);
          if (!secret) throw notFound({ group: '', resource: 'secrets' }, ref.name);
          bound.secret = secret;
          uid = secret.metadata.uid;
        } else {
          // schema.GroupVersionKind.String(): "<group>/<version>, Kind=<kind>" (core: "/v1, Kind=...").
          const gvk = `${gv.group}/${gv.version}, Kind=${ref.kind ?? ''}`;
          throw badRequest(`cannot bind token to object of type ${gvk}`);
        }
        if (ref.uid && uid !== ref.uid)
          throw conflict(
            { group: gv.group, resource: ref.kind },
            ref.name,
            `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
          );
      }

      if (o.maxExpirationSeconds > 0 && spec.expirationSeconds > o.maxExpirationSeconds) {
        ctx.warnings.push(
          `requested expiration of ${spec.expirationSeconds} seconds shortened to ${o.maxExpirationSeconds} seconds`,
        );
        spec.expirationSeconds = o.maxExpirationSeconds;
      }
      let exp = spec.expirationSeconds;
      let warnAfter = 0;
      const kubeAudiences = (spec.audiences as string[]).every((a) => o.apiAudiences.includes(a));
      if (
        o.extendExpiration &&
        bound.pod &&
        spec.expirationSeconds === WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS &&
        kubeAudiences
      ) {
        warnAfter = exp;
        exp = Math.max(EXTENDED_EXPIRATION_SECONDS, o.maxExpirationSeconds);
      }
      const { token } = o.issuer.issue(sa, bound, {
        expirationSeconds: exp,
        warnAfterSeconds: warnAfter,
        audiences: spec.audiences,
        now: now.getTime(),
      });
      return {
        obj: {
          kind: 'TokenRequest',
          apiVersion: 'authentication.k8s.io/v1',
          metadata: {
            name: sa.metadata.name,
            namespace: sa.metadata.namespace,
            uid: sa.metadata.uid,
            creationTimestamp: rfc3339(now),
          },
          spec,
          status: {
            token,
            expirationTimestamp: rfc3339(new Date(now.getTime() + spec.expirationSeconds * 1000)),
          },
        },
        status: 201,
      };
    },
  };
}
