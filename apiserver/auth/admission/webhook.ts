// MutatingAdmissionWebhook and ValidatingAdmissionWebhook
// (k8s.io/apiserver/pkg/admission/plugin/webhook): admissionregistration.k8s.io/v1
// configurations select requests by rules, scope, namespaceSelector,
// objectSelector and matchPolicy; each selected webhook gets an AdmissionReview
// over HTTPS (caBundle), mutating ones in order (JSONPatch responses),
// validating ones in parallel. failurePolicy decides what a call failure means;
// a dry-run request that would call a webhook with side effects fails.
import https from 'node:https';
import { caBundleAgent, webhookRequestPath } from '../webhook-client';
import { randomUUID } from 'node:crypto';
import { badRequest, internalError, StatusError, type Status } from '../../../shared/api/status';
import { selectorFromObject } from '../../../shared/api/labels';
import { logger } from '../../../shared/log';
import { applyJSONPatch } from '../../apply';
import type { Registry, ServedResource } from '../../registry/registry';
import type { AdmissionAttributes, AdmissionPlugin } from './types';
import { ADMISSION_CONFIGURATION_RESOURCES, decodeMutated, Lister } from './util';
import { HookReinvocation } from './reinvocation';
import {
  calledURL,
  serviceHostname,
  type DialTarget,
  type WebhookServiceResolver,
} from '../../aggregator/service-resolver';
import type { ServiceRef } from '../../aggregator/resolve';
import { stringifyJSONInt64 } from '../../../shared/codec/json-int64';

const log = logger('admission');
const GROUP = 'admissionregistration.k8s.io';

interface Hook {
  configuration: string;
  webhook: any;
}

/** An object of one served version in another (I/O-bound conversions are awaited first). */
async function inVersion(from: ServedResource, to: ServedResource, o: any): Promise<any> {
  if (from.prepareWrite) await from.prepareWrite(o);
  const stored = from.toStorage(o);
  if (to.prepare) await to.prepare([stored]);
  return to.fromStorage(stored);
}

/** Thrown by a call that did not produce a usable review: failurePolicy decides. */
class CallError extends Error {}

export function ruleMatches(
  rule: any,
  a: AdmissionAttributes,
  version: string,
  namespaced: boolean,
): boolean {
  const has = (list: string[] | undefined, v: string) => !!list && (list.includes('*') || list.includes(v));
  if (!has(rule.operations, a.operation)) return false;
  if (!has(rule.apiGroups, a.group)) return false;
  if (!has(rule.apiVersions, version)) return false;
  const scope = rule.scope ?? '*';
  if (scope === 'Cluster' && namespaced) return false;
  if (scope === 'Namespaced' && !namespaced) return false;
  return (rule.resources ?? []).some((r: string) => {
    const [res, sub = ''] = r.split('/');
    if (r === '*/*') return true;
    if (!r.includes('/')) return (res === '*' || res === a.resource) && a.subresource === '';
    return (res === '*' || res === a.resource) && (sub === '*' || sub === a.subresource);
  });
}

function selects(sel: any, labels: Record<string, string> | undefined): boolean {
  if (!sel) return true;
  try {
    const s = selectorFromObject(sel);
    return s ? s.matches(labels ?? {}) : true;
  } catch {
    return false;
  }
}

function post(
  url: URL,
  body: Buffer,
  timeoutMs: number,
  caBundle: string | undefined,
  connect?: DialTarget,
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        method: 'POST',
        protocol: 'https:',
        host: connect?.host ?? url.hostname.replace(/^\[|\]$/g, ''),
        port: connect?.port ?? (url.port || 443),
        path: webhookRequestPath(url),
        servername: connect?.servername ?? (/^[\d.:[\]]+$/.test(url.hostname) ? undefined : url.hostname),
        agent: caBundleAgent(caBundle),
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': String(body.length),
        },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    const timer = setTimeout(() => req.destroy(new Error('context deadline exceeded')), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () =>
      req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')),
    );
    req.on('error', reject);
    req.end(body);
  });
}

export class AdmissionWebhook implements AdmissionPlugin {
  private readonly configs: Lister;
  private readonly namespaces: Lister;

