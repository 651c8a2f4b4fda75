// The healthCheckNodePort servers over real HTTP on loopback: the local endpoint count of an
// externalTrafficPolicy: Local LoadBalancer, 200 with one and 503 without, closed when the
// Service goes.
import { strict as assert } from 'node:assert';
import { freePort } from '../shared/cluster/process';
import { logger, setSilent } from '../shared/log';
import { ep, fixtureOptions, service, slice } from './fixtures';
import { buildRuleSet } from './model';
import { ServiceHealthServers } from './service-health';

describe('proxy healthCheckNodePort servers', () => {
  let servers: ServiceHealthServers | undefined;
  before(() => setSilent(process.env.TKUBE_TEST_LOGS !== '1'));
  after(() => servers?.stop());

  it('serve the local endpoint count as kube-proxy does, 200 or 503, and stop with the Service', async () => {
    const port = await freePort();
    const lb = (policy: string) =>
      service('web', 'lb', {
        type: 'LoadBalancer',
        clusterIP: '10.96.0.70',
        ports: [{ port: 80, nodePort: 30080 }],
        externalTrafficPolicy: policy,
        healthCheckNodePort: port,
      });
    const endpoints = (nodes: string[]) => [
      slice(
        'web',
        'lb',
        nodes.map((n, i) => ep(`10.244.1.${i + 2}`, n)),
        [{ port: 8080 }],
      ),
    ];
    const options = { ...fixtureOptions, nodeIPs: ['127.0.0.1'], nodePortAddresses: ['127.0.0.0/8'] };
    let healthy = true;
    servers = new ServiceHealthServers(() => healthy, logger('proxy-test'));
    const get = async () => {
      const r = await fetch(`http://127.0.0.1:${port}/`);
      return {
        status: r.status,
        weight: r.headers.get('x-load-balancing-endpoint-weight'),
        body: (await r.json()) as Record<string, unknown>,
      };
    };

    await servers.sync(buildRuleSet([lb('Local')], endpoints(['node-a', 'node-a', 'node-b']), options));
    assert.deepEqual(await get(), {
      status: 200,
      weight: '2',
      body: { service: { namespace: 'web', name: 'lb' }, localEndpoints: 2, serviceProxyHealthy: true },
    });
    healthy = false;
    assert.equal((await get()).status, 503, 'the proxy itself unhealthy');
    healthy = true;

    await servers.sync(buildRuleSet([lb('Local')], endpoints(['node-b']), options));
    const none = await get();
    assert.equal(none.status, 503);
    assert.equal(none.body.localEndpoints, 0);

    // Cluster policy: no health check port.
    await servers.sync(buildRuleSet([lb('Cluster')], endpoints(['node-a']), options));
    assert.deepEqual(servers.ports, []);
    await assert.rejects(fetch(`http://127.0.0.1:${port}/`), 'closed');
  });
});
