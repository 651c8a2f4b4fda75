// The static pod sources: a manifest file or directory (--pod-manifest-path,
// re-read every --file-check-frequency and when the directory changes) and a
// URL (--manifest-url with --manifest-url-header, fetched every
// --http-check-frequency). Each read yields the complete set of the source's
// pods; files that do not parse are logged and skipped, and a failed fetch
// keeps the last good set, as the kubelet does.
import { existsSync, readdirSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { HttpTransport } from '../../shared/client/http-transport';
import { realClock, type Clock } from '../../shared/client/clock';
import type { KubeObject } from '../../shared/client/types';
import { logger } from '../../shared/log';
import { parseManifest, staticPod, type PodSource } from './static';

const log = logger('nodeagent/sources');

export interface StaticSourceOptions {
  nodeName: string;
  clock?: Clock;
  /** Receives the source's complete set of pods after every read. */
  onPods(source: PodSource, pods: KubeObject[]): void;
}

/** Reads the pods of a manifest path (a file, or the files of a directory; dot files ignored). */
export function readManifestPath(path: string, nodeName: string, now: number): KubeObject[] {
  if (!existsSync(path)) return [];
  const files: string[] = [];
  if (statSync(path).isDirectory()) {
    for (const f of readdirSync(path).sort()) {
      if (f.startsWith('.')) continue;
      const full = join(path, f);
      try {
        if (statSync(full).isFile()) files.push(full);
      } catch {
        // vanished while listing
      }
    }
  } else files.push(path);
  const pods: KubeObject[] = [];
  for (const file of files) {
    try {
      for (const raw of parseManifest(readFileSync(file, 'utf8'), file, false)) {
        pods.push(staticPod(raw, { nodeName, source: 'file', location: file, now }));
      }
    } catch (err) {
      log.error('could not process manifest file', { path: file, err: (err as Error).message });
    }
  }
  return pods;
}

export class FileSource {
  private readonly clock: Clock;
  private watcher?: FSWatcher;
  private timer?: { cancel(): void };
  private debounce?: { cancel(): void };
  private stopped = false;
  private known = new Map<string, string>();

  constructor(
    readonly path: string,
    private readonly frequencyMs: number,
    private readonly o: StaticSourceOptions,
  ) {
    this.clock = o.clock ?? realClock;
  }

  /** Reads once now and then keeps watching. */
  start(): void {
    this.read();
    try {
      const dir = existsSync(this.path) && statSync(this.path).isDirectory() ? this.path : undefined;
      if (dir) {
        this.watcher = watch(dir, () => this.soon());
        this.watcher.on('error', () => this.watcher?.close());
      }
    } catch {
      // polling alone will do
    }
    this.schedule();
  }

  private soon(): void {
    if (this.stopped) return;
    this.debounce?.cancel();
    this.debounce = this.clock.setTimer(() => this.read(), 100);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimer(() => {
      this.read();
      this.schedule();
    }, this.frequencyMs);
  }

  read(): void {
    if (this.stopped) return;
    const previous = this.known;
    const pods = readManifestPath(this.path, this.o.nodeName, this.clock.now());
    // Keep the first-seen time of pods that did not change.
    const next = new Map<string, string>();
    for (const p of pods) {
      const uid = p.metadata.uid!;
      const seen = previous.get(uid) ?? p.metadata.annotations!['kubernetes.io/config.seen'];
      p.metadata.annotations!['kubernetes.io/config.seen'] = seen;
      next.set(uid, seen);
    }
    this.known = next;
    this.o.onPods('file', pods);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.debounce?.cancel();
    this.watcher?.close();
  }
}

export class HttpSource {
  private readonly clock: Clock;
  private timer?: { cancel(): void };
  private stopped = false;
  private lastBody?: string;
  private known = new Map<string, string>();
  /** HTTP/1.1 with keep-alive, as the kubelet's http.Client does for a manifest URL. */
  private readonly http = new HttpTransport({ http2: false });

  constructor(
    readonly url: string,
    private readonly headers: Record<string, string[]>,
    private readonly frequencyMs: number,
    private readonly o: StaticSourceOptions,
  ) {
    this.clock = o.clock ?? realClock;
  }

  async start(): Promise<void> {
    await this.read();
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimer(() => {
      void this.read().finally(() => this.schedule());
    }, this.frequencyMs);
  }

  /** One fetch; true when the set of pods was (re)delivered. */
  async read(): Promise<boolean> {
    if (this.stopped) return false;
    let body: string;
    try {
      const u = new URL(this.url);
      const res = await this.http.request({
        origin: u.origin,
        path: `${u.pathname}${u.search}`,
        method: 'GET',
        headers: this.headers,
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      body = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${this.url}: ${res.statusCode}: ${body.slice(0, 200)}`);
    } catch (err) {
      log.error('unable to read the manifest url', { url: this.url, err: (err as Error).message });
      return false;
    }
    if (body === this.lastBody) return false;
    let pods: KubeObject[] = [];
    if (body.trim()) {
      try {
        const now = this.clock.now();
        pods = parseManifest(body, this.url, true).map((raw) =>
          staticPod(raw, { nodeName: this.o.nodeName, source: 'http', location: this.url, now }),
        );
      } catch (err) {
        log.error('unable to parse the manifest url content', { url: this.url, err: (err as Error).message });
        return false;
      }
    }
    this.lastBody = body;
    const next = new Map<string, string>();
    for (const p of pods) {
      const uid = p.metadata.uid!;
      const seen = this.known.get(uid) ?? p.metadata.annotations!['kubernetes.io/config.seen'];
      p.metadata.annotations!['kubernetes.io/config.seen'] = seen;
      next.set(uid, seen);
    }
    this.known = next;
    this.o.onPods('http', pods);
    return true;
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    void this.http.close(0);
  }
}
