// ABAC (--authorization-policy-file): one JSON policy per line, in
// abac.authorization.kubernetes.io/v1beta1 (or the unversioned v0 format).
// A policy allows a request when its subject matches (user, group, "*"),
// its verb class matches (readonly policies allow only get/list/watch) and
// either its resource fields or its nonResourcePath match.
import { readFileSync } from 'node:fs';
import type { UserInfo } from '../../registry/context';
import {
  ALLOW,
  isReadOnly,
  type Attributes,
  type Authorizer,
  type AuthorizerResult,
  type RulesResult,
} from './types';

export interface PolicySpec {
  user?: string;
  group?: string;
  readonly?: boolean;
  apiGroup?: string;
  resource?: string;
  namespace?: string;
  nonResourcePath?: string;
}

const V1BETA1 = 'abac.authorization.kubernetes.io/v1beta1';

/** Parses one policy line into its internal form (v0 and v1beta1 conversions applied). */
export function parsePolicy(line: string, lineNo: number, file: string): PolicySpec {
  let doc: any;
  try {
    doc = JSON.parse(line);
  } catch (err) {
    throw new Error(`error reading policy file ${file}, line ${lineNo}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (doc === null || typeof doc !== 'object')
    throw new Error(`error reading policy file ${file}, line ${lineNo}`);
  if (doc.apiVersion === undefined && doc.kind === undefined) {
    // v0: {"user":"alice","readonly":true,"resource":"pods","namespace":"projectCaribou"}
    const out: PolicySpec = {
      user: doc.user ?? '',
      group: doc.group ?? '',
      namespace: doc.namespace ?? '',
      resource: doc.resource ?? '',
      readonly: !!doc.readonly,
      apiGroup: '*',
    };
    if (!doc.user && !doc.group) out.group = 'system:authenticated';
    if (doc.user === '*' || doc.group === '*') {
      out.group = 'system:authenticated';
      out.user = '';
    }
    if (!doc.namespace) out.namespace = '*';
    if (!doc.resource) out.resource = '*';
    if (!doc.namespace && !doc.resource) out.nonResourcePath = '*';
    return out;
  }
  if (doc.apiVersion !== V1BETA1 || doc.kind !== 'Policy')
    throw new Error(
      `error reading policy file ${file}, line ${lineNo}: unrecognized apiVersion/kind ${JSON.stringify(doc.apiVersion)}/${JSON.stringify(doc.kind)}`,
    );
  const spec = doc.spec ?? {};
  const out: PolicySpec = {
    user: spec.user ?? '',
    group: spec.group ?? '',
    readonly: !!spec.readonly,
    apiGroup: spec.apiGroup ?? '',
    resource: spec.resource ?? '',
    namespace: spec.namespace ?? '',
    nonResourcePath: spec.nonResourcePath ?? '',
  };
  // In v1beta1, a "*" user or group means all authenticated subjects.
  if (spec.user === '*' || spec.group === '*') {
    out.group = 'system:authenticated';
    out.user = '';
  }
  return out;
}

export function loadPolicyFile(path: string): PolicySpec[] {
  const out: PolicySpec[] = [];
  const lines = readFileSync(path, 'utf8').split('\n');
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    out.push(parsePolicy(line, i + 1, path));
  });
  return out;
}

function subjectMatches(p: PolicySpec, user: UserInfo): boolean {
  let matched = false;
  if (p.user) {
    if (p.user === '*') matched = true;
    else {
      matched = p.user === user.name;
      if (!matched) return false;
    }
  }
  if (p.group) {
    if (p.group === '*') matched = true;
    else {
      matched = user.groups.includes(p.group);
      if (!matched) return false;
    }
  }
  return matched;
}

const verbMatches = (p: PolicySpec, a: Attributes) => isReadOnly(a) || !p.readonly;

function resourceMatches(p: PolicySpec, a: Attributes): boolean {
  if (!a.isResourceRequest) return false;
  return (
    (p.namespace === '*' || p.namespace === a.namespace) &&
    (p.resource === '*' || p.resource === a.resource) &&
    (p.apiGroup === '*' || p.apiGroup === a.apiGroup)
  );
}

function nonResourceMatches(p: PolicySpec, a: Attributes): boolean {
  if (a.isResourceRequest) return false;
  const np = p.nonResourcePath ?? '';
  if (np === '*' || np === a.path) return true;
  return np.endsWith('*') && a.path.startsWith(np.replace(/\*+$/, ''));
}

export class ABACAuthorizer implements Authorizer {
  readonly name = 'ABAC';
  constructor(private readonly policies: PolicySpec[]) {}

  authorize(a: Attributes): AuthorizerResult {
    for (const p of this.policies) {
      if (
        subjectMatches(p, a.user) &&
        verbMatches(p, a) &&
        (resourceMatches(p, a) || nonResourceMatches(p, a))
      )
        return ALLOW;
    }
    return { decision: 'noopinion', reason: 'No policy matched.' };
  }

  rulesFor(user: UserInfo, namespace: string): RulesResult {
    const out: RulesResult = { resourceRules: [], nonResourceRules: [], incomplete: false };
    for (const p of this.policies) {
      if (!subjectMatches(p, user)) continue;
      if (p.namespace !== '*' && p.namespace !== namespace) continue;
      const verbs = p.readonly ? ['get', 'list', 'watch'] : ['*'];
      if (p.resource)
        out.resourceRules.push({ verbs, apiGroups: [p.apiGroup ?? ''], resources: [p.resource] });
      if (p.nonResourcePath) out.nonResourceRules.push({ verbs, nonResourceURLs: [p.nonResourcePath] });
    }
    return out;
  }
}
