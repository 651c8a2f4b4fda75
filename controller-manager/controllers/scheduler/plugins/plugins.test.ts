// Each default plugin's scores and filters on hand-built nodes, against
// figures worked out by hand from kube-scheduler's formulas.
import assert from 'node:assert/strict';
import type { Obj } from '../../util/base';
import { SchedulerCache, type NodeInfo } from '../cache';
import { CycleState, type Plugin } from '../framework';
import { balancedAllocation } from './balanced-allocation';
import { imageLocality } from './image-locality';
import { interPodAffinity } from './inter-pod-affinity';
import { nodeAffinity } from './node-affinity';
import { nodeResourcesFit } from './node-resources-fit';
import { podTopologySpread } from './pod-topology-spread';
import { taintToleration } from './taint-toleration';
import { volumeBinding } from './volume-binding';

const MB = 1024 * 1024;

function node(
  name: string,
  o: { labels?: Record<string, string>; taints?: any[]; images?: any[] } = {},
): Obj {
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(o.labels ?? {}) } },
    spec: { taints: o.taints },
    status: {
      allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True' }],
      images: o.images,
    },
  };
}

function pod(
  name: string,
  o: { cpu?: string; mem?: string; owner?: string; labels?: any; spec?: any } = {},
): Obj {
  const requests = { ...(o.cpu ? { cpu: o.cpu } : {}), ...(o.mem ? { memory: o.mem } : {}) };
  return {
    metadata: {
      name,
      namespace: 'default',
      labels: o.labels ?? {},
      ownerReferences: o.owner
        ? [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: o.owner, controller: true }]
        : undefined,
    },
    spec: {
      containers: [{ name: 'c', image: 'nginx:1.25', resources: { requests } }],
      ...(o.spec ?? {}),
    },
    status: { phase: 'Pending' },
  };
}

const noNamespaceLabels = () => undefined;

function cacheWith(nodes: Obj[], placed: [Obj, string][] = []): SchedulerCache {
  const c = new SchedulerCache();
  for (const n of nodes) c.nodeSet(n);
  for (const [p, on] of placed)
    c.podSeen(`default/${p.metadata.name}`, {
      ...p,
      spec: { ...p.spec, nodeName: on },
      status: { phase: 'Running' },
    });
  return c;
}

/** PreScore, Score and normalize of one plugin over every node of the cache (undefined: skipped). */
function scores(p: Plugin, s: CycleState): number[] | undefined {
  const nodes = [...s.cache.nodes()] as NodeInfo[];
  if (p.preScore && !p.preScore(s, nodes)) return undefined;
  const out = nodes.map((n) => p.score!(s, n));
  p.normalize?.(s, out, nodes);
  return out;
}

