// CRD conversion webhooks (spec.conversion.strategy: Webhook), as
// apiextensions-apiserver's webhookConverter: objects travel between the
// storage version and a served version in one ConversionReview per batch
// (a list is one call), sent over HTTPS to the webhook's URL or service
// with its caBundle. The answer is checked like Kubernetes does (uid,
// Success, one object per input, desiredAPIVersion, metadata left alone
// except labels and annotations); any failure is a 500 "conversion webhook
// for <gvk> failed: ...".
//
// Conversion is I/O while the registry's fromStorage/toStorage are
// synchronous: handlers await prepare()/prepareWrite() first, which convert
// and remember the result for the object they were given.
import https from 'node:https';
import { caBundleAgent, webhookRequestPath } from '../../auth/webhook-client';
import { randomUUID } from 'node:crypto';
import { internalError } from '../../../shared/api/status';
import {
  calledURL,
  serviceHostname,
  type DialTarget,
  type WebhookServiceResolver,
} from '../../aggregator/service-resolver';
import type { ServiceRef } from '../../aggregator/resolve';
import { stringifyJSONInt64 } from '../../../shared/codec/json-int64';

export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  caBundle?: string;
}

export interface ConversionWebhook {
  clientConfig?: WebhookClientConfig;
  conversionReviewVersions?: string[];
}

const TIMEOUT_MS = 30_000;
/** href: the URL as errors name it. */
function post(url: URL, href: string, body: Buffer, caBundle: string | undefined, connect?: DialTarget) {
  return new Promise<any>((resolve, reject) => {
    const req = https.request(
      {
        method: 'POST',
        hostname: connect?.host ?? url.hostname.replace(/^\[|\]$/g, ''),
        port: connect?.port ?? (url.port || 443),
        path: webhookRequestPath(url),
        servername: connect?.servername ?? (/^[\d.:[\]]+$/.test(url.hostname) ? undefined : url.hostname),
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': body.length,
        },
        agent: caBundleAgent(caBundle),
        timeout: TIMEOUT_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) > 299)
            return reject(
              new Error(`the server responded with the status code ${res.statusCode}: ${text.slice(0, 200)}`),
            );
          try {
            resolve(JSON.parse(text));
          } catch (e) {
            reject(new Error(`unable to decode response: ${(e as Error).message}`));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded')));
    req.on('error', (e) => reject(new Error(`Post "${href}": ${e.message}`)));
    req.end(body);
  });
}

const isObj = (v: unknown): v is Record<string, any> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

export class WebhookConverter {
  constructor(
    private readonly hook: ConversionWebhook,
    private readonly kind: string,
    /** Where a webhook given as a Service is reached. */
    private readonly services: WebhookServiceResolver,
  ) {}

  /** The URL called (a service by its DNS name, as Kubernetes names it) and the service it is. */
  private target(): { url: URL; service?: ServiceRef } {
    const cc = this.hook.clientConfig ?? {};
    if (cc.url) return { url: new URL(cc.url) };
    const svc = cc.service;
    if (!svc) throw new Error('webhook has no clientConfig url or service');
    const service = { namespace: svc.namespace, name: svc.name, port: svc.port ?? 443 };
    return { url: new URL(`https://${serviceHostname(service)}:${service.port}${svc.path ?? ''}`), service };
  }

  /** Where to connect, resolved when dialling as Kubernetes' webhook client does. */
  private async dial(url: URL, service: ServiceRef | undefined): Promise<DialTarget | undefined> {
    if (!service) return undefined;
    try {
      return await this.services.dialTarget(service);
    } catch (e) {
      throw new Error(`Post "${calledURL(url, service)}": ${(e as Error).message}`, { cause: e });
    }
  }

  /** Converts objects (all of one apiVersion) to desiredAPIVersion. */
  async convert(objects: any[], desiredAPIVersion: string): Promise<any[]> {
    const todo = objects.filter((o) => o.apiVersion !== desiredAPIVersion);
    if (!todo.length) return objects;
    const from = todo[0].apiVersion as string;
    const gvk = `${from.includes('/') ? from : `/${from}`}, Kind=${this.kind}`;
    try {
      const converted = await this.call(todo, desiredAPIVersion);
      let i = 0;
      return objects.map((o) => (o.apiVersion === desiredAPIVersion ? o : converted[i++]));
    } catch (e) {
      throw internalError(new Error(`conversion webhook for ${gvk} failed: ${(e as Error).message}`));
    }
  }

