// admissionregistration.k8s.io/v1 webhook configurations (SPEC Notable change 2).
import type { FieldError } from '../field-errors';
import { duplicate, invalid, notSupported, required } from '../field-errors';
import { validateLabelSelector } from './metadata';
import { isDNS1035Label, isDNS1123Subdomain, isValidPortNum } from './names';
import { asArr, asObj, asStr, child, index, isSet, type Obj } from './path';
import { registerKindRules } from './registry';

const SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** utilvalidation.IsFullyQualifiedName. */
export function validateFullyQualifiedName(name: string, p: string): FieldError[] {
  if (!name) return [required(p, '')];
  const errs = isDNS1123Subdomain(name);
  if (errs.length) return [invalid(p, name, errs.join(','))];
  if (name.split('.').length < 3)
    return [invalid(p, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

export function validateWebhookURL(raw: string, p: string): FieldError[] {
  const form = '; desired format: https://host[/path]';
  let u: URL;
  try {
    u = new URL(raw);
  } catch (e) {
    return [required(p, `url must be a valid URL: ${(e as Error).message}${form}`)];
  }
  const errs: FieldError[] = [];
  const scheme = u.protocol.replace(/:$/, '');
  if (scheme !== 'https') errs.push(invalid(p, scheme, "'https' is the only allowed URL scheme" + form));
  if (!u.host) errs.push(invalid(p, u.host, 'host must be specified' + form));
  if (u.username || u.password)
    errs.push(invalid(p, u.username, 'user information is not permitted in the URL'));
  if (u.hash) errs.push(invalid(p, u.hash.slice(1), 'fragments are not permitted in the URL'));
  if (u.search) errs.push(invalid(p, u.search.slice(1), 'query parameters are not permitted in the URL'));
  return errs;
}

export function validateWebhookService(svc: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!asStr(svc.name)) errs.push(required(child(p, 'name'), 'service name is required'));
  if (!asStr(svc.namespace)) errs.push(required(child(p, 'namespace'), 'service namespace is required'));
  const port = typeof svc.port === 'number' ? svc.port : 443;
  const portErrs = isValidPortNum(port);
  if (portErrs.length)
    errs.push(invalid(child(p, 'port'), port, 'port is not valid: ' + portErrs.join(', ')));
  if (!isSet(svc.path)) return errs;
  const path = asStr(svc.path);
  const pp = child(p, 'path');
  if (path === '/' || path === '') return errs;
  if (path === '//') return [...errs, invalid(pp, path, 'segment[0] may not be empty')];
  if (!path.startsWith('/')) errs.push(invalid(pp, path, "must start with a '/'"));
  let check = path.slice(1);
  if (check.endsWith('/')) check = check.slice(0, -1);
  check.split('/').forEach((step, i) => {
    if (!step) errs.push(invalid(pp, path, `segment[${i}] may not be empty`));
    else for (const m of isDNS1123Subdomain(step)) errs.push(invalid(pp, path, `segment[${i}]: ${m}`));
  });
  return errs;
}

export function validateClientConfig(cc: Obj, p: string): FieldError[] {
  const hasURL = isSet(cc.url);
  const hasService = isSet(cc.service);
  if (hasURL === hasService) return [required(p, 'exactly one of url or service is required')];
  return hasURL
    ? validateWebhookURL(asStr(cc.url), child(p, 'url'))
    : validateWebhookService(asObj(cc.service) ?? {}, child(p, 'service'));
}

export function validateReviewVersions(
  versions: unknown,
  p: string,
  accepted = REVIEW_VERSIONS,
): FieldError[] {
  const list = asArr(versions).map(asStr);
  if (list.length === 0) return [required(p, `must specify one of ${accepted.join(', ')}`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let ok = false;
  list.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(invalid(index(p, i), v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const m of isDNS1035Label(v)) errs.push(invalid(index(p, i), v, m));
    if (accepted.includes(v)) ok = true;
  });
  if (!ok) errs.push(invalid(p, list, `must include at least one of ${accepted.join(', ')}`));
  return errs;
}

function validateRule(r: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const ops = asArr(r.operations).map(asStr);
  if (ops.length === 0) errs.push(required(child(p, 'operations'), ''));
  if (ops.length > 1 && ops.includes('*'))
    errs.push(invalid(child(p, 'operations'), ops, "if '*' is present, must not specify other operations"));
  for (const f of ['apiGroups', 'apiVersions', 'resources']) {
    const list = asArr(r[f]).map(asStr);
    if (list.length === 0) errs.push(required(child(p, f), ''));
    else if (list.length > 1 && list.includes('*'))
      errs.push(
        invalid(
          child(p, f),
          list,
          `if '*' is present, must not specify other ${f === 'resources' ? 'resources' : f === 'apiGroups' ? 'API groups' : 'API versions'}`,
        ),
      );
  }
  return errs;
}

function validateWebhooks(o: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  asArr(o.webhooks).forEach((x, i) => {
    const h = asObj(x) ?? {};
    const p = index('webhooks', i);
    const name = asStr(h.name);
    errs.push(...validateFullyQualifiedName(name, child(p, 'name')));
    asArr(h.rules).forEach((r, j) => errs.push(...validateRule(asObj(r) ?? {}, index(child(p, 'rules'), j))));
    if (!isSet(h.sideEffects))
      errs.push(required(child(p, 'sideEffects'), `must specify one of ${SIDE_EFFECTS.join(', ')}`));
    else if (!SIDE_EFFECTS.includes(asStr(h.sideEffects)))
      errs.push(notSupported(child(p, 'sideEffects'), h.sideEffects, SIDE_EFFECTS));
    if (typeof h.timeoutSeconds === 'number' && (h.timeoutSeconds > 30 || h.timeoutSeconds < 1))
      errs.push(
        invalid(
          child(p, 'timeoutSeconds'),
          h.timeoutSeconds,
          'the timeout value must be between 1 and 30 seconds',
        ),
      );
    errs.push(...validateLabelSelector(h.namespaceSelector, child(p, 'namespaceSelector')));
    errs.push(...validateLabelSelector(h.objectSelector, child(p, 'objectSelector')));
    errs.push(...validateClientConfig(asObj(h.clientConfig) ?? {}, child(p, 'clientConfig')));
    errs.push(...validateReviewVersions(h.admissionReviewVersions, child(p, 'admissionReviewVersions')));
    if (name) {
      if (names.has(name)) errs.push(duplicate(child(p, 'name'), name));
      else names.add(name);
    }
  });
  return errs;
}

const GROUP = 'admissionregistration.k8s.io';
registerKindRules(GROUP, 'ValidatingWebhookConfiguration', { validate: validateWebhooks });
registerKindRules(GROUP, 'MutatingWebhookConfiguration', { validate: validateWebhooks });
