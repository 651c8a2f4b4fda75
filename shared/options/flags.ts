// Declarative command-line flags with Kubernetes' names, types and defaults,
// turned into commander options. Every executable describes its flags as a
// table of FlagSpecs; help text shows the defaults the way Kubernetes prints them.
import { Command, Option } from 'commander';
import { formatDuration, parseDuration } from './duration';

export type FlagType =
  | 'string'
  | 'int'
  | 'float'
  | 'bool'
  /** Go duration; the value is in milliseconds. */
  | 'duration'
  /** Comma-separated list; repeated flags append. */
  | 'list'
  /** key=value pairs, comma-separated; repeated flags append. */
  | 'map'
  /** Repeatable single values (e.g. --tls-sni-cert-key). */
  | 'array';

export interface FlagSpec {
  /** The Kubernetes name without dashes, e.g. "secure-port". */
  name: string;
  type: FlagType;
  default?: string | number | boolean | string[] | Record<string, string>;
  help: string;
  hidden?: boolean;
  /** When set, using the flag prints this deprecation warning. */
  deprecated?: string;
  /** A one-letter short form, e.g. "v". */
  short?: string;
  /** Checks a parsed value; returns an error message or undefined. */
  validate?(value: any): string | undefined;
}

export type FlagValues = Record<string, any>;

/** The neutral spelling SPEC.md uses for a flag, accepted as a hidden alias. */
export function neutralAlias(name: string): string | undefined {
  const alias = name
    .replace(/kubelet/g, 'nodeagent')
    .replace(/etcd/g, 'store')
    .replace(/kube-api/g, 'cluster-api');
  return alias === name ? undefined : alias;
}

function describeDefault(spec: FlagSpec): string | undefined {
  const d = spec.default;
  if (d === undefined || d === '' || (Array.isArray(d) && d.length === 0)) return undefined;
  if (spec.type === 'duration') return formatDuration(d as number);
  if (Array.isArray(d)) return `[${d.join(',')}]`;
  if (typeof d === 'object')
    return `[${Object.entries(d)
      .map(([k, v]) => `${k}=${v}`)
      .join(',')}]`;
  return String(d);
}

function parserFor(spec: FlagSpec): (raw: string, prev: any) => any {
  const parse = parseValue(spec);
  // klog's "-v=2": commander hands the short form's value over with its "=".
  return spec.short
    ? (raw, prev) => parse(typeof raw === 'string' ? raw.replace(/^=/, '') : raw, prev)
    : parse;
}

function parseValue(spec: FlagSpec): (raw: string, prev: any) => any {
  const flag = `--${spec.name}`;
  const fail = (raw: string, why: string): never => {
    throw new Error(`invalid argument "${raw}" for "${flag}" flag: ${why}`);
  };
  switch (spec.type) {
    case 'string':
      return (raw) => raw;
    case 'int':
      return (raw) => {
        if (!/^[-+]?\d+$/.test(raw.trim()))
          fail(raw, 'strconv.ParseInt: parsing "' + raw + '": invalid syntax');
        return parseInt(raw, 10);
      };
    case 'float':
      return (raw) => {
        const n = Number(raw);
        if (raw.trim() === '' || Number.isNaN(n)) fail(raw, 'strconv.ParseFloat: invalid syntax');
        return n;
      };
    case 'bool':
      return (raw) => {
        if (
          raw === undefined ||
          raw === 'true' ||
          raw === '1' ||
          raw === 't' ||
          raw === 'T' ||
          raw === 'TRUE' ||
          raw === 'True'
        )
          return true;
        if (
          raw === 'false' ||
          raw === '0' ||
          raw === 'f' ||
          raw === 'F' ||
          raw === 'FALSE' ||
          raw === 'False'
        )
          return false;
        return fail(raw, 'strconv.ParseBool: parsing "' + raw + '": invalid syntax');
      };
    case 'duration':
      return (raw) => {
        try {
          return parseDuration(raw);
        } catch {
          return fail(raw, `time: invalid duration "${raw}"`);
        }
      };
    case 'list':
      return (raw, prev) => [
        ...(Array.isArray(prev) && prev !== spec.default ? prev : []),
        ...raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      ];
    case 'array':
      return (raw, prev) => [...(Array.isArray(prev) && prev !== spec.default ? prev : []), raw];
    case 'map':
      return (raw, prev) => {
        const out: Record<string, string> = { ...(prev && prev !== spec.default ? prev : {}) };
        for (const pair of raw.split(',')) {
          if (!pair.trim()) continue;
          const i = pair.indexOf('=');
          if (i <= 0) fail(raw, `${pair} must be formatted as key=value`);
          out[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
        }
        return out;
      };
  }
}

const attr = (name: string) => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Adds the flags to a commander command (with hidden neutral aliases). */
export function addFlags(cmd: Command, specs: FlagSpec[]): Command {
  for (const spec of specs) {
    const names = spec.short ? `-${spec.short}, --${spec.name}` : `--${spec.name}`;
    const arg = spec.type === 'bool' ? ' [bool]' : ' <value>';
    const opt = new Option(
      names + arg,
      spec.help + (spec.deprecated ? ` (DEPRECATED: ${spec.deprecated})` : ''),
    ).argParser(parserFor(spec));
    if (spec.default !== undefined) opt.default(spec.default, describeDefault(spec));
    if (spec.hidden) opt.hideHelp();
    opt.attributeName = () => attr(spec.name);
    cmd.addOption(opt);
    const alias = neutralAlias(spec.name);
    if (alias) {
      const aliasOpt = new Option(`--${alias}${arg}`).argParser(parserFor(spec)).hideHelp();
      aliasOpt.attributeName = () => `alias:${spec.name}`;
      cmd.addOption(aliasOpt);
    }
  }
  return cmd;
}

/**
 * Reads parsed values keyed by camelCase flag name, folding aliases in,
 * running validators, and returning deprecation warnings for flags used.
 */
export function readFlags(cmd: Command, specs: FlagSpec[]): { values: FlagValues; warnings: string[] } {
  const raw = cmd.opts();
  const values: FlagValues = {};
  const warnings: string[] = [];
  const errors: string[] = [];
  for (const spec of specs) {
    const key = attr(spec.name);
    let v = raw[key];
    const aliased = raw[`alias:${spec.name}`];
    if (aliased !== undefined && cmd.getOptionValueSource(key) !== 'cli') v = aliased;
    if (spec.type === 'bool' && v === undefined) v = spec.default ?? false;
    values[key] = v;
    const used = cmd.getOptionValueSource(key) === 'cli' || aliased !== undefined;
    if (used && spec.deprecated) warnings.push(`Flag --${spec.name} has been deprecated, ${spec.deprecated}`);
    if (spec.validate && v !== undefined) {
      const err = spec.validate(v);
      if (err) errors.push(`--${spec.name}: ${err}`);
    }
  }
  if (errors.length) throw new Error(errors.join('\n'));
  return { values, warnings };
}

/** True when the user set the flag on the command line. */
export function flagWasSet(cmd: Command, name: string): boolean {
  return cmd.getOptionValueSource(attr(name)) === 'cli' || cmd.opts()[`alias:${name}`] !== undefined;
}
