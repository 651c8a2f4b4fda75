// The audit policy (audit.k8s.io/v1 Policy, --audit-policy-file): the first
// rule that matches a request decides its level, the stages left out and
// whether managedFields are dropped from logged objects.
import { readFileSync } from 'node:fs';
import { parseConfigDocuments } from '../../../shared/codec/yaml';
import type { UserInfo } from '../../registry/context';
import type { RequestInfo } from '../../endpoints/request-info';

export type Level = 'None' | 'Metadata' | 'Request' | 'RequestResponse';
export type Stage = 'RequestReceived' | 'ResponseStarted' | 'ResponseComplete' | 'Panic';

const LEVELS: Level[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
const STAGES: Stage[] = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'];

export interface GroupResources {
  group?: string;
  resources?: string[];
  resourceNames?: string[];
}

export interface PolicyRule {
  level: Level;
  users?: string[];
  userGroups?: string[];
  verbs?: string[];
  resources?: GroupResources[];
  namespaces?: string[];
  nonResourceURLs?: string[];
  omitStages?: Stage[];
  omitManagedFields?: boolean;
}

export interface Policy {
  rules: PolicyRule[];
  omitStages?: Stage[];
  omitManagedFields?: boolean;
}

export interface Decision {
  level: Level;
  omitStages: Set<Stage>;
  omitManagedFields: boolean;
}

/** Reads and validates a policy file (YAML or JSON); throws with the reason. */
export function loadPolicy(file: string): Policy {
  const text = readFileSync(file, 'utf8');
  const docs: any[] = parseConfigDocuments(text);
  const doc = docs.find((d) => d && typeof d === 'object');
  if (!doc) throw new Error(`failed to read audit policy file "${file}": empty file`);
  const p = validatePolicy(doc, file);
  return p;
}

export function validatePolicy(doc: any, file = ''): Policy {
  const where = file ? ` "${file}"` : '';
  if (doc.kind !== 'Policy')
    throw new Error(
      `failed to read audit policy file${where}: kind must be "Policy", got "${doc.kind ?? ''}"`,
    );
  if (!['audit.k8s.io/v1', 'audit.k8s.io/v1beta1', 'audit.k8s.io/v1alpha1'].includes(doc.apiVersion))
    throw new Error(`failed to read audit policy file${where}: unknown apiVersion "${doc.apiVersion ?? ''}"`);
  const errs: string[] = [];
  const checkStages = (stages: unknown, path: string) => {
    if (stages === undefined) return;
    if (!Array.isArray(stages)) errs.push(`${path}: Invalid value: must be a list`);
    else
      stages.forEach((s, i) => {
        if (!STAGES.includes(s))
          errs.push(
            `${path}[${i}]: Unsupported value: "${s}": supported values: ${STAGES.map((x) => `"${x}"`).join(', ')}`,
          );
      });
  };
  checkStages(doc.omitStages, 'omitStages');
  const rules: any[] = Array.isArray(doc.rules) ? doc.rules : [];
  if (!rules.length) errs.push('rules: Required value: at least one rule is required');
  rules.forEach((r, i) => {
    if (!LEVELS.includes(r?.level))
      errs.push(
        `rules[${i}].level: ${r?.level === undefined ? 'Required value' : `Unsupported value: "${r.level}": supported values: ${LEVELS.map((l) => `"${l}"`).join(', ')}`}`,
      );
    if (r?.nonResourceURLs?.length && (r.resources?.length || r.namespaces?.length))
      errs.push(
        `rules[${i}].nonResourceURLs: Invalid value: rules cannot apply to both regular resources and non-resource URLs`,
      );
    checkStages(r?.omitStages, `rules[${i}].omitStages`);
  });
  if (errs.length) throw new Error(`invalid audit policy${where}: ${errs.join(', ')}`);
  return { rules, omitStages: doc.omitStages, omitManagedFields: doc.omitManagedFields };
}

function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''));
}

function matchesResource(r: PolicyRule, info: RequestInfo): boolean {
  if (!info.isResourceRequest) return false;
  if (r.namespaces?.length && !r.namespaces.includes(info.namespace)) return false;
  if (!r.resources?.length) return true;
  const combined = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  for (const gr of r.resources) {
    if ((gr.group ?? '') !== info.apiGroup) continue;
    if (!gr.resources?.length) return true;
    for (const res of gr.resources) {
      if (gr.resourceNames?.length && !gr.resourceNames.includes(info.name)) continue;
      if (res === combined || res === '*') return true;
      if (info.subresource && res.startsWith('*/') && res.slice(2) === info.subresource) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === info.resource) return true;
    }
  }
  return false;
}

function ruleMatches(r: PolicyRule, user: UserInfo, info: RequestInfo): boolean {
  if (r.users?.length && !r.users.includes(user.name)) return false;
  if (r.userGroups?.length && !user.groups.some((g) => r.userGroups!.includes(g))) return false;
  if (r.verbs?.length && !r.verbs.includes(info.verb)) return false;
  if (r.namespaces?.length || r.resources?.length) return matchesResource(r, info);
  if (r.nonResourceURLs?.length)
    return !info.isResourceRequest && r.nonResourceURLs.some((s) => pathMatches(info.path, s));
  return true;
}

export function evaluatePolicy(policy: Policy, user: UserInfo, info: RequestInfo): Decision {
  for (const r of policy.rules) {
    if (!ruleMatches(r, user, info)) continue;
    return {
      level: r.level,
      omitStages: new Set([...(policy.omitStages ?? []), ...(r.omitStages ?? [])]),
      omitManagedFields: r.omitManagedFields ?? policy.omitManagedFields ?? false,
    };
  }
  return { level: 'None', omitStages: new Set(), omitManagedFields: false };
}

export const levelAtLeast = (l: Level, min: Level) => LEVELS.indexOf(l) >= LEVELS.indexOf(min);
