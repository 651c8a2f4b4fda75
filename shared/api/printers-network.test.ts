import assert from 'node:assert/strict';
import { builtinPrinter, defaultPrinter, printerFor } from './printers';
import { NOW, row, names, clusterMeta } from './printers-testing';

describe('printers: networking and discovery', () => {
  it('ingress and ingress class', () => {
    const ing = {
      metadata: clusterMeta('web'),
      spec: {
        ingressClassName: 'nginx',
        tls: [{ hosts: ['a.example.com'], secretName: 'tls' }],
        rules: [
          { host: 'a.example.com' },
          { host: 'b.example.com' },
          {},
          { host: 'c.example.com' },
          { host: 'd.example.com' },
        ],
      },
      status: { loadBalancer: { ingress: [{ ip: '203.0.113.10' }] } },
    };
    assert.deepEqual(names('networking.k8s.io', 'Ingress'), [
      'Name',
      'Class',
      'Hosts',
      'Address',
      'Ports',
      'Age',
    ]);
    assert.deepEqual(row('networking.k8s.io', 'Ingress', ing), [
      'web',
      'nginx',
      'a.example.com,b.example.com,c.example.com + 2 more...',
      '203.0.113.10',
      '80, 443',
      '24h',
    ]);
    assert.deepEqual(
      row('networking.k8s.io', 'Ingress', { metadata: clusterMeta('bare'), spec: {} }).slice(1, 5),
      ['<none>', '*', '', '80'],
    );
    assert.deepEqual(
      row('networking.k8s.io', 'IngressClass', {
        metadata: clusterMeta('nginx'),
        spec: {
          controller: 'k8s.io/ingress-nginx',
          parameters: { apiGroup: 'k8s.example.com', kind: 'IngressParameters', name: 'p' },
        },
      }),
      ['nginx', 'k8s.io/ingress-nginx', 'IngressParameters.k8s.example.com/p', '24h'],
    );
  });

  it('network policy, endpoint slice, service CIDR, IP address', () => {
    assert.deepEqual(
      row('networking.k8s.io', 'NetworkPolicy', {
        metadata: clusterMeta('deny-all'),
        spec: { podSelector: {} },
      }),
      ['deny-all', '<none>', '24h'],
    );
    assert.deepEqual(
      row('networking.k8s.io', 'NetworkPolicy', {
        metadata: clusterMeta('web'),
        spec: { podSelector: { matchLabels: { app: 'web' } } },
      })[1],
      'app=web',
    );
    const es = {
      metadata: clusterMeta('web-abcde'),
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }, { name: 'grpc' }],
      endpoints: [
        { addresses: ['10.244.1.2'] },
        { addresses: ['10.244.2.3'] },
        { addresses: ['10.244.3.4'] },
        { addresses: ['10.244.4.5'] },
      ],
    };
    assert.deepEqual(row('discovery.k8s.io', 'EndpointSlice', es), [
      'web-abcde',
      'IPv4',
      '8080,grpc',
      '10.244.1.2,10.244.2.3,10.244.3.4 + 1 more...',
      '24h',
    ]);
    assert.deepEqual(
      row('discovery.k8s.io', 'EndpointSlice', { metadata: clusterMeta('e'), addressType: 'IPv6' }).slice(
        2,
        4,
      ),
      ['<unset>', '<unset>'],
    );
    assert.deepEqual(
      row('networking.k8s.io', 'ServiceCIDR', {
        metadata: clusterMeta('kubernetes'),
        spec: { cidrs: ['10.96.0.0/12', 'fd00::/108'] },
      }),
      ['kubernetes', '10.96.0.0/12,fd00::/108', '24h'],
    );
    assert.deepEqual(
      row('networking.k8s.io', 'IPAddress', {
        metadata: clusterMeta('10.96.0.1'),
        spec: { parentRef: { group: '', resource: 'services', namespace: 'default', name: 'kubernetes' } },
      }),
      ['10.96.0.1', 'services/default/kubernetes', '24h'],
    );
  });
});

