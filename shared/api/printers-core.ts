// Printers of the core group other than pods and events: services,
// endpoints, nodes, namespaces, configuration, volumes, quotas.
import {
  age,
  column,
  conditionStatus,
  formatLabels,
  joinHostPort,
  nameColumn,
  ageColumn,
  quantity,
  wide,
  type Printer,
} from './printers-util';

/** IPs or hostnames of load-balancer ingress points: sorted, unique, comma-joined. */
export function loadBalancerAddresses(ingress: any[] | null | undefined): string {
  if (!ingress || ingress.length === 0) return '';
  const set = new Set<string>();
  for (const i of ingress) {
    if (i?.ip) set.add(i.ip);
    else if (i?.hostname) set.add(i.hostname);
  }
  return [...set].sort().join(',');
}

function serviceExternalIP(svc: any): string {
  const spec = svc.spec ?? {};
  const externalIPs: string[] = spec.externalIPs ?? [];
  switch (spec.type) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      // The server prints wide, so the addresses are never clipped.
      const lb = loadBalancerAddresses(svc.status?.loadBalancer?.ingress);
      if (externalIPs.length > 0) return (lb ? [...lb.split(','), ...externalIPs] : externalIPs).join(',');
      return lb || '<pending>';
    }
    case 'ExternalName':
      return spec.externalName ?? '';
    default:
      return '<unknown>';
  }
}

/** "80/TCP,443:30443/TCP": port, node port when set, protocol. */
export function servicePorts(ports: any[] | null | undefined): string {
  if (!ports || ports.length === 0) return '<none>';
  let s = '';
  for (let i = 0; i < ports.length; i++) {
    const p = ports[i];
    if (i > 0) s += ',';
    s += p.nodePort > 0 ? `${p.port}:${p.nodePort}/${p.protocol ?? ''}` : `${p.port}/${p.protocol ?? ''}`;
  }
  return s;
}

const services: Printer = {
  columns: [
    nameColumn(),
    column('Type', 'string', 'How the service is exposed.'),
    column('Cluster-IP', 'string', 'Virtual IP of the service inside the cluster.'),
    column('External-IP', 'string', 'Addresses the service is reachable at from outside.'),
    column('Port(s)', 'string', 'Ports the service exposes.'),
    ageColumn(),
    wide('Selector', 'string', 'Labels of the pods that back the service.'),
  ],
  cells(svc, now) {
    return [
      svc.metadata?.name ?? '',
      svc.spec?.type ?? '',
      svc.spec?.clusterIPs?.[0] ?? '<none>',
      serviceExternalIP(svc),
      servicePorts(svc.spec?.ports),
      age(svc, now),
      formatLabels(svc.spec?.selector),
    ];
  },
};

/** Up to three host:port endpoints, then "+ N more...". */
function formatEndpoints(subsets: any[] | null | undefined): string {
  if (!subsets || subsets.length === 0) return '<none>';
  const list: string[] = [];
  const max = 3;
  let more = false;
  let count = 0;
  for (const ss of subsets) {
    const addresses: any[] = ss?.addresses ?? [];
    const ports: any[] = ss?.ports ?? [];
    if (ports.length === 0) {
      // Headless services may have no ports.
      count += addresses.length;
      for (const a of addresses) {
        if (list.length === max) {
          more = true;
          break;
        }
        list.push(a.ip);
      }
      continue;
    }
    for (const port of ports) {
      count += addresses.length;
      for (const a of addresses) {
        if (list.length === max) {
          more = true;
          break;
        }
        list.push(joinHostPort(a.ip, port.port));
      }
    }
  }
  const s = list.join(',');
  return more ? `${s} + ${count - max} more...` : s;
}

const endpoints: Printer = {
  columns: [
    nameColumn(),
    column('Endpoints', 'string', 'Addresses and ports of the endpoints.'),
    ageColumn(),
  ],
  cells: (obj, now) => [obj.metadata?.name ?? '', formatEndpoints(obj.subsets), age(obj, now)],
};

// ---------------------------------------------------------------------------
// Nodes

const NODE_ROLE_PREFIX = 'node-role.kubernetes.io/';

/** Roles from node-role.kubernetes.io/<role> labels and the legacy kubernetes.io/role label. */
export function nodeRoles(labels: Record<string, string> | null | undefined): string {
  if (!labels) return '<none>';
  const roles = new Set<string>();
  for (const k of Object.keys(labels)) {
    if (k.startsWith(NODE_ROLE_PREFIX)) {
      const role = k.slice(NODE_ROLE_PREFIX.length);
      if (role) roles.add(role);
    } else if (k === 'kubernetes.io/role' && labels[k] !== '') {
      roles.add(labels[k]);
    }
  }
  return roles.size === 0 ? '<none>' : [...roles].sort().join(',');
}

