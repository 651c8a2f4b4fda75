import assert from 'node:assert/strict';
import { VERSION } from '../../apiserver/server/app';
import { parseThresholds } from './eviction';
import {
  capacityAndAllocatable,
  formatBytes,
  initialNode,
  KUBELET_VERSION,
  nodeConditions,
  nodeStatus,
  reconcileExisting,
  reportedImages,
  statusChanged,
  validateNodeLabels,
  type StatusFacts,
} from './node';

const Ki = 1024;

function facts(over: Partial<StatusFacts['config']> = {}): StatusFacts {
  return {
    config: {
      nodeName: 'n1',
      hostname: 'n1',
      nodeLabels: { 'node.kubernetes.io/pool': 'a', team: 'x' },
      registerSchedulable: true,
      registerWithTaints: [],
      evictionHard: parseThresholds('memory.available<100Mi,nodefs.available<10%'),
      nodeStatusMaxImages: 50,
      port: 10250,
      podCIDR: '10.244.3.0/24',
      ...over,
    } as any,
    machine: {
      cores: 4,
      memoryCapacity: 8145320 * Ki,
      kernelVersion: '6.1.0',
      osImage: 'Debian GNU/Linux 12 (bookworm)',
      operatingSystem: 'linux',
      architecture: 'amd64',
      machineID: 'm',
      systemUUID: 'u',
      bootID: 'b',
      cpuModel: 'x',
    },
    nodeIPs: ['192.168.1.10'],
    resources: { cores: 4, memory: 8145320 * Ki, ephemeralStorage: 61255492 * Ki, maxPods: 110 },
    runtimeVersion: 'fake://0.1.0',
    images: [],
  };
}

