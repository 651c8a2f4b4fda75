// Request bodies to objects: JSON, YAML or Protobuf by Content-Type, checked
// against the kind the URL expects.
import { readYAMLValue } from '../../shared/codec/yaml';
import { parseJSONInt64 } from '../../shared/codec/json-int64';
import { badRequest, unsupportedMediaType } from '../../shared/api/status';
import { readBody } from '../server/http';
import { decodeObject, ProtobufError } from '../../shared/codec/protobuf';
import {
  decodeBody,
  decodeObject as checkDecoded,
  parseFieldValidation,
} from '../../shared/api/field-validation';
import { parseAPIVersion } from '../../shared/api/schema';
import { featureGates } from '../../shared/options/feature-gates';
import type { Scope } from './scope';

export const BODY_MEDIA_TYPES = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
];

/** Media type of the request body without parameters, lower-cased ("" when absent). */
export function bodyMediaType(s: Scope): string {
  const ct = s.req.headers['content-type'];
  return (Array.isArray(ct) ? ct[0] : (ct ?? '')).split(';')[0].trim().toLowerCase();
}

/** Parses bytes of a given media type into a JSON value; 400 on malformed input. */
export function parseBody(mediaType: string, body: Buffer): any {
  if (body.length === 0) throw badRequest('the body of the request was empty');
  if (mediaType === '' || mediaType === 'application/json' || mediaType.endsWith('+json')) {
    try {
      return parseJSONInt64(body.toString('utf8'));
    } catch (err) {
      throw badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
    }
  }
  if (mediaType === 'application/yaml' || mediaType.endsWith('+yaml')) {
    try {
      return readYAMLValue(body.toString('utf8'));
    } catch (err) {
      throw badRequest(`error converting YAML to JSON: ${(err as Error).message}`);
    }
  }
  if (mediaType === 'application/vnd.kubernetes.protobuf') {
    try {
      return decodeObject(body);
    } catch (err) {
      if (err instanceof ProtobufError) throw badRequest(err.message);
      throw err;
    }
  }
  throw unsupportedMediaType(mediaType, BODY_MEDIA_TYPES);
}

/**
 * Reads the body of a create/update as an object of the expected kind, with
 * the request's fieldValidation (unknown/duplicate fields: warnings or 400).
 */
export async function readObject(
  s: Scope,
  expected: { apiVersion: string; kind: string },
  optionsKind: 'CreateOptions' | 'UpdateOptions' = 'CreateOptions',
): Promise<any> {
  const mt = bodyMediaType(s);
  if (mt && !BODY_MEDIA_TYPES.includes(mt)) throw unsupportedMediaType(mt, BODY_MEDIA_TYPES);
  // Without ServerSideFieldValidation the server decodes like Kubernetes 1.22: unknown fields are dropped silently.
  const fieldValidation = featureGates.enabled('ServerSideFieldValidation')
    ? parseFieldValidation(s.query.get('fieldValidation'), optionsKind)
    : 'Ignore';
  const body = await readBody(s.req, s.maxBodyBytes);
  if (body.length === 0) throw badRequest('the body of the request was empty');
  const gvk = { ...parseAPIVersion(expected.apiVersion), kind: expected.kind };
  let obj: any;
  if (mt === 'application/vnd.kubernetes.protobuf') {
    obj = parseBody(mt, body);
    checkKind(obj, expected);
    s.ctx.warnings.push(...checkDecoded(obj, gvk, fieldValidation));
  } else {
    const decoded = decodeBody(body, {
      format: mt === 'application/yaml' ? 'yaml' : 'json',
      fieldValidation,
      gvk,
      customSchema: s.served.customSchema,
    });
    obj = decoded.object;
    s.ctx.warnings.push(...decoded.warnings);
  }
  checkKind(obj, expected);
  return obj;
}

/** Fills in apiVersion/kind when absent; 400 when they name something else. */
export function checkKind(obj: any, expected: { apiVersion: string; kind: string }): void {
  if (obj.apiVersion === undefined || obj.apiVersion === '') obj.apiVersion = expected.apiVersion;
  if (obj.kind === undefined || obj.kind === '') obj.kind = expected.kind;
  if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string')
    throw badRequest('apiVersion and kind must be strings');
  if (obj.apiVersion !== expected.apiVersion) {
    throw badRequest(
      `the API version in the data (${obj.apiVersion}) does not match the expected API version (${expected.apiVersion})`,
    );
  }
  if (obj.kind !== expected.kind) {
    throw badRequest(
      `${obj.kind} in version "${obj.apiVersion}" cannot be handled as a ${expected.kind}: the kind in the data (${obj.kind}) does not match the expected kind (${expected.kind})`,
    );
  }
  if (
    obj.metadata !== undefined &&
    (obj.metadata === null || typeof obj.metadata !== 'object' || Array.isArray(obj.metadata))
  ) {
    throw badRequest(
      `${expected.kind} in version "${expected.apiVersion}" cannot be handled as a ${expected.kind}: metadata must be an object`,
    );
  }
}
