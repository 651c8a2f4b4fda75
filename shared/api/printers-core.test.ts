import assert from 'node:assert/strict';
import { ago, M, H, D, row, names, wideNames, meta } from './printers-testing';

describe('printers: services, endpoints, nodes', () => {
  const svc = (spec: any, status: any = {}) => ({ metadata: meta('web', ago(4 * H)), spec, status });

  it('ClusterIP service', () => {
    assert.deepEqual(
      row(
        '',
        'Service',
        svc({
          type: 'ClusterIP',
          clusterIP: '10.96.12.34',
          clusterIPs: ['10.96.12.34'],
          ports: [
            { name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 },
            { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
          ],
          selector: { app: 'web' },
        }),
      ),
      ['web', 'ClusterIP', '10.96.12.34', '<none>', '80/TCP,53/UDP', '4h', 'app=web'],
    );
    assert.deepEqual(names('', 'Service'), [
      'Name',
      'Type',
      'Cluster-IP',
      'External-IP',
      'Port(s)',
      'Age',
      'Selector',
    ]);
  });

  it('NodePort service 80:30080/TCP', () => {
    assert.deepEqual(
      row(
        '',
        'Service',
        svc({
          type: 'NodePort',
          clusterIPs: ['10.96.0.20'],
          ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }],
        }),
      ),
      ['web', 'NodePort', '10.96.0.20', '<none>', '80:30080/TCP', '4h', '<none>'],
    );
  });

  it('LoadBalancer: pending, ingress addresses, external IPs; headless; ExternalName', () => {
    const lb = {
      type: 'LoadBalancer',
      clusterIPs: ['10.96.0.30'],
      ports: [
        { port: 80, nodePort: 31080, protocol: 'TCP' },
        { port: 443, nodePort: 30443, protocol: 'TCP' },
      ],
    };
    assert.deepEqual(row('', 'Service', svc(lb)).slice(3, 5), ['<pending>', '80:31080/TCP,443:30443/TCP']);
    assert.equal(
      row(
        '',
        'Service',
        svc(lb, { loadBalancer: { ingress: [{ ip: '203.0.113.9' }, { hostname: 'lb.example.com' }] } }),
      )[3],
      '203.0.113.9,lb.example.com',
    );
    assert.equal(
      row(
        '',
        'Service',
        svc({ ...lb, externalIPs: ['198.51.100.1'] }, { loadBalancer: { ingress: [{ ip: '203.0.113.9' }] } }),
      )[3],
      '203.0.113.9,198.51.100.1',
    );
    assert.deepEqual(
      row(
        '',
        'Service',
        svc({ type: 'ClusterIP', clusterIP: 'None', clusterIPs: ['None'], ports: [] }),
      ).slice(1, 5),
      ['ClusterIP', 'None', '<none>', '<none>'],
    );
    assert.deepEqual(
      row('', 'Service', svc({ type: 'ExternalName', externalName: 'db.example.com' })).slice(1, 5),
      ['ExternalName', '<none>', 'db.example.com', '<none>'],
    );
  });

  it('endpoints: host:port list, + N more', () => {
    const ep = {
      metadata: meta('web', ago(4 * H)),
      subsets: [
        {
          addresses: [{ ip: '10.244.1.2' }, { ip: '10.244.2.3' }],
          ports: [
            { name: 'http', port: 8080, protocol: 'TCP' },
            { name: 'metrics', port: 9090, protocol: 'TCP' },
          ],
        },
      ],
    };
    assert.deepEqual(row('', 'Endpoints', ep), [
      'web',
      '10.244.1.2:8080,10.244.2.3:8080,10.244.1.2:9090 + 1 more...',
      '4h',
    ]);
    assert.deepEqual(row('', 'Endpoints', { metadata: meta('none') }).slice(1, 2), ['<none>']);
    assert.equal(
      row('', 'Endpoints', {
        metadata: meta('v6'),
        subsets: [{ addresses: [{ ip: 'fd00::1' }], ports: [{ port: 80 }] }],
      })[1],
      '[fd00::1]:80',
    );
  });

  it('node Ready,SchedulingDisabled with role control-plane; wide cells', () => {
    const node = {
      metadata: meta('cp-1', ago(40 * D), {
        namespace: undefined,
        labels: { 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/hostname': 'cp-1' },
      }),
      spec: { unschedulable: true },
      status: {
        conditions: [
          { type: 'MemoryPressure', status: 'False' },
          { type: 'Ready', status: 'True' },
        ],
        addresses: [
          { type: 'InternalIP', address: '192.168.1.10' },
          { type: 'Hostname', address: 'cp-1' },
        ],
        nodeInfo: {
          kubeletVersion: 'v1.36.0',
          osImage: 'Debian GNU/Linux 12 (bookworm)',
          kernelVersion: '6.1.0-18-amd64',
          containerRuntimeVersion: 'containerd://1.7.13',
        },
      },
    };
    assert.deepEqual(row('', 'Node', node), [
      'cp-1',
      'Ready,SchedulingDisabled',
      'control-plane',
      '40d',
      'v1.36.0',
      '192.168.1.10',
      '<none>',
      'Debian GNU/Linux 12 (bookworm)',
      '6.1.0-18-amd64',
      'containerd://1.7.13',
    ]);
    assert.deepEqual(wideNames('', 'Node'), [
      'Internal-IP',
      'External-IP',
      'OS-Image',
      'Kernel-Version',
      'Container-Runtime',
    ]);
  });

  it('node NotReady / Unknown, several roles, no node info', () => {
    const n = (conditions: any[], labels: any = {}) => ({
      metadata: meta('w', ago(M), { labels }),
      status: { conditions },
    });
    assert.deepEqual(row('', 'Node', n([{ type: 'Ready', status: 'Unknown' }])).slice(1, 3), [
      'NotReady',
      '<none>',
    ]);
    assert.deepEqual(
      row(
        '',
        'Node',
        n([], {
          'node-role.kubernetes.io/worker': '',
          'node-role.kubernetes.io/infra': '',
          'kubernetes.io/role': 'gpu',
        }),
      ).slice(1, 3),
      ['Unknown', 'gpu,infra,worker'],
    );
    assert.deepEqual(row('', 'Node', n([])).slice(7), ['<unknown>', '<unknown>', '<unknown>']);
  });
});