describe('controllers/scheduler: plugins', () => {
  it('NodeResourcesFit LeastAllocated: the mean of (allocatable - requested) * 100 / allocatable over cpu and memory', () => {
    const c = cacheWith([node('a')], [[pod('old', { cpu: '1', mem: '1Gi' }), 'a']]);
    // cpu (4000 - 2000) * 100 / 4000 = 50; memory (8 - 3) * 100 / 8 = 62.5 -> 62; (50 + 62) / 2 = 56.
    assert.deepEqual(scores(nodeResourcesFit, new CycleState(pod('new', { cpu: '1', mem: '2Gi' }), c)), [56]);
    // A pod requesting nothing counts 100m and 200Mi: cpu 3900/4000 -> 97, memory 1 Gi + 200 Mi used.
    const empty = cacheWith([node('a')]);
    const memScore = Math.trunc(((8192 - 200) * 100) / 8192); // 97
    assert.deepEqual(scores(nodeResourcesFit, new CycleState(pod('new'), empty)), [
      Math.trunc((97 + memScore) / 2),
    ]);
  });

  it('NodeResourcesBalancedAllocation: (1 - |cpu fraction - memory fraction| / 2) * 100, skipped for a pod requesting nothing', () => {
    const c = cacheWith([node('a')], [[pod('old', { cpu: '1', mem: '1Gi' }), 'a']]);
    // cpu 2/4 = 0.5, memory 3/8 = 0.375: 1 - 0.0625 = 0.9375 -> 93.
    assert.deepEqual(
      scores(balancedAllocation, new CycleState(pod('new', { cpu: '1', mem: '2Gi' }), c)),
      [93],
    );
    assert.equal(scores(balancedAllocation, new CycleState(pod('new'), c)), undefined);
  });

  it('TaintToleration: fewer untolerated PreferNoSchedule taints score higher (reversed, scaled to the most)', () => {
    const prefer = (key: string) => ({ key, effect: 'PreferNoSchedule' });
    const c = cacheWith([
      node('a'),
      node('b', { taints: [prefer('x')] }),
      node('c', { taints: [prefer('x'), prefer('y')] }),
    ]);
    assert.deepEqual(scores(taintToleration, new CycleState(pod('p'), c)), [100, 50, 0]);
    // Tolerating x: counts 0, 0, 1.
    const tolerant = pod('t', { spec: { tolerations: [{ key: 'x', operator: 'Exists' }] } });
    assert.deepEqual(scores(taintToleration, new CycleState(tolerant, c)), [100, 100, 0]);
  });

  it('NodeAffinity: the weights of matching preferred terms, scaled to the highest', () => {
    const c = cacheWith([
      node('a', { labels: { disk: 'ssd' } }),
      node('b', { labels: { disk: 'ssd', gpu: 'y' } }),
      node('c'),
    ]);
    const term = (key: string, values: string[], weight: number) => ({
      weight,
      preference: { matchExpressions: [{ key, operator: 'In', values }] },
    });
    const p = pod('p', {
      spec: {
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              term('disk', ['ssd'], 10),
              term('gpu', ['y'], 30),
            ],
          },
        },
      },
    });
    // a 10, b 40, c 0 -> 25, 100, 0.
    assert.deepEqual(scores(nodeAffinity, new CycleState(p, c)), [25, 100, 0]);
  });

  it('PodTopologySpread system defaults: a controller pod prefers the node with fewest of its siblings', () => {
    const sib = (name: string) => pod(name, { owner: 'rs-1' });
    const c = cacheWith(
      [node('a'), node('b'), node('c')],
      [
        [sib('s1'), 'a'],
        [sib('s2'), 'a'],
        [sib('s3'), 'c'],
        [pod('stranger', { owner: 'rs-2' }), 'b'],
      ],
    );
    // hostname weight log(3 + 2); raw cnt * 1.609 + (3 - 1): a 5.22 -> 5, b 2, c 3.61 -> 4;
    // normalized 100 * (max + min - s) / max with max 5, min 2: a 40, b 100, c 60.
    assert.deepEqual(scores(podTopologySpread, new CycleState(sib('new'), c)), [40, 100, 60]);
    // A pod no controller owns is not spread by the defaults, nor one of a Job (kube's
    // DefaultSelector takes only Services, ReplicaSets, StatefulSets and ReplicationControllers).
    assert.equal(scores(podTopologySpread, new CycleState(pod('bare'), c)), undefined);
    const ofJob = sib('job-pod');
    ofJob.metadata.ownerReferences![0] = {
      ...ofJob.metadata.ownerReferences![0],
      apiVersion: 'batch/v1',
      kind: 'Job',
    };
    assert.equal(scores(podTopologySpread, new CycleState(ofJob, c)), undefined);
  });

  it('PodTopologySpread DoNotSchedule: a node is out when its domain would exceed maxSkew over the emptiest one', () => {
    const web = (name: string) => pod(name, { labels: { app: 'web' } });
    const c = cacheWith(
      [
        node('a1', { labels: { zone: 'a' } }),
        node('a2', { labels: { zone: 'a' } }),
        node('b1', { labels: { zone: 'b' } }),
        node('nozone'),
      ],
      [
        [web('w1'), 'a1'],
        [web('w2'), 'a1'],
        [web('w3'), 'a2'],
      ],
    );
    const p = pod('new', {
      labels: { app: 'web' },
      spec: {
        topologySpreadConstraints: [
          {
            maxSkew: 1,
            topologyKey: 'zone',
            whenUnsatisfiable: 'DoNotSchedule',
            labelSelector: { matchLabels: { app: 'web' } },
          },
        ],
      },
    });
    const s = new CycleState(p, c);
    podTopologySpread.preFilter!(s);
    const verdict = c.nodes().map((n) => podTopologySpread.filter!(s, n)?.reasons[0] ?? 'fits');
    // zone a holds 3, zone b 0: a 3 + 1 - 0 > 1, b 0 + 1 - 0 = 1 fits.
    assert.deepEqual(verdict, [
      "node(s) didn't match pod topology spread constraints",
      "node(s) didn't match pod topology spread constraints",
      'fits',
      "node(s) didn't match pod topology spread constraints (missing required label)",
    ]);
  });

  it('ImageLocality: image size scaled by the share of nodes that have it, between 23 MB and 1000 MB', () => {
    const img = { names: ['docker.io/library/nginx:1.25', 'nginx:1.25'], sizeBytes: 500 * MB };
    const c = cacheWith([node('a', { images: [img] }), node('b', { images: [img] }), node('c')]);
    // 500 MB * 2/3 = 349525333 bytes; 100 * (349525333 - 23 MB) / (1000 MB - 23 MB) = 31.7 -> 31.
    assert.deepEqual(scores(imageLocality, new CycleState(pod('p'), c)), [31, 31, 0]);
    // An image no node has scores 0 everywhere: not scored at all.
    const other = pod('o', { spec: { containers: [{ name: 'c', image: 'redis' }] } });
    assert.equal(scores(imageLocality, new CycleState(other, c)), undefined);
  });

  it('InterPodAffinity: preferred affinity to placed pods in the topology domain, scaled between min and max', () => {
    const c = cacheWith(
      [
        node('a', { labels: { zone: 'z1' } }),
        node('b', { labels: { zone: 'z1' } }),
        node('c', { labels: { zone: 'z2' } }),
      ],
      [[pod('db', { labels: { app: 'db' } }), 'a']],
    );
    const p = pod('p', {
      spec: {
        affinity: {
          podAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 50,
                podAffinityTerm: { topologyKey: 'zone', labelSelector: { matchLabels: { app: 'db' } } },
              },
            ],
          },
          podAntiAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 20,
                podAffinityTerm: {
                  topologyKey: 'kubernetes.io/hostname',
                  labelSelector: { matchLabels: { app: 'db' } },
                },
              },
            ],
          },
        },
      },
    });
    // z1 +50 for a and b, a's hostname -20: a 30, b 50, c 0 -> 60, 100, 0.
    assert.deepEqual(scores(interPodAffinity(noNamespaceLabels), new CycleState(p, c)), [60, 100, 0]);
  });

  it('InterPodAffinity filters: required anti-affinity both ways, and required affinity to a domain', () => {
    const c = cacheWith(
      [
        node('a', { labels: { zone: 'z1' } }),
        node('b', { labels: { zone: 'z2' } }),
        node('c', { labels: { zone: 'z3' } }),
      ],
      [
        [pod('cache', { labels: { app: 'cache' } }), 'a'],
        [
          pod('loner', {
            labels: { app: 'loner' },
            spec: {
              affinity: {
                podAntiAffinity: {
                  requiredDuringSchedulingIgnoredDuringExecution: [
                    { topologyKey: 'zone', labelSelector: { matchLabels: { app: 'web' } } },
                  ],
                },
              },
            },
          }),
          'b',
        ],
      ],
    );
    const verdicts = (p: Obj) => {
      const s = new CycleState(p, c);
      const plugin = interPodAffinity(noNamespaceLabels);
      plugin.preFilter!(s);
      return c.nodes().map((n) => plugin.filter!(s, n)?.reasons[0] ?? 'fits');
    };
    // A web pod: kept out of z2 by the loner's anti-affinity.
    assert.deepEqual(verdicts(pod('web', { labels: { app: 'web' } })), [
      'fits',
      "node(s) didn't satisfy existing pods anti-affinity rules",
      'fits',
    ]);
    const withCache = (kind: string) =>
      pod('x', {
        spec: {
          affinity: {
            [kind]: {
              requiredDuringSchedulingIgnoredDuringExecution: [
                { topologyKey: 'zone', labelSelector: { matchLabels: { app: 'cache' } } },
              ],
            },
          },
        },
      });
    assert.deepEqual(verdicts(withCache('podAffinity')), [
      'fits',
      "node(s) didn't match pod affinity rules",
      "node(s) didn't match pod affinity rules",
    ]);
    assert.deepEqual(verdicts(withCache('podAntiAffinity')), [
      "node(s) didn't match pod anti-affinity rules",
      'fits',
      'fits',
    ]);
  });
});

