// Valid objects of the common kinds, shared by tests.
const md = (name: string, namespace?: string) => (namespace ? { name, namespace } : { name });
const podSpec = {
  containers: [
    {
      name: 'web',
      image: 'nginx:1.27',
      ports: [{ name: 'http', containerPort: 80 }],
      env: [
        { name: 'MODE', value: 'prod' },
        { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      ],
      resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: 1, memory: '128Mi' } },
      readinessProbe: { httpGet: { path: '/healthz', port: 'http' } },
      volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }],
    },
  ],
  volumes: [{ name: 'cfg', configMap: { name: 'cfg' } }, { name: 'scratch' }],
  tolerations: [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  ],
};
const template = { metadata: { labels: { app: 'web' } }, spec: podSpec };
const selector = { matchLabels: { app: 'web' } };
const CSR_PEM =
  'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIcU1JR1NBZ0VBTURBeEZ6QVZCZ05WQkFNTURuTjVjM1JsYlRwdWIyUmxPbTR4TVJVd0V3WURWUVFLREF4egplWE4wWlcwNmJtOWtaWE13V1RBVEJnY3Foa2pPUFFJQkJnZ3Foa2pPUFFNQkJ3TkNBQVFqcUFsaU1lVm1MUXZuCnUxUXRuYUR2eVVYdUc2SytRMXRnd2wxSFNhYUd1L1BNVFo3QVF1VHBZN0FPcTRjc2RsUUNBQjdLcGZjUm5HVmgKWDQ4eWhNQjRvQUF3Q2dZSUtvWkl6ajBFQXdJRFJ3QXdSQUlnTGpkaHhLV3U5R3EwUEc4VkhyblpMTXE5TjNDVwpkN2tTazlZci95cDRLMlVDSUNxbzZ0c2RYQzZocmxhV09weVJndUxrYXMwZkJtMnMrRzlxYXNDVU56blgKLS0tLS1FTkQgQ0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg==';

