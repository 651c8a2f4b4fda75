// Field-level validation errors, as Kubernetes reports them in the causes of a
// 422 Invalid Status (reason FieldValueRequired, field "spec.containers[0].name", ...).

export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid'
  | 'InternalError';

export interface FieldError {
  type: FieldErrorType;
  /** Dotted path with indices: metadata.name, spec.containers[0].image, metadata.labels[app]. */
  field: string;
  badValue?: unknown;
  detail?: string;
}

const summaries: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTypeInvalid: 'Invalid value',
  InternalError: 'Internal error',
};

function showValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** Kubernetes' message for one field error, e.g. `metadata.name: Invalid value: "A": a lowercase RFC 1123 ...`. */
export function fieldErrorMessage(e: FieldError): string {
  let s = `${e.field}: ${summaries[e.type]}`;
  const withValue =
    e.type === 'FieldValueInvalid' ||
    e.type === 'FieldValueNotSupported' ||
    e.type === 'FieldValueDuplicate' ||
    e.type === 'FieldValueTypeInvalid' ||
    e.type === 'FieldValueNotFound';
  if (withValue && e.badValue !== undefined) s += `: ${showValue(e.badValue)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

export const required = (field: string, detail?: string): FieldError => ({
  type: 'FieldValueRequired',
  field,
  detail,
});
export const invalid = (field: string, badValue: unknown, detail?: string): FieldError => ({
  type: 'FieldValueInvalid',
  field,
  badValue,
  detail,
});
export const forbidden = (field: string, detail?: string): FieldError => ({
  type: 'FieldValueForbidden',
  field,
  detail,
});
export const notSupported = (field: string, badValue: unknown, valid: string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  badValue,
  detail: `supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}`,
});
export const tooLong = (field: string, badValue: unknown, max: number): FieldError => ({
  type: 'FieldValueTooLong',
  field,
  badValue,
  detail: `must have at most ${max} bytes`,
});
export const duplicate = (field: string, badValue: unknown): FieldError => ({
  type: 'FieldValueDuplicate',
  field,
  badValue,
});
