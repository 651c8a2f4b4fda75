// Field selectors as Kubernetes serves them: each kind's own field labels per version (and the
// default for kinds without), Kubernetes' refusals, the Event quirks (source falls back to the
// reporting controller; events.k8s.io's regarding.* names), on lists and on watches, from the
// watch cache and from the store.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, withTestAPIServer, type TestAPIServer } from '../server/testing';

const ns = 'fs';
const q = (sel: string) => `fieldSelector=${encodeURIComponent(sel)}`;
const CSR_REQUEST = Buffer.from(
  '-----BEGIN CERTIFICATE REQUEST-----\nMAA=\n-----END CERTIFICATE REQUEST-----\n',
).toString('base64');
const container = { name: 'c', image: 'busybox' };

/** [collection path, label accepted, label refused, Kubernetes' message for the refused one]. */
const LABELS: [string, string[], string, string][] = [
  [
    `/api/v1/namespaces/${ns}/pods`,
    [
      'metadata.name',
      'metadata.namespace',
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'spec.hostNetwork',
      'status.phase',
      'status.podIP',
      'status.podIPs',
      'status.nominatedNodeName',
      'spec.host',
    ],
    'spec.containers',
    'field label not supported: spec.containers',
  ],
  [
    '/api/v1/nodes',
    ['metadata.name', 'spec.unschedulable'],
    'metadata.namespace',
    'field label not supported: metadata.namespace',
  ],
  ['/api/v1/namespaces', ['metadata.name', 'status.phase'], 'name', 'field label not supported: name'],
  [
    `/api/v1/namespaces/${ns}/secrets`,
    ['metadata.namespace', 'type'],
    'data',
    'field label not supported: data',
  ],
  [
    `/api/v1/namespaces/${ns}/services`,
    ['spec.clusterIP', 'spec.type'],
    'spec.ports',
    'field label not supported: spec.ports',
  ],
  [
    `/api/v1/namespaces/${ns}/replicationcontrollers`,
    ['status.replicas'],
    'spec.replicas',
    'field label not supported: spec.replicas',
  ],
  [
    `/apis/apps/v1/namespaces/${ns}/replicasets`,
    ['status.replicas'],
    'spec.replicas',
    'field label not supported: spec.replicas',
  ],
  [
    `/apis/batch/v1/namespaces/${ns}/jobs`,
    ['metadata.namespace', 'status.successful'],
    'status.succeeded',
    'field label "status.succeeded" not supported for Job',
  ],
  [
    `/api/v1/namespaces/${ns}/events`,
    [
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source',
      'type',
    ],
    'regarding.name',
    'field label not supported: regarding.name',
  ],
  [
    `/apis/events.k8s.io/v1/namespaces/${ns}/events`,
    [
      'metadata.name',
      'regarding.kind',
      'regarding.namespace',
      'regarding.name',
      'regarding.uid',
      'regarding.apiVersion',
      'regarding.resourceVersion',
      'regarding.fieldPath',
      'reason',
      'reportingController',
      'source',
      'type',
    ],
    'involvedObject.name',
    'field label not supported: involvedObject.name',
  ],
  [
    '/apis/certificates.k8s.io/v1/certificatesigningrequests',
    ['metadata.name', 'spec.signerName'],
    'metadata.namespace',
    'field label not supported: metadata.namespace',
  ],
  [
    '/apis/resource.k8s.io/v1/resourceslices',
    ['metadata.name', 'spec.nodeName', 'spec.driver'],
    'spec.pool.name',
    'field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool.name',
  ],
  [
    `/api/v1/namespaces/${ns}/configmaps`,
    ['metadata.name', 'metadata.namespace'],
    'data.x',
    '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
  ],
  [
    '/api/v1/persistentvolumes',
    ['metadata.name', 'metadata.namespace'],
    'name',
    '"name" is not a known field selector: only "metadata.name", "metadata.namespace"',
  ],
];

