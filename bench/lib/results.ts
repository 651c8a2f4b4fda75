// What one run of `npm run bench` measured, as stored under bench/results/.

export interface LoadRow {
  concurrency: number;
  rate: number;
  p50: number;
  p99: number;
  errors: number;
  errorSamples?: string[];
  /** Cores other processes on the machine used meanwhile (0 = quiet; figures are noisy above ~0.2). */
  other?: number;
  /** Cores the apiserver (etcd, the load workers) used meanwhile. */
  apiserverCpu?: number;
  etcdCpu?: number;
  clientCpu?: number;
}

/** One client's chain of create → get → update → delete on fresh 1 KB ConfigMaps. */
export interface LoneRow {
  h2: boolean;
  /** Chains counted (each one request of every verb). */
  chains: number;
  verbs: Record<'create' | 'get' | 'update' | 'delete', { p50: number; p99: number }>;
  errors: number;
  errorSamples?: string[];
  other?: number;
  apiserverCpu?: number;
  etcdCpu?: number;
  clientCpu?: number;
  /** Apiserver CPU per chain (four requests), µs. */
  apiserverCpuUsPerChain?: number;
}

/** --profile: a lone client's creates on a profiled apiserver, and where their time went. */
export interface LoneProfile {
  file: string;
  /** The creates' window on the machine's monotonic clock (the profile's), µs. */
  fromUs: number;
  toUs: number;
  creates: number;
  /** Wall clock per create as the client saw it, p50 and mean, ms. */
  p50: number;
  meanMs: number;
  /** µs per create by phase (bench/lib/phases.ts), once the profile is written. */
  breakdown?: { phase: string; ms: number; usPerOp: number }[];
}

export interface RawEtcdRow {
  rate: number;
  /** CPU µs per operation of etcd, and of the grpc-js client. */
  etcdCpuUsPerOp: number;
  clientCpuUsPerOp: number;
  other: number;
}

export interface ListRow {
  name: string;
  format: 'json' | 'protobuf';
  mode: 'rv0' | 'consistent' | 'pages500';
  items: number;
  /** Median and best of the timed runs (send to last byte; for pages, all pages). */
  medianMs: number;
  minMs: number;
  bytes: number;
  /** bytes / median time. */
  bytesPerSec: number;
  runs: number;
  other?: number;
}

export interface BackendResult {
  backend: 'embedded' | 'etcd';
  start?: {
    /** Spawn to first /readyz 200 with an empty data dir (certificates present). */
    runsMs: number[];
    medianMs: number;
    /** RSS of the apiserver 10 s after it became ready, nothing stored. */
    idleRss: number;
    /** Its anonymous part (RssAnon; the rest maps files: the node binary, LMDB). */
    idleAnon: number;
    /** The etcd server's RSS at the same moment (etcd backend only). */
    etcdRss?: number;
  };
  /** Restart on the data of the memory/list instance. */
  restart?: {
    objects: number;
    /** Spawn to /readyz 200; NaN when it never passed (see notReady). */
    readyMs: number;
    /** Spawn to /readyz?exclude=poststarthook/bootstrap-controller 200. */
    readyExclBootstrapMs?: number;
    notReady?: string;
    /** From serving to the pods' watch cache being filled from the store (a watch's headers). */
    cacheFillMs: number;
    /** The first RV=0 list of all pods after that. */
    firstListMs: number;
  }[];
  create?: LoadRow[];
  /** Creates of pods of `bytes` bytes of JSON at 64 clients, nothing else. */
  /** warmupRate: creates per second during the uncounted first warmupMs. */
  podCreate?: LoadRow & { bytes: number; warmupMs?: number; warmupRate?: number };
  /** Raw store write rate at 64 writers (embedded: openEmbeddedStorage; etcd: the etcd3 storage client). */
  storeCeiling?: number;
  storeCeilingOther?: number;
  /** etcd only: bare grpc-js loops (64 concurrent, no storage layer): 1 KB Puts, Ranges of one 1 KB key. */
  rawEtcdPut?: RawEtcdRow;
  rawEtcdRange?: RawEtcdRow;
  get?: { h1: LoadRow; h2?: LoadRow };
  /** One client (issue 39): each verb's latency over HTTP/1.1 and h2; the disk's fsync floor. */
  lone?: {
    rows: LoneRow[];
    /** The disk under the data dirs: a 4 KB rewrite + fdatasync, and an LMDB-shaped commit's syncs (ms). */
    fsync?: { p50: number; p99: number };
    commitFloor?: { p50: number; p99: number };
    profile?: LoneProfile;
  };
  pods?: {
    count: number;
    /** Pods per second, each a create plus a status update. */
    rate: number;
    createP50: number;
    createP99: number;
    statusP50: number;
    statusP99: number;
    /** Average size of one pod in the JSON list. */
    jsonBytes: number;
    jsonBytesNoManagedFields: number;
    protobufBytes: number;
    errors: number;
    errorSamples?: string[];
    other?: number;
    apiserverCpu?: number;
    etcdCpu?: number;
    clientCpu?: number;
  };
  list?: ListRow[];
  /** The watch fan-out with one HTTP/1.1 connection per watcher (extra since 2026-11-26's fourth session). */
  watch?: WatchFigures;
  /** The watches as h2 streams, 100 to a connection as client-go opens them: the budget's row. */
  watchH2?: WatchFigures;
  memory?: {
    idleRss: number;
    idleAnon: number;
    idleHeap?: number;
    points: {
      pods: number;
      /** The process that stored them, right after (the load's heap high-water included). */
      loadedRss: number;
      loadedHeap?: number;
      /** Restarted on the data, the pods' cache filled by a watch, nothing listed yet. */
      rss: number;
      heap?: number;
      /** (rss - idle RSS) / pods. */
      perPod: number;
      anon: number;
      /** (anon - idle anon) / pods: what the cache holds, without LMDB's mapped pages. */
      perPodAnon: number;
      /** The same process after one JSON list RV=0 (the cache memoises each pod's JSON). */
      rssAfterList: number;
      anonAfterList: number;
      heapAfterList?: number;
      perPodAfterList: number;
      perPodAnonAfterList: number;
      etcdRss?: number;
    }[];
  };
  profiles?: string[];
  notes: string[];
}

