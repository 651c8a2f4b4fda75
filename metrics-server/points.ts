// What metrics-server keeps of each scrape of a node's /metrics/resource: the
// node's and every container's cumulative CPU seconds and memory working set,
// and from two scrapes the CPU rate. Quantities written as Kubernetes writes
// them (CPU in canonical decimal SI from nanocores, memory in binary SI).

export interface Sample {
  /** Cumulative CPU core-seconds. */
  cpu: number;
  memory: number;
  /** Milliseconds since the epoch. */
  time: number;
}

export interface ResourceScrape {
  node?: Sample;
  /** By "namespace/pod" then container name. */
  containers: Map<string, Map<string, Sample>>;
}

interface Line {
  name: string;
  labels: Record<string, string>;
  value: number;
  time?: number;
}

/** Parses the Prometheus text format (the subset /metrics/resource uses). */
export function parsePrometheus(text: string): Line[] {
  const out: Line[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    if (m[3]) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
      for (let l = re.exec(m[3]); l; l = re.exec(m[3]))
        labels[l[1]] = l[2].replace(/\\n/g, '\n').replace(/\\(.)/g, '$1');
    }
    out.push({ name: m[1], labels, value: Number(m[4]), time: m[5] ? Number(m[5]) : undefined });
  }
  return out;
}

/** The node and container samples of one /metrics/resource text; samples without a time get `now`. */
export function decodeResourceMetrics(text: string, now: number): ResourceScrape {
  const out: ResourceScrape = { containers: new Map() };
  const node: Partial<Sample> = {};
  const containers = new Map<string, Partial<Sample>>();
  for (const l of parsePrometheus(text)) {
    const time = l.time ?? now;
    if (l.name === 'node_cpu_usage_seconds_total') Object.assign(node, { cpu: l.value, time });
    else if (l.name === 'node_memory_working_set_bytes') node.memory = l.value;
    else if (
      l.name === 'container_cpu_usage_seconds_total' ||
      l.name === 'container_memory_working_set_bytes'
    ) {
      const { namespace, pod, container } = l.labels;
      if (!pod || !container) continue;
      const k = `${namespace ?? ''}/${pod}\u0000${container}`;
      const c = containers.get(k) ?? {};
      if (l.name === 'container_cpu_usage_seconds_total') Object.assign(c, { cpu: l.value, time });
      else c.memory = l.value;
      containers.set(k, c);
    }
  }
  if (node.cpu !== undefined && node.memory !== undefined) out.node = node as Sample;
  for (const [k, c] of containers) {
    if (c.cpu === undefined || c.memory === undefined) continue;
    const [pod, container] = k.split('\u0000');
    let m = out.containers.get(pod);
    if (!m) out.containers.set(pod, (m = new Map()));
    m.set(container, c as Sample);
  }
  return out;
}

/**
 * The two points a series' rate is taken between. As metrics-server's storage: a sample newer
 * than the last moves the last to previous; one no newer (the node served the same reading
 * again: kubelet reads container stats every 10 s, not per scrape) keeps both; a counter that
 * went back (the container restarted) starts over.
 */
export interface Window {
  last: Sample;
  prev?: Sample;
}

export function advance(w: Window | undefined, next: Sample): Window {
  if (!w || next.cpu < w.last.cpu) return { last: next };
  return next.time > w.last.time ? { last: next, prev: w.last } : w;
}

/** A node's windows: its own, and by "namespace/pod" then container name. */
export interface NodeWindows {
  node?: Window;
  containers: Map<string, Map<string, Window>>;
}

/** The windows after one more scrape; what the scrape no longer has is dropped. */
export function advanceNode(old: NodeWindows | undefined, scrape: ResourceScrape): NodeWindows {
  const out: NodeWindows = {
    node: scrape.node && advance(old?.node, scrape.node),
    containers: new Map(),
  };
  for (const [pod, containers] of scrape.containers) {
    const was = old?.containers.get(pod);
    const m = new Map<string, Window>();
    for (const [name, sample] of containers) m.set(name, advance(was?.get(name), sample));
    out.containers.set(pod, m);
  }
  return out;
}

export interface Usage {
  /** CPU in nanocores (the rate between the two samples). */
  nanoCores: number;
  memory: number;
  /** Time of the newer sample, and the window between the two (ms). */
  time: number;
  windowMs: number;
}

/** The usage between an older and a newer sample; undefined when no rate can be had (restart, same time). */
export function usageBetween(prev: Sample | undefined, cur: Sample): Usage | undefined {
  if (!prev || cur.time <= prev.time || cur.cpu < prev.cpu) return undefined;
  const windowMs = cur.time - prev.time;
  return {
    nanoCores: Math.round(((cur.cpu - prev.cpu) * 1e9) / (windowMs / 1000)),
    memory: cur.memory,
    time: cur.time,
    windowMs,
  };
}

/** resource.NewScaledQuantity(nanocores, Nano).String(): the largest SI suffix that keeps it whole. */
export function cpuQuantity(nanoCores: number): string {
  const n = Math.max(0, Math.round(nanoCores));
  if (n === 0) return '0';
  if (n % 1e9 === 0) return String(n / 1e9);
  if (n % 1e6 === 0) return `${n / 1e6}m`;
  if (n % 1e3 === 0) return `${n / 1e3}u`;
  return `${n}n`;
}

/** resource.NewQuantity(bytes, BinarySI).String(): the largest power of 1024 that keeps it whole. */
export function memoryQuantity(bytes: number): string {
  let n = Math.max(0, Math.round(bytes));
  if (n === 0) return '0';
  const suffixes = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
  let i = 0;
  while (i < suffixes.length - 1 && n % 1024 === 0) {
    n /= 1024;
    i++;
  }
  return `${n}${suffixes[i]}`;
}

/** A Go time.Duration string for whole milliseconds ("15s", "10.5s", "1m0.5s"). */
export function goDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms));
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const s = (total % 60_000) / 1000;
  const sec = `${Number.isInteger(s) ? s : s.toFixed(3).replace(/0+$/, '')}s`;
  if (h) return `${h}h${m}m${sec}`;
  if (m) return `${m}m${sec}`;
  return sec;
}
