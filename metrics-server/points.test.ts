import assert from 'node:assert/strict';
import {
  advanceNode,
  cpuQuantity,
  decodeResourceMetrics,
  goDuration,
  memoryQuantity,
  parsePrometheus,
  usageBetween,
} from './points';
import { attributesOf, serveMetrics } from './api';

describe('metrics-server points', () => {
  const text = [
    '# HELP node_cpu_usage_seconds_total x',
    '# TYPE node_cpu_usage_seconds_total counter',
    'node_cpu_usage_seconds_total 10.5 1700000000000',
    'node_memory_working_set_bytes 2097152 1700000000000',
    'container_cpu_usage_seconds_total{container="c",namespace="ns",pod="p"} 1.25 1700000000000',
    'container_memory_working_set_bytes{container="c",namespace="ns",pod="p"} 1536 1700000000000',
    'container_cpu_usage_seconds_total{container="only-cpu",namespace="ns",pod="q"} 1',
  ].join('\n');

  it('parses the Prometheus text with labels and timestamps', () => {
    const lines = parsePrometheus('a{x="1",y="a\\"b"} 2 5\nb 3');
    assert.deepEqual(lines, [
      { name: 'a', labels: { x: '1', y: 'a"b' }, value: 2, time: 5 },
      { name: 'b', labels: {}, value: 3, time: undefined },
    ]);
  });

  it('keeps node and whole container samples only', () => {
    const s = decodeResourceMetrics(text, 1);
    assert.deepEqual(s.node, { cpu: 10.5, memory: 2097152, time: 1700000000000 });
    assert.deepEqual([...s.containers.keys()], ['ns/p']);
    assert.deepEqual(s.containers.get('ns/p')!.get('c'), { cpu: 1.25, memory: 1536, time: 1700000000000 });
  });

  it('rates CPU between two samples and refuses a counter reset', () => {
    const u = usageBetween({ cpu: 1, memory: 5, time: 0 }, { cpu: 1.5, memory: 7, time: 2000 });
    assert.deepEqual(u, { nanoCores: 250_000_000, memory: 7, time: 2000, windowMs: 2000 });
    assert.equal(usageBetween({ cpu: 2, memory: 5, time: 0 }, { cpu: 1, memory: 7, time: 2000 }), undefined);
    assert.equal(usageBetween(undefined, { cpu: 1, memory: 7, time: 2000 }), undefined);
  });

  it('keeps a rate while a node serves the same reading again, and starts over when a container restarts', () => {
    // kubelet (and the agent on containerd) reads container stats every 10 s, metrics-server may scrape
    // more often: a scrape that brings no newer sample keeps the window it had.
    const scrape = (cpu: number, time: number, extra = '') =>
      decodeResourceMetrics(
        [
          `node_cpu_usage_seconds_total ${cpu} ${time}`,
          `node_memory_working_set_bytes 100 ${time}`,
          `container_cpu_usage_seconds_total{container="c",namespace="ns",pod="p"} ${cpu} ${time}`,
          `container_memory_working_set_bytes{container="c",namespace="ns",pod="p"} 5 ${time}`,
          extra,
        ].join('\n'),
        Date.now(),
      );
    const rate = (w: ReturnType<typeof advanceNode>) => {
      const c = w.containers.get('ns/p')?.get('c');
      return [
        c && usageBetween(c.prev, c.last)?.nanoCores,
        w.node && usageBetween(w.node.prev, w.node.last)?.nanoCores,
      ];
    };
    let w = advanceNode(undefined, scrape(1, 0));
    assert.deepEqual(rate(w), [undefined, undefined], 'one point: no rate yet');
    w = advanceNode(w, scrape(2, 10_000));
    assert.deepEqual(rate(w), [100_000_000, 100_000_000]);
    w = advanceNode(w, scrape(2, 10_000));
    assert.deepEqual(rate(w), [100_000_000, 100_000_000], 'the same reading again keeps the window');
    const extra = 'container_cpu_usage_seconds_total{container="d",namespace="ns",pod="q"} 1 10000\n';
    w = advanceNode(
      w,
      scrape(
        0.5,
        20_000,
        extra + 'container_memory_working_set_bytes{container="d",namespace="ns",pod="q"} 1 10000',
      ),
    );
    assert.deepEqual(rate(w), [undefined, undefined], 'a counter that went back starts over');
    assert.deepEqual([...w.containers.keys()], ['ns/p', 'ns/q']);
    w = advanceNode(w, scrape(1, 30_000));
    assert.deepEqual(rate(w), [50_000_000, 50_000_000]);
    assert.deepEqual([...w.containers.keys()], ['ns/p'], 'a container gone from the scrape is dropped');
  });

  it('writes quantities and durations as Go does', () => {
    assert.equal(cpuQuantity(250_000_000), '250m');
    assert.equal(cpuQuantity(2_000_000_000), '2');
    assert.equal(cpuQuantity(1_500), '1500n');
    assert.equal(cpuQuantity(15_000), '15u');
    assert.equal(cpuQuantity(0), '0');
    assert.equal(memoryQuantity(2097152), '2Mi');
    assert.equal(memoryQuantity(1536), '1536');
    assert.equal(memoryQuantity(3 * 1024), '3Ki');
    assert.equal(goDuration(15_000), '15s');
    assert.equal(goDuration(10_500), '10.5s');
    assert.equal(goDuration(61_000), '1m1s');
    assert.equal(goDuration(250), '250ms');
  });

  it('serves lists, objects and selectors with Kubernetes errors', () => {
    const usage = { nanoCores: 5_000_000, memory: 1048576, time: 0, windowMs: 15_000 };
    const src = {
      nodes: () => [{ name: 'n1', labels: { role: 'a' }, usage }],
      pods: () => [
        { namespace: 'a', name: 'p', labels: { app: 'x' }, containers: [{ name: 'c', usage }] },
        { namespace: 'b', name: 'q', containers: [{ name: 'c', usage }] },
      ],
    };
    const get = (path: string) => {
      const u = new URL(path, 'https://x');
      return serveMetrics({ method: 'GET', path: u.pathname, query: u.searchParams }, src);
    };
    const [, nodes] = get('/apis/metrics.k8s.io/v1beta1/nodes') as [number, any];
    assert.equal(nodes.kind, 'NodeMetricsList');
    assert.deepEqual(nodes.items[0].usage, { cpu: '5m', memory: '1Mi' });
    assert.equal(nodes.items[0].window, '15s');
    const [, sel] = get('/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Dx') as [number, any];
    assert.deepEqual(
      sel.items.map((p: any) => p.metadata.name),
      ['p'],
    );
    const [, ns] = get('/apis/metrics.k8s.io/v1beta1/namespaces/b/pods') as [number, any];
    assert.deepEqual(
      ns.items.map((p: any) => p.metadata.name),
      ['q'],
    );
    const [code, missing] = get('/apis/metrics.k8s.io/v1beta1/namespaces/a/pods/nope') as [number, any];
    assert.equal(code, 404);
    assert.equal(missing.message, 'pods.metrics.k8s.io "nope" not found');
    const [bad] = get('/apis/metrics.k8s.io/v1beta1/pods?labelSelector=%3D%3D') as [number, any];
    assert.equal(bad, 400);
    assert.deepEqual(
      attributesOf({
        method: 'GET',
        path: '/apis/metrics.k8s.io/v1beta1/namespaces/a/pods/p',
        query: new URLSearchParams(),
      }),
      {
        verb: 'get',
        resource: 'pods',
        namespace: 'a',
        name: 'p',
        path: '/apis/metrics.k8s.io/v1beta1/namespaces/a/pods/p',
      },
    );
  });
});
