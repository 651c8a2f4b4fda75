// core/v1 Service (pkg/apis/core/validation ValidateService, ValidateServiceUpdate).
import type { FieldError } from '../field-errors';
import { duplicate, forbidden, invalid, notSupported, required } from '../field-errors';
import { validateLabels } from './metadata';
import { isDNS1123Label, isDNS1123Subdomain, isValidIP, isValidPortNum } from './names';
import { asArr, asObj, asStr, child, index, isSet, type Obj } from './path';
import { validatePortNumOrName } from './pod-spec';
import { registerKindRules } from './registry';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const spec = (o: Obj) => asObj(o.spec) ?? {};

const externallyAccessible = (s: Obj) =>
  s.type === 'LoadBalancer' ||
  s.type === 'NodePort' ||
  (s.type === 'ClusterIP' && asArr(s.externalIPs).length > 0);

function validateService(o: Obj): FieldError[] {
  const s = spec(o);
  const errs: FieldError[] = [];
  const ports = asArr(s.ports).map((p) => asObj(p) ?? {});
  const type = asStr(s.type);
  const headless = s.clusterIP === 'None';
  if (ports.length === 0 && !headless && type !== 'ExternalName') errs.push(required('spec.ports', ''));
  if (type === 'LoadBalancer' && headless)
    errs.push(invalid('spec.clusterIP', s.clusterIP, "may not be set to 'None' for LoadBalancer services"));
  if (type === 'LoadBalancer')
    ports.forEach((p, i) => {
      if (p.port === 10250)
        errs.push(
          invalid(
            index('spec.ports', i),
            p.port,
            'may not expose port 10250 externally since it is used by kubelet',
          ),
        );
    });
  if (type === 'NodePort' && headless)
    errs.push(invalid('spec.clusterIP', s.clusterIP, "may not be set to 'None' for NodePort services"));
  if (type === 'ExternalName') {
    if (asArr(s.clusterIPs).length > 0)
      errs.push(forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
    if (asArr(s.ipFamilies).length > 0)
      errs.push(forbidden('spec.ipFamilies', 'may not be set for ExternalName services'));
    if (isSet(s.ipFamilyPolicy))
      errs.push(forbidden('spec.ipFamilyPolicy', 'may not be set for ExternalName services'));
    const cname = asStr(s.externalName).replace(/\.$/, '');
    if (cname) for (const m of isDNS1123Subdomain(cname)) errs.push(invalid('spec.externalName', cname, m));
    else errs.push(required('spec.externalName', ''));
  }
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const ip = index('spec.ports', i);
    const name = asStr(p.name);
    if (ports.length > 1 && !name) errs.push(required(child(ip, 'name'), ''));
    else if (name) {
      for (const m of isDNS1123Label(name)) errs.push(invalid(child(ip, 'name'), name, m));
      if (names.has(name)) errs.push(duplicate(child(ip, 'name'), name));
      else names.add(name);
    }
    const port = typeof p.port === 'number' ? p.port : 0;
    for (const m of isValidPortNum(port)) errs.push(invalid(child(ip, 'port'), port, m));
    const proto = asStr(p.protocol);
    if (!proto) errs.push(required(child(ip, 'protocol'), ''));
    else if (!PROTOCOLS.includes(proto)) errs.push(notSupported(child(ip, 'protocol'), proto, PROTOCOLS));
    errs.push(...validatePortNumOrName(p.targetPort, child(ip, 'targetPort')));
  });
  if (isSet(s.selector)) errs.push(...validateLabels(s.selector, 'spec.selector'));
  const affinity = asStr(s.sessionAffinity);
  if (!affinity) errs.push(required('spec.sessionAffinity', ''));
  else if (affinity === 'None' && isSet(s.sessionAffinityConfig))
    errs.push(forbidden('spec.sessionAffinityConfig', 'must not be set when session affinity is None'));
  const clusterIPs = asArr(s.clusterIPs).map(asStr);
  const clusterIP = asStr(s.clusterIP);
  if (clusterIP && clusterIP !== 'None')
    for (const m of isValidIP(clusterIP)) errs.push(invalid('spec.clusterIPs[0]', clusterIP, m));
  if (clusterIPs.length > 0 && clusterIP !== clusterIPs[0])
    errs.push(invalid('spec.clusterIPs', clusterIPs, 'first value must match `clusterIP`'));
  asArr(s.externalIPs).forEach((x, i) => {
    for (const m of isValidIP(asStr(x))) errs.push(invalid(index('spec.externalIPs', i), x, m));
  });
  if (!type) errs.push(required('spec.type', ''));
  else if (!SERVICE_TYPES.includes(type)) errs.push(notSupported('spec.type', type, SERVICE_TYPES));
  if (type === 'ClusterIP')
    ports.forEach((p, i) => {
      if (typeof p.nodePort === 'number' && p.nodePort !== 0)
        errs.push(
          forbidden(child(index('spec.ports', i), 'nodePort'), "may not be used when `type` is 'ClusterIP'"),
        );
    });
  const nodePorts = new Set<string>();
  ports.forEach((p, i) => {
    if (typeof p.nodePort !== 'number' || p.nodePort === 0) return;
    const k = `${asStr(p.protocol)}/${p.nodePort}`;
    if (nodePorts.has(k)) errs.push(duplicate(child(index('spec.ports', i), 'nodePort'), p.nodePort));
    nodePorts.add(k);
  });
  const seen = new Set<string>();
  ports.forEach((p, i) => {
    const k = `${asStr(p.protocol)}/${String(p.port)}`;
    if (seen.has(k)) errs.push(duplicate(index('spec.ports', i), { port: p.port, protocol: p.protocol }));
    seen.add(k);
  });
  if (!externallyAccessible(s)) {
    if (asStr(s.externalTrafficPolicy))
      errs.push(
        invalid(
          'spec.externalTrafficPolicy',
          s.externalTrafficPolicy,
          'may only be set for externally-accessible services',
        ),
      );
  } else if (!asStr(s.externalTrafficPolicy)) errs.push(required('spec.externalTrafficPolicy', ''));
  return errs;
}

registerKindRules('', 'Service', {
  validate: validateService,
  validateUpdate(o, old) {
    const s = spec(o);
    const os = spec(old);
    if (s.type === 'ExternalName' || os.type === 'ExternalName') return [];
    const errs: FieldError[] = [];
    const now = asArr(s.clusterIPs).map(asStr);
    asArr(os.clusterIPs)
      .map(asStr)
      .forEach((ip, i) => {
        if (i < now.length && now[i] !== ip && !(i === 0 && !now[0]))
          errs.push(invalid(index('spec.clusterIPs', i), now[i], 'may not change once set'));
      });
    return errs;
  },
});
