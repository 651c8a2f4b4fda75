// The webhook backend: EventList batches POSTed to the server of
// --audit-webhook-config-file with its credentials, retried with backoff.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import https from 'node:https';
import http from 'node:http';
import { parseConfigYAML } from '../../../shared/codec/yaml';
import { logger } from '../../../shared/log';
import type { AuditEvent } from './event';
import type { Backend } from './backends';
import { webhookAgent } from '../webhook-client';

const log = logger('audit');

interface WebhookTarget {
  url: URL;
  agent: https.Agent | http.Agent;
  headers: Record<string, string>;
}

/** Reads the kubeconfig of --audit-webhook-config-file: server, CA, client credentials. */
export function loadWebhookKubeconfig(file: string): WebhookTarget {
  const cfg: any = parseConfigYAML(readFileSync(file, 'utf8'));
  const ctxName = cfg?.['current-context'];
  const ctx =
    (cfg?.contexts ?? []).find((c: any) => c.name === ctxName)?.context ?? cfg?.contexts?.[0]?.context;
  const cluster =
    (cfg?.clusters ?? []).find((c: any) => c.name === ctx?.cluster)?.cluster ?? cfg?.clusters?.[0]?.cluster;
  const user = (cfg?.users ?? []).find((u: any) => u.name === ctx?.user)?.user ?? cfg?.users?.[0]?.user ?? {};
  if (!cluster?.server) throw new Error(`invalid audit webhook config file "${file}": no cluster server`);
  const base = dirname(file);
  const readRef = (data: string | undefined, path: string | undefined) =>
    data
      ? Buffer.from(data, 'base64').toString('utf8')
      : path
        ? readFileSync(path.startsWith('/') ? path : join(base, path), 'utf8')
        : undefined;
  const url = new URL(cluster.server);
  const headers: Record<string, string> = {};
  if (user.token) headers.authorization = `Bearer ${user.token}`;
  else if (user.username)
    headers.authorization = `Basic ${Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64')}`;
  const agent = webhookAgent(url, {
    caPem: readRef(cluster['certificate-authority-data'], cluster['certificate-authority']),
    certPem: readRef(user['client-certificate-data'], user['client-certificate']),
    keyPem: readRef(user['client-key-data'], user['client-key']),
    insecure: !!cluster['insecure-skip-tls-verify'],
    serverName: cluster['tls-server-name'],
  });
  return { url, agent, headers };
}

export class WebhookBackend implements Backend {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly target: WebhookTarget,
    private readonly initialBackoffMs: number,
    private readonly version: string,
  ) {}

  private send(events: AuditEvent[]): Promise<void> {
    const body = Buffer.from(
      JSON.stringify({ kind: 'EventList', apiVersion: this.version, metadata: {}, items: events }),
    );
    const { url, agent, headers } = this.target;
    const lib = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = lib.request(
        url,
        {
          method: 'POST',
          agent,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) },
          timeout: 30_000,
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300
              ? resolve()
              : reject(new Error(`the server responded with the status code ${res.statusCode}`)),
          );
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Retries with exponential backoff (factor 1.5, 5 steps) from --audit-webhook-initial-backoff. */
  async deliver(events: AuditEvent[]): Promise<void> {
    let delay = this.initialBackoffMs;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.send(events);
        return;
      } catch (err) {
        if (attempt >= 4) {
          log.error('audit webhook: dropping events', { count: events.length, err: String(err) });
          throw err;
        }
        await new Promise((r) => setTimeout(r, delay));
        delay *= 1.5;
      }
    }
  }

  process(events: AuditEvent[]): void {
    const batch = events.slice();
    this.chain = this.chain.then(() => this.deliver(batch)).catch(() => {});
  }

  /** Resolves when everything handed over so far was delivered or dropped. */
  flushed(): Promise<void> {
    return this.chain;
  }

  async shutdown(): Promise<void> {
    await this.chain;
  }
}
