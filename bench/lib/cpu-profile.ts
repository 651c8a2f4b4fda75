// Reading a V8 .cpuprofile (node --cpu-prof): its types, and each frame's place in
// the TypeScript source through the build's source maps. Shared by
// bench/profile-summary.ts and the lone create's phase breakdown (phases.ts).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface Profile {
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

export function location(f: CallFrame): { where: string; file: string } {
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
export function packageOf(file: string): string {
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

export function readProfile(file: string): Profile {
  return JSON.parse(readFileSync(file, 'utf8')) as Profile;
}
