// Printers of cluster plumbing: storage, certificates, coordination,
// scheduling, node, apiregistration, dynamic resource allocation, storage
// versions and migrations.
import {
  age,
  column,
  humanDuration,
  int,
  listWithMore,
  nameColumn,
  ageColumn,
  type Printer,
} from './printers-util';

const annotation = (obj: any, key: string): string | undefined => obj.metadata?.annotations?.[key];

const storageClasses: Printer = {
  columns: [
    nameColumn(),
    column('Provisioner', 'string', 'Provisioner that creates the volumes.'),
    column('ReclaimPolicy', 'string', 'What happens to released volumes.'),
    column('VolumeBindingMode', 'string', 'When volumes are bound and provisioned.'),
    column('AllowVolumeExpansion', 'string', 'Whether claims may grow.'),
    ageColumn(),
  ],
  cells(sc, now) {
    const isDefault =
      annotation(sc, 'storageclass.kubernetes.io/is-default-class') === 'true' ||
      annotation(sc, 'storageclass.beta.kubernetes.io/is-default-class') === 'true';
    return [
      (sc.metadata?.name ?? '') + (isDefault ? ' (default)' : ''),
      sc.provisioner ?? '',
      sc.reclaimPolicy ?? 'Delete',
      sc.volumeBindingMode ?? 'Immediate',
      sc.allowVolumeExpansion === true,
      age(sc, now),
    ];
  },
};

const volumeAttributesClasses: Printer = {
  columns: [nameColumn(), column('DriverName', 'string', 'CSI driver of the class.'), ageColumn()],
  cells: (vac, now) => [vac.metadata?.name ?? '', vac.driverName ?? '', age(vac, now)],
};

const volumeAttachments: Printer = {
  columns: [
    nameColumn(),
    // Kubernetes marks this one as a name too.
    column('Attacher', 'string', 'Driver that attaches the volume.', { format: 'name' }),
    column('PV', 'string', 'Persistent volume being attached.'),
    column('Node', 'string', 'Node the volume is attached to.'),
    column('Attached', 'boolean', 'Whether the attach succeeded.'),
    ageColumn(),
  ],
  cells: (va, now) => [
    va.metadata?.name ?? '',
    va.spec?.attacher ?? '',
    va.spec?.source?.persistentVolumeName ?? '',
    va.spec?.nodeName ?? '',
    va.status?.attached === true,
    age(va, now),
  ],
};

const csiNodes: Printer = {
  columns: [nameColumn(), column('Drivers', 'integer', 'Number of CSI drivers on the node.'), ageColumn()],
  cells: (n, now) => [n.metadata?.name ?? '', n.spec?.drivers?.length ?? 0, age(n, now)],
};

const csiDrivers: Printer = {
  columns: [
    nameColumn(),
    column('AttachRequired', 'boolean', 'Whether volumes need an attach step.'),
    column('PodInfoOnMount', 'boolean', 'Whether pod details are passed on mount.'),
    column('StorageCapacity', 'boolean', 'Whether the driver reports capacity.'),
    column('TokenRequests', 'string', 'Audiences of the tokens passed on mount.'),
    column('RequiresRepublish', 'boolean', 'Whether volumes are mounted again periodically.'),
    column('Modes', 'string', 'Volume lifecycle modes the driver supports.'),
    ageColumn(),
  ],
  cells(d, now) {
    const spec = d.spec ?? {};
    const modes: string[] = spec.volumeLifecycleModes ?? [];
    const tokens: any[] | undefined = spec.tokenRequests;
    return [
      d.metadata?.name ?? '',
      spec.attachRequired !== false,
      spec.podInfoOnMount === true,
      spec.storageCapacity === true,
      tokens ? tokens.map((t) => t?.audience ?? '').join(',') : '<unset>',
      spec.requiresRepublish === true,
      modes.length > 0 ? modes.join(',') : '<none>',
      age(d, now),
    ];
  },
};

// ---------------------------------------------------------------------------
// Certificates

