// Lease, PodDisruptionBudget, CertificateSigningRequest, Ingress, IngressClass,
// PriorityClass, HorizontalPodAutoscaler.
import type { FieldError } from '../field-errors';
import { duplicate, forbidden, invalid, notSupported, required } from '../field-errors';
import { validateImmutableField, validateLabelSelector } from './metadata';
import {
  isDNS1123Subdomain,
  isValidIP,
  isValidPortName,
  isValidPortNum,
  isWildcardDNS1123Subdomain,
  nameIsDNS1035Label,
  nameIsPathSegment,
} from './names';
import { asArr, asObj, asStr, child, index, isSet, type Obj } from './path';
import { isNotMoreThan100Percent, validatePositiveIntOrPercent } from './apps';
import { registerKindRules } from './registry';

const spec = (o: Obj) => asObj(o.spec) ?? {};

// --- coordination.k8s.io/v1 Lease ---------------------------------------------------

registerKindRules('coordination.k8s.io', 'Lease', {
  validate(o) {
    const s = spec(o);
    const errs: FieldError[] = [];
    if (typeof s.leaseDurationSeconds === 'number' && s.leaseDurationSeconds <= 0)
      errs.push(invalid('spec.leaseDurationSeconds', s.leaseDurationSeconds, 'must be greater than 0'));
    if (typeof s.leaseTransitions === 'number' && s.leaseTransitions < 0)
      errs.push(invalid('spec.leaseTransitions', s.leaseTransitions, 'must be greater than or equal to 0'));
    if (asStr(s.preferredHolder) && !asStr(s.strategy))
      errs.push(forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
    return errs;
  },
});

// --- policy/v1 PodDisruptionBudget ---------------------------------------------------

registerKindRules('policy', 'PodDisruptionBudget', {
  validate(o) {
    const s = spec(o);
    const errs: FieldError[] = [];
    if (isSet(s.minAvailable) && isSet(s.maxUnavailable))
      errs.push(invalid('spec', s, 'minAvailable and maxUnavailable cannot be both set'));
    for (const f of ['minAvailable', 'maxUnavailable'])
      if (isSet(s[f])) {
        errs.push(...validatePositiveIntOrPercent(s[f], `spec.${f}`));
        errs.push(...isNotMoreThan100Percent(s[f], `spec.${f}`));
      }
    errs.push(...validateLabelSelector(s.selector, 'spec.selector'));
    return errs;
  },
});

// --- certificates.k8s.io/v1 CertificateSigningRequest (SPEC Notable change 5) ------

function pemBlocks(text: string): { type: string; headers: boolean; body: string }[] {
  const out: { type: string; headers: boolean; body: string }[] = [];
  const re = /-----BEGIN ([^-]+)-----\r?\n([\s\S]*?)-----END \1-----/g;
  for (let m = re.exec(text); m; m = re.exec(text))
    out.push({ type: m[1], headers: /^[^\n]*:/.test(m[2]), body: m[2] });
  return out;
}

function csrRequestError(request: string): string | undefined {
  const text = Buffer.from(request, 'base64').toString('utf8');
  const block = pemBlocks(text)[0];
  if (!block || block.type !== 'CERTIFICATE REQUEST') return 'PEM block type must be CERTIFICATE REQUEST';
  const der = Buffer.from(block.body.replace(/\s+/g, ''), 'base64');
  // A PKCS#10 request is a DER SEQUENCE; the full parse and signature check need WebCrypto (async).
  if (der.length < 2 || der[0] !== 0x30) return 'x509: malformed certificate request';
  return undefined;
}

function certificateError(cert: string): string | undefined {
  const text = Buffer.from(cert, 'base64').toString('utf8');
  if (!text) return undefined;
  const blocks = pemBlocks(text);
  for (const b of blocks) {
    if (b.type !== 'CERTIFICATE')
      return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(b.type)}`;
    if (b.headers) return 'no PEM block headers are permitted';
  }
  return blocks.length === 0 ? 'must contain at least one CERTIFICATE PEM block' : undefined;
}

export function validateSignerName(name: string, p: string): FieldError[] {
  if (!name) return [required(p, '')];
  const segs = name.split('/');
  if (segs.length < 2)
    return [
      invalid(p, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'"),
    ];
  const errs: FieldError[] = [];
  const domainErrs = isDNS1123Subdomain(segs[0]);
  if (domainErrs.length) errs.push(invalid(p, name, 'validating domain component: ' + domainErrs.join(', ')));
  const path = segs.slice(1).join('/');
  if (!path) errs.push(invalid(p, name, 'validating path component: must not be empty'));
  return errs;
}

const CONDITION_STATUS = ['False', 'True', 'Unknown'];

registerKindRules('certificates.k8s.io', 'CertificateSigningRequest', {
  validate(o) {
    const s = spec(o);
    const errs: FieldError[] = [];
    const reqErr = csrRequestError(asStr(s.request));
    if (reqErr) errs.push(invalid('spec.request', asStr(s.request), reqErr));
    const usages = asArr(s.usages).map(asStr);
    if (usages.length === 0) errs.push(required('spec.usages', ''));
    const seen = new Set<string>();
    usages.forEach((u, i) => {
      if (seen.has(u)) errs.push(duplicate(index('spec.usages', i), u));
      seen.add(u);
    });
    const signer = asStr(s.signerName);
    if (signer === 'kubernetes.io/legacy-unknown')
      errs.push(
        invalid('spec.signerName', signer, 'the legacy signerName is not allowed via this API version'),
      );
    else errs.push(...validateSignerName(signer, 'spec.signerName'));
    if (typeof s.expirationSeconds === 'number' && s.expirationSeconds < 600)
      errs.push(
        invalid(
          'spec.expirationSeconds',
          s.expirationSeconds,
          'may not specify a duration less than 600 seconds (10 minutes)',
        ),
      );
    const status = asObj(o.status) ?? {};
    const types = new Set<string>();
    asArr(status.conditions).forEach((c, i) => {
      const cond = asObj(c) ?? {};
      const cp = index('status.conditions', i);
      const type = asStr(cond.type);
      if (!type) errs.push(required(child(cp, 'type'), ''));
      else if (types.has(type)) errs.push(duplicate(child(cp, 'type'), type));
      types.add(type);
      const st = asStr(cond.status);
      if (!st) errs.push(required(child(cp, 'status'), ''));
      else if (!CONDITION_STATUS.includes(st))
        errs.push(notSupported(child(cp, 'status'), st, CONDITION_STATUS));
    });
    if (types.has('Approved') && types.has('Denied'))
      errs.push(
        invalid('status.conditions', 'Denied', 'Approved and Denied conditions are mutually exclusive'),
      );
    const certErr = certificateError(asStr(status.certificate));
    if (certErr) errs.push(invalid('status.certificate', '<certificate data>', certErr));
    return errs;
  },
});

// --- networking.k8s.io/v1 Ingress, IngressClass ---------------------------------------

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];

function validateBackend(b: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const svc = asObj(b.service);
  const res = asObj(b.resource);
  if (svc && res) return [invalid(p, '', 'cannot set both resource and service backends')];
  if (res) {
    if (!asStr(res.kind)) errs.push(required(child(p, 'resource.kind'), ''));
    if (!asStr(res.name)) errs.push(required(child(p, 'resource.name'), ''));
    return errs;
  }
  if (!svc) return [invalid(p, '', 'resource or service backend is required')];
  const name = asStr(svc.name);
  if (!name) errs.push(required(child(p, 'service.name'), ''));
  else for (const m of nameIsDNS1035Label(name, false)) errs.push(invalid(child(p, 'service.name'), name, m));
  const port = asObj(svc.port) ?? {};
  const pname = asStr(port.name);
  const pnum = typeof port.number === 'number' ? port.number : 0;
  if (pname && pnum) errs.push(invalid(p, '', 'cannot set both port name & port number'));
  else if (pname)
    for (const m of isValidPortName(pname)) errs.push(invalid(child(p, 'service.port.name'), pname, m));
  else if (pnum)
    for (const m of isValidPortNum(pnum)) errs.push(invalid(child(p, 'service.port.number'), pnum, m));
  else errs.push(required(p, 'port name or number is required'));
  return errs;
}

registerKindRules('networking.k8s.io', 'Ingress', {
  validate(o) {
    const s = spec(o);
    const errs: FieldError[] = [];
    const rules = asArr(s.rules).map((r) => asObj(r) ?? {});
    if (rules.length === 0 && !isSet(s.defaultBackend))
      errs.push(invalid('spec', asArr(s.rules), 'either `defaultBackend` or `rules` must be specified'));
    if (isSet(s.defaultBackend))
      errs.push(...validateBackend(asObj(s.defaultBackend) ?? {}, 'spec.defaultBackend'));
    rules.forEach((r, i) => {
      const rp = index('spec.rules', i);
      const host = asStr(r.host);
      if (host) {
        if (isValidIP(host).length === 0)
          errs.push(invalid(child(rp, 'host'), host, 'must be a DNS name, not an IP address'));
        const msgs = host.includes('*') ? isWildcardDNS1123Subdomain(host) : isDNS1123Subdomain(host);
        for (const m of msgs) errs.push(invalid(child(rp, 'host'), host, m));
      }
      const http = asObj(r.http);
      if (!http) return;
      const paths = asArr(http.paths);
      if (paths.length === 0) errs.push(required(child(rp, 'http.paths'), ''));
      paths.forEach((x, j) => {
        const path = asObj(x) ?? {};
        const pp = index(child(rp, 'http.paths'), j);
        const pt = asStr(path.pathType);
        if (!pt) errs.push(required(child(pp, 'pathType'), 'pathType must be specified'));
        else if (!PATH_TYPES.includes(pt)) errs.push(notSupported(child(pp, 'pathType'), pt, PATH_TYPES));
        else if ((pt === 'Prefix' || pt === 'Exact') && !asStr(path.path).startsWith('/'))
          errs.push(invalid(child(pp, 'path'), asStr(path.path), 'must be an absolute path'));
        errs.push(...validateBackend(asObj(path.backend) ?? {}, child(pp, 'backend')));
      });
    });
    return errs;
  },
});

registerKindRules('networking.k8s.io', 'IngressClass', {
  validate(o) {
    const s = spec(o);
    const controller = asStr(s.controller);
    const errs: FieldError[] = [];
    if (!controller) errs.push(required('spec.controller', ''));
    else if (controller.length > 250)
      errs.push({
        type: 'FieldValueTooLong',
        field: 'spec.controller',
        badValue: '',
        detail: 'must have at most 250 bytes',
      });
    else if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/./.test(controller))
      errs.push(
        invalid('spec.controller', controller, 'must be a domain-prefixed path (such as "acme.io/foo")'),
      );
    return errs;
  },
  validateUpdate: (o, old) =>
    validateImmutableField(spec(o).controller, spec(old).controller, 'spec.controller'),
});

// --- scheduling.k8s.io/v1 PriorityClass --------------------------------------------

const SYSTEM_PRIORITY_CLASSES = new Set(['system-node-critical', 'system-cluster-critical']);

registerKindRules('scheduling.k8s.io', 'PriorityClass', {
  validate(o) {
    const errs: FieldError[] = [];
    const name = asStr(asObj(o.metadata)?.name);
    const value = typeof o.value === 'number' ? o.value : 0;
    if (name.startsWith('system-')) {
      if (!SYSTEM_PRIORITY_CLASSES.has(name))
        errs.push(
          forbidden(
            'metadata.name',
            "priority class names with 'system-' prefix are reserved for system use only",
          ),
        );
    } else if (value > 1000000000)
      errs.push(forbidden('value', 'maximum allowed value of a user defined priority is 1000000000'));
    return errs;
  },
  validateUpdate: (o, old) => [
    ...validateImmutableField(o.value, old.value, 'value'),
    ...validateImmutableField(o.preemptionPolicy, old.preemptionPolicy, 'preemptionPolicy'),
  ],
});

// --- autoscaling/v2 HorizontalPodAutoscaler ----------------------------------------

registerKindRules('autoscaling', 'HorizontalPodAutoscaler', {
  validate(o) {
    const s = spec(o);
    const errs: FieldError[] = [];
    if (typeof s.minReplicas === 'number' && s.minReplicas < 1)
      errs.push(invalid('spec.minReplicas', s.minReplicas, 'must be greater than or equal to 1'));
    const max = typeof s.maxReplicas === 'number' ? s.maxReplicas : 0;
    if (max < 1) errs.push(invalid('spec.maxReplicas', max, 'must be greater than 0'));
    if (typeof s.minReplicas === 'number' && max < s.minReplicas)
      errs.push(invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
    const ref = asObj(s.scaleTargetRef) ?? {};
    for (const f of ['kind', 'name']) {
      const v = asStr(ref[f]);
      if (!v) errs.push(required(`spec.scaleTargetRef.${f}`, ''));
      else for (const m of nameIsPathSegment(v, false)) errs.push(invalid(`spec.scaleTargetRef.${f}`, v, m));
    }
    return errs;
  },
});
