// An apiserver in the test process, on a free port, with its own temp data
// and cert dirs: real HTTPS, real storage. Tests of clients and controllers use it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultFlagValues } from '../../shared/options/defaults';
import type { FlagValues } from '../../shared/options/flags';
import { loadKubeconfig, type ClientConfig } from '../../shared/client/kubeconfig';
import { setSilent } from '../../shared/log';
import { featureGates } from '../../shared/options/feature-gates';
import { apiserverFlags } from './options';
import { Agent, request } from 'undici';
import { startAPIServer, type RunningAPIServer } from './app';

export interface TestAPIServer {
  url: string;
  port: number;
  kubeconfig: string;
  config: ClientConfig;
  dir: string;
  running: RunningAPIServer;
  stop(): Promise<void>;
}

export async function startTestAPIServer(overrides: FlagValues = {}): Promise<TestAPIServer> {
  setSilent(process.env.TKUBE_TEST_LOGS !== '1');
  const dir = mkdtempSync(join(tmpdir(), 'tkube-apiserver-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const values = defaultFlagValues(apiserverFlags, {
    securePort: 0,
    bindAddress: '127.0.0.1',
    dataDir: join(dir, 'data'),
    certDir: join(dir, 'certs'),
    writeKubeconfig: kubeconfig,
    // Like Kubernetes' integration test servers: no controller creates the "default" ServiceAccount here.
    disableAdmissionPlugins: ['ServiceAccount'],
    ...overrides,
  });
  let running: RunningAPIServer;
  try {
    running = await startAPIServer(values);
  } catch (err) {
    // Tests of flags it refuses start it to see it fail: leave no directory behind.
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  // Like a client waiting for /readyz: post-start hooks (bootstrap objects, RBAC policy) have run.
  for (let i = 0; i < 300; i++) {
    if ((await running.server.readyz.serve('', new URLSearchParams())).code === 200) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    url: `https://127.0.0.1:${running.port}`,
    port: running.port,
    kubeconfig,
    config: loadKubeconfig(kubeconfig),
    dir,
    running,
    async stop() {
      await running.stop();
      featureGates.reset();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs fn against a fresh test apiserver and its admin requester, then stops both. */
export async function withTestAPIServer(
  overrides: FlagValues,
  fn: (api: ReturnType<typeof testRequester>, srv: TestAPIServer) => Promise<void>,
): Promise<void> {
  const srv = await startTestAPIServer(overrides);
  const api = testRequester(srv.config);
  try {
    await fn(api, srv);
  } finally {
    await api.close();
    await srv.stop();
  }
}

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: any;
}

/** A minimal HTTPS client for tests, authenticated as the admin of the kubeconfig. */
export function testRequester(config: ClientConfig) {
  const dispatcher = new Agent({
    connect: { ca: config.caPem, cert: config.certPem, key: config.keyPem, rejectUnauthorized: true },
  });
  const call = async (
    method: string,
    path: string,
    opts: { body?: unknown; contentType?: string; headers?: Record<string, string> } = {},
  ): Promise<TestResponse> => {
    let body: string | Buffer | undefined;
    if (opts.body !== undefined)
      body =
        Buffer.isBuffer(opts.body) || typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    const res = await request(config.server + path, {
      method: method as any,
      dispatcher,
      body,
      headers: {
        ...(body !== undefined ? { 'content-type': opts.contentType ?? 'application/json' } : {}),
        ...(opts.headers ?? {}),
      },
    });
    const buf = Buffer.from(await res.body.arrayBuffer());
    let json: any;
    try {
      json = JSON.parse(buf.toString('utf8'));
    } catch {
      json = undefined;
    }
    return { status: res.statusCode, headers: res.headers as any, body: buf, json };
  };
  return Object.assign(call, { close: () => dispatcher.close() });
}