function csrCondition(csr: any): string {
  let approved = false;
  let denied = false;
  let failed = false;
  for (const c of csr.status?.conditions ?? []) {
    if (c?.type === 'Approved') approved = true;
    else if (c?.type === 'Denied') denied = true;
    else if (c?.type === 'Failed') failed = true;
  }
  let s = denied ? 'Denied' : approved ? 'Approved' : 'Pending';
  if (failed) s += ',Failed';
  if (csr.status?.certificate) s += ',Issued';
  return s;
}

const certificateSigningRequests: Printer = {
  columns: [
    nameColumn(),
    ageColumn(),
    column('SignerName', 'string', 'Signer asked to sign the certificate.'),
    column('Requestor', 'string', 'User who created the request.'),
    column('RequestedDuration', 'string', 'Validity asked for.'),
    column('Condition', 'string', 'Approval state of the request.'),
  ],
  cells(csr, now) {
    const secs = csr.spec?.expirationSeconds;
    return [
      csr.metadata?.name ?? '',
      age(csr, now),
      csr.spec?.signerName || '<none>',
      csr.spec?.username ?? '',
      typeof secs === 'number' ? humanDuration(secs * 1000) : '<none>',
      csrCondition(csr),
    ];
  },
};

const clusterTrustBundles: Printer = {
  columns: [nameColumn(), column('SignerName', 'string', 'Signer of the bundled certificates.')],
  cells: (b) => [b.metadata?.name ?? '', b.spec?.signerName || '<none>'],
};

// ---------------------------------------------------------------------------
// Coordination, scheduling, node

const leases: Printer = {
  columns: [nameColumn(), column('Holder', 'string', 'Identity of the current holder.'), ageColumn()],
  cells: (l, now) => [l.metadata?.name ?? '', l.spec?.holderIdentity ?? '', age(l, now)],
};

const leaseCandidates: Printer = {
  columns: [
    nameColumn(),
    column('LeaseName', 'string', 'Lease the candidate runs for.'),
    column('BinaryVersion', 'string', 'Binary version of the candidate.'),
    column('EmulationVersion', 'string', 'Emulation version of the candidate.'),
    ageColumn(),
  ],
  cells: (c, now) => [
    c.metadata?.name ?? '',
    c.spec?.leaseName ?? '',
    c.spec?.binaryVersion ?? '',
    c.spec?.emulationVersion ?? '',
    age(c, now),
  ],
};

const priorityClasses: Printer = {
  columns: [
    nameColumn(),
    column('Value', 'integer', 'Priority of pods of the class.'),
    column('Global-Default', 'boolean', 'Whether pods without a class get this one.'),
    ageColumn(),
    column('PreemptionPolicy', 'string', 'Whether pods of the class preempt others.'),
  ],
  cells: (pc, now) => [
    pc.metadata?.name ?? '',
    int(pc.value),
    pc.globalDefault === true,
    age(pc, now),
    pc.preemptionPolicy ?? '',
  ],
};

const runtimeClasses: Printer = {
  columns: [nameColumn(), column('Handler', 'string', 'Runtime handler of the class.'), ageColumn()],
  cells: (rc, now) => [rc.metadata?.name ?? '', rc.handler ?? '', age(rc, now)],
};

// ---------------------------------------------------------------------------
// API registration

const apiServices: Printer = {
  columns: [
    nameColumn(),
    column('Service', 'string', 'Service that serves the API, or Local.'),
    column('Available', 'string', 'Whether the API is reachable.'),
    ageColumn(),
  ],
  cells(svc, now) {
    const ref = svc.spec?.service;
    let available = 'Unknown';
    for (const c of svc.status?.conditions ?? []) {
      if (c?.type !== 'Available') continue;
      available = c.status !== 'True' && c.reason ? `${c.status} (${c.reason})` : (c.status ?? '');
      break;
    }
    return [
      svc.metadata?.name ?? '',
      ref ? `${ref.namespace ?? ''}/${ref.name ?? ''}` : 'Local',
      available,
      age(svc, now),
    ];
  },
  // The aggregator's convertor ignores the no-headers option of watches.
  alwaysHeaders: true,
};

