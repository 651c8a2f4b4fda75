// The driver's own small client: setup requests (namespaces, fixtures), timed
// single requests (lists, cache warm-up) and the watch scenario's updates.
import { Pool } from 'undici';
import { pool } from './load';
import type { Target } from './procs';

export interface Timed {
  status: number;
  body: Buffer;
  ms: number;
}

export class Api {
  private readonly p: Pool;

  constructor(
    readonly target: Target,
    connections = 8,
  ) {
    this.p = pool(target, connections);
  }

  /** One request, timed from send to the last byte of the body. */
  async call(method: string, path: string, body?: unknown, accept = 'application/json'): Promise<Timed> {
    const t0 = performance.now();
    const r = await this.p.request({
      path,
      method,
      headers: {
        accept,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      headersTimeout: 300_000,
      bodyTimeout: 300_000,
    });
    const buf = Buffer.from(await r.body.arrayBuffer());
    return { status: r.statusCode, body: buf, ms: performance.now() - t0 };
  }

  /** Time to the response headers of a GET (the body is then dropped). */
  async headersTime(path: string): Promise<number> {
    const t0 = performance.now();
    const r = await this.p.request({ path, method: 'GET', headersTimeout: 300_000 });
    const ms = performance.now() - t0;
    if (r.statusCode !== 200)
      throw new Error(`GET ${path}: ${r.statusCode} ${(await r.body.text()).slice(0, 300)}`);
    await r.body.dump();
    return ms;
  }

  /** Like call(), but throws unless the status is one of `ok`. */
  async must(method: string, path: string, body?: unknown, ok = [200, 201]): Promise<any> {
    const r = await this.call(method, path, body);
    if (!ok.includes(r.status))
      throw new Error(`${method} ${path}: ${r.status} ${r.body.toString('utf8').slice(0, 500)}`);
    return r.body.length ? JSON.parse(r.body.toString('utf8')) : undefined;
  }

  /** A namespace and its "default" ServiceAccount (what the controller-manager would add; pods need it). */
  async namespace(name: string): Promise<void> {
    await this.must(
      'POST',
      '/api/v1/namespaces',
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
      [201, 409],
    );
    await this.must(
      'POST',
      `/api/v1/namespaces/${name}/serviceaccounts`,
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: name } },
      [201, 409],
    );
  }

  private closed: Promise<void> | undefined;

  close(): Promise<void> {
    return (this.closed ??= this.p.close());
  }
}