export const FIXTURES: Record<string, Record<string, unknown>> = {
  Pod: {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...md('web-0', 'default'), labels: { app: 'web' } },
    spec: podSpec,
  },
  PodTemplate: { apiVersion: 'v1', kind: 'PodTemplate', metadata: md('t', 'default'), template },
  ReplicationController: {
    apiVersion: 'v1',
    kind: 'ReplicationController',
    metadata: md('rc', 'default'),
    spec: { replicas: 2, selector: { app: 'web' }, template },
  },
  Service: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: md('web', 'default'),
    spec: {
      selector: { app: 'web' },
      ports: [
        { name: 'http', port: 80, targetPort: 'http' },
        { name: 'https', port: 443 },
      ],
    },
  },
  ServiceNodePort: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: md('web-np', 'default'),
    spec: { type: 'NodePort', selector: { app: 'web' }, ports: [{ port: 80, nodePort: 30080 }] },
  },
  ServiceHeadless: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: md('db', 'default'),
    spec: { clusterIP: 'None', selector: { app: 'db' } },
  },
  ServiceExternalName: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: md('ext', 'default'),
    spec: { type: 'ExternalName', externalName: 'example.com.' },
  },
  ConfigMap: {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: md('cfg', 'default'),
    data: { 'app.properties': 'a=b', KEY_1: 'v' },
    binaryData: { blob: 'AAEC' },
  },
  Secret: {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: md('s', 'default'),
    data: { password: 'cGFzcw==' },
    stringData: { user: 'admin' },
  },
  SecretTLS: {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: md('tls', 'default'),
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': 'Y2VydA==', 'tls.key': 'a2V5' },
  },
  SecretDocker: {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: md('reg', 'default'),
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from('{"auths":{}}').toString('base64') },
  },
  SecretSAToken: {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      ...md('sa-token', 'default'),
      annotations: { 'kubernetes.io/service-account.name': 'default' },
    },
    type: 'kubernetes.io/service-account-token',
  },
  Namespace: { apiVersion: 'v1', kind: 'Namespace', metadata: md('team-a') },
  Node: {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { ...md('node-1'), labels: { 'kubernetes.io/hostname': 'node-1' } },
    spec: {
      podCIDR: '10.244.0.0/24',
      podCIDRs: ['10.244.0.0/24'],
      taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }],
    },
    status: {
      capacity: { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  },
  ServiceAccount: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: md('builder', 'default') },
  PersistentVolumeClaim: {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: md('data', 'default'),
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  },
  PersistentVolume: {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: md('pv1'),
    spec: { capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' } },
  },
  Endpoints: {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: md('web', 'default'),
    subsets: [{ addresses: [{ ip: '10.0.0.5' }], ports: [{ port: 80 }] }],
  },
  LimitRange: {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: md('lr', 'default'),
    spec: { limits: [{ type: 'Container', max: { cpu: '2' } }] },
  },
  ResourceQuota: {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: md('rq', 'default'),
    spec: { hard: { pods: '10', 'requests.cpu': '4' } },
  },
  EventCore: {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: md('web-0.17a', 'default'),
    involvedObject: { kind: 'Pod', name: 'web-0', namespace: 'default' },
    reason: 'Scheduled',
    message: 'Assigned',
    type: 'Normal',
    source: { component: 'default-scheduler' },
    count: 1,
    firstTimestamp: '2024-05-01T10:00:00Z',
    lastTimestamp: '2024-05-01T10:00:00Z',
  },
  EventV1: {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: md('web-0.17b', 'default'),
    eventTime: '2024-05-01T10:00:00.123456Z',
    action: 'Binding',
    reason: 'Scheduled',
    type: 'Normal',
    note: 'Assigned default/web-0 to node-1',
    regarding: { kind: 'Pod', name: 'web-0', namespace: 'default' },
    reportingController: 'default-scheduler',
    reportingInstance: 'default-scheduler-node-1',
  },
  Deployment: {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: md('web', 'default'),
    spec: { replicas: 3, selector, template },
  },
  ReplicaSet: {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: md('web-5d4', 'default'),
    spec: { replicas: 1, selector, template },
  },
  StatefulSet: {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: md('db', 'default'),
    spec: {
      serviceName: 'db',
      selector,
      template,
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
    },
  },
  DaemonSet: {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: md('agent', 'kube-system'),
    spec: { selector, template },
  },
  Job: {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: md('pi', 'default'),
    spec: {
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'u1' } },
      template: {
        metadata: { labels: { 'batch.kubernetes.io/controller-uid': 'u1' } },
        spec: { ...podSpec, restartPolicy: 'Never' },
      },
    },
  },
  CronJob: {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: md('nightly', 'default'),
    spec: {
      schedule: '*/5 1-3 * JAN-MAR mon,fri',
      jobTemplate: { spec: { template: { spec: { ...podSpec, restartPolicy: 'OnFailure' } } } },
    },
  },
  Role: {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: md('reader', 'default'),
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
  },
  ClusterRole: {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: md('system:reader'),
    rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }],
  },
  RoleBinding: {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: md('read', 'default'),
    roleRef: { kind: 'Role', name: 'reader' },
    subjects: [
      { kind: 'ServiceAccount', name: 'builder' },
      { kind: 'User', name: 'jane' },
    ],
  },
  ClusterRoleBinding: {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: md('read-all'),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:reader' },
    subjects: [
      { kind: 'Group', name: 'devs' },
      { kind: 'ServiceAccount', name: 'x', namespace: 'default' },
    ],
  },
  Lease: {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: md('kube-controller-manager', 'kube-system'),
    spec: {
      holderIdentity: 'cm-1',
      leaseDurationSeconds: 15,
      renewTime: '2024-05-01T10:00:00.000000Z',
      leaseTransitions: 0,
    },
  },
  PodDisruptionBudget: {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: md('web', 'default'),
    spec: { minAvailable: '50%', selector },
  },
  HorizontalPodAutoscaler: {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: md('web', 'default'),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 1,
      maxReplicas: 5,
      behavior: { scaleDown: { stabilizationWindowSeconds: 60 } },
    },
  },
  Ingress: {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: md('web', 'default'),
    spec: {
      ingressClassName: 'nginx',
      rules: [
        {
          host: 'web.example.com',
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } },
            ],
          },
        },
      ],
    },
  },
  IngressClass: {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IngressClass',
    metadata: md('nginx'),
    spec: { controller: 'k8s.io/ingress-nginx' },
  },
  NetworkPolicy: {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: md('deny', 'default'),
    spec: { podSelector: {}, ingress: [{ ports: [{ port: 80 }] }] },
  },
  PriorityClass: {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: md('high'),
    value: 1000000,
  },
  StorageClass: {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: md('standard'),
    provisioner: 'rancher.io/local-path',
  },
  EndpointSlice: {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: md('web-abc', 'default'),
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.0.0.5'] }],
    ports: [{ port: 80 }],
  },
  ValidatingWebhookConfiguration: {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: md('policy'),
    webhooks: [
      {
        name: 'validate.policy.example.com',
        clientConfig: { service: { name: 'hook', namespace: 'default', path: '/validate' } },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  },
  MutatingWebhookConfiguration: {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: md('inject'),
    webhooks: [
      {
        name: 'inject.sidecar.example.com',
        clientConfig: { url: 'https://hook.example.com/mutate' },
        sideEffects: 'NoneOnDryRun',
        admissionReviewVersions: ['v1', 'v1beta1'],
      },
    ],
  },
  CustomResourceDefinition: {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: md('widgets.example.com'),
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget', shortNames: ['wd'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    size: { type: 'integer' },
                    tags: { type: 'array', items: { type: 'string' } },
                  },
                },
              },
            },
          },
        },
      ],
    },
  },
  CertificateSigningRequest: {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: md('node-csr-abc'),
    spec: {
      request: CSR_PEM,
      signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
      usages: ['digital signature', 'client auth'],
    },
  },
  ControllerRevision: {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: md('db-7f', 'default'),
    revision: 1,
    data: { spec: { template: {} } },
  },
};