// ---------------------------------------------------------------------------
// Dynamic resource allocation

const nameAge: Printer = {
  columns: [nameColumn(), ageColumn()],
  cells: (o, now) => [o.metadata?.name ?? '', age(o, now)],
};

function claimState(claim: any): string {
  const states: string[] = [];
  const deleted = !!claim.metadata?.deletionTimestamp;
  if (deleted) states.push('deleted');
  if (!claim.status?.allocation) {
    if (!deleted) states.push('pending');
  } else {
    states.push('allocated');
    if (claim.status.reservedFor?.length) states.push('reserved');
  }
  return states.join(',');
}

const resourceClaims: Printer = {
  columns: [nameColumn(), column('State', 'string', 'Summary of the claim state.'), ageColumn()],
  cells: (c, now) => [c.metadata?.name ?? '', claimState(c), age(c, now)],
};

const resourceSlices: Printer = {
  columns: [
    nameColumn(),
    column('Node', 'string', 'Node the devices are local to.'),
    column('Driver', 'string', 'Driver that publishes the slice.'),
    column('Pool', 'string', 'Pool the slice belongs to.'),
    ageColumn(),
  ],
  cells: (s, now) => [
    s.metadata?.name ?? '',
    s.spec?.nodeName ?? '',
    s.spec?.driver ?? '',
    s.spec?.pool?.name ?? '',
    age(s, now),
  ],
};

// ---------------------------------------------------------------------------
// Storage versions and migrations

const storageVersions: Printer = {
  columns: [
    nameColumn(),
    column('CommonEncodingVersion', 'string', 'Encoding version all servers agree on.'),
    column('StorageVersions', 'string', 'Encoding version of each server.'),
    ageColumn(),
  ],
  cells(sv, now) {
    const list: string[] = [];
    const max = 3;
    let more = false;
    let count = 0;
    for (const v of sv.status?.storageVersions ?? []) {
      if (list.length < max) list.push(`${v?.apiServerID ?? ''}=${v?.encodingVersion ?? ''}`);
      else if (list.length === max) more = true;
      count++;
    }
    return [
      sv.metadata?.name ?? '',
      sv.status?.commonEncodingVersion ?? '<unset>',
      listWithMore(list, more, count, max),
      age(sv, now),
    ];
  },
};

const storageVersionMigrations: Printer = {
  columns: [
    column('Name', 'string', 'Name of the migration.'),
    column('Resource', 'string', 'Resource migrated.'),
  ],
  cells(m) {
    const r = m.spec?.resource ?? {};
    const resource = r.version
      ? `${r.resource ?? ''}.${r.version}.${r.group ?? ''}`
      : `${r.resource ?? ''}.${r.group ?? ''}`;
    return [m.metadata?.name ?? '', resource];
  },
};

export const clusterPrinters: Record<string, Printer> = {
  'storage.k8s.io/StorageClass': storageClasses,
  'storage.k8s.io/VolumeAttributesClass': volumeAttributesClasses,
  'storage.k8s.io/VolumeAttachment': volumeAttachments,
  'storage.k8s.io/CSINode': csiNodes,
  'storage.k8s.io/CSIDriver': csiDrivers,
  'certificates.k8s.io/CertificateSigningRequest': certificateSigningRequests,
  'certificates.k8s.io/ClusterTrustBundle': clusterTrustBundles,
  'coordination.k8s.io/Lease': leases,
  'coordination.k8s.io/LeaseCandidate': leaseCandidates,
  'scheduling.k8s.io/PriorityClass': priorityClasses,
  'node.k8s.io/RuntimeClass': runtimeClasses,
  'apiregistration.k8s.io/APIService': apiServices,
  'resource.k8s.io/DeviceClass': nameAge,
  'resource.k8s.io/ResourceClaim': resourceClaims,
  'resource.k8s.io/ResourceClaimTemplate': nameAge,
  'resource.k8s.io/ResourceSlice': resourceSlices,
  'internal.apiserver.k8s.io/StorageVersion': storageVersions,
  'storagemigration.k8s.io/StorageVersionMigration': storageVersionMigrations,
};
