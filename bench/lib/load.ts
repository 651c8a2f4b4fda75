// Load generation against one HTTPS origin with undici: closed-loop clients
// (each sends its next request when the previous answer has been read) over a
// keep-alive pool of one connection per client (HTTP/1.1) or one multiplexed
// connection (h2), and long-running watch streams. Runs inside worker processes
// (bench/worker.ts) and, for light work, in the driver itself.
import { Pool } from 'undici';
import type { Target } from './procs';
import { configMap, paddedPod, pod, runningStatus } from './objects';
import { Samples } from './stats';

export type OpSpec =
  /** GET a path; `accept` selects the representation. */
  | { type: 'get'; path: string; accept?: string }
  /** POST a fresh ConfigMap of about `bytes` bytes. */
  | { type: 'create-cm'; namespace: string; bytes: number; prefix: string }
  /** POST a pod, then PUT its running status as a kubelet would (latencies recorded apart). */
  | { type: 'pod'; namespace: string; prefix: string; first: number }
  /** POST a pod of about `bytes` bytes of JSON, nothing else (issue 21's "create 3.8 KB pod"). */
  | { type: 'pod-create'; namespace: string; prefix: string; bytes: number }
  /**
   * A controller's chain of single requests on one fresh ConfigMap of about `bytes` bytes:
   * create, get, update (its data changed, at the created resourceVersion), delete; each
   * verb's latency recorded apart (`verbs`), `lat` the whole chain.
   */
  | { type: 'crud-cm'; namespace: string; bytes: number; prefix: string };

export const CRUD_VERBS = ['create', 'get', 'update', 'delete'] as const;
export type CrudVerb = (typeof CRUD_VERBS)[number];

export interface LoadTask {
  kind: 'load';
  target: Target;
  h2?: boolean;
  op: OpSpec;
  concurrency: number;
  /** Time mode: requests finished during [warmupMs, warmupMs + durationMs) count. */
  warmupMs?: number;
  durationMs?: number;
  /** Count mode: exactly this many operations, all counted. */
  count?: number;
}

export interface LoadResult {
  ops: number;
  errors: number;
  errorSamples: string[];
  /** Length of the measured window. */
  windowMs: number;
  /** Latency of each counted operation (for 'pod': the create). */
  lat: Float64Array;
  /** 'pod' only: latency of each status update. */
  lat2: Float64Array;
  bytesIn: number;
  /** Time mode: operations that finished during the warm-up. */
  warmupOps: number;
  /** 'crud-cm' only: latency of each verb of the counted chains. */
  verbs?: Record<CrudVerb, Float64Array>;
}

