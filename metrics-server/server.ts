// A metrics server as clusters install it: it scrapes every node agent's
// /metrics/resource (through the apiserver's nodes/<name>/proxy, with the
// apiserver's kubelet credentials), keeps the last two samples per node and
// container, and serves metrics.k8s.io/v1beta1 over HTTPS to the aggregation
// layer, which it registers itself with: an APIService v1beta1.metrics.k8s.io
// for a Service kube-system/metrics-server. Nodes and pods come from informers
// (metrics-server's own design): a list of every pod and node each round cost the
// apiserver a full encode of them every 15 s, seconds of its event loop at 40,000 pods.
// It trusts the aggregator's headers through extension-apiserver-authentication and
// asks the apiserver to authorize each caller (SubjectAccessReview), as
// k8s.io/apiserver's delegated authentication and authorization do.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { logger } from '../shared/log';
import type { Client, KubeObject } from '../shared/client';
import { SharedInformerFactory, type SharedIndexInformer } from '../shared/informers';
import { createCA, createServingCert } from '../shared/pki/certs';
import { isStatusError } from '../shared/api/status';
import { callerOf, requestHeaderConfigFrom, type Caller, type RequestHeaderConfig } from './requestheader';
import {
  attributesOf,
  GROUP,
  requestOf,
  serveMetrics,
  VERSION,
  writeJSON,
  type Attributes,
  type MetricsSource,
  type NodeUsage,
  type PodUsage,
} from './api';
import { advanceNode, decodeResourceMetrics, usageBetween, type NodeWindows } from './points';

const log = logger('metrics-server');

export const SERVICE_NAMESPACE = 'kube-system';
export const SERVICE_NAME = 'metrics-server';
export const APISERVICE_NAME = `${VERSION}.${GROUP}`;

export interface MetricsServerOptions {
  client: Client;
  bindAddress: string;
  /** 0 picks a free port. */
  port: number;
  /** --metric-resolution: how often nodes are scraped (ms). */
  resolutionMs: number;
  /** The host name the Service points the aggregator at (this server's address as a name). */
  externalName?: string;
}

/** All a round and the API read of a node or pod: its name and labels (the cache keeps no more). */
function nameAndLabels(o: KubeObject): KubeObject {
  const m = o.metadata ?? {};
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: { name: m.name, namespace: m.namespace, resourceVersion: m.resourceVersion, labels: m.labels },
  };
}

interface NodeState {
  windows: NodeWindows;
  labels?: Record<string, string>;
}

export class MetricsServer implements MetricsSource {
  private server: Server | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly state = new Map<string, NodeState>();
  private informers: SharedInformerFactory | null = null;
  private nodeInformer: SharedIndexInformer | null = null;
  private podInformer: SharedIndexInformer | null = null;
  private auth!: RequestHeaderConfig;
  private readonly decisions = new Map<string, { allowed: boolean; until: number }>();
  port = 0;

  constructor(private readonly o: MetricsServerOptions) {}

