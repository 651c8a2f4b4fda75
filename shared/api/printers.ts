// Server-side printing: which columns `kubectl get` shows for each built-in
// kind, and the cells of each row, as kube-apiserver renders them in a
// meta.k8s.io Table. Kinds without a printer of their own (roles, limit
// ranges, CRDs...) get the default Name / Created At columns.
import { appsPrinters } from './printers-apps';
import { clusterPrinters } from './printers-cluster';
import { corePrinters } from './printers-core';
import { eventPrinters } from './printers-events';
import { networkPrinters } from './printers-network';
import { podPrinters } from './printers-pods';
import { column, nameColumn, rfc3339, type Printer } from './printers-util';

export * from './printers-util';
export { formatHPAMetrics } from './printers-apps';
export { accessModes, loadBalancerAddresses, nodeRoles, servicePorts } from './printers-core';

/** The table of kinds without a printer: Name and the creation time as an RFC 3339 date. */
export const defaultPrinter: Printer = {
  columns: [nameColumn(), column('Created At', 'date', 'Time the object was created.')],
  cells: (obj) => [obj?.metadata?.name ?? '', rfc3339(obj?.metadata?.creationTimestamp)],
};

const printers = new Map<string, Printer>(
  Object.entries({
    ...podPrinters,
    ...corePrinters,
    ...eventPrinters,
    ...appsPrinters,
    ...networkPrinters,
    ...clusterPrinters,
  }),
);

/** The printer of a built-in kind ("" is the core group), or undefined when it uses the default. */
export function builtinPrinter(group: string, kind: string): Printer | undefined {
  return printers.get(`${group}/${kind}`);
}

/** The printer kube-apiserver uses for a kind: its own, or the default columns. */
export function printerFor(group: string, kind: string): Printer {
  return printers.get(`${group}/${kind}`) ?? defaultPrinter;
}

/** The group/kind keys that have their own printer ("/Pod", "apps/Deployment"...). */
export function printedKinds(): string[] {
  return [...printers.keys()];
}