for (const watchCache of [true, false]) {
  describe(`field selectors (${watchCache ? 'watch cache' : 'store'})`, function () {
    this.timeout(60_000);
    let srv: TestAPIServer;
    let api: ReturnType<typeof testRequester>;
    /** The resourceVersion before the objects below were made: watches from it replay their creation. */
    let rv0 = '';

    const create = async (path: string, body: any) => {
      const r = await api('POST', path, { body });
      assert.equal(r.status, 201, `${path}: ${JSON.stringify(r.json)}`);
      return r.json;
    };
    const setStatus = async (path: string, name: string, status: any) => {
      const obj = (await api('GET', `${path}/${name}`)).json;
      const r = await api('PUT', `${path}/${name}/status`, {
        body: { ...obj, status: { ...obj.status, ...status } },
      });
      assert.equal(r.status, 200, `${path}/${name}/status: ${JSON.stringify(r.json)}`);
    };
    const listed = async (path: string, sel: string): Promise<string[]> => {
      const r = await api('GET', `${path}?${q(sel)}`);
      assert.equal(r.status, 200, `${path} ${sel}: ${JSON.stringify(r.json)}`);
      return r.json.items.map((i: any) => i.metadata.name).sort();
    };
    /** The names a watch replaying everything since rv0 ends up with (it ends after a second). */
    const watched = async (path: string, sel: string): Promise<string[]> => {
      const r = await api('GET', `${path}?watch=1&timeoutSeconds=1&resourceVersion=${rv0}&${q(sel)}`);
      assert.equal(r.status, 200, `${path} ${sel}: ${r.body.toString()}`);
      const events = r.body
        .toString()
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l));
      const seen = new Set<string>();
      for (const e of events) {
        if (e.type === 'DELETED') seen.delete(e.object.metadata.name);
        else if (e.type === 'ADDED' || e.type === 'MODIFIED') seen.add(e.object.metadata.name);
      }
      return [...seen].sort();
    };
    /** The same answer from a list and from a watch. */
    const selects = async (path: string, sel: string, want: string[]) => {
      assert.deepEqual(await listed(path, sel), want, `list ${path} ${sel}`);
      assert.deepEqual(await watched(path, sel), want, `watch ${path} ${sel}`);
    };

    const pods = `/api/v1/namespaces/${ns}/pods`;
    const coreEvents = `/api/v1/namespaces/${ns}/events`;
    const v1Events = `/apis/events.k8s.io/v1/namespaces/${ns}/events`;
    const csrs = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

    before(async () => {
      srv = await startTestAPIServer({ watchCache });
      api = testRequester(srv.config);
      await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      rv0 = (await api('GET', `${pods}`)).json.metadata.resourceVersion;
      await create(pods, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p-a' },
        spec: {
          containers: [container],
          nodeName: 'node-a',
          hostNetwork: true,
          serviceAccountName: 'builder',
          restartPolicy: 'Always',
        },
      });
      await create(pods, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p-b' },
        spec: { containers: [container], restartPolicy: 'Never', schedulerName: 'other-scheduler' },
      });
      await setStatus(pods, 'p-a', { phase: 'Running', podIP: '10.1.2.3', podIPs: [{ ip: '10.1.2.3' }] });
      await setStatus(pods, 'p-b', { nominatedNodeName: 'node-b' });
      for (const [name, unschedulable] of [
        ['n-a', true],
        ['n-b', false],
      ] as const)
        await create('/api/v1/nodes', {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name },
          spec: { unschedulable },
        });
      await create(`/api/v1/namespaces/${ns}/secrets`, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's-opaque' },
      });
      await create(`/api/v1/namespaces/${ns}/secrets`, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's-custom' },
        type: 'example.com/custom',
      });
      await create(`/api/v1/namespaces/${ns}/services`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'svc-headless' },
        spec: { clusterIP: 'None', ports: [{ port: 80 }] },
      });
      await create(`/api/v1/namespaces/${ns}/services`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'svc-np' },
        spec: { type: 'NodePort', ports: [{ port: 80 }] },
      });
      const template = { metadata: { labels: { app: 'a' } }, spec: { containers: [container] } };
      await create(`/apis/apps/v1/namespaces/${ns}/replicasets`, {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'rs-a' },
        spec: { replicas: 0, selector: { matchLabels: { app: 'a' } }, template },
      });
      await create(`/apis/apps/v1/namespaces/${ns}/replicasets`, {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'rs-b' },
        spec: { replicas: 0, selector: { matchLabels: { app: 'a' } }, template },
      });
      await setStatus(`/apis/apps/v1/namespaces/${ns}/replicasets`, 'rs-b', { replicas: 2 });
      await create(`/api/v1/namespaces/${ns}/replicationcontrollers`, {
        apiVersion: 'v1',
        kind: 'ReplicationController',
        metadata: { name: 'rc-a' },
        spec: { replicas: 0, selector: { app: 'a' }, template },
      });
      await create(`/apis/batch/v1/namespaces/${ns}/jobs`, {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'job-a' },
        spec: { template: { spec: { containers: [container], restartPolicy: 'Never' } } },
      });
      for (const [name, signerName] of [
        ['csr-a', 'example.com/a'],
        ['csr-b', 'example.com/b'],
      ])
        await create(csrs, {
          apiVersion: 'certificates.k8s.io/v1',
          kind: 'CertificateSigningRequest',
          metadata: { name },
          spec: { request: CSR_REQUEST, signerName, usages: ['client auth'] },
        });
      const regarding = { kind: 'Pod', name: 'p-a', namespace: ns };
      // A kubelet's event (source.component), and the scheduler's, through either API, without one.
      await create(coreEvents, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'ev-kubelet' },
        involvedObject: regarding,
        reason: 'Pulled',
        type: 'Normal',
        source: { component: 'kubelet', host: 'node-a' },
        firstTimestamp: '2026-01-01T00:00:00Z',
        lastTimestamp: '2026-01-01T00:00:00Z',
        count: 1,
      });
      await create(coreEvents, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'ev-core-scheduler' },
        involvedObject: { ...regarding, name: 'p-b' },
        reason: 'FailedScheduling',
        type: 'Warning',
        eventTime: '2026-01-01T00:00:00.000000Z',
        action: 'Scheduling',
        reportingComponent: 'default-scheduler',
        reportingInstance: 'default-scheduler-1',
      });
      await create(v1Events, {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: 'ev-v1-scheduler' },
        eventTime: '2026-01-01T00:00:00.000000Z',
        action: 'Binding',
        reason: 'Scheduled',
        type: 'Normal',
        regarding,
        reportingController: 'default-scheduler',
        reportingInstance: 'default-scheduler-1',
      });
    });
    after(async () => {
      await api?.close();
      await srv?.stop();
    });

    it("accepts each kind's field labels, and refuses others with Kubernetes' message", async () => {
      for (const [path, accepted, refused, message] of LABELS) {
        for (const label of accepted) {
          const r = await api('GET', `${path}?${q(`${label}=zz`)}`);
          assert.equal(r.status, 200, `${path} ${label}: ${JSON.stringify(r.json)}`);
        }
        for (const watch of ['', 'watch=1&']) {
          const r = await api('GET', `${path}?${watch}${q(`metadata.name=x,${refused}=zz`)}`);
          assert.equal(r.status, 400, `${path} ${refused}`);
          assert.equal(r.json.kind, 'Status');
          assert.equal(r.json.reason, 'BadRequest');
          assert.equal(r.json.message, message);
        }
      }
    });

    it('selects CertificateSigningRequests by spec.signerName', async () => {
      await selects(csrs, 'spec.signerName=example.com/a', ['csr-a']);
      await selects(csrs, 'spec.signerName!=example.com/a', ['csr-b']);
    });

    it('selects pods by their spec and status fields', async () => {
      await selects(pods, 'spec.nodeName=node-a', ['p-a']);
      await selects(pods, 'spec.host=node-a', ['p-a']);
      await selects(pods, 'spec.nodeName=', ['p-b']);
      await selects(pods, 'spec.restartPolicy=Never', ['p-b']);
      await selects(pods, 'spec.schedulerName=other-scheduler', ['p-b']);
      await selects(pods, 'spec.serviceAccountName=builder', ['p-a']);
      await selects(pods, 'spec.hostNetwork=true', ['p-a']);
      await selects(pods, 'spec.hostNetwork=false', ['p-b']);
      await selects(pods, 'status.phase=Running,status.podIP=10.1.2.3', ['p-a']);
      await selects(pods, 'status.nominatedNodeName=node-b', ['p-b']);
      // Accepted, but not in Kubernetes' selectable set: every pod has it empty.
      await selects(pods, 'status.podIPs=10.1.2.3', []);
      await selects(pods, 'status.podIPs=', ['p-a', 'p-b']);
    });

    it('selects nodes, namespaces, secrets, services, replica sets, controllers and jobs', async () => {
      const nodes = await listed('/api/v1/nodes', 'spec.unschedulable=true');
      assert.deepEqual(nodes, ['n-a']);
      assert.ok((await listed('/api/v1/nodes', 'spec.unschedulable=false')).includes('n-b'));
      assert.ok((await listed('/api/v1/namespaces', 'status.phase=Active')).includes(ns));
      assert.deepEqual(await listed('/api/v1/namespaces', 'status.phase=Terminating'), []);
      await selects(`/api/v1/namespaces/${ns}/secrets`, 'type=example.com/custom', ['s-custom']);
      await selects(`/api/v1/namespaces/${ns}/secrets`, 'type=Opaque', ['s-opaque']);
      await selects(`/api/v1/namespaces/${ns}/services`, 'spec.clusterIP=None', ['svc-headless']);
      await selects(`/api/v1/namespaces/${ns}/services`, 'spec.type=NodePort', ['svc-np']);
      await selects(`/apis/apps/v1/namespaces/${ns}/replicasets`, 'status.replicas=2', ['rs-b']);
      await selects(`/apis/apps/v1/namespaces/${ns}/replicasets`, 'status.replicas=0', ['rs-a']);
      await selects(`/api/v1/namespaces/${ns}/replicationcontrollers`, 'status.replicas=0', ['rc-a']);
      await selects(`/apis/batch/v1/namespaces/${ns}/jobs`, 'status.successful=0', ['job-a']);
      await selects(`/apis/batch/v1/namespaces/${ns}/jobs`, 'status.successful=1', []);
    });

    it("selects the scheduler's events by source, which falls back to the reporting controller", async () => {
      await selects(coreEvents, 'source=default-scheduler', ['ev-core-scheduler', 'ev-v1-scheduler']);
      await selects(coreEvents, 'source=kubelet', ['ev-kubelet']);
      await selects(coreEvents, 'reportingComponent=default-scheduler', [
        'ev-core-scheduler',
        'ev-v1-scheduler',
      ]);
      await selects(coreEvents, 'involvedObject.name=p-a,type=Normal', ['ev-kubelet', 'ev-v1-scheduler']);
      await selects(v1Events, 'source=default-scheduler', ['ev-core-scheduler', 'ev-v1-scheduler']);
    });

    it('maps events.k8s.io field labels onto the core fields', async () => {
      await selects(v1Events, 'regarding.name=p-a', ['ev-kubelet', 'ev-v1-scheduler']);
      await selects(v1Events, 'regarding.kind=Pod,regarding.name=p-b', ['ev-core-scheduler']);
      await selects(v1Events, 'reportingController=default-scheduler,reason=Scheduled', ['ev-v1-scheduler']);
      await selects(v1Events, 'type=Warning', ['ev-core-scheduler']);
    });

    // Last: it deletes.
    it('deletes a collection by the same field labels', async () => {
      const bad = await api('DELETE', `${csrs}?${q('metadata.namespace=x')}`);
      assert.equal(bad.status, 400);
      assert.equal(bad.json.message, 'field label not supported: metadata.namespace');
      const r = await api('DELETE', `${csrs}?${q('spec.signerName=example.com/b')}`);
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual(await listed(csrs, 'metadata.name!=zz'), ['csr-a']);
    });
  });
}