function nodeAddress(node: any, type: string): string {
  for (const a of node.status?.addresses ?? []) if (a?.type === type) return a.address;
  return '<none>';
}

const nodes: Printer = {
  columns: [
    nameColumn(),
    column('Status', 'string', 'Readiness of the node, and whether it takes new pods.'),
    column('Roles', 'string', 'Roles of the node, from its node-role labels.'),
    ageColumn(),
    column('Version', 'string', 'Version of the node agent.'),
    wide('Internal-IP', 'string', 'First internal address of the node.'),
    wide('External-IP', 'string', 'First external address of the node.'),
    wide('OS-Image', 'string', 'Operating system image of the node.'),
    wide('Kernel-Version', 'string', 'Kernel version of the node.'),
    wide('Container-Runtime', 'string', 'Container runtime and its version.'),
  ],
  cells(node, now) {
    const ready = conditionStatus(node.status?.conditions, 'Ready');
    let status = ready === undefined ? 'Unknown' : ready === 'True' ? 'Ready' : 'NotReady';
    if (node.spec?.unschedulable) status += ',SchedulingDisabled';
    const info = node.status?.nodeInfo ?? {};
    return [
      node.metadata?.name ?? '',
      status,
      nodeRoles(node.metadata?.labels),
      age(node, now),
      info.kubeletVersion ?? '',
      nodeAddress(node, 'InternalIP'),
      nodeAddress(node, 'ExternalIP'),
      info.osImage || '<unknown>',
      info.kernelVersion || '<unknown>',
      info.containerRuntimeVersion || '<unknown>',
    ];
  },
};

// ---------------------------------------------------------------------------
// Configuration and small kinds

const namespaces: Printer = {
  columns: [nameColumn(), column('Status', 'string', 'Lifecycle phase of the namespace.'), ageColumn()],
  cells: (ns, now) => [ns.metadata?.name ?? '', ns.status?.phase ?? '', age(ns, now)],
};

const countKeys = (m: unknown): number => (m && typeof m === 'object' ? Object.keys(m).length : 0);

const secrets: Printer = {
  columns: [
    nameColumn(),
    column('Type', 'string', 'Type of the secret.'),
    column('Data', 'string', 'Number of data entries.'),
    ageColumn(),
  ],
  cells: (s, now) => [s.metadata?.name ?? '', s.type ?? '', countKeys(s.data), age(s, now)],
};

const configMaps: Printer = {
  columns: [nameColumn(), column('Data', 'string', 'Number of data and binary data entries.'), ageColumn()],
  cells: (cm, now) => [cm.metadata?.name ?? '', countKeys(cm.data) + countKeys(cm.binaryData), age(cm, now)],
};

const serviceAccounts: Printer = {
  columns: [
    nameColumn(),
    column('Secrets', 'string', 'Number of secrets listed in the account.'),
    ageColumn(),
  ],
  cells: (sa, now) => [sa.metadata?.name ?? '', sa.secrets?.length ?? 0, age(sa, now)],
};

/** RWO,ROX,RWX,RWOP in that order, whatever order the spec lists them in. */
export function accessModes(modes: string[] | null | undefined): string {
  if (!modes || modes.length === 0) return '';
  const out: string[] = [];
  if (modes.includes('ReadWriteOnce')) out.push('RWO');
  if (modes.includes('ReadOnlyMany')) out.push('ROX');
  if (modes.includes('ReadWriteMany')) out.push('RWX');
  if (modes.includes('ReadWriteOncePod')) out.push('RWOP');
  return out.join(',');
}

const BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';

/** The storage class of a PV or PVC: the beta annotation wins over spec.storageClassName. */
function storageClassOf(obj: any): string {
  const ann = obj.metadata?.annotations;
  if (ann && Object.prototype.hasOwnProperty.call(ann, BETA_STORAGE_CLASS)) return ann[BETA_STORAGE_CLASS];
  return obj.spec?.storageClassName ?? '';
}

