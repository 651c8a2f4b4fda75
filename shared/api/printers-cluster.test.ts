import assert from 'node:assert/strict';
import { defaultPrinter, printedKinds, printerFor } from './printers';
import { builtinResources } from './catalog';
import { NOW, ago, M, H, D, row, names, clusterMeta } from './printers-testing';

describe('printers: storage, certificates, coordination, scheduling, aggregation', () => {
  it('storage class (default), CSI driver, CSI node, volume attachment', () => {
    const sc = {
      metadata: clusterMeta('standard', ago(D), {
        annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
      }),
      provisioner: 'rancher.io/local-path',
      volumeBindingMode: 'WaitForFirstConsumer',
    };
    assert.deepEqual(names('storage.k8s.io', 'StorageClass'), [
      'Name',
      'Provisioner',
      'ReclaimPolicy',
      'VolumeBindingMode',
      'AllowVolumeExpansion',
      'Age',
    ]);
    assert.deepEqual(row('storage.k8s.io', 'StorageClass', sc), [
      'standard (default)',
      'rancher.io/local-path',
      'Delete',
      'WaitForFirstConsumer',
      false,
      '24h',
    ]);
    assert.deepEqual(
      row('storage.k8s.io', 'CSIDriver', {
        metadata: clusterMeta('ebs.csi.aws.com'),
        spec: { attachRequired: true, volumeLifecycleModes: ['Persistent'] },
      }),
      ['ebs.csi.aws.com', true, false, false, '<unset>', false, 'Persistent', '24h'],
    );
    assert.deepEqual(
      row('storage.k8s.io', 'CSINode', {
        metadata: clusterMeta('worker-1'),
        spec: { drivers: [{ name: 'd' }] },
      }),
      ['worker-1', 1, '24h'],
    );
    assert.deepEqual(
      row('storage.k8s.io', 'VolumeAttachment', {
        metadata: clusterMeta('csi-123'),
        spec: { attacher: 'ebs.csi.aws.com', nodeName: 'worker-1', source: { persistentVolumeName: 'pv-1' } },
        status: { attached: true },
      }),
      ['csi-123', 'ebs.csi.aws.com', 'pv-1', 'worker-1', true, '24h'],
    );
  });

  it('certificate signing requests', () => {
    const csr = (conditions: any[], certificate?: string) => ({
      metadata: clusterMeta('csr-abc', ago(5 * M)),
      spec: {
        signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
        username: 'system:node:worker-1',
        expirationSeconds: 86400,
      },
      status: { conditions, certificate },
    });
    assert.deepEqual(names('certificates.k8s.io', 'CertificateSigningRequest'), [
      'Name',
      'Age',
      'SignerName',
      'Requestor',
      'RequestedDuration',
      'Condition',
    ]);
    assert.deepEqual(
      row(
        'certificates.k8s.io',
        'CertificateSigningRequest',
        csr([{ type: 'Approved', status: 'True' }], 'LS0t'),
      ),
      [
        'csr-abc',
        '5m',
        'kubernetes.io/kube-apiserver-client-kubelet',
        'system:node:worker-1',
        '24h',
        'Approved,Issued',
      ],
    );
    assert.equal(row('certificates.k8s.io', 'CertificateSigningRequest', csr([]))[5], 'Pending');
    assert.equal(
      row(
        'certificates.k8s.io',
        'CertificateSigningRequest',
        csr([{ type: 'Denied' }, { type: 'Failed' }]),
      )[5],
      'Denied,Failed',
    );
  });

  it('leases, priority classes, runtime classes', () => {
    assert.deepEqual(
      row('coordination.k8s.io', 'Lease', {
        metadata: clusterMeta('kube-scheduler', ago(2 * H)),
        spec: { holderIdentity: 'cp-1_4b1c' },
      }),
      ['kube-scheduler', 'cp-1_4b1c', '120m'],
    );
    assert.deepEqual(row('coordination.k8s.io', 'Lease', { metadata: clusterMeta('x'), spec: {} })[1], '');
    assert.deepEqual(
      row('scheduling.k8s.io', 'PriorityClass', {
        metadata: clusterMeta('system-node-critical'),
        value: 2000001000,
        preemptionPolicy: 'PreemptLowerPriority',
      }),
      ['system-node-critical', 2000001000, false, '24h', 'PreemptLowerPriority'],
    );
    assert.deepEqual(
      row('node.k8s.io', 'RuntimeClass', { metadata: clusterMeta('gvisor'), handler: 'runsc' }),
      ['gvisor', 'runsc', '24h'],
    );
  });

  it('API services: Local, service-backed, unavailable; headers always present', () => {
    const p = printerFor('apiregistration.k8s.io', 'APIService');
    assert.deepEqual(
      p.columns.map((c) => c.name),
      ['Name', 'Service', 'Available', 'Age'],
    );
    assert.equal(p.alwaysHeaders, true);
    assert.deepEqual(
      p.cells(
        {
          metadata: clusterMeta('v1.apps'),
          spec: { group: 'apps', version: 'v1' },
          status: { conditions: [{ type: 'Available', status: 'True' }] },
        },
        NOW,
      ),
      ['v1.apps', 'Local', 'True', '24h'],
    );
    assert.deepEqual(
      p.cells(
        {
          metadata: clusterMeta('v1beta1.metrics.k8s.io'),
          spec: { service: { namespace: 'kube-system', name: 'metrics-server' } },
          status: { conditions: [{ type: 'Available', status: 'False', reason: 'MissingEndpoints' }] },
        },
        NOW,
      ),
      ['v1beta1.metrics.k8s.io', 'kube-system/metrics-server', 'False (MissingEndpoints)', '24h'],
    );
  });

  it('dynamic resource allocation and storage versions', () => {
    assert.deepEqual(row('resource.k8s.io', 'ResourceClaim', { metadata: clusterMeta('gpu'), status: {} }), [
      'gpu',
      'pending',
      '24h',
    ]);
    assert.deepEqual(
      row('resource.k8s.io', 'ResourceClaim', {
        metadata: clusterMeta('gpu'),
        status: { allocation: {}, reservedFor: [{ name: 'p' }] },
      })[1],
      'allocated,reserved',
    );
    assert.deepEqual(
      row('internal.apiserver.k8s.io', 'StorageVersion', {
        metadata: clusterMeta('apps.deployments'),
        status: {
          commonEncodingVersion: 'apps/v1',
          storageVersions: [{ apiServerID: 'a', encodingVersion: 'apps/v1' }],
        },
      }),
      ['apps.deployments', 'apps/v1', 'a=apps/v1', '24h'],
    );
  });
});