describe('printers: RBAC, admission, flow control', () => {
  it('role bindings with subjects in wide columns; roles use the default table', () => {
    const rb = {
      metadata: clusterMeta('admins'),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [
        { kind: 'User', name: 'alice' },
        { kind: 'User', name: 'bob' },
        { kind: 'Group', name: 'ops' },
        { kind: 'ServiceAccount', name: 'ci', namespace: 'build' },
      ],
    };
    assert.deepEqual(names('rbac.authorization.k8s.io', 'RoleBinding'), [
      'Name',
      'Role',
      'Age',
      'Users',
      'Groups',
      'ServiceAccounts',
    ]);
    assert.deepEqual(row('rbac.authorization.k8s.io', 'RoleBinding', rb), [
      'admins',
      'ClusterRole/admin',
      '24h',
      'alice, bob',
      'ops',
      'build/ci',
    ]);
    assert.deepEqual(
      row('rbac.authorization.k8s.io', 'ClusterRoleBinding', { ...rb, subjects: undefined }).slice(3),
      ['', '', ''],
    );
    assert.equal(builtinPrinter('rbac.authorization.k8s.io', 'Role'), undefined);
    assert.equal(printerFor('rbac.authorization.k8s.io', 'ClusterRole'), defaultPrinter);
  });

  it('webhook configurations and admission policies', () => {
    const wh = { metadata: clusterMeta('cert-manager-webhook'), webhooks: [{ name: 'a' }, { name: 'b' }] };
    assert.deepEqual(row('admissionregistration.k8s.io', 'ValidatingWebhookConfiguration', wh), [
      'cert-manager-webhook',
      2,
      '24h',
    ]);
    assert.deepEqual(
      row('admissionregistration.k8s.io', 'MutatingWebhookConfiguration', { metadata: clusterMeta('m') }),
      ['m', 0, '24h'],
    );
    assert.deepEqual(
      row('admissionregistration.k8s.io', 'ValidatingAdmissionPolicy', {
        metadata: clusterMeta('replicas'),
        spec: { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, validations: [{ expression: 'true' }] },
      }),
      ['replicas', 1, 'v1/ConfigMap', '24h'],
    );
    assert.deepEqual(
      row('admissionregistration.k8s.io', 'ValidatingAdmissionPolicyBinding', {
        metadata: clusterMeta('b'),
        spec: { policyName: 'replicas', paramRef: { name: 'limits', namespace: 'default' } },
      }),
      ['b', 'replicas', 'default/limits', '24h'],
    );
  });

  it('flow schemas print in matching order; priority levels', () => {
    const fs = (name: string, precedence: number) => ({
      metadata: clusterMeta(name),
      spec: {
        priorityLevelConfiguration: { name: 'workload-low' },
        matchingPrecedence: precedence,
        distinguisherMethod: { type: 'ByUser' },
      },
      status: { conditions: [{ type: 'Dangling', status: 'False' }] },
    });
    const p = printerFor('flowcontrol.apiserver.k8s.io', 'FlowSchema');
    assert.deepEqual(
      p.order!([fs('b', 1000), fs('exempt', 1), fs('a', 1000)]).map((o: any) => o.metadata.name),
      ['exempt', 'a', 'b'],
    );
    assert.deepEqual(p.cells(fs('service-accounts', 9000), NOW), [
      'service-accounts',
      'workload-low',
      9000,
      'ByUser',
      '24h',
      'False',
    ]);
    const pl = printerFor('flowcontrol.apiserver.k8s.io', 'PriorityLevelConfiguration');
    assert.deepEqual(
      pl.cells(
        {
          metadata: clusterMeta('workload-low'),
          spec: {
            type: 'Limited',
            limited: {
              nominalConcurrencyShares: 100,
              limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 } },
            },
          },
        },
        NOW,
      ),
      ['workload-low', 'Limited', 100, 128, 6, 50, '24h'],
    );
    assert.deepEqual(pl.cells({ metadata: clusterMeta('exempt'), spec: { type: 'Exempt' } }, NOW), [
      'exempt',
      'Exempt',
      '<none>',
      '<none>',
      '<none>',
      '<none>',
      '24h',
    ]);
  });
});
