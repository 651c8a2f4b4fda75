// The client of the token-review and subject-access-review webhooks: a
// kubeconfig names the server, its CA and our client credentials; requests
// are JSON POSTs, retried with backoff on connection errors, 429 and 5xx.
// The audit webhook backend connects the same way.
import https from 'node:https';
import http from 'node:http';
import { loadKubeconfig, type ClientConfig } from '../../shared/client/kubeconfig';
import { stringifyJSONInt64 } from '../../shared/codec/json-int64';
import { GO_ROOT_POOL_TRUST } from '../../shared/pki/trust';

/** A kept-alive agent for a webhook server, with the kubeconfig's CA and client certificate. */
export function webhookAgent(
  url: URL,
  cfg: Pick<ClientConfig, 'caPem' | 'certPem' | 'keyPem' | 'insecure' | 'serverName'>,
): https.Agent | http.Agent {
  if (url.protocol !== 'https:') return new http.Agent({ keepAlive: true });
  return new https.Agent({
    keepAlive: true,
    ...GO_ROOT_POOL_TRUST,
    ca: cfg.caPem,
    cert: cfg.certPem,
    key: cfg.keyPem,
    rejectUnauthorized: !cfg.insecure,
    servername: cfg.serverName,
  });
}

/** One kept-alive agent per caBundle (base64 PEM, absent: the system roots), for admission and conversion webhooks. */
const bundleAgents = new Map<string, https.Agent>();
export function caBundleAgent(caBundle: string | undefined): https.Agent {
  const k = caBundle ?? '';
  let agent = bundleAgents.get(k);
  if (!agent) {
    agent = new https.Agent({
      keepAlive: true,
      ...GO_ROOT_POOL_TRUST,
      ca: caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined,
    });
    bundleAgents.set(k, agent);
  }
  return agent;
}

/**
 * The path and query a webhook URL is called with: cleaned as client-go's rest client does
 * (path.Join: "//validate" is "/validate", dot segments resolved), a trailing slash kept. envtest
 * writes "https://host:port/" + a path that starts with "/", and Go's ServeMux answers "//x" with 301.
 */
export function webhookRequestPath(url: URL): string {
  const p = url.pathname;
  const segments: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') segments.pop();
    else segments.push(seg);
  }
  const clean = `/${segments.join('/')}`;
  return (p.endsWith('/') && clean !== '/' ? `${clean}/` : clean) + url.search;
}

export interface WebhookClientOptions {
  timeoutMs?: number;
  /** Attempts on retryable failures (first one included). */
  attempts?: number;
  initialBackoffMs?: number;
}

export class WebhookError extends Error {}

export class WebhookClient {
  private readonly url: URL;
  private readonly agent: https.Agent | http.Agent;
  private readonly token?: string;

  constructor(
    kubeconfigFile: string,
    private readonly o: WebhookClientOptions = {},
  ) {
    const cfg = loadKubeconfig(kubeconfigFile);
    this.url = new URL(cfg.server);
    this.token = cfg.token;
    this.agent = webhookAgent(this.url, cfg);
  }

  private once(body: string): Promise<{ status: number; json: any }> {
    const mod = this.url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = mod.request(
        this.url,
        {
          method: 'POST',
          agent: this.agent,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            'content-length': Buffer.byteLength(body),
            ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
          },
          timeout: this.o.timeoutMs ?? 30_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: any;
            try {
              json = text ? JSON.parse(text) : undefined;
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, json });
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new WebhookError('context deadline exceeded')));
      req.on('error', reject);
      req.end(body);
    });
  }

  /** POSTs a review object and returns the review the webhook answered. */
  async post(review: unknown): Promise<any> {
    const body = stringifyJSONInt64(review);
    const attempts = Math.max(1, this.o.attempts ?? 3);
    let delay = this.o.initialBackoffMs ?? 200;
    let last: unknown;
    for (let i = 0; i < attempts; i++) {
      if (i > 0) {
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.round(delay * 1.5);
      }
      try {
        const { status, json } = await this.once(body);
        if (status >= 200 && status < 300) {
          if (!json || typeof json !== 'object')
            throw new WebhookError('webhook returned a body that is not JSON');
          return json;
        }
        last = new WebhookError(
          `the server responded with the status code ${status} but did not return more information`,
        );
        if (status !== 429 && status < 500) break;
      } catch (err) {
        last = err;
        if (err instanceof WebhookError && /not JSON/.test(err.message)) break;
      }
    }
    throw last instanceof Error ? last : new WebhookError(String(last));
  }

  close(): void {
    this.agent.destroy();
  }
}

/** A bounded TTL cache (webhook answers). */
export class TTLCache<V> {
  private readonly m = new Map<string, { v: V; exp: number }>();
  constructor(private readonly max = 10_000) {}

  get(k: string, now = Date.now()): V | undefined {
    const e = this.m.get(k);
    if (!e) return undefined;
    if (e.exp <= now) {
      this.m.delete(k);
      return undefined;
    }
    return e.v;
  }

  set(k: string, v: V, ttlMs: number, now = Date.now()): void {
    if (ttlMs <= 0) return;
    if (this.m.size >= this.max) {
      for (const [key, e] of this.m) if (e.exp <= now) this.m.delete(key);
      if (this.m.size >= this.max) this.m.delete(this.m.keys().next().value as string);
    }
    this.m.set(k, { v, exp: now + ttlMs });
  }
}