describe('controllers/scheduler: InterPodAffinity namespaces', () => {
  const nsLabels: Record<string, Record<string, string>> = {
    default: {},
    'team-a': { team: 'a' },
    'team-b': { team: 'b' },
  };
  const inNamespace = (p: Obj, namespace: string): Obj => ({ ...p, metadata: { ...p.metadata, namespace } });
  // One db pod per zone, each in its own namespace: z1 default, z2 team-a, z3 team-b.
  const c = new SchedulerCache();
  for (const [n, zone, ns] of [
    ['a', 'z1', 'default'],
    ['b', 'z2', 'team-a'],
    ['c', 'z3', 'team-b'],
  ]) {
    c.nodeSet(node(n, { labels: { zone } }));
    const db = inNamespace(pod(`db-${n}`, { labels: { app: 'db' } }), ns);
    c.podSeen(`${ns}/db-${n}`, { ...db, spec: { ...db.spec, nodeName: n }, status: { phase: 'Running' } });
  }
  const verdicts = (term: object, namespace = 'default') => {
    const p = inNamespace(
      pod('x', {
        spec: {
          affinity: {
            podAntiAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [
                { topologyKey: 'zone', labelSelector: { matchLabels: { app: 'db' } }, ...term },
              ],
            },
          },
        },
      }),
      namespace,
    );
    const s = new CycleState(p, c);
    const plugin = interPodAffinity((ns) => nsLabels[ns]);
    plugin.preFilter!(s);
    return c.nodes().map((n) => (plugin.filter!(s, n) ? 'kept out' : 'fits'));
  };

  it("without namespaces or a namespaceSelector a term covers the pod's own namespace", () => {
    assert.deepEqual(verdicts({}), ['kept out', 'fits', 'fits']);
    assert.deepEqual(verdicts({}, 'team-b'), ['fits', 'fits', 'kept out']);
  });

  it("a namespaceSelector selects namespaces by their labels, not the pod's own unless it matches", () => {
    assert.deepEqual(verdicts({ namespaceSelector: { matchLabels: { team: 'a' } } }), [
      'fits',
      'kept out',
      'fits',
    ]);
    assert.deepEqual(
      verdicts({ namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'Exists' }] } }),
      ['fits', 'kept out', 'kept out'],
    );
  });

  it('an empty namespaceSelector selects every namespace; namespaces and a selector add up', () => {
    assert.deepEqual(verdicts({ namespaceSelector: {} }), ['kept out', 'kept out', 'kept out']);
    assert.deepEqual(
      verdicts({ namespaces: ['default'], namespaceSelector: { matchLabels: { team: 'b' } } }),
      ['kept out', 'fits', 'kept out'],
    );
  });

  it("a placed pod's term with a namespaceSelector is matched against the incoming pod's namespace labels", () => {
    const cache = new SchedulerCache();
    cache.nodeSet(node('a', { labels: { zone: 'z1' } }));
    cache.nodeSet(node('b', { labels: { zone: 'z2' } }));
    const loner = pod('loner', {
      spec: {
        nodeName: 'a',
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              {
                topologyKey: 'zone',
                labelSelector: { matchLabels: { app: 'web' } },
                namespaceSelector: { matchLabels: { team: 'a' } },
              },
            ],
          },
        },
      },
    });
    cache.podSeen('default/loner', { ...loner, status: { phase: 'Running' } });
    const verdict = (namespace: string) => {
      const s = new CycleState(inNamespace(pod('web', { labels: { app: 'web' } }), namespace), cache);
      const plugin = interPodAffinity((ns) => nsLabels[ns]);
      plugin.preFilter!(s);
      return cache.nodes().map((n) => (plugin.filter!(s, n) ? 'kept out' : 'fits'));
    };
    assert.deepEqual(verdict('team-a'), ['kept out', 'fits']);
    assert.deepEqual(verdict('default'), ['fits', 'fits']);
  });
});