describe('printers: default table and catalog coverage', () => {
  it('kinds without a printer: Name and Created At (RFC 3339)', () => {
    assert.deepEqual(
      defaultPrinter.columns.map((c) => [c.name, c.type, c.format, c.priority]),
      [
        ['Name', 'string', 'name', 0],
        ['Created At', 'date', '', 0],
      ],
    );
    for (const [g, k] of [
      ['', 'LimitRange'],
      ['rbac.authorization.k8s.io', 'Role'],
      ['apiextensions.k8s.io', 'CustomResourceDefinition'],
      ['storage.k8s.io', 'CSIStorageCapacity'],
    ]) {
      assert.equal(printerFor(g, k), defaultPrinter, `${g}/${k}`);
    }
    assert.deepEqual(
      row('', 'LimitRange', { metadata: { name: 'limits', creationTimestamp: '2024-04-01T08:30:00Z' } }),
      ['limits', '2024-04-01T08:30:00Z'],
    );
  });

  it('every printer: Name first, cells match columns, descriptions set', () => {
    for (const key of printedKinds()) {
      const slash = key.indexOf('/');
      const p = printerFor(key.slice(0, slash), key.slice(slash + 1));
      assert.ok(p.columns.length >= 2, key);
      for (const c of p.columns) {
        assert.ok(c.description.length > 0, `${key} ${c.name}`);
        assert.ok(['string', 'integer', 'number', 'boolean', 'date'].includes(c.type), `${key} ${c.name}`);
        assert.ok(c.priority === 0 || c.priority === 1, `${key} ${c.name}`);
      }
      // An empty object must not throw; Kubernetes sends one cell per column (IPAddress adds an age).
      const cells = p.cells({ metadata: { name: 'x', creationTimestamp: '2024-04-30T12:00:00Z' } }, NOW);
      const expected = key === 'networking.k8s.io/IPAddress' ? p.columns.length + 1 : p.columns.length;
      assert.equal(cells.length, expected, key);
    }
  });

  it('the kinds of the brief all have their printer', () => {
    const served = new Set(builtinResources().map((r) => `${r.group}/${r.kind}`));
    const wanted = [
      '/Pod',
      'apps/Deployment',
      'apps/ReplicaSet',
      'apps/StatefulSet',
      'apps/DaemonSet',
      'batch/Job',
      'batch/CronJob',
      '/Service',
      '/Endpoints',
      'discovery.k8s.io/EndpointSlice',
      '/Node',
      '/Namespace',
      '/Event',
      'events.k8s.io/Event',
      '/ConfigMap',
      '/Secret',
      '/ServiceAccount',
      'coordination.k8s.io/Lease',
      '/PersistentVolume',
      '/PersistentVolumeClaim',
      'storage.k8s.io/StorageClass',
      'networking.k8s.io/Ingress',
      'networking.k8s.io/IngressClass',
      'networking.k8s.io/NetworkPolicy',
      'rbac.authorization.k8s.io/RoleBinding',
      'rbac.authorization.k8s.io/ClusterRoleBinding',
      'scheduling.k8s.io/PriorityClass',
      'node.k8s.io/RuntimeClass',
      'policy/PodDisruptionBudget',
      'autoscaling/HorizontalPodAutoscaler',
      '/ResourceQuota',
      'certificates.k8s.io/CertificateSigningRequest',
      'apiregistration.k8s.io/APIService',
      'apps/ControllerRevision',
      '/PodTemplate',
      '/ReplicationController',
      'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
      'admissionregistration.k8s.io/MutatingWebhookConfiguration',
      'flowcontrol.apiserver.k8s.io/FlowSchema',
      'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration',
      'storage.k8s.io/CSIDriver',
      'storage.k8s.io/CSINode',
      'storage.k8s.io/VolumeAttachment',
      '/ComponentStatus',
    ];
    for (const k of wanted) {
      assert.ok(served.has(k), `${k} is served`);
      assert.ok(printedKinds().includes(k), `${k} has a printer`);
    }
  });
});
