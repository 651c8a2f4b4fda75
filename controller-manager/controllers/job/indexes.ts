// Completion indexes of Indexed Jobs: the annotation/label on pods and the
// "1,3-5" form of status.completedIndexes.

export const COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';

/** The pod's completion index, or -1. */
export function completionIndex(pod: { metadata: { annotations?: Record<string, string> } }): number {
  const v = pod.metadata.annotations?.[COMPLETION_INDEX];
  if (v === undefined || !/^\d+$/.test(v)) return -1;
  return Number(v);
}

/** Parses "1,3-5" (indexes below completions only). */
export function parseIndexes(s: string | undefined, completions: number): Set<number> {
  const out = new Set<number>();
  if (!s) return out;
  for (const part of s.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const first = Number(m[1]);
    const last = m[2] !== undefined ? Number(m[2]) : first;
    for (let i = first; i <= last && i < completions; i++) out.add(i);
  }
  return out;
}

/** Formats indexes as "1,3-5" (consecutive runs as first-last). */
export function formatIndexes(set: Set<number>): string {
  const sorted = [...set].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}
