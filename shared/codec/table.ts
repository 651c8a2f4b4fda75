// meta.k8s.io Table (v1 and v1beta1): what `kubectl get` asks for with
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` and prints as is.
// One row per object; each row carries the object as includeObject asks:
// Metadata (default, a PartialObjectMetadata), Object (the whole object) or
// None (null, as Kubernetes encodes an empty row object).
import { fieldErrorMessage, invalid } from '../api/field-errors';
import type { Cell, Printer, TableColumnDefinition, TableRowCondition } from '../api/printers-util';
import { badRequest } from '../api/status';
import { isList, listMetaOf, metaAPIVersion, partialOf, type ListMeta, type MetaVersion } from './partial';

export type { Cell, Printer, TableColumnDefinition, TableRowCondition } from '../api/printers-util';
export type { MetaVersion } from './partial';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableRow {
  cells: Cell[];
  conditions?: TableRowCondition[];
  /** PartialObjectMetadata, the object, or null for includeObject=None. */
  object: unknown;
}

export interface Table {
  kind: 'Table';
  apiVersion: string;
  metadata: ListMeta;
  /** null when headers are suppressed (watch events after the first), as Kubernetes encodes it. */
  columnDefinitions: readonly TableColumnDefinition[] | null;
  rows: TableRow[];
}

export interface TableOptions {
  /** meta.k8s.io version of the Table and of the PartialObjectMetadata rows. Default v1. */
  version?: MetaVersion;
  /** Already validated (see parseIncludeObject). Default Metadata. */
  includeObject?: IncludeObject;
  /** Leave the column definitions out (watch events after the first). */
  noHeaders?: boolean;
  /** Clock for Age cells, epoch ms; Date.now() when absent. */
  now?: number;
}

/**
 * The includeObject query parameter, checked as Kubernetes checks TableOptions:
 * absent or empty means Metadata, anything else but the three values is a 400.
 */
export function parseIncludeObject(value: string | null | undefined): IncludeObject {
  if (value === undefined || value === null || value === '') return 'Metadata';
  if (value === 'Metadata' || value === 'Object' || value === 'None') return value;
  const err = invalid('includeObject', value, "must be 'Metadata', 'Object', 'None', or empty");
  throw badRequest(`Unable to convert to Table as requested: ${fieldErrorMessage(err)}`);
}

function rowOf(
  printer: Printer,
  obj: any,
  include: IncludeObject,
  version: MetaVersion,
  now: number,
): TableRow {
  const cells = printer.cells(obj, now);
  const object = include === 'Metadata' ? partialOf(obj, version) : include === 'Object' ? obj : null;
  const conditions = printer.conditions?.(obj);
  // Key order follows Go's encoding: cells, conditions, object.
  return conditions ? { cells, conditions, object } : { cells, object };
}

/**
 * A Table of one object (one row, resourceVersion of the object) or of a list
 * (a row per item; resourceVersion, continue and remainingItemCount of the list).
 */
export function toTable(objOrList: unknown, printer: Printer, opts: TableOptions = {}): Table {
  const version = opts.version ?? 'v1';
  const include = opts.includeObject ?? 'Metadata';
  const now = opts.now ?? Date.now();
  let metadata: ListMeta;
  let rows: TableRow[];
  if (isList(objOrList)) {
    metadata = listMetaOf(objOrList);
    const items = printer.order ? printer.order(objOrList.items) : objOrList.items;
    rows = new Array<TableRow>(items.length);
    for (let i = 0; i < items.length; i++) rows[i] = rowOf(printer, items[i], include, version, now);
  } else {
    metadata = {};
    const rv = (objOrList as any)?.metadata?.resourceVersion;
    if (rv) metadata.resourceVersion = rv;
    rows = [rowOf(printer, objOrList, include, version, now)];
  }
  return {
    kind: 'Table',
    apiVersion: metaAPIVersion(version),
    metadata,
    columnDefinitions: opts.noHeaders && !printer.alwaysHeaders ? null : printer.columns,
    rows,
  };
}

export interface WatchTableOptions extends Omit<TableOptions, 'noHeaders' | 'now'> {
  /** Clock for Age cells, epoch ms. */
  clock?: () => number;
}

/** A Status (the object of a watch ERROR event) is never transformed. */
const isStatus = (obj: unknown): boolean =>
  (obj as { kind?: string } | null)?.kind === 'Status' &&
  (obj as { apiVersion?: string }).apiVersion === 'v1';

/**
 * The per-event transformation of a Table watch: each event's object becomes a
 * one-row Table, and only the first carries the column definitions. Like
 * Kubernetes, a Status or an object that cannot be rendered goes out as is.
 */
export function tableWatchEncoder(printer: Printer, opts: WatchTableOptions = {}): (obj: unknown) => unknown {
  const clock = opts.clock ?? Date.now;
  let first = true;
  return (obj) => {
    const noHeaders = !first;
    first = false;
    if (isStatus(obj)) return obj;
    try {
      return toTable(obj, printer, { ...opts, noHeaders, now: clock() });
    } catch {
      return obj;
    }
  };
}
