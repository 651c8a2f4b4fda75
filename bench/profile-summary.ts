// Summarises a V8 .cpuprofile (node --cpu-prof): the top functions by self
// time with file:line (mapped back to the TypeScript source through the build's
// source maps when there is one), their inclusive time, and self time per file
// and per package.
//   node dist/bench/profile-summary.js <file.cpuprofile> [--top 25] [--files 15] [--callers <function>]
//                                      [--sort self|total]
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

// ---- source maps (mappings of "version 3", segments in base64 VLQ) ----------------

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_VALUE = new Map([...B64].map((c, i) => [c, i]));

interface Segment {
  col: number;
  source: number;
  line: number;
}

class SourceMap {
  private readonly lines: Segment[][] = [];
  readonly sources: string[];

  constructor(file: string) {
    const m = JSON.parse(readFileSync(file, 'utf8'));
    const base = resolve(dirname(file), m.sourceRoot ?? '');
    this.sources = (m.sources as string[]).map((s) => resolve(base, s));
    let source = 0;
    let line = 0;
    for (const text of (m.mappings as string).split(';')) {
      const segs: Segment[] = [];
      let col = 0;
      for (const seg of text.split(',')) {
        if (!seg) continue;
        const v = decodeVLQ(seg);
        col += v[0];
        if (v.length >= 4) {
          source += v[1];
          line += v[2];
          segs.push({ col, source, line });
        }
      }
      this.lines.push(segs);
    }
  }

  /** Original [file, 0-based line] of a 0-based generated position. */
  lookup(line: number, col: number): [string, number] | undefined {
    const segs = this.lines[line];
    if (!segs?.length) return undefined;
    let best = segs[0];
    for (const s of segs) if (s.col <= col) best = s;
    return [this.sources[best.source], best.line];
  }
}