describe('field selectors of beta and alpha versions', function () {
  this.timeout(60_000);
  const cert = '/apis/certificates.k8s.io';
  const BETA: [string, string[], string, string][] = [
    [
      `${cert}/v1alpha1/clustertrustbundles`,
      ['metadata.name', 'spec.signerName'],
      'metadata.namespace',
      'field label not supported: metadata.namespace',
    ],
    [
      `${cert}/v1beta1/clustertrustbundles`,
      ['metadata.name', 'spec.signerName'],
      'spec.trustBundle',
      'field label not supported: spec.trustBundle',
    ],
    [
      `${cert}/v1beta1/namespaces/${ns}/podcertificaterequests`,
      ['metadata.name', 'spec.signerName', 'spec.podName', 'spec.nodeName'],
      'metadata.namespace',
      'field label not supported: metadata.namespace',
    ],
    ...['v1beta1', 'v1beta2'].map((v): [string, string[], string, string] => [
      `/apis/resource.k8s.io/${v}/resourceslices`,
      ['metadata.name', 'spec.nodeName', 'spec.driver'],
      'metadata.namespace',
      `field label not supported for resource.k8s.io/${v}, Kind=ResourceSlice: metadata.namespace`,
    ]),
  ];

  it('accepts their own field labels and refuses others', () =>
    withTestAPIServer(
      {
        runtimeConfig: {
          'certificates.k8s.io/v1alpha1': 'true',
          'certificates.k8s.io/v1beta1': 'true',
          'resource.k8s.io/v1beta1': 'true',
          'resource.k8s.io/v1beta2': 'true',
        },
      },
      async (api) => {
        for (const [path, accepted, refused, message] of BETA) {
          for (const label of accepted) {
            const r = await api('GET', `${path}?${q(`${label}=zz`)}`);
            assert.equal(r.status, 200, `${path} ${label}: ${JSON.stringify(r.json)}`);
          }
          const r = await api('GET', `${path}?${q(`${refused}=zz`)}`);
          assert.equal(r.status, 400, `${path} ${refused}`);
          assert.equal(r.json.message, message);
        }
      },
    ));
});
