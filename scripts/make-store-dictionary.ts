// Makes the embedded store's LZ4 dictionary (apiserver/storage/embedded/dictionary.ts) from
// objects as the apiserver stores them: a Deployment's pod once the kubelet reported it
// running, its node's Lease and an Event, each defaulted by a real apiserver, then Protobuf-
// encoded with fixed uids and times. Run once per dictionary version:
//   npm run build && node dist/scripts/make-store-dictionary.js > dictionary-vN.txt
// The output is frozen once released: every record compressed with a version needs its exact
// bytes to read back, so a new dictionary is a new version beside the old one, never an edit.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api } from '../bench/lib/api';
import { startApiserver } from '../bench/lib/procs';
import { encodeObject } from '../shared/codec/protobuf';

const NS = 'web';
const TIME = '2025-01-01T00:00:00Z';
const HASH = '5d8f7c6b9d';

function runningStatus(created: any): any {
  const c = created.spec.containers[0];
  return {
    ...created,
    status: {
      phase: 'Running',
      conditions: [
        'PodReadyToStartContainers',
        'Initialized',
        'Ready',
        'ContainersReady',
        'PodScheduled',
      ].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: TIME })),
      hostIP: '172.18.0.2',
      hostIPs: [{ ip: '172.18.0.2' }],
      podIP: '10.244.0.5',
      podIPs: [{ ip: '10.244.0.5' }],
      startTime: TIME,
      containerStatuses: [
        {
          name: c.name,
          state: { running: { startedAt: TIME } },
          lastState: {},
          ready: true,
          restartCount: 0,
          image: `docker.io/library/${c.image}`,
          imageID: `docker.io/library/nginx@sha256:${'0'.repeat(64)}`,
          containerID: `containerd://${'1'.repeat(64)}`,
          started: true,
        },
      ],
      qosClass: 'Burstable',
    },
  };
}

/** Fixed values where every object has its own, so the dictionary does not depend on the run. */
function normalise(obj: any): any {
  const md = obj.metadata;
  delete md.resourceVersion;
  md.uid = '00000000-0000-4000-8000-000000000000';
  md.creationTimestamp = TIME;
  for (const e of md.managedFields ?? []) e.time = TIME;
  return obj;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tkube-dictionary-'));
  const server = await startApiserver({ dir, dataDir: join(dir, 'data'), certDir: join(dir, 'certs') });
  const api = new Api(server.target, 1);
  const call = (method: string, path: string, body?: unknown): Promise<any> => api.must(method, path, body);
  try {
    await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await call('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'default' },
    });
    const name = `nginx-${HASH}-x7k2p`;
    const created = await call('POST', `/api/v1/namespaces/${NS}/pods?fieldManager=kube-controller-manager`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        generateName: `nginx-${HASH}-`,
        labels: { app: 'nginx', 'pod-template-hash': HASH },
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: `nginx-${HASH}`,
            uid: '00000000-0000-4000-8000-000000000001',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        containers: [
          {
            name: 'nginx',
            image: 'nginx:1.27',
            ports: [{ containerPort: 80, protocol: 'TCP' }],
            resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
          },
        ],
        nodeName: 'worker-1',
      },
    });
    const pod = await call(
      'PUT',
      `/api/v1/namespaces/${NS}/pods/${name}/status?fieldManager=kubelet`,
      runningStatus(created),
    );
    const lease = await call(
      'POST',
      '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases?fieldManager=kubelet',
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name: 'worker-1',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'Node', name: 'worker-1', uid: '00000000-0000-4000-8000-000000000002' },
          ],
        },
        spec: {
          holderIdentity: 'worker-1',
          leaseDurationSeconds: 40,
          renewTime: '2025-01-01T00:00:00.000000Z',
        },
      },
    );
    const event = await call('POST', `/api/v1/namespaces/${NS}/events?fieldManager=kube-scheduler`, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${name}.181a2b3c4d5e6f70` },
      involvedObject: {
        kind: 'Pod',
        namespace: NS,
        name,
        uid: '00000000-0000-4000-8000-000000000003',
        apiVersion: 'v1',
      },
      reason: 'Scheduled',
      message: `Successfully assigned ${NS}/${name} to worker-1`,
      source: { component: 'default-scheduler' },
      firstTimestamp: TIME,
      lastTimestamp: TIME,
      count: 1,
      type: 'Normal',
      reportingComponent: 'default-scheduler',
      reportingInstance: '',
    });
    // The keys of the store's log records, then the objects: most reused last.
    const parts = [
      Buffer.from('/registry/events/ /registry/coordination.k8s.io/leases/kube-node-lease/ /registry/pods/'),
      ...[event, lease, pod].map((o) => encodeObject(normalise(o))),
    ];
    let dict = Buffer.concat(parts);
    // lmdb-js uses the dictionary's length rounded down to 8 bytes: pad at the front.
    dict = Buffer.concat([Buffer.alloc((8 - (dict.length % 8)) % 8, 0x20), dict]);
    process.stdout.write(dict.toString('base64') + '\n');
  } finally {
    await api.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
