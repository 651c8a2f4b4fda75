// What the printer tests share: a fixed clock, durations, and a kind's cells and columns.
import { printerFor } from './printers';

export const NOW = Date.parse('2024-05-01T12:00:00Z');
export const ago = (ms: number) => new Date(NOW - ms).toISOString().replace('.000', '');
export const S = 1000;
export const M = 60 * S;
export const H = 60 * M;
export const D = 24 * H;

export const row = (group: string, kind: string, obj: any) => printerFor(group, kind).cells(obj, NOW);
export const names = (group: string, kind: string) => printerFor(group, kind).columns.map((c) => c.name);
export const wideNames = (group: string, kind: string) =>
  printerFor(group, kind)
    .columns.filter((c) => c.priority === 1)
    .map((c) => c.name);

/** Metadata of a namespaced object created three days before NOW unless told. */
export const meta = (name: string, created = ago(3 * D), extra: Record<string, unknown> = {}) => ({
  name,
  namespace: 'default',
  uid: 'u-' + name,
  resourceVersion: '100',
  creationTimestamp: created,
  ...extra,
});

/** Metadata of a cluster-scoped object created a day before NOW unless told. */
export const clusterMeta = (name: string, created = ago(D), extra: Record<string, unknown> = {}) => ({
  name,
  creationTimestamp: created,
  ...extra,
});
