// The built-in admission plugins over real HTTPS, with their Kubernetes
// errors, dry-run behaviour and the plugin flags.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';
import { enabledPlugins } from './index';
import { requesterAs } from './test-support';

const pod = (name: string, extra: any = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...(extra.metadata ?? {}) },
  spec: { containers: [{ name: 'c', image: 'nginx', ...(extra.container ?? {}) }], ...(extra.spec ?? {}) },
});

describe('admission: plugin flags', () => {
  it('has Kubernetes defaults and order', () => {
    const on = enabledPlugins();
    assert.ok(
      on.includes('ServiceAccount') && on.includes('ResourceQuota') && !on.includes('NodeRestriction'),
    );
    assert.ok(on.indexOf('NamespaceLifecycle') < on.indexOf('LimitRanger'));
    assert.equal(on[on.length - 1], 'ResourceQuota');
    const custom = enabledPlugins(['NodeRestriction', 'AlwaysPullImages'], ['ResourceQuota']);
    assert.ok(custom.includes('NodeRestriction') && !custom.includes('ResourceQuota'));
    assert.ok(custom.indexOf('ServiceAccount') < custom.indexOf('NodeRestriction'));
  });

  it('refuses unknown and overlapping names with Kubernetes wording', async () => {
    assert.throws(
      () => enabledPlugins(['Nope']),
      /^Error: enable-admission-plugins plugin "Nope" is unknown$/,
    );
    assert.throws(() => enabledPlugins([], ['Nah']), /disable-admission-plugins plugin "Nah" is unknown/);
    assert.throws(
      () => enabledPlugins(['LimitRanger'], ['LimitRanger']),
      /\[LimitRanger\] in enable-admission-plugins and disable-admission-plugins overlapped/,
    );
    await assert.rejects(
      startTestAPIServer({ enableAdmissionPlugins: ['Bogus'] }),
      /enable-admission-plugins plugin "Bogus" is unknown/,
    );
  });
});