  constructor(
    readonly name: 'MutatingAdmissionWebhook' | 'ValidatingAdmissionWebhook',
    private readonly registry: () => Registry,
    /** Where a webhook given as a Service is reached. */
    private readonly services: WebhookServiceResolver,
  ) {
    const mutating = name === 'MutatingAdmissionWebhook';
    this.configs = new Lister(
      registry,
      GROUP,
      mutating ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations',
    );
    this.namespaces = new Lister(registry, '', 'namespaces');
    // With no configuration of this kind (the usual case), a request costs no turn of the event loop.
    if (mutating) this.admit = (a) => (this.configs.isEmpty() ? undefined : this.run(a, true));
    else this.validate = (a) => (this.configs.isEmpty() ? undefined : this.run(a, false));
  }

  admit?: (a: AdmissionAttributes) => Promise<void> | undefined;
  validate?: (a: AdmissionAttributes) => Promise<void> | undefined;

  /** The hooks of the configurations last read, kept while the lister answers the same snapshot. */
  private hooksOf: { configs: readonly any[]; hooks: readonly Hook[] } | undefined;

  private async hooks(): Promise<readonly Hook[]> {
    const configs = await this.configs.list();
    if (this.hooksOf?.configs === configs) return this.hooksOf.hooks;
    const out: Hook[] = [];
    for (const c of configs.slice().sort((x, y) => (x.metadata.name < y.metadata.name ? -1 : 1)))
      for (const w of c.webhooks ?? []) out.push({ configuration: c.metadata.name, webhook: w });
    this.hooksOf = { configs, hooks: out };
    return out;
  }

  /** The served version the webhook sees the request as (matchPolicy Equivalent), or null. */
  private matchVersion(
    hook: any,
    a: AdmissionAttributes,
    namespaced: boolean,
  ): ServedResource | 'exact' | null {
    const rules: any[] = hook.rules ?? [];
    if (rules.some((r) => ruleMatches(r, a, a.version, namespaced))) return 'exact';
    if ((hook.matchPolicy ?? 'Equivalent') !== 'Equivalent') return null;
    for (const s of this.registry().all()) {
      if (s.info.group !== a.group || s.info.resource !== a.resource || s.info.version === a.version)
        continue;
      if (rules.some((r) => ruleMatches(r, a, s.info.version, namespaced))) return s;
    }
    return null;
  }

  private async namespaceLabels(a: AdmissionAttributes): Promise<Record<string, string> | null> {
    if (a.group === '' && a.resource === 'namespaces')
      return (a.object ?? a.oldObject)?.metadata?.labels ?? {};
    if (!a.namespace) return null;
    const ns = await this.namespaces.get('', a.namespace);
    return ns?.metadata?.labels ?? {};
  }

