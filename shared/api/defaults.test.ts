import assert from 'node:assert/strict';
import { applyDefaults, defaultPullPolicy } from './defaults';
import { schemaHooks } from './validation/hooks';

type O = Record<string, any>;
const d = (o: O): O => applyDefaults(structuredClone(o));

describe('defaults', () => {
  it('image pull policy: Always for :latest or untagged, IfNotPresent otherwise', () => {
    const cases: [string, string][] = [
      ['nginx', 'Always'],
      ['nginx:latest', 'Always'],
      ['nginx:1.27', 'IfNotPresent'],
      ['localhost:5000/nginx', 'Always'],
      ['registry.k8s.io/pause:3.9', 'IfNotPresent'],
      ['nginx@sha256:' + 'a'.repeat(64), 'IfNotPresent'],
      ['NGINX', 'IfNotPresent'],
      ['', 'IfNotPresent'],
    ];
    for (const [image, policy] of cases) assert.equal(defaultPullPolicy(image), policy, image);
  });

  it('Pod: spec, containers, probes, ports, limits → requests, milli rounding, volumes', () => {
    const pod = d({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {
        hostNetwork: true,
        containers: [
          {
            name: 'c',
            image: 'nginx:1',
            ports: [{ containerPort: 8080 }],
            resources: { limits: { cpu: '100u', memory: '1Gi' } },
            livenessProbe: { grpc: { port: 9000 } },
            env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          },
        ],
        volumes: [
          { name: 'a' },
          { name: 'b', secret: { secretName: 's' } },
          { name: 'h', hostPath: { path: '/x' } },
        ],
      },
    });
    assert.deepEqual(pod.spec.containers[0], {
      name: 'c',
      image: 'nginx:1',
      ports: [{ containerPort: 8080, protocol: 'TCP', hostPort: 8080 }],
      resources: { limits: { cpu: '1m', memory: '1Gi' }, requests: { cpu: '1m', memory: '1Gi' } },
      livenessProbe: {
        grpc: { port: 9000, service: '' },
        timeoutSeconds: 1,
        periodSeconds: 10,
        successThreshold: 1,
        failureThreshold: 3,
      },
      env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } } }],
      imagePullPolicy: 'IfNotPresent',
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
    });
    assert.deepEqual(pod.spec.volumes, [
      { name: 'a', emptyDir: {} },
      { name: 'b', secret: { secretName: 's', defaultMode: 420 } },
      { name: 'h', hostPath: { path: '/x', type: '' } },
    ]);
    for (const [k, v] of Object.entries({
      enableServiceLinks: true,
      dnsPolicy: 'ClusterFirst',
      restartPolicy: 'Always',
      securityContext: {},
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
    }))
      assert.deepEqual(pod.spec[k], v, k);
  });

  it('pod templates get PodSpec defaults but not Pod-only ones', () => {
    const dep = d({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: {
        template: { spec: { containers: [{ name: 'c', image: 'x', resources: { limits: { cpu: '1' } } }] } },
      },
    });
    assert.equal(dep.spec.template.spec.restartPolicy, 'Always');
    assert.equal(dep.spec.template.spec.enableServiceLinks, undefined);
    assert.equal(dep.spec.template.spec.containers[0].resources.requests, undefined);
    assert.deepEqual(
      {
        replicas: dep.spec.replicas,
        strategy: dep.spec.strategy,
        revisionHistoryLimit: dep.spec.revisionHistoryLimit,
        progressDeadlineSeconds: dep.spec.progressDeadlineSeconds,
      },
      {
        replicas: 1,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
        revisionHistoryLimit: 10,
        progressDeadlineSeconds: 600,
      },
    );
  });

  it('StatefulSet, DaemonSet, ReplicaSet', () => {
    const sts = d({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 's' },
      spec: { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: {} }] },
    });
    assert.deepEqual(sts.spec, {
      volumeClaimTemplates: [
        { metadata: { name: 'data' }, spec: { volumeMode: 'Filesystem' }, status: { phase: 'Pending' } },
      ],
      podManagementPolicy: 'OrderedReady',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      replicas: 1,
      revisionHistoryLimit: 10,
    });
    const ds = d({ apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'd' }, spec: {} });
    assert.deepEqual(ds.spec, {
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      revisionHistoryLimit: 10,
    });
    assert.equal(
      d({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'r' }, spec: {} }).spec.replicas,
      1,
    );
  });

  it('Job and CronJob', () => {
    const job = d({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'j' },
      spec: { template: { metadata: { labels: { a: 'b' } }, spec: {} } },
    });
    assert.deepEqual(
      { ...job.spec, template: undefined },
      {
        completions: 1,
        parallelism: 1,
        backoffLimit: 6,
        completionMode: 'NonIndexed',
        suspend: false,
        podReplacementPolicy: 'TerminatingOrFailed',
        template: undefined,
      },
    );
    assert.deepEqual(job.metadata.labels, { a: 'b' });
    assert.equal(
      d({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'j' },
        spec: { parallelism: 3, backoffLimitPerIndex: 1 },
      }).spec.backoffLimit,
      2147483647,
    );
    const cj = d({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'c' },
      spec: { schedule: '* * * * *', jobTemplate: { spec: {} } },
    });
    assert.deepEqual(
      { ...cj.spec, jobTemplate: undefined },
      {
        schedule: '* * * * *',
        concurrencyPolicy: 'Allow',
        suspend: false,
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 1,
        jobTemplate: undefined,
      },
    );
    assert.equal(cj.spec.jobTemplate.spec.backoffLimit, undefined);
  });

  it('Service, Secret, Namespace, PVC, PV', () => {
    assert.deepEqual(
      d({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 's' },
        spec: { type: 'LoadBalancer', sessionAffinity: 'ClientIP', ports: [{ port: 80 }] },
      }).spec,
      {
        type: 'LoadBalancer',
        sessionAffinity: 'ClientIP',
        ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
        externalTrafficPolicy: 'Cluster',
        internalTrafficPolicy: 'Cluster',
        allocateLoadBalancerNodePorts: true,
      },
    );
    assert.deepEqual(
      d({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { a: 'x' } }),
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's' },
        type: 'Opaque',
        data: { a: 'eA==' },
      },
    );
    assert.deepEqual(d({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } }), {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'n', labels: { 'kubernetes.io/metadata.name': 'n' } },
      status: { phase: 'Active' },
    });
    assert.deepEqual(
      d({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c' }, spec: {} }).spec,
      { volumeMode: 'Filesystem' },
    );
    const pv = d({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'v' }, spec: {} });
    assert.deepEqual(
      [pv.spec, pv.status],
      [{ persistentVolumeReclaimPolicy: 'Retain', volumeMode: 'Filesystem' }, { phase: 'Pending' }],
    );
  });

  it('webhooks, RBAC, PriorityClass, IngressClass, EndpointSlice, HPA, CRD', () => {
    const vwc = d({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'w' },
      webhooks: [
        {
          name: 'a.b.c',
          clientConfig: { service: { name: 's', namespace: 'n' } },
          rules: [{ operations: ['*'] }],
        },
      ],
    });
    assert.deepEqual(vwc.webhooks[0], {
      name: 'a.b.c',
      clientConfig: { service: { name: 's', namespace: 'n', port: 443 } },
      rules: [{ operations: ['*'], scope: '*' }],
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
    });
    assert.equal(
      d({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'm' },
        webhooks: [{ name: 'a' }],
      }).webhooks[0].reinvocationPolicy,
      'Never',
    );
    const crb = d({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'b' },
      roleRef: { kind: 'ClusterRole', name: 'r' },
      subjects: [{ kind: 'Group', name: 'g' }],
    });
    assert.deepEqual(
      [crb.roleRef.apiGroup, crb.subjects[0].apiGroup],
      ['rbac.authorization.k8s.io', 'rbac.authorization.k8s.io'],
    );
    assert.equal(
      d({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'p' }, value: 1 })
        .preemptionPolicy,
      'PreemptLowerPriority',
    );
    assert.equal(
      d({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'IngressClass',
        metadata: { name: 'i' },
        spec: { parameters: { kind: 'K', name: 'n' } },
      }).spec.parameters.scope,
      'Cluster',
    );
    assert.deepEqual(
      d({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'e' },
        addressType: 'IPv4',
        endpoints: [],
        ports: [{ port: 80 }],
      }).ports,
      [{ port: 80, name: '', protocol: 'TCP' }],
    );
    const hpa = d({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h' },
      spec: {
        maxReplicas: 3,
        behavior: { scaleUp: { policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } },
      },
    });
    assert.deepEqual(hpa.spec, {
      maxReplicas: 3,
      behavior: {
        scaleUp: {
          stabilizationWindowSeconds: 0,
          selectPolicy: 'Max',
          policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }],
        },
        scaleDown: { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
      },
      minReplicas: 1,
      metrics: [
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
        },
      ],
    });
    const crd = d({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'ws.e.com' },
      spec: { names: { plural: 'ws', kind: 'W' }, versions: [{ name: 'v1', storage: true }] },
    });
    assert.deepEqual(
      [crd.spec.names, crd.spec.conversion, crd.status],
      [
        { plural: 'ws', kind: 'W', singular: 'w', listKind: 'WList' },
        { strategy: 'None' },
        { storedVersions: ['v1'] },
      ],
    );
  });

  it('unknown kinds are left alone; schemaHooks wires defaults and validation per definition', () => {
    const cr = { apiVersion: 'example.com/v1', kind: 'Widget', spec: {} };
    assert.deepEqual(d(cr), cr);
    const hooks = schemaHooks('io.k8s.api.core.v1.ConfigMap');
    const obj: Record<string, unknown> = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'n' },
    };
    hooks.applyDefaults(obj);
    assert.deepEqual(hooks.validate(obj), []);
    assert.deepEqual(
      hooks.validateUpdate(obj, obj).map((e) => e.field),
      ['metadata.resourceVersion'],
    );
    assert.deepEqual(schemaHooks(undefined).validate(obj), []);
  });
});