describe('controllers/scheduler: VolumeBinding PreFilter', () => {
  const informer = (objs: Obj[]) => {
    const byKey = new Map(
      objs.map((o) => [
        o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name,
        o,
      ]),
    );
    return { indexer: { getByKey: (k: string) => byKey.get(k), list: () => objs } } as any;
  };
  const claim = (
    name: string,
    o: { phase?: string; volumeName?: string; deleting?: boolean; owner?: string } = {},
  ): Obj => ({
    metadata: {
      name,
      namespace: 'default',
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
      ...(o.owner
        ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: o.owner, controller: true }] }
        : {}),
    },
    spec: { volumeName: o.volumeName },
    status: { phase: o.phase ?? 'Pending' },
  });
  const plugin = volumeBinding({
    claims: informer([
      claim('lost', { phase: 'Lost', volumeName: 'gone' }),
      claim('bye', { deleting: true }),
      claim('p-scratch', { owner: 'someone-else' }),
    ]),
    volumes: informer([]),
    classes: informer([]),
    claimClient: undefined as any,
  });
  const withVolume = (volume: Record<string, unknown>) => {
    const p = pod('p', { spec: { volumes: [{ name: 'scratch', ...volume }] } });
    p.metadata.uid = 'pod-uid';
    return plugin.preFilter!(new CycleState(p, new SchedulerCache()));
  };

  it("answers like kube-scheduler for claims that are missing, lost, being deleted or someone else's", () => {
    assert.equal(
      withVolume({ persistentVolumeClaim: { claimName: 'none' } }),
      'persistentvolumeclaim "none" not found',
    );
    assert.equal(
      withVolume({ ephemeral: { volumeClaimTemplate: { spec: {} } } }),
      'PVC default/p-scratch was not created for pod default/p (pod is not owner)',
    );
    assert.equal(
      withVolume({ persistentVolumeClaim: { claimName: 'lost' } }),
      'persistentvolumeclaim "lost" bound to non-existent persistentvolume "gone"',
    );
    assert.equal(
      withVolume({ persistentVolumeClaim: { claimName: 'bye' } }),
      'persistentvolumeclaim "bye" is being deleted',
    );
    assert.equal(withVolume({ emptyDir: {} }), undefined);
    const p = pod('q', {
      spec: { volumes: [{ name: 'v', ephemeral: { volumeClaimTemplate: { spec: {} } } }] },
    });
    assert.equal(
      plugin.preFilter!(new CycleState(p, new SchedulerCache())),
      'waiting for ephemeral volume controller to create the persistentvolumeclaim "q-v"',
    );
  });
});
