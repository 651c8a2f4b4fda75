// Figures for the Protobuf codec against JSON (never pass/fail on time).
// node dist-*/shared/codec/protobuf-bench.js
import { decodeObject, encodeListFromRawItems, encodeMessage, encodeObject } from './protobuf';

/** A pod as a Deployment creates it, with status and managedFields: about 2 KiB of JSON. */
export function samplePod(i = 0): any {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `web-7d4b9c8f6d-${i.toString(36).padStart(5, 'x')}`,
      generateName: 'web-7d4b9c8f6d-',
      namespace: 'default',
      uid: '3c1f0b6e-2f5d-4a57-9a8e-0d6f1e2b7c41',
      resourceVersion: String(1000 + i),
      creationTimestamp: '2024-05-01T10:00:00Z',
      labels: { app: 'web', 'pod-template-hash': '7d4b9c8f6d', tier: 'frontend' },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2024-05-01T09:59:00Z' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web-7d4b9c8f6d',
          uid: '9a0d3c55-8b1e-4f0e-b1a4-6c2d7e8f9a10',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2024-05-01T10:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:generateName': {}, 'f:labels': { '.': {}, 'f:app': {} } },
            'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
          },
        },
      ],
    },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'registry.example.com/web:1.25.3',
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [
            { name: 'MODE', value: 'production' },
            { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
          ],
          resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
          livenessProbe: {
            httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' },
            initialDelaySeconds: 5,
            timeoutSeconds: 1,
            periodSeconds: 10,
            successThreshold: 1,
            failureThreshold: 3,
          },
          volumeMounts: [
            {
              name: 'kube-api-access-abcde',
              readOnly: true,
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
            },
          ],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      volumes: [
        {
          name: 'kube-api-access-abcde',
          projected: {
            sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }],
            defaultMode: 420,
          },
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      nodeName: 'node-1',
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      priority: 0,
      enableServiceLinks: true,
    },
    status: {
      phase: 'Running',
      conditions: [
        {
          type: 'Initialized',
          status: 'True',
          lastProbeTime: null,
          lastTransitionTime: '2024-05-01T10:00:00Z',
        },
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2024-05-01T10:00:03Z' },
      ],
      hostIP: '10.0.0.11',
      podIP: '10.244.1.17',
      podIPs: [{ ip: '10.244.1.17' }],
      startTime: '2024-05-01T10:00:00Z',
      containerStatuses: [
        {
          name: 'web',
          state: { running: { startedAt: '2024-05-01T10:00:02Z' } },
          ready: true,
          restartCount: 0,
          image: 'registry.example.com/web:1.25.3',
          imageID:
            'registry.example.com/web@sha256:4c0a4f3e0b3f1d2a9e8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f',
          containerID: 'containerd://1f2e3d4c5b6a79881726354a5b6c7d8e9f0a1b2c3d4e5f60718293a4b5c6d7e8',
          started: true,
        },
      ],
      qosClass: 'Burstable',
    },
  };
}

const out = (line: string) => process.stdout.write(line + '\n');

/** Best ops/s of several interleaved rounds: the machine is shared, so take the least disturbed run. */
function rates(cases: Record<string, () => unknown>, rounds = 7, roundMs = 300): void {
  const best: Record<string, number> = {};
  for (const fn of Object.values(cases)) for (let i = 0; i < 500; i++) fn(); // warm up the JIT
  for (let r = 0; r < rounds; r++) {
    for (const [label, fn] of Object.entries(cases)) {
      let n = 0;
      const t0 = performance.now();
      let t = t0;
      while (t - t0 < roundMs) {
        for (let i = 0; i < 50; i++) fn();
        n += 50;
        t = performance.now();
      }
      best[label] = Math.max(best[label] ?? 0, (n * 1000) / (t - t0));
    }
  }
  for (const [label, v] of Object.entries(best)) {
    out(`${label.padEnd(40)} ${Math.round(v).toLocaleString('en').padStart(12)} ops/s`);
  }
}

/** Best time of several interleaved runs. */
function times(cases: Record<string, () => unknown>, runs = 7): void {
  const best: Record<string, number> = {};
  for (let r = 0; r < runs; r++) {
    for (const [label, fn] of Object.entries(cases)) {
      const t0 = performance.now();
      fn();
      best[label] = Math.min(best[label] ?? Infinity, performance.now() - t0);
    }
  }
  for (const [label, v] of Object.entries(best)) out(`${label.padEnd(40)} ${v.toFixed(1).padStart(12)} ms`);
}

function main(): void {
  // 1000 distinct pods, each from its own JSON.parse, as requests give them.
  const pods = Array.from({ length: 1000 }, (_, i) => JSON.parse(JSON.stringify(samplePod(i))));
  const jsons = pods.map((p) => JSON.stringify(p));
  const pbs = pods.map((p) => encodeObject(p));
  out(`pod: ${jsons[0].length} bytes JSON, ${pbs[0].length} bytes protobuf`);
  let i = 0;
  const next = () => (i = (i + 1) % 1000);
  rates({
    'JSON.stringify pod': () => JSON.stringify(pods[next()]),
    'protobuf encodeObject pod': () => encodeObject(pods[next()]),
    'JSON.parse pod': () => JSON.parse(jsons[next()]),
    'protobuf decodeObject pod': () => decodeObject(pbs[next()]),
  });

  const items = Array.from({ length: 10000 }, (_, n) => {
    const p = samplePod(n);
    delete p.apiVersion;
    delete p.kind;
    return p;
  });
  const list = { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '99999' }, items };
  const listJson = JSON.stringify(list);
  const listPb = encodeObject(list);
  const raws = items.map((p) => encodeMessage('v1', 'Pod', p));
  out(
    `10k-pod list: ${(listJson.length / 1048576).toFixed(1)} MiB JSON, ${(listPb.length / 1048576).toFixed(1)} MiB protobuf`,
  );
  times({
    'JSON.stringify 10k-pod list': () => JSON.stringify(list),
    'protobuf encodeObject 10k-pod list': () => encodeObject(list),
    'protobuf list from pre-encoded items': () =>
      encodeListFromRawItems('v1', 'PodList', list.metadata, raws),
    'JSON.parse 10k-pod list': () => JSON.parse(listJson),
    'protobuf decodeObject 10k-pod list': () => decodeObject(listPb),
  });
}

if (require.main === module) main();
