// Label selectors: the string form of the API (`a=b,c!=d,e in (x,y),!f`) and
// the structured LabelSelector of objects (matchLabels + matchExpressions).

export type Operator = 'in' | 'notin' | 'exists' | '!' | '=' | '==' | '!=' | 'gt' | 'lt';

export interface Requirement {
  key: string;
  op: Operator;
  values: string[];
}

/** A parsed selector: every requirement must match. Empty matches everything. */
export class LabelSelector {
  constructor(readonly requirements: Requirement[]) {}

  get empty(): boolean {
    return this.requirements.length === 0;
  }

  matches(labels: Record<string, string> | undefined | null): boolean {
    for (const r of this.requirements) if (!requirementMatches(r, labels ?? {})) return false;
    return true;
  }

  /** Values the selector requires for key with = or == (used for indexing), or undefined. */
  exactValue(key: string): string | undefined {
    const r = this.requirements.find((x) => x.key === key && (x.op === '=' || x.op === '=='));
    return r?.values[0];
  }

  toString(): string {
    return this.requirements.map(formatRequirement).join(',');
  }
}

export const everything = new LabelSelector([]);

function requirementMatches(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = labels[r.key];
  switch (r.op) {
    case '=':
    case '==':
    case 'in':
      return has && r.values.includes(v);
    case '!=':
    case 'notin':
      return !has || !r.values.includes(v);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has) return false;
      const n = Number(v);
      if (!/^-?\d+$/.test(v)) return false;
      return r.op === 'gt' ? n > Number(r.values[0]) : n < Number(r.values[0]);
    }
  }
}

function formatRequirement(r: Requirement): string {
  switch (r.op) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
    case 'notin':
      return `${r.key} ${r.op} (${[...r.values].sort().join(',')})`;
    case 'gt':
      return `${r.key}>${r.values[0]}`;
    case 'lt':
      return `${r.key}<${r.values[0]}`;
    default:
      return `${r.key}${r.op}${r.values[0]}`;
  }
}

export class SelectorParseError extends Error {}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Kubernetes' qualified-name rule for label keys; returns the problems. */
export function labelKeyErrors(key: string): string[] {
  const errs: string[] = [];
  const parts = key.split('/');
  let name = key;
  if (parts.length === 2) {
    const [prefix, n] = parts;
    name = n;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else if (prefix.length > 253) errs.push('prefix part must be no more than 253 characters');
    else if (!DNS1123_SUBDOMAIN.test(prefix))
      errs.push(
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      );
  } else if (parts.length > 2) {
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 characters');
  else if (!QUALIFIED_NAME.test(name))
    errs.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    );
  return errs;
}

export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!LABEL_VALUE.test(value))
    errs.push(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    );
  return errs;
}

// Tokenizer and parser of the string form, following Kubernetes' grammar.
type Tok = {
  t: 'id' | '!' | '=' | '==' | '!=' | '(' | ')' | ',' | 'in' | 'notin' | '>' | '<' | 'end';
  v: string;
};

function tokenize(s: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  const special = new Set(['!', '=', '(', ')', ',', '>', '<', ' ', '\t', '\n']);
  while (i < s.length) {
    const c = s[i];
    if (c === ' ' || c === '\t' || c === '\n') {
      i++;
      continue;
    }
    if (c === '!' && s[i + 1] === '=') {
      out.push({ t: '!=', v: '!=' });
      i += 2;
    } else if (c === '=' && s[i + 1] === '=') {
      out.push({ t: '==', v: '==' });
      i += 2;
    } else if (c === '!' || c === '=' || c === '(' || c === ')' || c === ',' || c === '>' || c === '<') {
      out.push({ t: c, v: c });
      i++;
    } else {
      let j = i;
      while (j < s.length && !special.has(s[j])) j++;
      const word = s.slice(i, j);
      out.push({ t: word === 'in' ? 'in' : word === 'notin' ? 'notin' : 'id', v: word });
      i = j;
    }
  }
  out.push({ t: 'end', v: '' });
  return out;
}