const persistentVolumes: Printer = {
  columns: [
    nameColumn(),
    column('Capacity', 'string', 'Storage capacity of the volume.'),
    column('Access Modes', 'string', 'Ways the volume can be mounted.'),
    column('Reclaim Policy', 'string', 'What happens to the volume when its claim is released.'),
    column('Status', 'string', 'Phase of the volume.'),
    column('Claim', 'string', 'Claim bound to the volume.'),
    column('StorageClass', 'string', 'Storage class of the volume.'),
    column('VolumeAttributesClass', 'string', 'Volume attributes class of the volume.'),
    column('Reason', 'string', 'Why the volume is in its phase.'),
    ageColumn(),
    wide('VolumeMode', 'string', 'Filesystem or Block.'),
  ],
  cells(pv, now) {
    const spec = pv.spec ?? {};
    const claim = spec.claimRef ? `${spec.claimRef.namespace ?? ''}/${spec.claimRef.name ?? ''}` : '';
    return [
      pv.metadata?.name ?? '',
      quantity(spec.capacity?.storage),
      accessModes(spec.accessModes),
      spec.persistentVolumeReclaimPolicy ?? '',
      pv.metadata?.deletionTimestamp ? 'Terminating' : (pv.status?.phase ?? ''),
      claim,
      storageClassOf(pv),
      spec.volumeAttributesClassName ?? '<unset>',
      pv.status?.reason ?? '',
      age(pv, now),
      spec.volumeMode ?? '<unset>',
    ];
  },
};

const persistentVolumeClaims: Printer = {
  columns: [
    nameColumn(),
    column('Status', 'string', 'Phase of the claim.'),
    column('Volume', 'string', 'Volume bound to the claim.'),
    column('Capacity', 'string', 'Storage capacity of the bound volume.'),
    column('Access Modes', 'string', 'Ways the bound volume can be mounted.'),
    column('StorageClass', 'string', 'Storage class of the claim.'),
    column('VolumeAttributesClass', 'string', 'Volume attributes class of the claim.'),
    ageColumn(),
    wide('VolumeMode', 'string', 'Filesystem or Block.'),
  ],
  cells(pvc, now) {
    const spec = pvc.spec ?? {};
    const bound = !!spec.volumeName;
    return [
      pvc.metadata?.name ?? '',
      pvc.metadata?.deletionTimestamp ? 'Terminating' : (pvc.status?.phase ?? ''),
      spec.volumeName ?? '',
      bound ? quantity(pvc.status?.capacity?.storage) : '',
      bound ? accessModes(pvc.status?.accessModes) : '',
      storageClassOf(pvc),
      spec.volumeAttributesClassName ?? '<unset>',
      age(pvc, now),
      spec.volumeMode ?? '<unset>',
    ];
  },
};

const componentStatuses: Printer = {
  columns: [
    nameColumn(),
    column('Status', 'string', 'Health of the component.'),
    column('Message', 'string', 'Message of the health condition.'),
    column('Error', 'string', 'Error of the health condition.'),
  ],
  cells(cs) {
    let status = 'Unknown';
    let message = '';
    let error = '';
    for (const c of cs.conditions ?? []) {
      if (c?.type === 'Healthy') {
        status = c.status === 'True' ? 'Healthy' : 'Unhealthy';
        message = c.message ?? '';
        error = c.error ?? '';
        break;
      }
    }
    return [cs.metadata?.name ?? '', status, message, error];
  },
};

const resourceQuotas: Printer = {
  columns: [
    nameColumn(),
    column('Request', 'string', 'Used and hard amounts of the quota, other than limits.'),
    column('Limit', 'string', 'Used and hard amounts of the limits.* resources.'),
    ageColumn(),
  ],
  cells(rq, now) {
    const hard: Record<string, unknown> = rq.status?.hard ?? {};
    const used: Record<string, unknown> = rq.status?.used ?? {};
    const names = Object.keys(hard).sort();
    const requests: string[] = [];
    const limits: string[] = [];
    for (const n of names) {
      const entry = `${n}: ${quantity(used[n])}/${quantity(hard[n])}`;
      const dot = n.indexOf('.');
      (dot > 0 && n.slice(0, dot) === 'limits' ? limits : requests).push(entry);
    }
    return [rq.metadata?.name ?? '', requests.join(', '), limits.join(', '), age(rq, now)];
  },
};

export const corePrinters: Record<string, Printer> = {
  '/Service': services,
  '/Endpoints': endpoints,
  '/Node': nodes,
  '/Namespace': namespaces,
  '/Secret': secrets,
  '/ConfigMap': configMaps,
  '/ServiceAccount': serviceAccounts,
  '/PersistentVolume': persistentVolumes,
  '/PersistentVolumeClaim': persistentVolumeClaims,
  '/ComponentStatus': componentStatuses,
  '/ResourceQuota': resourceQuotas,
};
