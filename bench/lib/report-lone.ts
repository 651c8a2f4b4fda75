// The one-client rows of a backend's table, their budget lines, and the phase table of
// --profile's lone creates (issue 39).
import type { BackendResult, LoneRow } from './results';
import { num, pct } from './stats';

/** kube-apiserver v1.20.2 on etcd 3.4.23, one client, same machine and generator (issue 39). */
export const LONE_REFERENCE = { createP50Ms: 3.5, createRate: 262 };

export const LONE_BUDGET = { createP50Ms: 3.0, getP50Ms: 1.0 };

const verbs = (x: LoneRow) =>
  (['create', 'get', 'update', 'delete'] as const)
    .map((v) => `${v} ${num(x.verbs[v].p50)} / ${num(x.verbs[v].p99)}`)
    .join(', ');

/** [what, ours, ref, budget, other] per row. */
export function loneRows(r: BackendResult): [string, string, string, string, number | undefined][] {
  const out: [string, string, string, string, number | undefined][] = [];
  for (const x of r.lone?.rows ?? []) {
    const cpu =
      x.apiserverCpuUsPerChain === undefined
        ? ''
        : `; apiserver ${pct(x.apiserverCpu)} CPU, ${num(x.apiserverCpuUsPerChain / 4, 0)} µs per request`;
    out.push([
      `one client, ${x.h2 ? 'h2' : 'HTTP/1.1'}: p50 / p99 ms per verb (${num(x.chains, 0)} of each)`,
      `${verbs(x)}${cpu}${r.lone?.commitFloor && !x.h2 ? `; the disk's floor for a commit p50 ${num(r.lone.commitFloor.p50)} ms` : ''}${x.errors ? ` (${x.errors} errors)` : ''}`,
      x.h2 ? '' : `create p50 ${num(LONE_REFERENCE.createP50Ms)} ms (issue 39)`,
      `create p50 ≤ ${num(LONE_BUDGET.createP50Ms, 1)} ms, get p50 ≤ ${num(LONE_BUDGET.getP50Ms, 1)} ms`,
      x.other,
    ]);
  }
  return out;
}

/** [item, target, measured, met] per budget line. */
export function loneBudget(r: BackendResult): [string, string, string, boolean][] {
  const out: [string, string, string, boolean][] = [];
  for (const x of r.lone?.rows ?? []) {
    const proto = x.h2 ? 'h2' : 'HTTP/1.1';
    out.push([
      `create p50, one client, ${proto}`,
      `≤ ${LONE_BUDGET.createP50Ms} ms`,
      `${num(x.verbs.create.p50)} ms`,
      x.verbs.create.p50 <= LONE_BUDGET.createP50Ms,
    ]);
    out.push([
      `get p50, one client, ${proto}`,
      `≤ ${LONE_BUDGET.getP50Ms} ms`,
      `${num(x.verbs.get.p50)} ms`,
      x.verbs.get.p50 <= LONE_BUDGET.getP50Ms,
    ]);
  }
  return out;
}

/** "lone create 3.1/0.4 ms" for the history line. */
export function loneSummary(r: BackendResult): string | undefined {
  const h1 = r.lone?.rows.find((x) => !x.h2);
  if (!h1) return undefined;
  const h2 = r.lone?.rows.find((x) => x.h2);
  return `one client create/get p50 ${num(h1.verbs.create.p50)}/${num(h1.verbs.get.p50)} ms${h2 ? ` (h2 ${num(h2.verbs.create.p50)}/${num(h2.verbs.get.p50)})` : ''}`;
}

export function loneProfileTable(r: BackendResult): string {
  const p = r.lone?.profile;
  if (!p?.breakdown) return '';
  const total = p.breakdown.reduce((s, x) => s + x.usPerOp, 0);
  const w = Math.max(...p.breakdown.map((x) => x.phase.length));
  const lines = p.breakdown.map(
    (x) =>
      `  ${x.phase.padEnd(w)}  ${num(x.usPerOp, 0).padStart(6)} µs  ${pct(x.usPerOp / (total || 1)).padStart(5)}`,
  );
  return (
    `${r.backend}: where a lone create's time goes (${num(p.creates, 0)} creates one after another on a ` +
    `profiled apiserver; client-side p50 ${num(p.p50)} ms, mean ${num(p.meanMs)} ms; the apiserver's ` +
    `main thread per create, from ${p.file})\n${lines.join('\n')}\n  ${'sum'.padEnd(w)}  ${num(total, 0).padStart(6)} µs` +
    (r.lone?.fsync && r.lone.commitFloor
      ? `\n  the disk alone (measured apart): 4 KB rewrite + fdatasync p50 ${num(r.lone.fsync.p50)} / p99 ${num(r.lone.fsync.p99)} ms; ` +
        `an LMDB-shaped commit (page appended + fdatasync, then the meta page O_DSYNC) p50 ${num(r.lone.commitFloor.p50)} / p99 ${num(r.lone.commitFloor.p99)} ms`
      : '')
  );
}
