// Status conditions of workload objects: set (keeping lastTransitionTime when
// the status does not change), find, remove.

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastUpdateTime?: string;
  lastProbeTime?: string | null;
  [k: string]: unknown;
}

export function getCondition(status: any, type: string): Condition | undefined {
  return (status?.conditions ?? []).find((c: Condition) => c.type === type);
}

/**
 * Sets cond in status.conditions. When a condition of the type exists with the
 * same status and reason, nothing changes (returns false); with the same status
 * its lastTransitionTime is kept.
 */
export function setCondition(status: any, cond: Condition): boolean {
  const conditions: Condition[] = status.conditions ?? [];
  const cur = conditions.find((c) => c.type === cond.type);
  if (cur && cur.status === cond.status && cur.reason === cond.reason && cur.message === cond.message)
    return false;
  if (cur && cur.status === cond.status && cur.lastTransitionTime)
    cond.lastTransitionTime = cur.lastTransitionTime;
  status.conditions = [...conditions.filter((c) => c.type !== cond.type), cond];
  return true;
}

export function removeCondition(status: any, type: string): boolean {
  const conditions: Condition[] = status.conditions ?? [];
  if (!conditions.some((c) => c.type === type)) return false;
  status.conditions = conditions.filter((c) => c.type !== type);
  if (!status.conditions.length) delete status.conditions;
  return true;
}