  async start(): Promise<void> {
    const cm = await this.o.client
      .resource('configmaps')
      .namespace('kube-system')
      .get('extension-apiserver-authentication');
    this.auth = requestHeaderConfigFrom((cm as any).data ?? {});
    if (!this.auth.caPem)
      throw new Error('extension-apiserver-authentication has no requestheader-client-ca-file');
    const ca = await createCA('metrics-server-ca');
    const serving = await createServingCert(ca, SERVICE_NAME, {
      dnsNames: [`${SERVICE_NAME}.${SERVICE_NAMESPACE}.svc`, 'localhost'],
      ips: ['127.0.0.1'],
    });
    const server = createServer(
      {
        cert: serving.certPem,
        key: serving.keyPem,
        ca: this.auth.caPem,
        requestCert: true,
        rejectUnauthorized: false,
      },
      (req, res) => {
        void this.handle(req, res).catch((err) => {
          log.error('request failed', { err: String(err) });
          if (!res.headersSent)
            writeJSON(res, 500, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 500 });
        });
      },
    );
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.bindAddress, () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    this.informers = new SharedInformerFactory(this.o.client, { transform: nameAndLabels });
    this.nodeInformer = this.informers.forResource('nodes');
    this.podInformer = this.informers.forResource('pods');
    this.informers.start();
    await this.informers.waitForCacheSync();
    await this.scrape();
    // As metrics-server's ticker: a round still running when the next is due makes that one skip,
    // so two rounds never race to replace a node's points.
    let scraping = false;
    this.timer = setInterval(() => {
      if (scraping) return;
      scraping = true;
      void this.scrape().finally(() => (scraping = false));
    }, this.o.resolutionMs);
    this.timer.unref();
    await this.register(ca.certPem);
    log.info('serving', { address: this.o.bindAddress, port: this.port });
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.informers?.shutdown();
    const s = this.server;
    if (s) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  }

  // ---- registration with the aggregation layer ------------------------------------------

  private async register(caPem: string): Promise<void> {
    const c = this.o.client;
    await upsert(c.resource('services').namespace(SERVICE_NAMESPACE), {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: SERVICE_NAME, namespace: SERVICE_NAMESPACE, labels: { 'k8s-app': 'metrics-server' } },
      spec: { type: 'ExternalName', externalName: this.o.externalName ?? 'localhost' },
    });
    await upsert(c.resource({ group: 'apiregistration.k8s.io', version: 'v1', resource: 'apiservices' }), {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: APISERVICE_NAME, labels: { 'k8s-app': 'metrics-server' } },
      spec: {
        group: GROUP,
        version: VERSION,
        groupPriorityMinimum: 100,
        versionPriority: 100,
        service: { namespace: SERVICE_NAMESPACE, name: SERVICE_NAME, port: this.port },
        caBundle: Buffer.from(caPem).toString('base64'),
      },
    });
  }

  // ---- scraping -------------------------------------------------------------------------

  /** One round: every node's /metrics/resource (the informers know the nodes and the pods' labels). */
  async scrape(): Promise<void> {
    const c = this.o.client;
    try {
      const nodes = this.nodeInformer?.indexer.list() ?? [];
      const names = new Set(nodes.map((n) => n.metadata.name as string));
      for (const name of [...this.state.keys()]) if (!names.has(name)) this.state.delete(name);
      await Promise.all(
        nodes.map(async (n) => {
          const name = n.metadata.name as string;
          try {
            const r = await c.rest.raw({
              method: 'GET',
              path: `/api/v1/nodes/${encodeURIComponent(name)}/proxy/metrics/resource`,
              accept: '*/*',
              timeoutMs: 10_000,
            });
            const scrape = decodeResourceMetrics(r.body.toString('utf8'), Date.now());
            const windows = advanceNode(this.state.get(name)?.windows, scrape);
            this.state.set(name, { windows, labels: n.metadata.labels });
          } catch (err) {
            log.warn('failed to scrape node', { node: name, err: String(err) });
          }
        }),
      );
    } catch (err) {
      log.warn('scrape failed', { err: String(err) });
    }
  }

  nodes(): NodeUsage[] {
    const out: NodeUsage[] = [];
    for (const [name, st] of this.state) {
      const w = st.windows.node;
      const usage = w && usageBetween(w.prev, w.last);
      if (usage) out.push({ name, labels: st.labels, usage });
    }
    return out;
  }

  pods(): PodUsage[] {
    const out: PodUsage[] = [];
    for (const st of this.state.values()) {
      for (const [key, containers] of st.windows.containers) {
        const pod = this.podInformer?.indexer.getByKey(key);
        if (!pod) continue;
        const list: PodUsage['containers'] = [];
        for (const [name, w] of containers) {
          const usage = usageBetween(w.prev, w.last);
          if (usage) list.push({ name, usage });
        }
        // Like metrics-server: a pod is shown only when every container has a rate.
        if (!list.length || list.length !== containers.size) continue;
        const [namespace, name] = key.split('/');
        out.push({ namespace, name, labels: pod.metadata.labels, containers: list });
      }
    }
    return out;
  }

  // ---- serving --------------------------------------------------------------------------

  private async handle(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) {
    const r = requestOf(req);
    if (r.path === '/healthz' || r.path === '/livez' || r.path === '/readyz') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('ok');
      return;
    }
    const caller = callerOf(req, this.auth);
    if (!caller) {
      writeJSON(res, 401, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Unauthorized',
        reason: 'Unauthorized',
        code: 401,
      });
      return;
    }
    const attrs = attributesOf(r);
    if (!(await this.authorized(caller, attrs))) {
      const what = attrs.resource
        ? `cannot ${attrs.verb} resource "${attrs.resource}" in API group "${GROUP}" ${attrs.namespace ? `in the namespace "${attrs.namespace}"` : 'at the cluster scope'}`
        : `cannot ${attrs.verb} path "${attrs.path}"`;
      const message = attrs.resource
        ? `${attrs.resource}.${GROUP}${attrs.name ? ` "${attrs.name}"` : ''} is forbidden: User "${caller.name}" ${what}`
        : `forbidden: User "${caller.name}" ${what}`;
      writeJSON(res, 403, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message,
        reason: 'Forbidden',
        details: attrs.resource
          ? { ...(attrs.name ? { name: attrs.name } : {}), group: GROUP, kind: attrs.resource }
          : {},
        code: 403,
      });
      return;
    }
    const [code, body] = serveMetrics(r, this);
    writeJSON(res, code, body);
  }

  /** Delegated authorization: a SubjectAccessReview, its decision cached for 10s (expired ones pruned). */
  private async authorized(caller: Caller, a: Attributes): Promise<boolean> {
    if (caller.groups.includes('system:masters')) return true;
    const key = JSON.stringify([caller, a]);
    const hit = this.decisions.get(key);
    if (hit && hit.until > Date.now()) return hit.allowed;
    const spec: any = { user: caller.name, groups: caller.groups, extra: caller.extra };
    if (a.resource)
      spec.resourceAttributes = {
        group: GROUP,
        version: VERSION,
        resource: a.resource,
        namespace: a.namespace,
        name: a.name,
        verb: a.verb,
      };
    else spec.nonResourceAttributes = { path: a.path, verb: a.verb };
    const review: any = await this.o.client.rest.request({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
    });
    const allowed = !!review.status?.allowed;
    if (this.decisions.size >= 1024)
      for (const [k, d] of this.decisions) if (d.until <= Date.now()) this.decisions.delete(k);
    this.decisions.set(key, { allowed, until: Date.now() + 10_000 });
    return allowed;
  }
}

/** Creates the object, or replaces what is there (keeping its resourceVersion). */
async function upsert(rc: any, obj: any): Promise<void> {
  try {
    const cur = await rc.get(obj.metadata.name);
    await rc.update({ ...obj, metadata: { ...obj.metadata, resourceVersion: cur.metadata.resourceVersion } });
  } catch (err) {
    if (!isStatusError(err, 'NotFound')) throw err;
    await rc.create(obj);
  }
}
