// Tables of custom resources: Name plus the CRD version's
// additionalPrinterColumns, each cell read with a JSONPath. A version that
// declares no columns gets an Age column (as apiextensions-apiserver serves
// it); one that declares columns gets exactly those.
import { column, since, type Cell, type Printer, type TableColumnDefinition } from '../api/printers-util';
import { compileJSONPath, goFormat, JSONPathError, type CompiledJSONPath } from './jsonpath';

/** A CRD additionalPrinterColumns entry (apiextensions.k8s.io/v1). */
export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

const defaultColumns: PrinterColumn[] = [
  {
    name: 'Age',
    type: 'date',
    description: 'Time since the object was created.',
    jsonPath: '.metadata.creationTimestamp',
  },
];

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** A typed cell for a non-string column, or null when the value does not fit the type. */
function typedCell(type: string, value: unknown, now: number): Cell {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'string':
      return typeof value === 'string' ? value : null;
    case 'date':
      if (typeof value !== 'string') return null;
      if (value === '' || value === 'null') return '<unknown>';
      return RFC3339.test(value) ? since(value, now) : '<invalid>';
    default:
      return null;
  }
}

export interface CRDPrinter extends Printer {
  /** Set when a column's JSONPath did not parse: the columns before it are served, as Kubernetes does. */
  readonly error?: string;
}

/** The Table printer of one version of a CRD. Compile once per CRD version and reuse. */
export function crdPrinter(printerColumns: readonly PrinterColumn[] | null | undefined): CRDPrinter {
  const cols = printerColumns && printerColumns.length > 0 ? printerColumns : defaultColumns;
  const columns: TableColumnDefinition[] = [
    column('Name', 'string', 'Name of the object.', { format: 'name' }),
  ];
  const paths: CompiledJSONPath[] = [];
  const types: string[] = [];
  let error: string | undefined;
  for (const c of cols) {
    let path: CompiledJSONPath;
    try {
      path = compileJSONPath(c.jsonPath);
    } catch (e) {
      error = `unrecognized column definition ${JSON.stringify(c.jsonPath)}: ${(e as Error).message}`;
      break;
    }
    paths.push(path);
    types.push(c.type);
    columns.push(
      column(
        c.name,
        c.type,
        c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
        {
          format: c.format ?? '',
          priority: c.priority ?? 0,
        },
      ),
    );
  }
  return {
    columns,
    error,
    cells(obj, now) {
      const cells: Cell[] = new Array(paths.length + 1);
      cells[0] = obj?.metadata?.name ?? '';
      for (let i = 0; i < paths.length; i++) {
        let results: unknown[];
        try {
          results = paths[i].evaluate(obj);
        } catch (e) {
          if (!(e instanceof JSONPathError)) throw e;
          results = [];
        }
        // Simple paths select one value; like Kubernetes, only the first is shown.
        const value = results.length > 0 ? results[0] : undefined;
        if (value === undefined || value === null) cells[i + 1] = null;
        else cells[i + 1] = types[i] === 'string' ? goFormat(value) : typedCell(types[i], value, now);
      }
      return cells;
    },
  };
}