function decodeVLQ(seg: string): number[] {
  const out: number[] = [];
  let value = 0;
  let shift = 0;
  for (const c of seg) {
    const d = B64_VALUE.get(c) ?? 0;
    value += (d & 31) << shift;
    if (d & 32) shift += 5;
    else {
      out.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return out;
}

const maps = new Map<string, SourceMap | null>();

function mapFor(jsFile: string): SourceMap | null {
  let m = maps.get(jsFile);
  if (m === undefined) {
    try {
      m = existsSync(`${jsFile}.map`) ? new SourceMap(`${jsFile}.map`) : null;
    } catch {
      m = null;
    }
    maps.set(jsFile, m);
  }
  return m;
}

// ---- locations ----------------------------------------------------------------------

const cwd = process.cwd();

function location(f: CallFrame): { where: string; file: string } {
  if (!f.url) return { where: '', file: '(native)' };
  let file = f.url;
  if (file.startsWith('file://')) file = fileURLToPath(file);
  if (file.startsWith('/')) {
    const sm = mapFor(file);
    const hit = sm?.lookup(f.lineNumber, f.columnNumber);
    const shown = hit ? hit[0] : file;
    const line = hit ? hit[1] : f.lineNumber;
    const rel = relative(cwd, shown);
    const name = rel.startsWith('..') ? shown : rel;
    return { where: `${name}:${line + 1}`, file: name };
  }
  return { where: `${file}:${f.lineNumber + 1}`, file };
}

/** node_modules/<pkg>, node:internal, or the top folder of our tree. */
function packageOf(file: string): string {
  const nm = file.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = file.slice(nm + 'node_modules/'.length).split('/');
    return `node_modules/${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (file.startsWith('node:')) return 'node: (core)';
  if (file.startsWith('(')) return file;
  const parts = file.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0];
}

// ---- summary ------------------------------------------------------------------------

interface Fn {
  name: string;
  where: string;
  file: string;
  self: number;
  total: number;
}

export function summarise(
  p: Profile,
  top = 25,
  files = 15,
  callersOf?: string,
  by: 'self' | 'total' = 'self',
): string {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of p.nodes) byId.set(n.id, n);
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const fns = new Map<string, Fn>();
  const keyOf = new Map<number, string>();
  for (const n of p.nodes) {
    const f = n.callFrame;
    const loc = location(f);
    const name = f.functionName || (f.url ? '(anonymous)' : '(unknown)');
    const key = `${name}@${loc.where}`;
    keyOf.set(n.id, key);
    if (!fns.has(key)) fns.set(key, { name, where: loc.where, file: loc.file, self: 0, total: 0 });
  }

  let all = 0;
  const special = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const dt = (p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0) / 1000; // ms; a sample's time is until the next one
    const id = p.samples[i];
    all += dt;
    const leaf = fns.get(keyOf.get(id)!)!;
    leaf.self += dt;
    if (!leaf.where && leaf.name.startsWith('(')) special.set(leaf.name, (special.get(leaf.name) ?? 0) + dt);
    const seen = new Set<string>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const k = keyOf.get(n)!;
      if (seen.has(k)) continue;
      seen.add(k);
      fns.get(k)!.total += dt;
    }
  }
  // Self time of functions named callersOf, by the chain of their nearest callers (3 frames).
  const callers = new Map<string, number>();
  if (callersOf) {
    for (let i = 0; i < p.samples.length; i++) {
      const dt = (p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0) / 1000;
      const leaf = fns.get(keyOf.get(p.samples[i])!)!;
      if (leaf.name !== callersOf) continue;
      const chain: string[] = [];
      for (let n = parent.get(p.samples[i]); n !== undefined && chain.length < 3; n = parent.get(n)) {
        const f = fns.get(keyOf.get(n)!)!;
        chain.push(`${f.name} ${f.where}`);
      }
      const k = chain.join(' < ');
      callers.set(k, (callers.get(k) ?? 0) + dt);
    }
  }
  const idle = special.get('(idle)') ?? 0;
  const busy = all - idle;
  const pctOf = (x: number, of: number) => `${((100 * x) / (of || 1)).toFixed(1)}%`;
  const out: string[] = [];
  out.push(
    `sampled ${(all / 1000).toFixed(2)} s: busy ${(busy / 1000).toFixed(2)} s (${pctOf(busy, all)}), ` +
      [...special].map(([k, v]) => `${k} ${(v / 1000).toFixed(2)} s`).join(', '),
  );
  out.push(
    `\ntop ${top} functions by ${by} time (% of busy time; total = inclusive, recursion counted once)`,
  );
  const ranked = [...fns.values()]
    .filter((f) => f.name !== '(idle)' && (by === 'self' || f.where))
    .sort((a, b) => (by === 'self' ? b.self - a.self : b.total - a.total));
  const rows = ranked
    .slice(0, top)
    .map((f, i) => [
      String(i + 1),
      f.self.toFixed(0),
      pctOf(f.self, busy),
      pctOf(f.total, busy),
      f.name,
      f.where,
    ]);
  out.push(grid(['#', 'self ms', 'self', 'total', 'function', 'file:line'], rows));

  const byFile = new Map<string, number>();
  const byPkg = new Map<string, number>();
  for (const f of fns.values()) {
    if (f.name === '(idle)') continue;
    byFile.set(f.file, (byFile.get(f.file) ?? 0) + f.self);
    const pk = packageOf(f.file);
    byPkg.set(pk, (byPkg.get(pk) ?? 0) + f.self);
  }
  const sorted = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => [v.toFixed(0), pctOf(v, busy), k]);
  out.push(`\nself time by file (top ${files})`);
  out.push(grid(['self ms', 'self', 'file'], sorted(byFile, files)));
  out.push('\nself time by package / top folder');
  out.push(grid(['self ms', 'self', 'package'], sorted(byPkg, 20)));
  if (callersOf) {
    out.push(`\ncallers of ${callersOf} (self time by caller chain)`);
    out.push(grid(['self ms', 'self', 'called from'], sorted(callers, 15)));
  }
  return out.join('\n');
}

function grid(header: string[], rows: string[][]): string {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const right = (i: number) => i < header.length - 2 || header.length <= 3;
  const fmt = (r: string[]) =>
    r
      .map((c, i) => (right(i) && i < header.length - 1 ? c.padStart(w[i]) : c.padEnd(w[i])))
      .join('  ')
      .trimEnd();
  return [fmt(header), ...rows.map(fmt)].join('\n');
}

function main(): void {
  const { values, positionals } = parseArgs({
    options: {
      top: { type: 'string', default: '25' },
      files: { type: 'string', default: '15' },
      callers: { type: 'string' },
      sort: { type: 'string', default: 'self' },
    },
    allowPositionals: true,
  });
  if (!positionals.length) {
    console.error(
      'usage: node dist/bench/profile-summary.js <file.cpuprofile>... [--top 25] [--files 15] [--callers <function>] [--sort self|total]',
    );
    process.exit(2);
  }
  for (const file of positionals) {
    const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
    console.log(`== ${file}`);
    const by = values.sort === 'total' ? 'total' : 'self';
    console.log(summarise(p, Number(values.top), Number(values.files), values.callers, by));
    console.log();
  }
}

if (require.main === module) main();
