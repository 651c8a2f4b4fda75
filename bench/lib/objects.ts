// The objects the benchmark writes: 1 KB ConfigMaps and pods shaped like the
// ones a Deployment + scheduler + kubelet leave behind (labels, owner reference,
// projected service-account volume, probes, resources; status with conditions,
// IPs and container statuses).

/** A ConfigMap whose JSON is about `bytes` long; `extra` entries go into data first. */
export function configMap(
  namespace: string,
  name: string,
  bytes = 1024,
  extra: Record<string, string> = {},
): any {
  const cm = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: { app: 'bench' } },
    data: { ...extra, v: '' },
  };
  const pad = bytes - JSON.stringify(cm).length;
  cm.data.v = 'x'.repeat(Math.max(0, pad));
  return cm;
}

function hex(n: number, len: number): string {
  let s = '';
  let x = (n * 2654435761) >>> 0;
  while (s.length < len) {
    s += x.toString(16).padStart(8, '0');
    x = Math.imul(x ^ (x >>> 15), 2246822519) >>> 0;
  }
  return s.slice(0, len);
}

/**
 * Pod number i of a ReplicaSet-like group of 100, before the scheduler and the
 * kubelet touched it. About 2 KiB of JSON once the server defaults it and the
 * kubelet's status is in (plus the managedFields of both writes).
 */
export function pod(namespace: string, name: string, i: number): any {
  const group = Math.floor(i / 100);
  const app = `svc-${group % 50}`;
  const hash = hex(group + 1, 10);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      generateName: `${app}-${hash}-`,
      labels: { app, 'pod-template-hash': hash, tier: 'backend' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `${app}-${hash}`,
          uid: `${hex(group + 7, 8)}-${hex(group + 5, 4)}-4${hex(group + 3, 3)}-8${hex(group + 2, 3)}-${hex(group + 1, 12)}`,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      containers: [
        {
          name: 'app',
          image: `registry.example.com/team/${app}:1.${i % 7}.3`,
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          env: [{ name: 'LOG_LEVEL', value: 'info' }],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
        },
      ],
      automountServiceAccountToken: false,
      nodeName: `node-${i % 100}`,
      serviceAccountName: 'default',
    },
  };
}

/**
 * Pod number i whose JSON is about `bytes` long: the pod above with its
 * running status and an annotation making up the rest (issue 21's 3.8 KB pod).
 */
export function paddedPod(namespace: string, name: string, i: number, bytes: number): any {
  const p = pod(namespace, name, i);
  p.status = runningStatus(i);
  p.metadata.annotations = { 'bench.tkube.dev/pad': '' };
  const pad = bytes - JSON.stringify(p).length;
  p.metadata.annotations['bench.tkube.dev/pad'] = 'x'.repeat(Math.max(0, pad));
  return p;
}

/** The status a kubelet writes once the pod runs. */
export function runningStatus(i: number): any {
  const t = '2026-11-01T10:00:00Z';
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const hostIP = `192.168.0.${(i % 100) + 2}`;
  return {
    phase: 'Running',
    conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
      type,
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: t,
    })),
    hostIP,
    podIP: ip,
    podIPs: [{ ip }],
    startTime: t,
    containerStatuses: [
      {
        name: 'app',
        state: { running: { startedAt: t } },
        ready: true,
        restartCount: 0,
        image: `registry.example.com/team/svc-${Math.floor(i / 100) % 50}:1.${i % 7}.3`,
        imageID: `registry.example.com/team/svc@sha256:${hex(i % 7, 64)}`,
        containerID: `containerd://${hex(i + 1, 64)}`,
        started: true,
      },
    ],
    qosClass: 'Burstable',
  };
}