describe('nodeagent/status: the Node', () => {
  it('reports capacity and allocatable like the kubelet (eviction thresholds kept back)', () => {
    const { capacity, allocatable } = capacityAndAllocatable(facts().resources, facts().config);
    assert.deepEqual(capacity, {
      cpu: '4',
      'ephemeral-storage': '61255492Ki',
      memory: '8145320Ki',
      pods: '110',
    });
    // 8145320Ki - 100Mi, and 90 % of the filesystem in bytes.
    assert.deepEqual(allocatable, {
      cpu: '4',
      'ephemeral-storage': '56453061428',
      memory: '8042920Ki',
      pods: '110',
    });
    assert.equal(formatBytes(1024 * 1024 * 1024), '1Gi');
    assert.equal(formatBytes(1000), '1000');
  });

  it('registers with default labels, --node-labels, taints, addresses, nodeInfo and the kubelet port', () => {
    const f = facts({
      registerWithTaints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }],
      registerSchedulable: false,
    });
    const node: any = initialNode(f, []);
    assert.deepEqual(node.metadata.labels, {
      'beta.kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/hostname': 'n1',
      'kubernetes.io/os': 'linux',
      'node.kubernetes.io/pool': 'a',
      team: 'x',
    });
    assert.deepEqual(node.spec.taints, [
      { key: 'dedicated', value: 'db', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' },
    ]);
    assert.equal(node.spec.unschedulable, true);
    assert.deepEqual(node.spec.podCIDRs, ['10.244.3.0/24']);
    assert.deepEqual(node.status.addresses, [
      { type: 'InternalIP', address: '192.168.1.10' },
      { type: 'Hostname', address: 'n1' },
    ]);
    assert.deepEqual(node.status.daemonEndpoints, { kubeletEndpoint: { Port: 10250 } });
    assert.equal(node.status.nodeInfo.kubeletVersion, KUBELET_VERSION);
    // Written empty, in Go's field order (NodeSystemInfo.kubeProxyVersion is not omitempty).
    assert.equal(node.status.nodeInfo.kubeProxyVersion, '');
    assert.deepEqual(Object.keys(node.status.nodeInfo).slice(6, 9), [
      'kubeletVersion',
      'kubeProxyVersion',
      'operatingSystem',
    ]);
    assert.equal(node.status.nodeInfo.containerRuntimeVersion, 'fake://0.1.0');
    assert.equal(node.status.nodeInfo.osImage, 'Debian GNU/Linux 12 (bookworm)');
  });

  it('refuses kubernetes.io labels the kubelet may not set', () => {
    validateNodeLabels({
      'kubelet.kubernetes.io/x': '1',
      'topology.kubernetes.io/zone': 'z',
      'example.com/a': 'b',
    });
    assert.throws(
      () => validateNodeLabels({ 'node-role.kubernetes.io/worker': '', 'foo.k8s.io/bar': '1' }),
      /unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: \[foo.k8s.io\/bar node-role.kubernetes.io\/worker\]/,
    );
  });

  it('computes the conditions with the kubelet reasons and keeps transition times', () => {
    const t0 = Date.UTC(2025, 0, 1, 0, 0, 0);
    const input = {
      ready: { ok: true },
      pressure: { MemoryPressure: false, DiskPressure: false, PIDPressure: false },
    };
    const first = nodeConditions(undefined, input, t0);
    assert.deepEqual(
      first.map((c) => [c.type, c.status, c.reason, c.message]),
      [
        ['MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
        ['DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
        ['PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
        ['Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'],
      ],
    );
    const later = nodeConditions(
      first,
      { ...input, pressure: { ...input.pressure, DiskPressure: true } },
      t0 + 60_000,
    );
    const disk = later.find((c) => c.type === 'DiskPressure');
    assert.deepEqual(
      [disk.status, disk.reason, disk.message, disk.lastTransitionTime],
      ['True', 'KubeletHasDiskPressure', 'kubelet has disk pressure', '2025-01-01T00:01:00Z'],
    );
    const ready = later.find((c) => c.type === 'Ready');
    assert.equal(ready.lastTransitionTime, '2025-01-01T00:00:00Z');
    assert.equal(ready.lastHeartbeatTime, '2025-01-01T00:01:00Z');
    // Only heartbeats differ: no update needed; a condition flip or a new image: update.
    const base = { conditions: first, capacity: { cpu: '4' } };
    assert.equal(
      statusChanged(
        { ...base, other: 1 },
        { conditions: nodeConditions(first, input, t0 + 10_000), capacity: { cpu: '4' } },
      ),
      false,
    );
    assert.equal(statusChanged(base, { conditions: later, capacity: { cpu: '4' } }), true);
    assert.equal(statusChanged(base, { ...base, images: [{ names: ['a'], sizeBytes: 1 }] }), true);
  });

  it('reconciles an existing Node: default labels and the attach-detach annotation only', () => {
    const f = facts();
    assert.equal(reconcileExisting(initialNode(f, []), f), undefined);
    const patch: any = reconcileExisting(
      { metadata: { name: 'n1', labels: { 'kubernetes.io/os': 'windows', team: 'y' } } },
      f,
    );
    assert.equal(patch.metadata.labels['kubernetes.io/os'], 'linux');
    assert.equal(patch.metadata.labels.team, undefined);
    assert.equal(
      patch.metadata.annotations['volumes.kubernetes.io/controller-managed-attach-detach'],
      'true',
    );
  });

  it('reports the largest images first, capped', () => {
    const imgs = [1, 5, 3].map((n) => ({ names: [`i${n}`], sizeBytes: n }));
    assert.deepEqual(
      reportedImages(imgs, 2).map((i) => i.sizeBytes),
      [5, 3],
    );
    assert.equal(reportedImages(imgs, -1).length, 3);
  });

  it('reports volumesInUse when pods use some, and drops an earlier list once none are', () => {
    const inUse = ['kubernetes.io/local-volume/pv-a'];
    assert.deepEqual(nodeStatus({ ...facts(), volumesInUse: inUse }, []).volumesInUse, inUse);
    assert.equal('volumesInUse' in nodeStatus({ ...facts(), volumesInUse: [] }, []), false);
    assert.equal(
      nodeStatus({ ...facts(), volumesInUse: [] }, [], { volumesInUse: inUse }).volumesInUse,
      null,
    );
  });

  it('reports the release of the apiserver it belongs to', () => {
    assert.equal(KUBELET_VERSION, VERSION.gitVersion);
  });
});
