// Impersonation (Impersonate-User, -Uid, -Group, -Extra-<key>): every
// impersonated attribute is authorized as verb "impersonate" on users,
// serviceaccounts, uids, groups or userextras/<key> for the requesting user;
// the request then runs as the impersonated user.
import { internalError } from '../../shared/api/status';
import type { UserInfo } from '../registry/context';
import type { Req } from '../server/http';
import type { Attributes, Authorizer } from './authz/types';
import { forbiddenError } from './authz/union';

const SA_PREFIX = 'system:serviceaccount:';
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Namespace and name of a service account user name, when it is one. */
export function splitServiceAccount(user: string): { namespace: string; name: string } | null {
  if (!user.startsWith(SA_PREFIX)) return null;
  const parts = user.slice(SA_PREFIX.length).split(':');
  if (parts.length !== 2) return null;
  const [namespace, name] = parts;
  if (!namespace || namespace.length > 63 || !DNS_LABEL.test(namespace)) return null;
  if (!name || name.length > 253 || !DNS_SUBDOMAIN.test(name)) return null;
  return { namespace, name };
}

/** Every value of a header, in order (duplicates are not joined). */
function headerValues(req: Req, lower: string): string[] {
  const raw = req.rawHeaders ?? [];
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i].toLowerCase() === lower) out.push(raw[i + 1]);
  return out;
}

interface Request {
  kind: 'User' | 'ServiceAccount' | 'Group' | 'UserExtra' | 'UID';
  namespace?: string;
  name: string;
  extraKey?: string;
}

function describe(reqs: Request[]): string {
  // Go's %v of []v1.ObjectReference: {Kind Namespace Name UID APIVersion ResourceVersion FieldPath}
  const one = (r: Request) =>
    `{${r.kind} ${r.namespace ?? ''} ${r.name}  ${r.kind === 'UserExtra' || r.kind === 'UID' ? 'authentication.k8s.io/v1' : ''}  ${r.extraKey ?? ''}}`;
  return `[${reqs.map(one).join(' ')}]`;
}

function unescapeKey(k: string): string {
  try {
    return decodeURIComponent(k);
  } catch {
    return k;
  }
}

export function makeImpersonation(authorizer: () => Authorizer) {
  return async function impersonate(req: Req, user: UserInfo): Promise<UserInfo> {
    const raw = req.rawHeaders ?? [];
    let any = false;
    for (let i = 0; i < raw.length; i += 2)
      if (raw[i].length > 12 && raw[i].slice(0, 12).toLowerCase() === 'impersonate-') {
        any = true;
        break;
      }
    if (!any) return user;

    const reqs: Request[] = [];
    const requestedUser = headerValues(req, 'impersonate-user')[0] ?? '';
    if (requestedUser) {
      const sa = splitServiceAccount(requestedUser);
      reqs.push(sa ? { kind: 'ServiceAccount', ...sa } : { kind: 'User', name: requestedUser });
    }
    const groupsRequested = headerValues(req, 'impersonate-group');
    for (const g of groupsRequested) reqs.push({ kind: 'Group', name: g });
    let hasExtra = false;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const h = raw[i].toLowerCase();
      if (!h.startsWith('impersonate-extra-')) continue;
      hasExtra = true;
      reqs.push({
        kind: 'UserExtra',
        name: raw[i + 1],
        extraKey: unescapeKey(h.slice('impersonate-extra-'.length)),
      });
    }
    const uid = headerValues(req, 'impersonate-uid')[0] ?? '';
    if (uid) reqs.push({ kind: 'UID', name: uid });
    if ((groupsRequested.length || hasExtra || uid) && !requestedUser)
      throw internalError(new Error(`requested ${describe(reqs)} without impersonating a user`));
    if (!reqs.length) return user;

    const groupsSpecified = groupsRequested.length > 0;
    let username = '';
    let groups: string[] = [];
    const extra: Record<string, string[]> = {};
    let impersonatedUID = '';
    for (const r of reqs) {
      const a: Attributes = {
        user,
        verb: 'impersonate',
        isResourceRequest: true,
        path: '',
        namespace: '',
        apiGroup: '',
        apiVersion: '',
        resource: '',
        subresource: '',
        name: r.name,
      };
      switch (r.kind) {
        case 'ServiceAccount':
          a.resource = 'serviceaccounts';
          a.namespace = r.namespace!;
          username = `${SA_PREFIX}${r.namespace}:${r.name}`;
          if (!groupsSpecified) groups = ['system:serviceaccounts', `system:serviceaccounts:${r.namespace}`];
          break;
        case 'User':
          a.resource = 'users';
          username = r.name;
          break;
        case 'Group':
          a.resource = 'groups';
          groups.push(r.name);
          break;
        case 'UserExtra':
          a.apiGroup = 'authentication.k8s.io';
          a.resource = 'userextras';
          a.subresource = r.extraKey!;
          (extra[r.extraKey!] ??= []).push(r.name);
          break;
        case 'UID':
          a.apiGroup = 'authentication.k8s.io';
          a.resource = 'uids';
          impersonatedUID = r.name;
          break;
      }
      const d = await authorizer().authorize(a);
      if (d.decision !== 'allow') {
        if (d.error && d.decision !== 'deny') throw internalError(new Error(d.error));
        throw forbiddenError(a, d.reason);
      }
    }

    if (username !== 'system:anonymous') {
      if (!groups.includes('system:authenticated') && !groups.includes('system:unauthenticated'))
        groups.push('system:authenticated');
    } else if (!groups.includes('system:unauthenticated')) groups.push('system:unauthenticated');

    const out: UserInfo = { name: username, groups };
    if (impersonatedUID) out.uid = impersonatedUID;
    if (Object.keys(extra).length) out.extra = extra;
    return out;
  };
}