/** Parses the string form; throws SelectorParseError with Kubernetes-like messages. */
export function parseLabelSelector(text: string | undefined | null): LabelSelector {
  if (!text || !text.trim()) return everything;
  const toks = tokenize(text);
  let p = 0;
  const reqs: Requirement[] = [];
  const peek = () => toks[p];
  const next = () => toks[p++];
  const fail = (msg: string): never => {
    throw new SelectorParseError(msg);
  };
  const checkKey = (k: string) => {
    const errs = labelKeyErrors(k);
    if (errs.length)
      fail(`unable to parse requirement: values[0][${k}]: Invalid value: "${k}": ${errs.join('; ')}`);
  };
  const checkValue = (key: string, v: string) => {
    const errs = labelValueErrors(v);
    if (errs.length)
      fail(`unable to parse requirement: values[0][${key}]: Invalid value: "${v}": ${errs.join('; ')}`);
  };
  while (true) {
    let tok = next();
    if (tok.t === '!') {
      const k = next();
      if (k.t !== 'id') fail(`found '${k.v}', expected: identifier after '!'`);
      checkKey(k.v);
      reqs.push({ key: k.v, op: '!', values: [] });
    } else if (tok.t === 'id') {
      const key = tok.v;
      checkKey(key);
      tok = peek();
      if (tok.t === ',' || tok.t === 'end') {
        reqs.push({ key, op: 'exists', values: [] });
      } else if (tok.t === '=' || tok.t === '==' || tok.t === '!=') {
        next();
        const v = peek();
        let value = '';
        if (v.t === 'id') {
          value = v.v;
          next();
        } else if (v.t !== ',' && v.t !== 'end') fail(`found '${v.v}', expected: identifier`);
        checkValue(key, value);
        reqs.push({ key, op: tok.t as Operator, values: [value] });
      } else if (tok.t === '>' || tok.t === '<') {
        next();
        const v = next();
        if (v.t !== 'id' || !/^-?\d+$/.test(v.v))
          fail(`unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer`);
        reqs.push({ key, op: tok.t === '>' ? 'gt' : 'lt', values: [v.v] });
      } else if (tok.t === 'in' || tok.t === 'notin') {
        next();
        if (next().t !== '(') fail(`found '${peek().v}', expected: '('`);
        const values: string[] = [];
        while (true) {
          const v = next();
          if (v.t === ')') break;
          if (v.t === 'id') {
            checkValue(key, v.v);
            values.push(v.v);
            const sep = next();
            if (sep.t === ')') break;
            if (sep.t !== ',') fail(`found '${sep.v}', expected: ',' or ')'`);
          } else if (v.t === ',') {
            values.push('');
          } else fail(`found '${v.v}', expected: ',', ')' or identifier`);
        }
        if (values.length === 0 && tok.t === 'in')
          fail(
            "unable to parse requirement: values: Invalid value: \"null\": for 'in', 'notin' operators, values set can't be empty",
          );
        reqs.push({ key, op: tok.t, values });
      } else {
        fail(`found '${tok.v}', expected: '=', '!=', '==', 'in', notin'`);
      }
    } else if (tok.t === 'end' && reqs.length === 0) {
      break;
    } else {
      fail(`found '${tok.v}', expected: !, identifier, or 'end'`);
    }
    const sep = next();
    if (sep.t === 'end') break;
    if (sep.t !== ',') fail(`found '${sep.v}', expected: ',' or 'end'`);
  }
  return new LabelSelector(reqs);
}

export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/**
 * The selector of a structured LabelSelector (Deployment.spec.selector...).
 * null/undefined selects nothing; {} selects everything (metav1.LabelSelectorAsSelector).
 */
export function selectorFromObject(sel: LabelSelectorObject | null | undefined): LabelSelector | null {
  if (!sel) return null;
  const reqs: Requirement[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) reqs.push({ key: k, op: '=', values: [v] });
  for (const e of sel.matchExpressions ?? []) {
    const op = ({ In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' } as const)[
      e.operator as 'In'
    ];
    if (!op) throw new SelectorParseError(`"${e.operator}" is not a valid label selector operator`);
    reqs.push({ key: e.key, op, values: e.values ?? [] });
  }
  return new LabelSelector(reqs);
}

/** True when the structured selector selects the labels (nil selects nothing). */
export function selectorMatches(
  sel: LabelSelectorObject | null | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  return selectorFromObject(sel)?.matches(labels) ?? false;
}

/** Selector string of a plain label map (`a=b,c=d`), e.g. for a Service selector. */
export function labelsToSelectorString(labels: Record<string, string>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',');
}
