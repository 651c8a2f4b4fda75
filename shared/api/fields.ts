// Field selectors: `metadata.name=x,spec.nodeName!=n` with Kubernetes' escaping
// (\, \= \\). Which fields a resource supports is decided by its registry.

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

export class FieldSelector {
  constructor(readonly requirements: FieldRequirement[]) {}

  get empty(): boolean {
    return this.requirements.length === 0;
  }

  matches(fields: Record<string, string>): boolean {
    for (const r of this.requirements) {
      const v = fields[r.field] ?? '';
      if (r.op === '=' ? v !== r.value : v === r.value) return false;
    }
    return true;
  }

  /** The value required with = for field, used for indexing (e.g. spec.nodeName). */
  exactValue(field: string): string | undefined {
    return this.requirements.find((r) => r.field === field && r.op === '=')?.value;
  }

  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.op}${escapeValue(r.value)}`).join(',');
  }
}

export const everyField = new FieldSelector([]);

export class FieldSelectorParseError extends Error {}

const escapeValue = (v: string) => v.replace(/\\/g, '\\\\').replace(/,/g, '\\,').replace(/=/g, '\\=');

/** Splits on unescaped separators. */
function splitTerms(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === ',') {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

function unescape(v: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    if (v[i] === '\\') {
      const n = v[i + 1];
      if (n !== '\\' && n !== ',' && n !== '=')
        throw new FieldSelectorParseError(`invalid escape sequence: \\${n ?? ''}`);
      out += n;
      i++;
    } else if (v[i] === '=' || v[i] === ',') {
      throw new FieldSelectorParseError(`invalid field selector value: unescaped ${v[i]} in ${v}`);
    } else out += v[i];
  }
  return out;
}

export function parseFieldSelector(text: string | undefined | null): FieldSelector {
  if (!text || !text.trim()) return everyField;
  const reqs: FieldRequirement[] = [];
  for (const term of splitTerms(text)) {
    if (!term) continue;
    let m: RegExpExecArray | null;
    if ((m = /^([^=!\\]+)(!=|==|=)(.*)$/s.exec(term))) {
      reqs.push({ field: m[1].trim(), op: m[2] === '!=' ? '!=' : '=', value: unescape(m[3]) });
    } else {
      throw new FieldSelectorParseError(`invalid selector: '${text}'; can't understand '${term}'`);
    }
  }
  return new FieldSelector(reqs);
}