describe('printers: configuration and storage of the core group', () => {
  it('configmaps, secrets, service accounts, namespaces', () => {
    assert.deepEqual(
      row('', 'ConfigMap', {
        metadata: meta('cfg', ago(D)),
        data: { a: '1', b: '2' },
        binaryData: { c: 'AA==' },
      }),
      ['cfg', 3, '24h'],
    );
    assert.deepEqual(row('', 'ConfigMap', { metadata: meta('empty', ago(D)) }), ['empty', 0, '24h']);
    assert.deepEqual(
      row('', 'Secret', {
        metadata: meta('tls', ago(D)),
        type: 'kubernetes.io/tls',
        data: { 'tls.crt': 'x', 'tls.key': 'y' },
      }),
      ['tls', 'kubernetes.io/tls', 2, '24h'],
    );
    assert.deepEqual(row('', 'ServiceAccount', { metadata: meta('default', ago(D)) }), ['default', 0, '24h']);
    assert.deepEqual(
      row('', 'Namespace', { metadata: meta('kube-system', ago(90 * D)), status: { phase: 'Active' } }),
      ['kube-system', 'Active', '90d'],
    );
    assert.deepEqual(names('', 'Secret'), ['Name', 'Type', 'Data', 'Age']);
  });

  it('persistent volumes and claims', () => {
    const pv = {
      metadata: meta('pv-1', ago(2 * D)),
      spec: {
        capacity: { storage: '10Gi' },
        accessModes: ['ReadWriteMany', 'ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: 'fast',
        claimRef: { namespace: 'default', name: 'data' },
        volumeMode: 'Filesystem',
      },
      status: { phase: 'Bound' },
    };
    assert.deepEqual(row('', 'PersistentVolume', pv), [
      'pv-1',
      '10Gi',
      'RWO,RWX',
      'Retain',
      'Bound',
      'default/data',
      'fast',
      '<unset>',
      '',
      '2d',
      'Filesystem',
    ]);
    const pvc = {
      metadata: meta('data', ago(2 * D)),
      spec: { volumeName: 'pv-1', storageClassName: 'fast', resources: { requests: { storage: '5Gi' } } },
      status: { phase: 'Bound', capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'] },
    };
    assert.deepEqual(row('', 'PersistentVolumeClaim', pvc), [
      'data',
      'Bound',
      'pv-1',
      '10Gi',
      'RWO',
      'fast',
      '<unset>',
      '2d',
      '<unset>',
    ]);
    assert.deepEqual(
      row('', 'PersistentVolumeClaim', {
        metadata: meta('p', ago(M)),
        spec: { storageClassName: 'fast' },
        status: { phase: 'Pending' },
      }),
      ['p', 'Pending', '', '', '', 'fast', '<unset>', '60s', '<unset>'],
    );
  });

  it('replication controllers, pod templates, resource quotas, component statuses', () => {
    const tpl = {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    };
    assert.deepEqual(
      row('', 'ReplicationController', {
        metadata: meta('rc', ago(H)),
        spec: { replicas: 3, selector: { app: 'web' }, template: tpl },
        status: { replicas: 3, readyReplicas: 2 },
      }),
      ['rc', 3, 3, 2, '60m', 'c', 'nginx', 'app=web'],
    );
    assert.deepEqual(row('', 'PodTemplate', { metadata: meta('pt'), template: tpl }), [
      'pt',
      'c',
      'nginx',
      'app=web',
    ]);
    assert.deepEqual(
      row('', 'ResourceQuota', {
        metadata: meta('quota', ago(D)),
        status: {
          hard: { pods: '10', 'requests.cpu': '4', 'limits.memory': '8Gi', 'limits.cpu': '8' },
          used: { pods: '3', 'requests.cpu': '500m', 'limits.cpu': '1' },
        },
      }),
      ['quota', 'pods: 3/10, requests.cpu: 500m/4', 'limits.cpu: 1/8, limits.memory: 0/8Gi', '24h'],
    );
    assert.deepEqual(
      row('', 'ComponentStatus', {
        metadata: { name: 'etcd-0' },
        conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }],
      }),
      ['etcd-0', 'Healthy', 'ok', ''],
    );
  });
});
