// Printers of networking, discovery, RBAC, admission and flow-control kinds.
import { loadBalancerAddresses } from './printers-core';
import {
  age,
  column,
  formatLabelSelector,
  int,
  labelSelectorString,
  listWithMore,
  nameColumn,
  ageColumn,
  wide,
  type Printer,
} from './printers-util';

/** Up to three hosts of the rules, "*" when none names a host. */
function ingressHosts(rules: any[] | null | undefined): string {
  const list: string[] = [];
  const max = 3;
  let more = false;
  for (const rule of rules ?? []) {
    if (list.length === max) more = true;
    if (!more && rule?.host) list.push(rule.host);
  }
  if (list.length === 0) return '*';
  const s = list.join(',');
  return more ? `${s} + ${(rules?.length ?? 0) - max} more...` : s;
}

const ingresses: Printer = {
  columns: [
    nameColumn(),
    column('Class', 'string', 'Ingress class that serves the ingress.'),
    column('Hosts', 'string', 'Hosts the rules match.'),
    column('Address', 'string', 'Addresses of the load balancer.'),
    column('Ports', 'string', 'Ports the ingress opens.'),
    ageColumn(),
  ],
  cells: (ing, now) => [
    ing.metadata?.name ?? '',
    ing.spec?.ingressClassName ?? '<none>',
    ingressHosts(ing.spec?.rules),
    loadBalancerAddresses(ing.status?.loadBalancer?.ingress),
    ing.spec?.tls?.length ? '80, 443' : '80',
    age(ing, now),
  ],
};

const ingressClasses: Printer = {
  columns: [
    nameColumn(),
    column('Controller', 'string', 'Controller that implements the class.'),
    column('Parameters', 'string', 'Object that holds parameters for the controller.'),
    ageColumn(),
  ],
  cells(ic, now) {
    const p = ic.spec?.parameters;
    const params = p ? `${p.kind ?? ''}${p.apiGroup ? '.' + p.apiGroup : ''}/${p.name ?? ''}` : '<none>';
    return [ic.metadata?.name ?? '', ic.spec?.controller ?? '', params, age(ic, now)];
  },
};

const networkPolicies: Printer = {
  columns: [nameColumn(), column('Pod-Selector', 'string', 'Pods the policy applies to.'), ageColumn()],
  // The pod selector is a struct, never nil: an absent one is the empty selector.
  cells: (np, now) => [
    np.metadata?.name ?? '',
    formatLabelSelector(np.spec?.podSelector ?? {}),
    age(np, now),
  ],
};

const serviceCIDRs: Printer = {
  columns: [nameColumn(), column('CIDRs', 'string', 'Ranges of service IPs.'), ageColumn()],
  cells: (sc, now) => [sc.metadata?.name ?? '', (sc.spec?.cidrs ?? []).join(','), age(sc, now)],
};

const ipAddresses: Printer = {
  columns: [nameColumn(), column('ParentRef', 'string', 'Object the address is allocated to.')],
  cells(ip, now) {
    const ref = ip.spec?.parentRef;
    let parent = '<none>';
    if (ref) {
      parent = (ref.group ? `${ref.resource ?? ''}.${ref.group}` : (ref.resource ?? '')).toLowerCase();
      if (ref.namespace) parent += '/' + ref.namespace;
      parent += '/' + (ref.name ?? '');
    }
    // Kubernetes sends an age cell without a column for it; kept for the same rows.
    return [ip.metadata?.name ?? '', parent, age(ip, now)];
  },
};

function slicePorts(ports: any[] | null | undefined): string {
  const list: string[] = [];
  const max = 3;
  let more = false;
  let count = 0;
  for (const p of ports ?? []) {
    if (list.length < max) {
      list.push(typeof p?.port === 'number' ? String(p.port) : typeof p?.name === 'string' ? p.name : '*');
    } else if (list.length === max) {
      more = true;
    }
    count++;
  }
  return listWithMore(list, more, count, max);
}

function sliceEndpoints(endpoints: any[] | null | undefined): string {
  const list: string[] = [];
  const max = 3;
  let more = false;
  let count = 0;
  for (const e of endpoints ?? []) {
    for (const a of e?.addresses ?? []) {
      if (list.length < max) list.push(a);
      else if (list.length === max) more = true;
      count++;
    }
  }
  return listWithMore(list, more, count, max);
}

const endpointSlices: Printer = {
  columns: [
    nameColumn(),
    column('AddressType', 'string', 'Address family of the endpoints.'),
    column('Ports', 'string', 'Ports of the slice.'),
    column('Endpoints', 'string', 'Addresses of the endpoints.'),
    ageColumn(),
  ],
  cells: (es, now) => [
    es.metadata?.name ?? '',
    es.addressType ?? '',
    slicePorts(es.ports),
    sliceEndpoints(es.endpoints),
    age(es, now),
  ],
};

// ---------------------------------------------------------------------------
// RBAC

function subjects(list: any[] | null | undefined): [string, string, string] {
  const users: string[] = [];
  const groups: string[] = [];
  const sas: string[] = [];
  for (const s of list ?? []) {
    if (s?.kind === 'ServiceAccount') sas.push(`${s.namespace ?? ''}/${s.name ?? ''}`);
    else if (s?.kind === 'User') users.push(s.name ?? '');
    else if (s?.kind === 'Group') groups.push(s.name ?? '');
  }
  return [users.join(', '), groups.join(', '), sas.join(', ')];
}

