// Name and value format checks with the exact messages Kubernetes prints
// (k8s.io/apimachinery/pkg/util/validation): users and tools match on them.
import { isIP } from 'node:net';

export const DNS1123_LABEL_MAX = 63;
export const DNS1123_SUBDOMAIN_MAX = 253;
export const DNS1035_LABEL_MAX = 63;
export const QUALIFIED_NAME_MAX = 63;
export const LABEL_VALUE_MAX = 63;

export const maxLenError = (n: number) => `must be no more than ${n} characters`;
export const emptyError = () => 'must be non-empty';
export const inclusiveRangeError = (lo: number, hi: number) => `must be between ${lo} and ${hi}, inclusive`;

/** Kubernetes' RegexError: note the doubled space between examples, kept on purpose. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let s = msg + ' (e.g. ';
  examples.forEach((e, i) => {
    if (i > 0) s += ' or ';
    s += `'${e}', `;
  });
  return s + `regex used for validation is '${fmt}')`;
}

const anchored = (fmt: string) => new RegExp(`^(?:${fmt})$`);

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QNAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QNAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${QNAME_FMT})?`;
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const WILDCARD_FMT = `\\*\\.${DNS1123_SUBDOMAIN_FMT}`;
const WILDCARD_MSG =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character";
const CONFIG_KEY_FMT = '[-._a-zA-Z0-9]+';
const CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
const PERCENT_FMT = '[0-9]+%';
const PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%'";
const C_IDENT_FMT = '[A-Za-z_][A-Za-z0-9_]*';
const C_IDENT_MSG =
  "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'";

const dns1123LabelRe = anchored(DNS1123_LABEL_FMT);
const dns1123SubdomainRe = anchored(DNS1123_SUBDOMAIN_FMT);
const dns1035LabelRe = anchored(DNS1035_LABEL_FMT);
const qnameRe = anchored(QNAME_FMT);
const labelValueRe = anchored(LABEL_VALUE_FMT);
const wildcardRe = anchored(WILDCARD_FMT);
const configKeyRe = anchored(CONFIG_KEY_FMT);
const percentRe = anchored(PERCENT_FMT);
const cIdentRe = anchored(C_IDENT_FMT);

export function isDNS1123Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > DNS1123_LABEL_MAX) errs.push(maxLenError(DNS1123_LABEL_MAX));
  if (!dns1123LabelRe.test(v)) {
    // A valid subdomain that is not a label can only be failing on its dots.
    if (dns1123SubdomainRe.test(v)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

export function isDNS1123Subdomain(v: string): string[] {
  const errs: string[] = [];
  if (v.length > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!dns1123SubdomainRe.test(v))
    errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

export function isDNS1035Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > DNS1035_LABEL_MAX) errs.push(maxLenError(DNS1035_LABEL_MAX));
  if (!dns1035LabelRe.test(v))
    errs.push(regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  return errs;
}

export function isWildcardDNS1123Subdomain(v: string): string[] {
  const errs: string[] = [];
  if (v.length > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!wildcardRe.test(v)) errs.push(regexError(WILDCARD_MSG, WILDCARD_FMT, '*.example.com'));
  return errs;
}

export function isQualifiedName(v: string): string[] {
  const errs: string[] = [];
  const parts = v.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errs.push('prefix part ' + emptyError());
    else for (const m of isDNS1123Subdomain(prefix)) errs.push('prefix part ' + m);
  } else {
    return [
      'a qualified name ' +
        regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc') +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push('name part ' + emptyError());
  else if (name.length > QUALIFIED_NAME_MAX) errs.push('name part ' + maxLenError(QUALIFIED_NAME_MAX));
  if (!qnameRe.test(name))
    errs.push('name part ' + regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc'));
  return errs;
}

export function isValidLabelValue(v: string): string[] {
  const errs: string[] = [];
  if (v.length > LABEL_VALUE_MAX) errs.push(maxLenError(LABEL_VALUE_MAX));
  if (!labelValueRe.test(v))
    errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

export function isConfigMapKey(v: string): string[] {
  const errs: string[] = [];
  if (v.length > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!configKeyRe.test(v))
    errs.push(regexError(CONFIG_KEY_MSG, CONFIG_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  if (v === '.') errs.push("must not be '.'");
  else if (v === '..') errs.push("must not be '..'");
  else if (v.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

export function isCIdentifier(v: string): string[] {
  return cIdentRe.test(v) ? [] : [regexError(C_IDENT_MSG, C_IDENT_FMT, 'my_name', 'MY_NAME', 'MyName')];
}

export const isValidPercent = (v: string): string[] =>
  percentRe.test(v) ? [] : [regexError(PERCENT_MSG, PERCENT_FMT, '1%', '93%')];

export const isValidPortNum = (p: number): string[] =>
  p >= 1 && p <= 65535 ? [] : [inclusiveRangeError(1, 65535)];

export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (port.length > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(port))
    errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-')))
    errs.push('must not begin or end with a hyphen');
  return errs;
}

export const isValidIP = (v: string): string[] =>
  isIP(v) ? [] : ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'];

// --- object name validators (ValidateNameFunc) ---------------------------------

export type NameValidator = (name: string, prefix: boolean) => string[];

/** generateName may end in '-': validate it as if the generated suffix were there. */
const maskTrailingDash = (name: string) =>
  name.length > 1 && name.endsWith('-') ? name.slice(0, -1) + 'a' : name;

export const nameIsDNSSubdomain: NameValidator = (n, prefix) =>
  isDNS1123Subdomain(prefix ? maskTrailingDash(n) : n);
export const nameIsDNSLabel: NameValidator = (n, prefix) => isDNS1123Label(prefix ? maskTrailingDash(n) : n);
export const nameIsDNS1035Label: NameValidator = (n, prefix) =>
  isDNS1035Label(prefix ? maskTrailingDash(n) : n);

/** Names that only have to be usable as one URL path segment (RBAC kinds, CSRs...). */
export const nameIsPathSegment: NameValidator = (name, prefix) => {
  if (!prefix) {
    if (name === '.' || name === '..') return [`may not be '${name}'`];
  }
  const errs: string[] = [];
  for (const bad of ['/', '%']) if (name.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
};