describe('admission: built-in plugins', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  const pods = (ns: string) => `/api/v1/namespaces/${ns}/pods`;

  const ns = async (name: string, labels: Record<string, string> = {}) => {
    const r = await api('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } },
    });
    assert.equal(r.status, 201, r.body.toString());
    const sa = await api('POST', `/api/v1/namespaces/${name}/serviceaccounts`, {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } },
    });
    assert.equal(sa.status, 201, sa.body.toString());
  };

  before(async () => {
    srv = await startTestAPIServer({
      disableAdmissionPlugins: [],
      enableAdmissionPlugins: ['NodeRestriction'],
    });
    api = testRequester(srv.config);
  });
  after(async () => {
    await api.close();
    await srv.stop();
  });

  describe('ServiceAccount', () => {
    before(() => ns('sa'));

    it('defaults serviceAccountName and mounts the projected kube-api-access volume', async () => {
      const r = await api('POST', pods('sa'), {
        body: pod('p1', { spec: { initContainers: [{ name: 'init', image: 'busybox' }] } }),
      });
      assert.equal(r.status, 201, r.body.toString());
      const spec = r.json.spec;
      assert.equal(spec.serviceAccountName, 'default');
      const vol = spec.volumes.find((v: any) => v.name.startsWith('kube-api-access-'));
      assert.match(vol.name, /^kube-api-access-[a-z0-9]{5}$/);
      assert.deepEqual(vol.projected, {
        defaultMode: 420,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          {
            downwardAPI: {
              items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
            },
          },
        ],
      });
      for (const c of [...spec.containers, ...spec.initContainers])
        assert.deepEqual(
          c.volumeMounts.find((m: any) => m.name === vol.name),
          { name: vol.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
        );
    });

    it('honours automountServiceAccountToken on the pod and on the account, and copies imagePullSecrets', async () => {
      const off = await api('POST', pods('sa'), {
        body: pod('p2', { spec: { automountServiceAccountToken: false } }),
      });
      assert.equal(off.status, 201);
      assert.equal(off.json.spec.volumes, undefined);
      await api('POST', '/api/v1/namespaces/sa/serviceaccounts', {
        body: {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          metadata: { name: 'quiet' },
          automountServiceAccountToken: false,
          imagePullSecrets: [{ name: 'regcred' }],
        },
      });
      const q = await api('POST', pods('sa'), { body: pod('p3', { spec: { serviceAccountName: 'quiet' } }) });
      assert.equal(q.status, 201);
      assert.equal(q.json.spec.volumes, undefined);
      assert.deepEqual(q.json.spec.imagePullSecrets, [{ name: 'regcred' }]);
      const podWins = await api('POST', pods('sa'), {
        body: pod('p4', { spec: { serviceAccountName: 'quiet', automountServiceAccountToken: true } }),
      });
      assert.equal(podWins.json.spec.volumes.length, 1);
    });

    it('refuses a pod whose ServiceAccount does not exist', async () => {
      const r = await api('POST', pods('sa'), { body: pod('p5', { spec: { serviceAccountName: 'ghost' } }) });
      assert.equal(r.status, 403);
      assert.equal(r.json.reason, 'Forbidden');
      assert.equal(
        r.json.message,
        'pods "p5" is forbidden: error looking up service account sa/ghost: serviceaccount "ghost" not found',
      );
      assert.deepEqual(r.json.details, { name: 'p5', kind: 'pods' });
    });
  });

  describe('DefaultTolerationSeconds and Priority', () => {
    before(() => ns('tol'));

    it('adds the not-ready and unreachable NoExecute tolerations with 300 seconds', async () => {
      const r = await api('POST', pods('tol'), { body: pod('t1') });
      assert.deepEqual(r.json.spec.tolerations, [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ]);
      const own = await api('POST', pods('tol'), {
        body: pod('t2', { spec: { tolerations: [{ operator: 'Exists' }] } }),
      });
      assert.deepEqual(own.json.spec.tolerations, [{ operator: 'Exists' }]);
    });

    it('resolves priorityClassName, system classes and globalDefault', async () => {
      const none = await api('POST', pods('tol'), { body: pod('pr1') });
      assert.equal(none.json.spec.priority, 0);
      assert.equal(none.json.spec.preemptionPolicy, 'PreemptLowerPriority');
      const sys = await api('POST', pods('tol'), {
        body: pod('pr2', { spec: { priorityClassName: 'system-node-critical' } }),
      });
      assert.equal(sys.status, 201, sys.body.toString());
      assert.equal(sys.json.spec.priority, 2000001000);
      const missing = await api('POST', pods('tol'), {
        body: pod('pr3', { spec: { priorityClassName: 'nope' } }),
      });
      assert.equal(missing.status, 403);
      assert.equal(
        missing.json.message,
        'pods "pr3" is forbidden: no PriorityClass with name nope was found',
      );
      const pc = (name: string, value: number, globalDefault = false) => ({
        apiVersion: 'scheduling.k8s.io/v1',
        kind: 'PriorityClass',
        metadata: { name },
        value,
        globalDefault,
      });
      assert.equal(
        (await api('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { body: pc('dflt', 42, true) }))
          .status,
        201,
      );
      const second = await api('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', {
        body: pc('dflt2', 7, true),
      });
      assert.equal(second.status, 403);
      assert.equal(
        second.json.message,
        'priorityclasses.scheduling.k8s.io "dflt2" is forbidden: PriorityClass dflt is marked as default. Only one default can exist',
      );
      const d = await api('POST', pods('tol'), { body: pod('pr4') });
      assert.equal(d.json.spec.priorityClassName, 'dflt');
      assert.equal(d.json.spec.priority, 42);
      const wrong = await api('POST', pods('tol'), { body: pod('pr5', { spec: { priority: 5 } }) });
      assert.equal(wrong.status, 403);
      assert.match(
        wrong.json.message,
        /the integer value of priority \(5\) must not be provided in pod spec; priority admission controller computed 42/,
      );
      await api('DELETE', '/apis/scheduling.k8s.io/v1/priorityclasses/dflt');
    });
  });

  describe('LimitRanger', () => {
    before(async () => {
      await ns('lr');
      const r = await api('POST', '/api/v1/namespaces/lr/limitranges', {
        body: {
          apiVersion: 'v1',
          kind: 'LimitRange',
          metadata: { name: 'limits' },
          spec: {
            limits: [
              {
                type: 'Container',
                default: { cpu: '500m', memory: '256Mi' },
                defaultRequest: { cpu: '100m', memory: '128Mi' },
                min: { cpu: '50m' },
                max: { cpu: '1' },
                maxLimitRequestRatio: { cpu: '5' },
              },
              { type: 'PersistentVolumeClaim', max: { storage: '1Gi' } },
            ],
          },
        },
      });
      assert.equal(r.status, 201, r.body.toString());
    });

    it('defaults requests and limits with the annotation Kubernetes writes', async () => {
      const r = await api('POST', pods('lr'), { body: pod('l1') });
      assert.equal(r.status, 201, r.body.toString());
      assert.deepEqual(r.json.spec.containers[0].resources, {
        limits: { cpu: '500m', memory: '256Mi' },
        requests: { cpu: '100m', memory: '128Mi' },
      });
      assert.equal(
        r.json.metadata.annotations['kubernetes.io/limit-ranger'],
        'LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c',
      );
      assert.equal(r.json.status.qosClass, 'Burstable');
    });

    it('enforces min, max and the limit/request ratio', async () => {
      const big = await api('POST', pods('lr'), {
        body: pod('l2', { container: { resources: { limits: { cpu: '2' }, requests: { cpu: '2' } } } }),
      });
      assert.equal(big.status, 403);
      assert.equal(
        big.json.message,
        'pods "l2" is forbidden: maximum cpu usage per Container is 1, but limit is 2',
      );
      const small = await api('POST', pods('lr'), {
        body: pod('l3', { container: { resources: { requests: { cpu: '10m' }, limits: { cpu: '800m' } } } }),
      });
      assert.equal(small.status, 403);
      assert.equal(
        small.json.message,
        'pods "l3" is forbidden: [minimum cpu usage per Container is 50m, but request is 10m, cpu max limit to request ratio per Container is 5, but provided ratio is 80.000000]',
      );
      const dry = await api('POST', `${pods('lr')}?dryRun=All`, { body: pod('l4') });
      assert.equal(dry.status, 201);
      assert.equal(dry.json.spec.containers[0].resources.limits.cpu, '500m');
      assert.equal((await api('GET', `${pods('lr')}/l4`)).status, 404);
    });

    it('enforces the PersistentVolumeClaim max', async () => {
      const r = await api('POST', '/api/v1/namespaces/lr/persistentvolumeclaims', {
        body: {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: 'big' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } } },
        },
      });
      assert.equal(r.status, 403);
      assert.equal(
        r.json.message,
        'persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 1Gi, but request is 5Gi',
      );
    });
  });

  describe('ResourceQuota', () => {
    const quota = '/api/v1/namespaces/rq/resourcequotas';
    before(async () => {
      await ns('rq');
      const r = await api('POST', quota, {
        body: {
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          metadata: { name: 'q' },
          spec: { hard: { configmaps: '5', pods: '2', 'requests.cpu': '1' } },
        },
      });
      assert.equal(r.status, 201, r.body.toString());
      // What the resourcequota controller would write.
      const st = await api('PUT', `${quota}/q/status`, {
        body: {
          ...r.json,
          status: {
            hard: { configmaps: '5', pods: '2', 'requests.cpu': '1' },
            used: { configmaps: '0', pods: '0', 'requests.cpu': '0' },
          },
        },
      });
      assert.equal(st.status, 200, st.body.toString());
    });

    it('charges usage atomically under concurrent creates and refuses beyond hard', async () => {
      const cm = (i: number) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm${i}` } });
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          api('POST', '/api/v1/namespaces/rq/configmaps', { body: cm(i) }),
        ),
      );
      const ok = results.filter((r) => r.status === 201).length;
      assert.equal(ok, 5);
      const refused = results.find((r) => r.status === 403)!;
      assert.equal(refused.json.reason, 'Forbidden');
      assert.match(
        refused.json.message,
        /^configmaps "cm\d+" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=5, limited: configmaps=5$/,
      );
      const q = (await api('GET', `${quota}/q`)).json;
      assert.equal(q.status.used.configmaps, '5');
    });

    it('requires requests for quota-limited compute resources and counts pods', async () => {
      const bare = await api('POST', pods('rq'), { body: pod('q1') });
      assert.equal(bare.status, 403);
      assert.equal(
        bare.json.message,
        'pods "q1" is forbidden: failed quota: q: must specify requests.cpu for: c',
      );
      const withReq = (n: string, cpu: string) =>
        api('POST', pods('rq'), { body: pod(n, { container: { resources: { requests: { cpu } } } }) });
      assert.equal((await withReq('q2', '600m')).status, 201);
      const over = await withReq('q3', '600m');
      assert.equal(over.status, 403);
      assert.equal(
        over.json.message,
        'pods "q3" is forbidden: exceeded quota: q, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1',
      );
      const dry = await api('POST', `${pods('rq')}?dryRun=All`, {
        body: pod('q4', { container: { resources: { requests: { cpu: '100m' } } } }),
      });
      assert.equal(dry.status, 201);
      const q = (await api('GET', `${quota}/q`)).json;
      assert.equal(q.status.used.pods, '1');
      assert.equal(q.status.used['requests.cpu'], '600m');
    });

    it('answers "status unknown" while the controller has not filled in usage', async () => {
      await api('POST', quota, {
        body: {
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          metadata: { name: 'fresh' },
          spec: { hard: { secrets: '1' } },
        },
      });
      await api('PUT', `${quota}/fresh/status`, {
        body: {
          ...(await api('GET', `${quota}/fresh`)).json,
          status: { hard: { secrets: '1' } },
        },
      });
      const r = await api('POST', '/api/v1/namespaces/rq/secrets', {
        body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } },
      });
      assert.equal(r.status, 403);
      assert.equal(
        r.json.message,
        'secrets "s" is forbidden: status unknown for quota: fresh, resources: secrets',
      );
    });
  });

  describe('classes', () => {
    before(() => ns('cls'));

    it('DefaultStorageClass names the default class on new claims', async () => {
      await api('POST', '/apis/storage.k8s.io/v1/storageclasses', {
        body: {
          apiVersion: 'storage.k8s.io/v1',
          kind: 'StorageClass',
          metadata: { name: 'fast', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
          provisioner: 'example.com/fast',
        },
      });
      const claim = (name: string, extra: any = {}) => ({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...extra },
      });
      const r = await api('POST', '/api/v1/namespaces/cls/persistentvolumeclaims', { body: claim('c1') });
      assert.equal(r.status, 201, r.body.toString());
      assert.equal(r.json.spec.storageClassName, 'fast');
      assert.deepEqual(r.json.metadata.finalizers, ['kubernetes.io/pvc-protection']);
      const none = await api('POST', '/api/v1/namespaces/cls/persistentvolumeclaims', {
        body: claim('c2', { storageClassName: '' }),
      });
      assert.equal(none.json.spec.storageClassName, '');
    });

    it('DefaultIngressClass names the default class on new ingresses', async () => {
      await api('POST', '/apis/networking.k8s.io/v1/ingressclasses', {
        body: {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'IngressClass',
          metadata: { name: 'nginx', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } },
          spec: { controller: 'k8s.io/ingress-nginx' },
        },
      });
      const r = await api('POST', '/apis/networking.k8s.io/v1/namespaces/cls/ingresses', {
        body: {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'Ingress',
          metadata: { name: 'web' },
          spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } },
        },
      });
      assert.equal(r.status, 201, r.body.toString());
      assert.equal(r.json.spec.ingressClassName, 'nginx');
    });

    it('RuntimeClass sets overhead and scheduling, and refuses unknown classes', async () => {
      await api('POST', '/apis/node.k8s.io/v1/runtimeclasses', {
        body: {
          apiVersion: 'node.k8s.io/v1',
          kind: 'RuntimeClass',
          metadata: { name: 'gvisor' },
          handler: 'runsc',
          overhead: { podFixed: { cpu: '250m' } },
          scheduling: {
            nodeSelector: { sandbox: 'yes' },
            tolerations: [{ key: 'sandbox', operator: 'Exists' }],
          },
        },
      });
      const r = await api('POST', pods('cls'), {
        body: pod('rc1', { spec: { runtimeClassName: 'gvisor' } }),
      });
      assert.equal(r.status, 201, r.body.toString());
      assert.deepEqual(r.json.spec.overhead, { cpu: '250m' });
      assert.deepEqual(r.json.spec.nodeSelector, { sandbox: 'yes' });
      assert.ok(r.json.spec.tolerations.some((t: any) => t.key === 'sandbox'));
      const bad = await api('POST', pods('cls'), {
        body: pod('rc2', { spec: { runtimeClassName: 'kata' } }),
      });
      assert.equal(bad.status, 403);
      assert.equal(bad.json.message, 'pods "rc2" is forbidden: pod rejected: RuntimeClass "kata" not found');
    });
  });

  describe('PodSecurity', () => {
    before(async () => {
      await ns('psa', {
        'pod-security.kubernetes.io/enforce': 'baseline',
        'pod-security.kubernetes.io/warn': 'restricted',
        'pod-security.kubernetes.io/audit': 'restricted',
      });
    });

    it('refuses pods violating the enforce level', async () => {
      const r = await api('POST', pods('psa'), {
        body: pod('ps1', {
          spec: { hostNetwork: true },
          container: { securityContext: { privileged: true } },
        }),
      });
      assert.equal(r.status, 403);
      assert.equal(
        r.json.message,
        'pods "ps1" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true), privileged (container "c" must not set securityContext.privileged=true)',
      );
    });

    it('warns about the warn level and admits', async () => {
      const r = await api('POST', pods('psa'), { body: pod('ps2') });
      assert.equal(r.status, 201);
      assert.equal(
        r.headers.warning,
        '299 - "would violate PodSecurity \\"restricted:latest\\": allowPrivilegeEscalation != false (container \\"c\\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \\"c\\" must set securityContext.capabilities.drop=[\\"ALL\\"]), runAsNonRoot != true (pod or container \\"c\\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \\"c\\" must set securityContext.seccompProfile.type to \\"RuntimeDefault\\" or \\"Localhost\\")"',
      );
      const ok = await api('POST', pods('psa'), {
        body: pod('ps3', {
          spec: { securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } },
          container: {
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          },
        }),
      });
      assert.equal(ok.status, 201);
      assert.equal(ok.headers.warning, undefined);
    });

    it('only warns for workloads with pod templates', async () => {
      const r = await api('POST', '/apis/apps/v1/namespaces/psa/deployments', {
        body: {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'd' },
          spec: {
            selector: { matchLabels: { a: 'b' } },
            template: {
              metadata: { labels: { a: 'b' } },
              spec: { hostPID: true, containers: [{ name: 'c', image: 'x' }] },
            },
          },
        },
      });
      assert.equal(r.status, 201, r.body.toString());
      assert.match(
        String(r.headers.warning),
        /^299 - "would violate PodSecurity \\"restricted:latest\\": .*, host namespaces \(hostPID=true\), /,
      );
    });
  });

  describe('NodeRestriction', () => {
    let node: ReturnType<typeof testRequester>;
    let nodeUID = '';
    before(async () => {
      await ns('nr');
      node = await requesterAs(srv, 'system:node:n1', ['system:nodes']);
      for (const name of ['n1', 'n2']) {
        const r = await api('POST', '/api/v1/nodes', {
          body: {
            apiVersion: 'v1',
            kind: 'Node',
            metadata: { name, labels: { 'kubernetes.io/hostname': name } },
          },
        });
        assert.equal(r.status, 201, r.body.toString());
        if (name === 'n1') nodeUID = r.json.metadata.uid;
      }
    });
    after(() => node.close());

    it('lets a node change only its own Node, not taints or restricted labels', async () => {
      const other = await node('PATCH', '/api/v1/nodes/n2', {
        body: { metadata: { labels: { a: 'b' } } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(other.status, 403);
      assert.equal(
        other.json.message,
        'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"',
      );
      const own = await node('PATCH', '/api/v1/nodes/n1', {
        body: { metadata: { labels: { 'topology.kubernetes.io/zone': 'z1', custom: 'x' } } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(own.status, 200, own.body.toString());
      const role = await node('PATCH', '/api/v1/nodes/n1', {
        body: { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(role.status, 403);
      assert.equal(
        role.json.message,
        'nodes "n1" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/control-plane',
      );
      const taint = await node('PATCH', '/api/v1/nodes/n1', {
        body: { spec: { taints: [] } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(taint.status, 403);
      assert.equal(taint.json.message, 'nodes "n1" is forbidden: node "n1" is not allowed to modify taints');
    });

    it('lets a node write only its own Lease in kube-node-lease', async () => {
      const lease = (name: string) => ({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name },
        spec: { holderIdentity: name },
      });
      await api('POST', '/api/v1/namespaces', {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-node-lease' } },
      });
      const own = await node('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
        body: lease('n1'),
      });
      assert.equal(own.status, 201, own.body.toString());
      const other = await node('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
        body: lease('n2'),
      });
      assert.equal(other.status, 403);
      assert.equal(
        other.json.message,
        'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node',
      );
      const elsewhere = await node('POST', '/apis/coordination.k8s.io/v1/namespaces/nr/leases', {
        body: lease('n1'),
      });
      assert.equal(elsewhere.status, 403);
      assert.match(
        elsewhere.json.message,
        /can only access leases in the "kube-node-lease" system namespace/,
      );
    });

    it('lets a node create mirror pods bound to itself and delete and update status of its pods only', async () => {
      const plain = await node('POST', pods('nr'), { body: pod('m0', { spec: { nodeName: 'n1' } }) });
      assert.equal(plain.status, 403);
      assert.equal(
        plain.json.message,
        'pods "m0" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods',
      );
      const mirror = (name: string, nodeName: string) =>
        pod(name, {
          metadata: {
            annotations: { 'kubernetes.io/config.mirror': 'hash' },
            ownerReferences: [
              { apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUID, controller: true },
            ],
          },
          spec: { nodeName },
        });
      const ok = await node('POST', pods('nr'), { body: mirror('m1', 'n1') });
      assert.equal(ok.status, 201, ok.body.toString());
      const other = await node('POST', pods('nr'), { body: mirror('m2', 'n2') });
      assert.equal(other.status, 403);
      // Pods bound to another node: no status update, no delete.
      await api('POST', pods('nr'), { body: pod('theirs', { spec: { nodeName: 'n2' } }) });
      const st = await node('PATCH', `${pods('nr')}/theirs/status`, {
        body: { status: { phase: 'Running' } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(st.status, 403);
      assert.equal(
        st.json.message,
        'pods "theirs" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself',
      );
      const del = await node('DELETE', `${pods('nr')}/theirs`);
      assert.equal(del.status, 403);
      assert.equal(
        del.json.message,
        'pods "theirs" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself',
      );
      const ownStatus = await node('PATCH', `${pods('nr')}/m1/status`, {
        body: { status: { phase: 'Running' } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(ownStatus.status, 200, ownStatus.body.toString());
      const upd = await node('PATCH', `${pods('nr')}/m1`, {
        body: { metadata: { labels: { x: 'y' } } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(upd.status, 403);
      assert.match(
        upd.json.message,
        /unexpected operation "UPDATE", node "n1" can only create and delete mirror pods/,
      );
      const ownDelete = await node('DELETE', `${pods('nr')}/m1?dryRun=All`);
      assert.equal(ownDelete.status, 200, ownDelete.body.toString());
    });
  });

  describe('NamespaceLifecycle', () => {
    it('keeps the system namespaces', async () => {
      const r = await api('DELETE', '/api/v1/namespaces/kube-system?dryRun=All');
      assert.equal(r.status, 403);
      assert.equal(
        r.json.message,
        'namespaces "kube-system" is forbidden: this namespace may not be deleted',
      );
    });
  });
});
