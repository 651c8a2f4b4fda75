// Where the apiserver's time of a lone request goes, by phase, from a CPU profile of
// it (node --cpu-prof) and the window in which the requests ran: every sample in the
// window is given to the innermost frame of its stack that belongs to a phase (a phase
// is a set of source folders), and the idle samples are what the thread waited (on the
// store's commit and fsyncs, on the client, on the network). Wall clock per request
// minus the busy time is that wait; the fsync floor is measured apart (fsyncFloor).
import { type CallFrame, location, type Profile } from './cpu-profile';

interface Rule {
  phase: string;
  /** A frame belongs to the phase when its source file starts with one of these. */
  files: string[];
  /** ...and, when given, its function name matches. */
  fn?: RegExp;
  /**
   * Shared plumbing (Node's streams and sockets, HTTP/2 framing): the phase of the nearest
   * caller above that belongs to one decides (the etcd client's writes are the store's), this
   * one only when none does.
   */
  weak?: boolean;
}

const STORE = 'store write (commit; the fsyncs run off this thread)';
const RESPONSE = 'response write (HTTP, TLS)';
const REQUEST = 'request read, routing, filters';

/** Tried in order on each frame; more specific rules first. */
const RULES: Rule[] = [
  { phase: 'GC', files: [], fn: /^\(garbage collector\)$/ },
  {
    phase: 'parse (body decode, unknown fields)',
    files: [
      'apiserver/endpoints/decode.ts',
      'shared/api/field-validation.ts',
      'shared/api/unknown-fields.ts',
      'shared/codec/json-int64.ts',
    ],
    fn: /^(?!stringify|encode|write|marshal)/i,
  },
  { phase: 'authn/authz', files: ['apiserver/auth/authn/', 'apiserver/auth/authz/'] },
  { phase: 'admission', files: ['apiserver/auth/admission/'] },
  { phase: 'managedFields', files: ['apiserver/apply/'] },
  {
    phase: 'validation',
    files: [
      'shared/api/validation/',
      'apiserver/registry/meta-validation.ts',
      'apiserver/registry/strategies/',
      'node_modules/ajv',
    ],
  },
  {
    phase: 'encode (storage and answer)',
    files: [
      'shared/codec/',
      'apiserver/registry/storage-codec.ts',
      'apiserver/endpoints/respond.ts',
      'apiserver/endpoints/encoding.ts',
    ],
  },
  { phase: 'watch cache', files: ['apiserver/storage/cacher/'] },
  {
    phase: STORE,
    files: [
      'apiserver/storage/',
      'node_modules/lmdb',
      'node_modules/msgpackr',
      'shared/http2/client-session.ts',
    ],
  },
  { phase: 'registry (defaults, strategy, metadata)', files: ['apiserver/registry/', 'shared/api/'] },
  {
    phase: RESPONSE,
    files: [
      'apiserver/server/http.ts',
      'apiserver/server/h2-exchange.ts',
      'shared/http2/server-session.ts',
      'node:_http_outgoing',
    ],
  },
  {
    phase: REQUEST,
    files: ['apiserver/server/', 'apiserver/endpoints/', 'node:_http_server', 'node:_http_common'],
  },
  {
    phase: RESPONSE,
    weak: true,
    files: [
      'shared/http2/',
      'node:net',
      'node:internal/stream_base_commons',
      'node:internal/streams/writable',
      'node:_tls_wrap',
    ],
  },
  { phase: REQUEST, weak: true, files: ['node:internal/streams/readable'] },
];

export const IDLE = '(idle: waiting on commit + fsync, client, network)';
const OTHER = 'other (event loop, promises, metrics, logging)';

export interface PhaseRow {
  phase: string;
  /** Milliseconds of the window in this phase. */
  ms: number;
  /** Per request, in µs. */
  usPerOp: number;
}

function ruleOf(f: CallFrame, file: string): Rule | undefined {
  for (const r of RULES) {
    if (r.files.length && !r.files.some((p) => file.startsWith(p) || file.includes(`/${p}`))) continue;
    if (r.fn && !r.fn.test(f.functionName)) continue;
    return r;
  }
  return undefined;
}

/**
 * Samples of `p` between fromUs and toUs (the profiled process's monotonic clock in µs,
 * which is process.hrtime's on the same machine), by phase, per one of `ops` requests.
 */
export function phaseBreakdown(p: Profile, fromUs: number, toUs: number, ops: number): PhaseRow[] {
  const parent = new Map<number, number>();
  const frames = new Map<number, { f: CallFrame; rule: Rule | undefined }>();
  for (const n of p.nodes) {
    for (const c of n.children ?? []) parent.set(c, n.id);
    frames.set(n.id, { f: n.callFrame, rule: ruleOf(n.callFrame, location(n.callFrame).file) });
  }
  const byPhase = new Map<string, number>();
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    const dt = p.timeDeltas[i + 1] ?? 0; // a sample's time lasts until the next one
    if (t < fromUs || t >= toUs) continue;
    const leaf = frames.get(p.samples[i])!;
    let phase: string | undefined;
    let fallback: string | undefined;
    if (leaf.f.functionName === '(idle)') phase = IDLE;
    for (let n: number | undefined = p.samples[i]; !phase && n !== undefined; n = parent.get(n)) {
      const r = frames.get(n)!.rule;
      if (r?.weak) fallback ??= r.phase;
      else if (r) phase = r.phase;
    }
    phase ??= fallback ?? OTHER;
    byPhase.set(phase, (byPhase.get(phase) ?? 0) + dt);
  }
  return [...byPhase]
    .map(([phase, us]) => ({ phase, ms: us / 1000, usPerOp: us / Math.max(1, ops) }))
    .sort((a, b) => (a.phase === IDLE ? 1 : b.phase === IDLE ? -1 : b.ms - a.ms));
}