export function pool(t: Target, connections: number, h2 = false): Pool {
  return new Pool(t.origin, {
    connections: h2 ? 1 : connections,
    pipelining: h2 ? Math.max(1, connections) : 1,
    allowH2: h2,
    maxConcurrentStreams: h2 ? Math.max(100, connections) : undefined,
    connect: { ca: t.ca, cert: t.cert, key: t.key },
    keepAliveTimeout: 60_000,
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
  });
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

export async function runLoad(task: LoadTask): Promise<LoadResult> {
  const p = pool(task.target, task.concurrency, task.h2);
  const lat = new Samples(1 << 14);
  const lat2 = new Samples(task.op.type === 'pod' ? 1 << 14 : 1);
  const verbLat = task.op.type === 'crud-cm' ? CRUD_VERBS.map(() => new Samples(1 << 14)) : [];
  const errorSamples: string[] = [];
  let errors = 0;
  let ops = 0;
  let bytesIn = 0;
  let warmupOps = 0;
  let seq = 0;
  const countMode = task.count !== undefined;
  const t0 = performance.now();
  const from = t0 + (countMode ? 0 : (task.warmupMs ?? 0));
  const until = countMode ? Infinity : from + (task.durationMs ?? 5000);
  let next = 0; // count mode: operations handed out

  const fail = (what: string) => {
    errors++;
    if (errorSamples.length < 5) errorSamples.push(what.slice(0, 300));
  };

  const op = task.op;
  const once = async (): Promise<boolean> => {
    const n = seq++;
    const start = performance.now();
    if (op.type === 'get') {
      const r = await p.request({
        path: op.path,
        method: 'GET',
        headers: { accept: op.accept ?? 'application/json' },
      });
      const body = await r.body.arrayBuffer();
      if (r.statusCode !== 200) {
        fail(`GET ${r.statusCode} ${Buffer.from(body).toString('utf8')}`);
        return false;
      }
      const end = performance.now();
      if (start >= from && end < until) {
        lat.push(end - start);
        bytesIn += body.byteLength;
        ops++;
      }
      return true;
    }
    // A create of one object, timed when it falls in the measured window.
    const create = async (path: string, body: string, what: string): Promise<boolean> => {
      const r = await p.request({ path, method: 'POST', headers: JSON_HEADERS, body });
      const text = await r.body.text();
      if (r.statusCode !== 201) {
        fail(`POST${what} ${r.statusCode} ${text}`);
        return false;
      }
      const end = performance.now();
      if (start >= from && end < until) {
        lat.push(end - start);
        bytesIn += text.length;
        ops++;
      } else if (end < from) warmupOps++;
      return true;
    };
    if (op.type === 'crud-cm') return chain(op, `${op.prefix}-${n}`, start);
    if (op.type === 'create-cm')
      return create(
        `/api/v1/namespaces/${op.namespace}/configmaps`,
        JSON.stringify(configMap(op.namespace, `${op.prefix}-${n}`, op.bytes)),
        '',
      );
    if (op.type === 'pod-create')
      return create(
        `/api/v1/namespaces/${op.namespace}/pods`,
        JSON.stringify(paddedPod(op.namespace, `${op.prefix}-${n}`, n, op.bytes)),
        ' pod',
      );
    // pod: create, then the kubelet's status update
    const i = op.first + n;
    const name = `${op.prefix}-${i}`;
    const r = await p.request({
      path: `/api/v1/namespaces/${op.namespace}/pods`,
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify(pod(op.namespace, name, i)),
    });
    const text = await r.body.text();
    if (r.statusCode !== 201) {
      fail(`POST pod ${r.statusCode} ${text}`);
      return false;
    }
    const mid = performance.now();
    const created = JSON.parse(text);
    created.status = runningStatus(i);
    const r2 = await p.request({
      path: `/api/v1/namespaces/${op.namespace}/pods/${name}/status`,
      method: 'PUT',
      headers: JSON_HEADERS,
      body: JSON.stringify(created),
    });
    const text2 = await r2.body.text();
    if (r2.statusCode !== 200) {
      fail(`PUT pod status ${r2.statusCode} ${text2}`);
      return false;
    }
    const end = performance.now();
    lat.push(mid - start);
    lat2.push(end - mid);
    bytesIn += text.length + text2.length;
    ops++;
    return true;
  };

  /** One create → get → update → delete chain; counted when it lies in the window. */
  const chain = async (o: { namespace: string; bytes: number }, name: string, start: number) => {
    const base = `/api/v1/namespaces/${o.namespace}/configmaps`;
    const steps: [CrudVerb, string, string, string | undefined, number][] = [
      ['create', 'POST', base, JSON.stringify(configMap(o.namespace, name, o.bytes)), 201],
      ['get', 'GET', `${base}/${name}`, undefined, 200],
      ['update', 'PUT', `${base}/${name}`, '', 200],
      ['delete', 'DELETE', `${base}/${name}`, undefined, 200],
    ];
    const took: number[] = [];
    let bytes = 0;
    let t = start;
    let lastText = '';
    for (const [verb, method, path, given, want] of steps) {
      let body = given;
      if (verb === 'update') {
        // The object as read, its data changed: an update at its resourceVersion.
        const got = JSON.parse(lastText);
        got.data = { ...got.data, step: 'updated' };
        body = JSON.stringify(got);
      }
      const r = await p.request({ path, method, headers: JSON_HEADERS, body });
      const text = await r.body.text();
      if (r.statusCode !== want) {
        fail(`${method} ${r.statusCode} ${text}`);
        return false;
      }
      const now = performance.now();
      took.push(now - t);
      t = now;
      bytes += text.length;
      lastText = text;
    }
    if (start >= from && t < until) {
      took.forEach((x, i) => verbLat[i].push(x));
      lat.push(t - start);
      bytesIn += bytes;
      ops++;
    }
    return true;
  };
  const client = async () => {
    for (;;) {
      if (countMode) {
        if (next >= task.count!) return;
        next++;
      } else if (performance.now() >= until) return;
      try {
        await once();
      } catch (err) {
        fail(String(err));
        // Do not spin on a dead server.
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  };
  await Promise.all(Array.from({ length: task.concurrency }, client));
  const windowMs = countMode ? performance.now() - t0 : until - from;
  await p.close();
  return {
    ops,
    errors,
    errorSamples,
    windowMs,
    lat: lat.toArray(),
    lat2: lat2.toArray(),
    bytesIn,
    warmupOps,
    ...(verbLat.length
      ? {
          verbs: Object.fromEntries(CRUD_VERBS.map((v, i) => [v, verbLat[i].toArray()])) as Record<
            CrudVerb,
            Float64Array
          >,
        }
      : {}),
  };
}
