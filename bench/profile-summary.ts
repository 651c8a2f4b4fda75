// Summarises a V8 .cpuprofile (node --cpu-prof): the top functions by self
// time with file:line (mapped back to the TypeScript source through the build's
// source maps when there is one), their inclusive time, and self time per file
// and per package.
//   node dist/bench/profile-summary.js <file.cpuprofile> [--top 25] [--files 15] [--callers <function>]
//                                      [--sort self|total]
import { parseArgs } from 'node:util';
import { location, packageOf, type Profile, type ProfileNode, readProfile } from './lib/cpu-profile';

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
    const p = readProfile(file);
    console.log(`== ${file}`);
    const by = values.sort === 'total' ? 'total' : 'self';
    console.log(summarise(p, Number(values.top), Number(values.files), values.callers, by));
    console.log();
  }
}

if (require.main === module) main();
