// PatchOptions checks and the field manager of non-apply writes, as
// kube-apiserver does them (ValidatePatchOptions, managerOrUserAgent).
import { forbidden, invalid as invalidField, type FieldError } from '../../shared/api/field-errors';
import { invalid } from '../../shared/api/status';
import type { PatchKind } from './patch-kind';

export const FIELD_MANAGER_MAX_LENGTH = 128;

// unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** Managers of the user agents seen last: every write without ?fieldManager asks, and clients keep theirs. */
const fromAgent = new Map<string, string>();
const FROM_AGENT_MAX = 256;

/** The field manager of a write without ?fieldManager: the user agent up to its first "/", printable, at most 128 bytes. */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const ua = userAgent ?? '';
  let m = fromAgent.get(ua);
  if (m === undefined) {
    if (fromAgent.size >= FROM_AGENT_MAX) fromAgent.delete(fromAgent.keys().next().value!);
    fromAgent.set(ua, (m = printablePrefix(ua)));
  }
  return m;
}

function printablePrefix(userAgent: string): string {
  const head = userAgent.split('/')[0];
  let out = '';
  let bytes = 0;
  for (const ch of head) {
    if (!PRINTABLE.test(ch)) continue;
    const n = Buffer.byteLength(ch);
    if (bytes + n > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/** ?fieldManager when given, else derived from the user agent. */
export const managerOrUserAgent = (manager: string | undefined, userAgent: string | undefined) =>
  manager ? manager : managerFromUserAgent(userAgent);

const goQuoteRune = (ch: string) => {
  const cp = ch.codePointAt(0) as number;
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
};

/** ValidateFieldManager: at most 128 bytes, printable characters only. */
export function validateFieldManager(manager: string | undefined, field = 'fieldManager'): FieldError[] {
  const errs: FieldError[] = [];
  if (!manager) return errs;
  if (Buffer.byteLength(manager) > FIELD_MANAGER_MAX_LENGTH) {
    errs.push({
      type: 'FieldValueTooLong',
      field,
      badValue: manager,
      detail: `must have at most ${FIELD_MANAGER_MAX_LENGTH} bytes`,
    });
  }
  let pos = 0;
  for (const ch of manager) {
    if (!PRINTABLE.test(ch)) {
      errs.push(invalidField(field, manager, `invalid character ${goQuoteRune(ch)} (at position ${pos})`));
    }
    pos += Buffer.byteLength(ch);
  }
  return errs;
}

/** Throws 422 like ValidatePatchOptions: force only for apply, fieldManager required for apply. */
export function validatePatchOptions(kind: PatchKind, o: { manager?: string; force?: boolean }): void {
  const errs: FieldError[] = [];
  if (kind !== 'apply') {
    if (o.force !== undefined) errs.push(forbidden('force', 'may not be specified for non-apply patch'));
  } else if (!o.manager) {
    errs.push({ type: 'FieldValueRequired', field: 'fieldManager', detail: 'is required for apply patch' });
  }
  errs.push(...validateFieldManager(o.manager));
  if (errs.length > 0) throw invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', errs);
}

/** Throws 422 like ValidateCreateOptions/ValidateUpdateOptions for a bad fieldManager. */
export function validateWriteOptions(
  kind: 'CreateOptions' | 'UpdateOptions',
  manager: string | undefined,
): void {
  const errs = validateFieldManager(manager);
  if (errs.length > 0) throw invalid({ group: 'meta.k8s.io', kind }, '', errs);
}
