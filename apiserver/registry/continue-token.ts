// Continue tokens of paged lists: base64 of {"v":"meta.k8s.io/v1","rv":R,"start":K},
// the same shape kube-apiserver uses, where K is the next key relative to the
// resource's key prefix. Clients treat them as opaque.
import { badRequest } from '../../shared/api/status';

export interface ContinueToken {
  rv: number;
  /** Key to start from, relative to the resource prefix. */
  start: string;
}

export function encodeContinue(rv: number, nextKeyRelative: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: nextKeyRelative })).toString('base64');
}

export function decodeContinue(token: string): ContinueToken {
  let parsed: any;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64').toString('utf8'));
  } catch {
    throw badRequest(`continue key is not valid: illegal base64 data or JSON`);
  }
  if (!parsed || parsed.v !== 'meta.k8s.io/v1')
    throw badRequest('continue key is not valid: server does not recognize this encoded version');
  // rv -1 marks an inconsistent continuation at the latest revision (after a 410).
  if (typeof parsed.rv !== 'number' || parsed.rv === 0 || parsed.rv < -1)
    throw badRequest(
      'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
    );
  if (
    typeof parsed.start !== 'string' ||
    parsed.start.length === 0 ||
    parsed.start.includes('..') ||
    parsed.start.startsWith('/')
  )
    throw badRequest('continue key is not valid: encoded start key must be a relative path');
  return { rv: parsed.rv, start: parsed.start };
}
