// Where the aggregator sends a request: the ClusterIP (or an ExternalName's name)
// by default, a ready endpoint with --enable-aggregator-routing; errors in Kubernetes' words.
import assert from 'node:assert/strict';
import { resolveCluster, resolveEndpoints, type ServiceLookup } from './resolve';
import { authProxyHeaders } from './aggregator';

function lookup(services: any[], slices: any[] = []): ServiceLookup {
  return {
    service: (ns, name) => services.find((s) => s.metadata.namespace === ns && s.metadata.name === name),
    endpointSlices: (ns, name) =>
      slices.filter(
        (s) => s.metadata.namespace === ns && s.metadata.labels['kubernetes.io/service-name'] === name,
      ),
  };
}

const svc = (name: string, spec: any) => ({ metadata: { namespace: 'ns', name }, spec });
const slice = (service: string, endpoints: any[], ports: any[]) => ({
  metadata: { namespace: 'ns', name: `${service}-x`, labels: { 'kubernetes.io/service-name': service } },
  endpoints,
  ports,
});

describe('aggregator service resolution', () => {
  const l = lookup(
    [
      svc('api', { type: 'ClusterIP', clusterIP: '10.0.0.7', ports: [{ name: 'https', port: 443 }] }),
      svc('v6', { type: 'ClusterIP', clusterIP: 'fd00::7', ports: [{ port: 8443 }] }),
      svc('ext', { type: 'ExternalName', externalName: 'extension.example.com' }),
      svc('headless', { type: 'ClusterIP', clusterIP: 'None', ports: [{ port: 443 }] }),
    ],
    [
      slice(
        'api',
        [
          { addresses: ['10.244.0.5'], conditions: { ready: true } },
          { addresses: ['10.244.0.6'], conditions: { ready: false } },
        ],
        [{ name: 'https', port: 6443 }],
      ),
    ],
  );

  it('resolves to the ClusterIP and service port, or an ExternalName and the APIService port', () => {
    assert.equal(resolveCluster(l, { namespace: 'ns', name: 'api', port: 443 }), 'https://10.0.0.7:443');
    assert.equal(resolveCluster(l, { namespace: 'ns', name: 'v6', port: 8443 }), 'https://[fd00::7]:8443');
    assert.equal(
      resolveCluster(l, { namespace: 'ns', name: 'ext', port: 9443 }),
      'https://extension.example.com:9443',
    );
    assert.throws(
      () => resolveCluster(l, { namespace: 'ns', name: 'api', port: 80 }),
      /no service port 80 found for service "api"/,
    );
    assert.throws(
      () => resolveCluster(l, { namespace: 'ns', name: 'headless', port: 443 }),
      /cannot route to service with ClusterIP "None"/,
    );
    assert.throws(() => resolveCluster(l, { namespace: 'ns', name: 'gone', port: 443 }), /not found/);
  });

  it('with endpoint routing, picks ready endpoints on the port of the service port’s name', () => {
    assert.deepEqual(resolveEndpoints(l, { namespace: 'ns', name: 'api', port: 443 }), [
      'https://10.244.0.5:6443',
    ]);
    assert.throws(
      () => resolveEndpoints(l, { namespace: 'ns', name: 'v6', port: 8443 }),
      (e: any) => e.code === 503 && e.message === 'no endpoints available for service "v6"',
    );
    assert.throws(
      () => resolveEndpoints(l, { namespace: 'ns', name: 'ext', port: 443 }),
      // The type is checked first, as in Go's EndpointSlice-based ResolveEndpoint.
      /unsupported service type "ExternalName"/,
    );
  });

  it("follows Go's EndpointSlice rules: named ports only, ready unset counts, first address, primary family", () => {
    const l2 = lookup(
      [
        svc('plain', { type: 'ClusterIP', clusterIP: '10.0.0.8', ports: [{ port: 8443, targetPort: 8444 }] }),
        svc('dual', {
          type: 'ClusterIP',
          clusterIP: 'fd00::9',
          ipFamilies: ['IPv6', 'IPv4'],
          ports: [{ name: 'https', port: 443 }],
        }),
      ],
      [
        // A slice port without a name is not the unnamed service port ("" is).
        slice('plain', [{ addresses: ['10.244.0.1'] }], [{ port: 9999 }]),
        slice('plain', [{ addresses: ['10.244.0.2', '10.244.0.3'] }], [{ name: '', port: 8444 }]),
        {
          ...slice('dual', [{ addresses: ['10.244.0.4'] }], [{ name: 'https', port: 6443 }]),
          addressType: 'IPv4',
        },
        {
          ...slice('dual', [{ addresses: ['fd00::4'] }], [{ name: 'https', port: 6443 }]),
          addressType: 'IPv6',
        },
      ],
    );
    assert.deepEqual(resolveEndpoints(l2, { namespace: 'ns', name: 'plain', port: 8443 }), [
      'https://10.244.0.2:8444',
    ]);
    assert.deepEqual(resolveEndpoints(l2, { namespace: 'ns', name: 'dual', port: 443 }), [
      'https://[fd00::4]:6443',
    ]);
  });

  it('names the user in the front-proxy headers, extra keys escaped', () => {
    assert.deepEqual(
      authProxyHeaders({ name: 'jane', groups: ['a', 'b'], extra: { 'example.com/scopes': ['x', 'y'] } }),
      {
        'X-Remote-User': 'jane',
        'X-Remote-Group': ['a', 'b'],
        'X-Remote-Extra-example.com%2Fscopes': ['x', 'y'],
      },
    );
  });
});