export interface BareFanoutRow {
  /** The watches were h2 streams (100 to a connection), not HTTP/1.1 connections. */
  h2?: boolean;
  watchers: number;
  updates: number;
  /** Updates written before the measured ones, not counted. */
  warmup?: number;
  rate: number;
  p50: number;
  p99: number;
  max: number;
  delivered: number;
  expected: number;
  /** The bare server's CPU time per socket write (one per watcher and event). */
  serverCpuUsPerWrite: number;
  /** Cores the receiving workers used. */
  clientCpu: number;
  other?: number;
}

export interface RunResult {
  date: string;
  commit: string;
  dirty: boolean;
  machine: {
    cpus: number;
    model: string;
    memoryBytes: number;
    node: string;
    platform: string;
    loadavgAtStart: number[];
  };
  options: Record<string, unknown>;
  ceilings: {
    bareGetH1?: LoadRow;
    bareGetH2?: LoadRow;
    embeddedWrites?: number;
    embeddedWritesOther?: number;
    /** The bare server sending one body of a pod list's size (per format), median of 5. */
    bareTransfer?: { format: 'json' | 'protobuf'; bytes: number; medianMs: number }[];
    /** First start with empty data and cert dirs (generates the CA and certificates). */
    firstStartWithCertsMs?: number;
    /** The bare server writing the watch scenario's events to as many HTTP/1.1 watchers. */
    bareFanout?: BareFanoutRow;
    /** The same over h2, 100 streams to a connection. */
    bareFanoutH2?: BareFanoutRow;
  };
  backends: BackendResult[];
  budget: BudgetLine[];
  durationS: number;
}

export interface BudgetLine {
  backend: string;
  item: string;
  target: string;
  measured: string;
  /** undefined: not measured in this run. */
  met: boolean | undefined;
  /** How far from the target, e.g. "3.4x over". */
  gap?: string;
}

export interface WatchFigures {
  h2: boolean;
  watchers: number;
  opened: number;
  updates: number;
  /** Updates before the measured ones, at the same rate, not counted. */
  warmup?: number;
  updateRate: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  delivered: number;
  expected: number;
  /** Cores (1 = one core busy) over the update phase and delivery. */
  apiserverCpu: number;
  /** apiserver CPU time per delivered event (one event to one watcher), in µs. */
  apiserverCpuUsPerEvent: number;
  etcdCpu?: number;
  clientCpu: number;
  putP50: number;
  putP99: number;
  /** The slowest 4 KB write-and-fdatasync on the data directories' disk during the row (ms). */
  fsyncWorstMs?: number;
  other?: number;
  errors: number;
  errorSamples?: string[];
}