const bindingPrinter = (what: string): Printer => ({
  columns: [
    nameColumn(),
    column('Role', 'string', 'Role the binding grants.'),
    ageColumn(),
    wide('Users', 'string', `Users in the ${what}.`),
    wide('Groups', 'string', `Groups in the ${what}.`),
    wide('ServiceAccounts', 'string', `Service accounts in the ${what}.`),
  ],
  cells(b, now) {
    const [users, groups, sas] = subjects(b.subjects);
    return [
      b.metadata?.name ?? '',
      `${b.roleRef?.kind ?? ''}/${b.roleRef?.name ?? ''}`,
      age(b, now),
      users,
      groups,
      sas,
    ];
  },
});

// ---------------------------------------------------------------------------
// Admission

const webhooks: Printer = {
  columns: [
    nameColumn(),
    column('Webhooks', 'integer', 'Number of webhooks in the configuration.'),
    ageColumn(),
  ],
  cells: (w, now) => [w.metadata?.name ?? '', w.webhooks?.length ?? 0, age(w, now)],
};

const paramKind = (p: any): string =>
  p?.spec?.paramKind ? `${p.spec.paramKind.apiVersion ?? ''}/${p.spec.paramKind.kind ?? ''}` : '<unset>';

const policyPrinter = (field: 'validations' | 'mutations', title: string): Printer => ({
  columns: [
    nameColumn(),
    column(title, 'integer', `Number of ${field} of the policy.`),
    column('ParamKind', 'string', 'Kind of the objects that parameterize the policy.'),
    ageColumn(),
  ],
  cells: (p, now) => [p.metadata?.name ?? '', p.spec?.[field]?.length ?? 0, paramKind(p), age(p, now)],
});

function paramRef(b: any): string {
  const pr = b.spec?.paramRef;
  if (!pr) return '<unset>';
  if (pr.name) return pr.namespace ? `${pr.namespace}/${pr.name}` : `*/${pr.name}`;
  if (pr.selector) return labelSelectorString(pr.selector) ?? '';
  return '<unset>';
}

const policyBindings: Printer = {
  columns: [
    nameColumn(),
    column('PolicyName', 'string', 'Policy the binding binds.'),
    column('ParamRef', 'string', 'Parameter object of the binding.'),
    ageColumn(),
  ],
  cells: (b, now) => [b.metadata?.name ?? '', b.spec?.policyName ?? '', paramRef(b), age(b, now)],
};

// ---------------------------------------------------------------------------
// Flow control

const flowSchemas: Printer = {
  columns: [
    nameColumn(),
    column('PriorityLevel', 'string', 'Priority level the matched requests go to.'),
    column('MatchingPrecedence', 'string', 'Order in which schemas are matched; lower first.'),
    column('DistinguisherMethod', 'string', 'How matched requests are split into flows.'),
    ageColumn(),
    column('MissingPL', 'string', 'Whether the priority level it names does not exist.'),
  ],
  cells(fs, now) {
    let missing = '?';
    for (const c of fs.status?.conditions ?? []) {
      if (c?.type === 'Dangling') {
        missing = c.status ?? '';
        break;
      }
    }
    return [
      fs.metadata?.name ?? '',
      fs.spec?.priorityLevelConfiguration?.name ?? '',
      int(fs.spec?.matchingPrecedence),
      fs.spec?.distinguisherMethod?.type ?? '<none>',
      age(fs, now),
      missing,
    ];
  },
  // Lists print in matching order: precedence, then name.
  order: (items) =>
    [...items].sort((a, b) => {
      const pa = int(a?.spec?.matchingPrecedence);
      const pb = int(b?.spec?.matchingPrecedence);
      if (pa !== pb) return pa - pb;
      const na: string = a?.metadata?.name ?? '';
      const nb: string = b?.metadata?.name ?? '';
      return na < nb ? -1 : na > nb ? 1 : 0;
    }),
};

const priorityLevels: Printer = {
  columns: [
    nameColumn(),
    column('Type', 'string', 'Limited or Exempt.'),
    column('NominalConcurrencyShares', 'string', 'Share of the server concurrency.'),
    column('Queues', 'string', 'Number of queues.'),
    column('HandSize', 'string', 'Queues each flow is shuffled over.'),
    column('QueueLengthLimit', 'string', 'Requests a queue may hold.'),
    ageColumn(),
  ],
  cells(pl, now) {
    const limited = pl.spec?.limited;
    const queuing = limited?.limitResponse?.queuing;
    return [
      pl.metadata?.name ?? '',
      pl.spec?.type ?? '',
      limited ? int(limited.nominalConcurrencyShares) : '<none>',
      queuing ? int(queuing.queues) : '<none>',
      queuing ? int(queuing.handSize) : '<none>',
      queuing ? int(queuing.queueLengthLimit) : '<none>',
      age(pl, now),
    ];
  },
};

export const networkPrinters: Record<string, Printer> = {
  'networking.k8s.io/Ingress': ingresses,
  'networking.k8s.io/IngressClass': ingressClasses,
  'networking.k8s.io/NetworkPolicy': networkPolicies,
  'networking.k8s.io/ServiceCIDR': serviceCIDRs,
  'networking.k8s.io/IPAddress': ipAddresses,
  'discovery.k8s.io/EndpointSlice': endpointSlices,
  'rbac.authorization.k8s.io/RoleBinding': bindingPrinter('roleBinding'),
  'rbac.authorization.k8s.io/ClusterRoleBinding': bindingPrinter('clusterRoleBinding'),
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration': webhooks,
  'admissionregistration.k8s.io/MutatingWebhookConfiguration': webhooks,
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy': policyPrinter('validations', 'Validations'),
  'admissionregistration.k8s.io/MutatingAdmissionPolicy': policyPrinter('mutations', 'Mutations'),
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding': policyBindings,
  'admissionregistration.k8s.io/MutatingAdmissionPolicyBinding': policyBindings,
  'flowcontrol.apiserver.k8s.io/FlowSchema': flowSchemas,
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration': priorityLevels,
};