  private async call(objects: any[], desiredAPIVersion: string): Promise<any[]> {
    const versions = this.hook.conversionReviewVersions ?? ['v1'];
    const version = versions.find((v) => v === 'v1' || v === 'v1beta1');
    if (!version)
      throw new Error(
        `webhook does not accept v1 or v1beta1 ConversionReview, only ${versions.map((v) => JSON.stringify(v)).join(', ')}`,
      );
    const uid = randomUUID();
    const review = {
      apiVersion: `apiextensions.k8s.io/${version}`,
      kind: 'ConversionReview',
      request: { uid, desiredAPIVersion, objects },
    };
    const { url, service } = this.target();
    const out = await post(
      url,
      calledURL(url, service),
      Buffer.from(stringifyJSONInt64(review)),
      this.hook.clientConfig?.caBundle,
      await this.dial(url, service),
    );
    const response = out?.response;
    if (!isObj(response)) throw new Error('no response provided');
    if (response.uid !== uid) throw new Error(`expected response uid "${uid}", got "${response.uid ?? ''}"`);
    const result = response.result ?? {};
    if (result.status !== 'Success') throw new Error(result.message ?? 'webhook returned failure');
    const converted: unknown[] = Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
    if (converted.length !== objects.length)
      throw new Error(`expected ${objects.length} converted objects, got ${converted.length}`);
    return converted.map((c, i) => restoreMetadata(c, objects[i], i, desiredAPIVersion));
  }
}

/** Only labels and annotations may change in conversion; everything else of metadata is the original's. */
function restoreMetadata(c: unknown, original: any, i: number, desired: string): any {
  if (!isObj(c)) throw new Error(`invalid converted object at index ${i}: not an object`);
  if (c.apiVersion !== desired)
    throw new Error(
      `invalid converted object at index ${i}: invalid apiVersion "${c.apiVersion}", expected "${desired}"`,
    );
  if (c.kind !== original.kind)
    throw new Error(
      `invalid converted object at index ${i}: invalid kind "${c.kind}", expected "${original.kind}"`,
    );
  const md = isObj(c.metadata) ? c.metadata : {};
  const om = original.metadata ?? {};
  for (const k of ['name', 'namespace', 'uid'])
    if (md[k] !== undefined && md[k] !== om[k])
      throw new Error(`invalid converted object at index ${i}: must not change metadata.${k}`);
  const metadata = { ...om };
  if (md.labels !== undefined) metadata.labels = md.labels;
  else delete metadata.labels;
  if (md.annotations !== undefined) metadata.annotations = md.annotations;
  else delete metadata.annotations;
  return { ...c, metadata };
}

/**
 * The conversion of one served version through a webhook, with the
 * synchronous fromStorage/toStorage the registry calls after prepare().
 */
export class PreparedConversion {
  private readonly reads = new WeakMap<object, any>();
  private readonly writes = new WeakMap<object, any>();

  constructor(
    private readonly converter: WebhookConverter,
    private readonly servedAPIVersion: string,
    private readonly storageAPIVersion: string,
  ) {}

  /** Converts (again: every read consults the webhook, as in Kubernetes) and remembers the result. */
  async prepare(objs: any[]): Promise<void> {
    const todo = objs.filter(isObj);
    if (!todo.length) return;
    const out = await this.converter.convert(todo, this.servedAPIVersion);
    todo.forEach((o, i) => this.reads.set(o, out[i]));
  }

  async prepareWrite(obj: any): Promise<void> {
    if (!isObj(obj)) return;
    const [out] = await this.converter.convert(
      [{ ...obj, apiVersion: obj.apiVersion ?? this.servedAPIVersion }],
      this.storageAPIVersion,
    );
    this.writes.set(obj, out);
  }

  fromStorage = (obj: any): any => {
    if (obj?.apiVersion === this.servedAPIVersion) return obj;
    const c = this.reads.get(obj);
    if (c === undefined)
      throw internalError(new Error(`conversion to ${this.servedAPIVersion} was not prepared`));
    return structuredClone(c);
  };

  toStorage = (obj: any): any => {
    if (obj?.apiVersion === this.storageAPIVersion) return obj;
    const c = this.writes.get(obj);
    if (c === undefined)
      throw internalError(new Error(`conversion to ${this.storageAPIVersion} was not prepared`));
    return structuredClone(c);
  };
}
