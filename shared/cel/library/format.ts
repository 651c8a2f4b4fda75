// Kubernetes' CEL format library: format.<name>() / format.named(name) and
// NamedFormat.validate(string) -> optional list of errors, over the same
// name rules the apiserver validates with.
import type { Environment } from '@marcbachmann/cel-js';
import { Optional } from '@marcbachmann/cel-js';
import {
  isCIdentifier,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
} from '../../api/validation/names';

type Check = (s: string) => string[];

export class CelNamedFormat {
  constructor(
    readonly name: string,
    readonly check: Check,
  ) {}
}

class FormatNamespace {}

function uri(s: string): string[] {
  return /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s) || s.startsWith('/') ? [] : ['invalid URI'];
}
function uuid(s: string): string[] {
  return /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(s)
    ? []
    : ['invalid UUID'];
}
function date(s: string): string[] {
  return /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)) ? [] : ['invalid date'];
}
function datetime(s: string): string[] {
  return /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s) &&
    !Number.isNaN(Date.parse(s))
    ? []
    : ['invalid datetime'];
}

const FORMATS: Record<string, Check> = {
  dns1123Label: isDNS1123Label,
  dns1123Subdomain: isDNS1123Subdomain,
  dns1035Label: isDNS1035Label,
  qualifiedName: isQualifiedName,
  dns1123LabelPrefix: (s) => isDNS1123Label(s.replace(/-$/, 'a')),
  dns1123SubdomainPrefix: (s) => isDNS1123Subdomain(s.replace(/[-.]$/, 'a')),
  dns1035LabelPrefix: (s) => isDNS1035Label(s.replace(/-$/, 'a')),
  labelValue: isValidLabelValue,
  uri,
  uuid,
  byte: (s) => (/^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0 ? [] : ['invalid base64']),
  date,
  datetime,
  cIdentifier: isCIdentifier,
};

export function registerFormat(env: Environment): void {
  const NS = 'kubernetes.FormatNamespace';
  const F = 'kubernetes.NamedFormat';
  env.registerType(NS, FormatNamespace);
  env.registerType(F, CelNamedFormat);
  env.registerConstant('format', NS, new FormatNamespace());
  for (const [name, check] of Object.entries(FORMATS))
    env.registerFunction(`${NS}.${name}(): ${F}`, () => new CelNamedFormat(name, check));
  env.registerFunction(`${NS}.named(string): optional<${F}>`, (_ns: unknown, name: string) =>
    FORMATS[name] ? Optional.of(new CelNamedFormat(name, FORMATS[name])) : Optional.none(),
  );
  env.registerFunction(`${F}.validate(string): optional<list<string>>`, (f: CelNamedFormat, s: string) => {
    const errs = f.check(s);
    return errs.length ? Optional.of(errs) : Optional.none();
  });
}