  private async run(a: AdmissionAttributes, mutating: boolean): Promise<void> {
    if (a.group === GROUP && ADMISSION_CONFIGURATION_RESOURCES.has(a.resource)) return;
    const all = await this.hooks();
    if (!all.length) return;
    const served = this.registry().lookup(a.group, a.version, a.resource);
    const namespaced = served ? served.info.namespaced && a.resource !== 'namespaces' : !!a.namespace;
    let nsLabels: Record<string, string> | null | undefined;
    const selected: { hook: Hook; index: number; as: ServedResource | 'exact' }[] = [];
    for (let i = 0; i < all.length; i++) {
      const w = all[i].webhook;
      const as = this.matchVersion(w, a, namespaced);
      if (!as) continue;
      if (w.namespaceSelector && Object.keys(w.namespaceSelector).length) {
        if (nsLabels === undefined) nsLabels = await this.namespaceLabels(a);
        if (nsLabels !== null && !selects(w.namespaceSelector, nsLabels)) continue;
      }
      if (
        w.objectSelector &&
        Object.keys(w.objectSelector).length &&
        !selects(w.objectSelector, a.object?.metadata?.labels) &&
        !selects(w.objectSelector, a.oldObject?.metadata?.labels)
      )
        continue;
      selected.push({ hook: all[i], index: i, as });
    }
    if (!selected.length) return;
    for (const s of selected) {
      const fx = s.hook.webhook.sideEffects;
      if (a.dryRun && fx !== 'None' && fx !== 'NoneOnDryRun')
        throw badRequest(`admission webhook "${s.hook.webhook.name}" does not support dry run`);
    }
    if (mutating) return this.mutate(a, selected);
    const results = await Promise.allSettled(selected.map((s) => this.call(a, s.hook, s.index, s.as, false)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Mutating webhooks in order; on the chain's second run only IfNeeded ones that ran before a change. */
  private async mutate(
    a: AdmissionAttributes,
    selected: { hook: Hook; index: number; as: ServedResource | 'exact' }[],
  ): Promise<void> {
    const r = a.reinvocation;
    const state = r?.value(this.name, () => new HookReinvocation());
    if (r?.isReinvoke && state?.changedSinceLastInvocation(a.object))
      state.requireReinvokingPreviouslyInvoked();
    try {
      for (const s of selected) {
        const key = `${s.hook.configuration}/${s.index}`;
        if (r?.isReinvoke && !state?.shouldReinvoke(key)) continue;
        if (await this.call(a, s.hook, s.index, s.as, true)) {
          state?.requireReinvokingPreviouslyInvoked();
          if (r) r.shouldReinvoke = true;
        }
        if (s.hook.webhook.reinvocationPolicy === 'IfNeeded') state?.addReinvocable(key);
      }
    } finally {
      state?.setLastInvocationOutput(a.object);
    }
  }

  /** The URL called (a service by its DNS name, as Kubernetes names it) and the service it is. */
  private url(w: any): { url: URL; service?: ServiceRef } {
    const cc = w.clientConfig ?? {};
    if (cc.url) return { url: new URL(cc.url) };
    const svc = cc.service;
    if (!svc) throw new CallError('failed to call webhook: webhook has no clientConfig url or service');
    const service = { namespace: svc.namespace, name: svc.name, port: svc.port ?? 443 };
    return { url: new URL(`https://${serviceHostname(service)}:${service.port}${svc.path ?? ''}`), service };
  }

  private async review(a: AdmissionAttributes, as: ServedResource | 'exact', version: string): Promise<any> {
    const req = this.registry().lookup(a.group, a.version, a.resource);
    const convert = async (o: any) => {
      if (!o || as === 'exact' || !req) return o;
      return inVersion(req, as, o);
    };
    const target =
      as === 'exact'
        ? { version: a.version, kind: a.kind }
        : { version: as.info.version, kind: as.info.kind };
    const isDelete = a.operation === 'DELETE';
    const optionsKind =
      a.operation === 'CREATE'
        ? 'CreateOptions'
        : a.operation === 'UPDATE'
          ? 'UpdateOptions'
          : 'DeleteOptions';
    const u = a.user;
    return {
      apiVersion: `admission.k8s.io/${version}`,
      kind: 'AdmissionReview',
      request: {
        uid: randomUUID(),
        kind: { group: a.group, version: target.version, kind: target.kind },
        resource: { group: a.group, version: target.version, resource: a.resource },
        ...(a.subresource ? { subResource: a.subresource } : {}),
        requestKind: { group: a.group, version: a.version, kind: a.kind },
        requestResource: { group: a.group, version: a.version, resource: a.resource },
        ...(a.subresource ? { requestSubResource: a.subresource } : {}),
        ...(a.name ? { name: a.name } : {}),
        ...(a.namespace ? { namespace: a.namespace } : {}),
        operation: a.operation,
        userInfo: {
          username: u.name,
          ...(u.uid ? { uid: u.uid } : {}),
          ...(u.groups?.length ? { groups: u.groups } : {}),
          ...(u.extra && Object.keys(u.extra).length ? { extra: u.extra } : {}),
        },
        object: isDelete ? null : await convert(a.object),
        oldObject: isDelete ? await convert(a.oldObject ?? a.object) : await convert(a.oldObject),
        dryRun: a.dryRun,
        options: {
          kind: optionsKind,
          apiVersion: 'meta.k8s.io/v1',
          ...(a.dryRun ? { dryRun: ['All'] } : {}),
        },
      },
    };
  }

  private async call(
    a: AdmissionAttributes,
    hook: Hook,
    index: number,
    as: ServedResource | 'exact',
    mutating: boolean,
  ): Promise<boolean> {
    const w = hook.webhook;
    const round = a.reinvocation?.isReinvoke ? 1 : 0;
    const name: string = w.name;
    const versions: string[] = w.admissionReviewVersions ?? ['v1'];
    const version = versions.includes('v1') ? 'v1' : versions.includes('v1beta1') ? 'v1beta1' : '';
    const timeoutSeconds: number = w.timeoutSeconds ?? 10;
    const ignore = (w.failurePolicy ?? 'Fail') === 'Ignore';
    const annotationKind = mutating ? 'mutation' : 'validating';
    let response: any;
    try {
      if (!version)
        throw new CallError(
          `failed to call webhook: webhook does not accept v1 or v1beta1 AdmissionReview, accepts ${versions.join(', ')}`,
        );
      const review = await this.review(a, as, version);
      const { url, service } = this.url(w);
      url.searchParams.set('timeout', `${timeoutSeconds}s`);
      let res: { status: number; body: Buffer };
      try {
        // Resolved when dialling, as Kubernetes' webhook client does: a failure is the call's.
        const connect = service && (await this.services.dialTarget(service));
        res = await post(
          url,
          Buffer.from(stringifyJSONInt64(review)),
          timeoutSeconds * 1000,
          w.clientConfig?.caBundle,
          connect,
        );
      } catch (err) {
        throw new CallError(
          `failed to call webhook: Post "${calledURL(url, service)}": ${(err as Error).message}`,
        );
      }
      if (res.status < 200 || res.status >= 300)
        throw new CallError(
          `failed to call webhook: the server responded with the status code ${res.status} but did not return more information`,
        );
      let parsed: any;
      try {
        parsed = JSON.parse(res.body.toString('utf8'));
      } catch (err) {
        throw new CallError(`received invalid webhook response: ${(err as Error).message}`);
      }
      response = parsed?.response;
      if (!response) throw new CallError('received invalid webhook response: response is nil');
      if (response.uid !== review.request.uid)
        throw new CallError(
          `received invalid webhook response: expected response.uid="${review.request.uid}", got "${response.uid}"`,
        );
    } catch (err) {
      if (!(err instanceof CallError)) throw err;
      const msg = `failed calling webhook "${name}": ${err.message}`;
      if (ignore) {
        log.warn('webhook call failed; failurePolicy Ignore', { webhook: name, err: err.message });
        if (a.auditAnnotations)
          a.auditAnnotations[
            `failed-open.${annotationKind}.webhook.admission.k8s.io/round_${round}_index_${index}`
          ] = name;
        return false;
      }
      throw internalError(new Error(msg));
    }
    for (const warning of response.warnings ?? []) if (typeof warning === 'string') a.warnings?.push(warning);
    for (const [k, v] of Object.entries(response.auditAnnotations ?? {}))
      if (a.auditAnnotations) a.auditAnnotations[`${name}/${k}`] = String(v);
    if (!response.allowed) throw deniedError(name, response.status);
    if (!mutating) return false;
    let mutated = false;
    if (response.patch) {
      if (response.patchType && response.patchType !== 'JSONPatch')
        throw internalError(new Error(`unsupported patch type "${response.patchType}"`));
      let patch: unknown;
      try {
        patch = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
      } catch (err) {
        throw internalError(new Error(`failed calling webhook "${name}": ${(err as Error).message}`));
      }
      const req = this.registry().lookup(a.group, a.version, a.resource);
      const inView = as === 'exact' || !req ? a.object : await inVersion(req, as, a.object);
      let out: any;
      try {
        out = applyJSONPatch(inView, patch);
      } catch (err) {
        throw internalError(err);
      }
      if (as !== 'exact' && req) out = await inVersion(as, req, out);
      // Decoded into the Go type (unknown fields dropped) and defaulted, as Kubernetes does.
      out = decodeMutated(this.registry(), a, out, false);
      mutated = stringifyJSONInt64(out) !== stringifyJSONInt64(a.object);
      a.object = out;
    }
    if (a.auditAnnotations)
      a.auditAnnotations[`mutation.webhook.admission.k8s.io/round_${round}_index_${index}`] = JSON.stringify({
        configuration: hook.configuration,
        webhook: name,
        mutated,
      });
    return mutated;
  }
}

/** webhookerrors.ToStatusErr: the webhook's Status, worded as a denial. */
function deniedError(name: string, result: Partial<Status> | undefined): StatusError {
  const deniedBy = `admission webhook "${name}" denied the request`;
  const code = !result?.code || result.code < 400 ? 400 : result.code;
  const message = result?.message
    ? `${deniedBy}: ${result.message}`
    : result?.reason
      ? `${deniedBy}: ${result.reason}`
      : `${deniedBy} without explanation`;
  return new StatusError(code, (result?.reason ?? '') as Status['reason'] & string, message, result?.details);
}
