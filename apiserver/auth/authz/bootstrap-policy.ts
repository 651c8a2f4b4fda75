// The roles and bindings Kubernetes (1.36, default feature gates) creates at
// start (plugin/pkg/auth/authorizer/rbac/bootstrappolicy): cluster roles,
// controller roles bound to their kube-system service accounts, and the roles
// of kube-system and kube-public. Facts only; the objects are built here.
import type { PolicyRule } from './rules';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'update', 'patch', 'delete', 'deletecollection'];
const READ_WRITE = [...READ, ...WRITE];
const READ_UPDATE = ['get', 'list', 'watch', 'update', 'patch'];

const core = '';
const apps = 'apps';
const authn = 'authentication.k8s.io';
const authz = 'authorization.k8s.io';
const autoscaling = 'autoscaling';
const batch = 'batch';
const certificates = 'certificates.k8s.io';
const coordination = 'coordination.k8s.io';
const discovery = 'discovery.k8s.io';
const extensions = 'extensions';
const policy = 'policy';
const rbac = 'rbac.authorization.k8s.io';
const resource = 'resource.k8s.io';
const storage = 'storage.k8s.io';
const networking = 'networking.k8s.io';
const events = 'events.k8s.io';
const admissionregistration = 'admissionregistration.k8s.io';

/** A resource rule: verbs on resources of groups (optionally only the named objects). */
function r(
  verbs: string[] | string,
  groups: string[] | string,
  resources: string[],
  names?: string[],
): PolicyRule {
  return {
    verbs: typeof verbs === 'string' ? [verbs] : verbs,
    apiGroups: typeof groups === 'string' ? [groups] : groups,
    resources,
    ...(names ? { resourceNames: names } : {}),
  };
}

/** A non-resource rule. */
const u = (verbs: string[] | string, urls: string[]): PolicyRule => ({
  verbs: typeof verbs === 'string' ? [verbs] : verbs,
  nonResourceURLs: urls,
});

const eventsRule = () => r(['create', 'update', 'patch'], [core, events], ['events']);

export interface ClusterRoleFact {
  name: string;
  rules?: PolicyRule[];
  labels?: Record<string, string>;
  aggregateFrom?: string;
}

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  name: string;
  namespace?: string;
}

export interface BindingFact {
  name: string;
  role: string;
  subjects: Subject[];
}

const group = (name: string): Subject => ({ kind: 'Group', name });
const user = (name: string): Subject => ({ kind: 'User', name });
const sa = (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', name, namespace });

export const AGGREGATE_TO = (role: string) => `rbac.authorization.k8s.io/aggregate-to-${role}`;

/** What the kubelet may do (system:node; the Node authorizer subdivides part of it). */
export function nodeRules(): PolicyRule[] {
  return [
    r('create', authn, ['tokenreviews']),
    r('create', authz, ['subjectaccessreviews', 'localsubjectaccessreviews']),
    r(READ, core, ['services']),
    r(['create', 'get', 'list', 'watch'], core, ['nodes']),
    r(['update', 'patch'], core, ['nodes/status']),
    r(['update', 'patch'], core, ['nodes']),
    r(['create', 'update', 'patch'], core, ['events']),
    r(READ, core, ['pods']),
    r(['create', 'delete'], core, ['pods']),
    r(['update', 'patch'], core, ['pods/status']),
    r('create', core, ['pods/eviction']),
    r(['get', 'list', 'watch'], core, ['secrets', 'configmaps']),
    r('get', core, ['persistentvolumeclaims', 'persistentvolumes']),
    r('get', core, ['endpoints']),
    r(['create', 'get', 'list', 'watch'], certificates, ['certificatesigningrequests']),
    r(['get', 'create', 'update', 'patch', 'delete'], coordination, ['leases']),
    r('get', storage, ['volumeattachments']),
    r('create', core, ['serviceaccounts/token']),
    r(['get', 'update', 'patch'], core, ['persistentvolumeclaims/status']),
    r(['get', 'watch', 'list'], storage, ['csidrivers']),
    r(['get', 'create', 'update', 'patch', 'delete'], storage, ['csinodes']),
    r(['get', 'list', 'watch'], 'node.k8s.io', ['runtimeclasses']),
    // DynamicResourceAllocation (GA)
    r('get', resource, ['resourceclaims']),
    r('deletecollection', resource, ['resourceslices']),
    // KubeletServiceAccountTokenForCredentialProviders (beta, on)
    r(['get', 'list', 'watch'], core, ['serviceaccounts']),
  ];
}

export function clusterRoles(): ClusterRoleFact[] {
  return [
    { name: 'cluster-admin', rules: [r('*', '*', ['*']), u('*', ['*'])] },
    {
      name: 'system:discovery',
      rules: [
        u('get', [
          '/livez',
          '/readyz',
          '/healthz',
          '/version',
          '/version/',
          '/openapi',
          '/openapi/*',
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
        ]),
      ],
    },
    {
      name: 'system:monitoring',
      rules: [
        u('get', [
          '/metrics',
          '/metrics/slis',
          '/livez',
          '/readyz',
          '/healthz',
          '/livez/*',
          '/readyz/*',
          '/healthz/*',
        ]),
      ],
    },
    {
      name: 'system:basic-user',
      rules: [
        r('create', authz, ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
        r('create', authn, ['selfsubjectreviews']),
      ],
    },
    {
      name: 'system:public-info-viewer',
      rules: [u('get', ['/livez', '/readyz', '/healthz', '/version', '/version/'])],
    },
    { name: 'admin', aggregateFrom: 'admin' },
    { name: 'edit', labels: { [AGGREGATE_TO('admin')]: 'true' }, aggregateFrom: 'edit' },
    { name: 'view', labels: { [AGGREGATE_TO('edit')]: 'true' }, aggregateFrom: 'view' },
    {
      name: 'system:aggregate-to-admin',
      labels: { [AGGREGATE_TO('admin')]: 'true' },
      rules: [
        r('create', authz, ['localsubjectaccessreviews']),
        r(READ_WRITE, rbac, ['roles', 'rolebindings']),
      ],
    },
    {
      name: 'system:aggregate-to-edit',
      labels: { [AGGREGATE_TO('edit')]: 'true' },
      rules: [
        r(READ, core, [
          'pods/attach',
          'pods/proxy',
          'pods/exec',
          'pods/portforward',
          'secrets',
          'services/proxy',
        ]),
        r('impersonate', core, ['serviceaccounts']),
        r(WRITE, core, ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
        r('create', core, ['pods/eviction']),
        r(WRITE, core, [
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'serviceaccounts',
          'services',
          'services/proxy',
          'persistentvolumeclaims',
          'configmaps',
          'secrets',
          'events',
        ]),
        r('create', core, ['serviceaccounts/token']),
        r(WRITE, apps, [
          'statefulsets',
          'statefulsets/scale',
          'daemonsets',
          'deployments',
          'deployments/scale',
          'deployments/rollback',
          'replicasets',
          'replicasets/scale',
        ]),
        r(WRITE, autoscaling, ['horizontalpodautoscalers']),
        r(WRITE, batch, ['jobs', 'cronjobs']),
        r(WRITE, extensions, [
          'daemonsets',
          'deployments',
          'deployments/scale',
          'deployments/rollback',
          'ingresses',
          'replicasets',
          'replicasets/scale',
          'replicationcontrollers/scale',
          'networkpolicies',
        ]),
        r(WRITE, policy, ['poddisruptionbudgets']),
        r(WRITE, networking, ['networkpolicies', 'ingresses']),
        r(READ_WRITE, coordination, ['leases']),
      ],
    },
    {
      name: 'system:aggregate-to-view',
      labels: { [AGGREGATE_TO('view')]: 'true' },
      rules: [
        r(READ, core, [
          'pods',
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'serviceaccounts',
          'services',
          'services/status',
          'endpoints',
          'persistentvolumeclaims',
          'persistentvolumeclaims/status',
          'configmaps',
        ]),
        r(READ, core, [
          'limitranges',
          'resourcequotas',
          'bindings',
          'events',
          'pods/status',
          'resourcequotas/status',
          'namespaces/status',
          'replicationcontrollers/status',
          'pods/log',
        ]),
        r(READ, core, ['namespaces']),
        r(READ, discovery, ['endpointslices']),
        r(READ, apps, [
          'controllerrevisions',
          'statefulsets',
          'statefulsets/status',
          'statefulsets/scale',
          'daemonsets',
          'daemonsets/status',
          'deployments',
          'deployments/status',
          'deployments/scale',
          'replicasets',
          'replicasets/status',
          'replicasets/scale',
        ]),
        r(READ, autoscaling, ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
        r(READ, batch, ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
        r(READ, extensions, [
          'daemonsets',
          'daemonsets/status',
          'deployments',
          'deployments/scale',
          'deployments/status',
          'ingresses',
          'ingresses/status',
          'replicasets',
          'replicasets/scale',
          'replicasets/status',
          'replicationcontrollers/scale',
          'networkpolicies',
        ]),
        r(READ, policy, ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
        r(READ, networking, ['networkpolicies', 'ingresses', 'ingresses/status']),
      ],
    },
    {
      name: 'system:heapster',
      rules: [r(READ, core, ['events', 'pods', 'nodes', 'namespaces']), r(READ, extensions, ['deployments'])],
    },
    { name: 'system:node', rules: nodeRules() },
    {
      name: 'system:node-problem-detector',
      rules: [r('get', core, ['nodes']), r('patch', core, ['nodes/status']), eventsRule()],
    },
    {
      name: 'system:node-bootstrapper',
      rules: [r(['create', 'get', 'list', 'watch'], certificates, ['certificatesigningrequests'])],
    },
    {
      name: 'system:auth-delegator',
      rules: [r('create', authn, ['tokenreviews']), r('create', authz, ['subjectaccessreviews'])],
    },
    { name: 'system:kube-aggregator', rules: [r(READ, core, ['services', 'endpoints'])] },
    {
      name: 'system:kube-controller-manager',
      rules: [
        eventsRule(),
        r('create', coordination, ['leases']),
        r(['get', 'update'], coordination, ['leases'], ['kube-controller-manager']),
        r('create', core, ['secrets', 'serviceaccounts']),
        r('delete', core, ['secrets']),
        r('get', core, ['namespaces', 'secrets', 'serviceaccounts', 'configmaps']),
        r('update', core, ['secrets', 'serviceaccounts']),
        r('create', authn, ['tokenreviews']),
        r('create', authz, ['subjectaccessreviews']),
        r(['list', 'watch'], '*', ['*']),
        r('create', core, ['serviceaccounts/token']),
      ],
    },
    { name: 'system:kube-dns', rules: [r(['list', 'watch'], core, ['endpoints', 'services'])] },
    {
      name: 'system:persistent-volume-provisioner',
      rules: [
        r(['get', 'list', 'watch', 'create', 'delete'], core, ['persistentvolumes']),
        r(['get', 'list', 'watch', 'update'], core, ['persistentvolumeclaims']),
        r(READ, storage, ['storageclasses']),
        r('watch', core, ['events']),
        eventsRule(),
      ],
    },
    {
      name: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
      rules: [r('create', certificates, ['certificatesigningrequests/nodeclient'])],
    },
    {
      name: 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient',
      rules: [r('create', certificates, ['certificatesigningrequests/selfnodeclient'])],
    },
    {
      name: 'system:volume-scheduler',
      rules: [
        r(READ_UPDATE, core, ['persistentvolumes']),
        r(READ, storage, ['storageclasses']),
        r(READ_UPDATE, core, ['persistentvolumeclaims']),
      ],
    },
    {
      name: 'system:certificates.k8s.io:legacy-unknown-approver',
      rules: [r('approve', certificates, ['signers'], ['kubernetes.io/legacy-unknown'])],
    },
    {
      name: 'system:certificates.k8s.io:kubelet-serving-approver',
      rules: [r('approve', certificates, ['signers'], ['kubernetes.io/kubelet-serving'])],
    },
    {
      name: 'system:certificates.k8s.io:kube-apiserver-client-approver',
      rules: [r('approve', certificates, ['signers'], ['kubernetes.io/kube-apiserver-client'])],
    },
    {
      name: 'system:certificates.k8s.io:kube-apiserver-client-kubelet-approver',
      rules: [r('approve', certificates, ['signers'], ['kubernetes.io/kube-apiserver-client-kubelet'])],
    },
    {
      name: 'system:service-account-issuer-discovery',
      rules: [
        u('get', [
          '/.well-known/openid-configuration',
          '/.well-known/openid-configuration/',
          '/openid/v1/jwks',
          '/openid/v1/jwks/',
        ]),
      ],
    },
    {
      name: 'system:kubelet-api-admin',
      rules: [
        r(['get', 'list', 'watch'], core, ['nodes']),
        r('proxy', core, ['nodes']),
        r('*', core, ['nodes/proxy', 'nodes/metrics', 'nodes/stats', 'nodes/log']),
        // KubeletFineGrainedAuthz (beta, on)
        r('*', core, ['nodes/pods', 'nodes/healthz', 'nodes/configz']),
      ],
    },
    {
      name: 'system:node-proxier',
      rules: [
        r(['list', 'watch'], core, ['services', 'endpoints']),
        r(['get', 'list', 'watch'], core, ['nodes']),
        eventsRule(),
        r(['list', 'watch'], networking, ['servicecidrs']),
        r(['list', 'watch'], discovery, ['endpointslices']),
      ],
    },
    {
      name: 'system:kube-scheduler',
      rules: [
        eventsRule(),
        r('create', coordination, ['leases']),
        r(['get', 'update', 'list', 'watch'], coordination, ['leases'], ['kube-scheduler']),
        r(READ_WRITE, coordination, ['leasecandidates']),
        r(READ, core, ['nodes']),
        r(['get', 'list', 'watch', 'delete'], core, ['pods']),
        r('create', core, ['pods/binding', 'bindings']),
        r(['patch', 'update'], core, ['pods/status']),
        r(READ, core, ['services', 'replicationcontrollers']),
        r(READ, [apps, extensions], ['replicasets']),
        r(READ, apps, ['statefulsets']),
        r(READ, policy, ['poddisruptionbudgets']),
        r(READ, core, ['persistentvolumeclaims', 'persistentvolumes']),
        r('create', authn, ['tokenreviews']),
        r('create', authz, ['subjectaccessreviews']),
        r(READ, storage, ['csinodes']),
        r(['get', 'list', 'watch'], storage, ['volumeattachments']),
        r(READ, core, ['namespaces']),
        r(READ, storage, ['csidrivers']),
        r(READ, storage, ['csistoragecapacities']),
        r(READ, resource, ['deviceclasses']),
        r(READ_UPDATE, resource, ['resourceclaims']),
        r(READ_UPDATE, resource, ['resourceclaims/status']),
        r(READ_UPDATE, core, ['pods/finalizers']),
        r(READ, resource, ['resourceslices']),
      ],
    },
  ];
}

export function clusterRoleBindings(): BindingFact[] {
  return [
    { name: 'cluster-admin', role: 'cluster-admin', subjects: [group('system:masters')] },
    { name: 'system:monitoring', role: 'system:monitoring', subjects: [group('system:monitoring')] },
    { name: 'system:discovery', role: 'system:discovery', subjects: [group('system:authenticated')] },
    { name: 'system:basic-user', role: 'system:basic-user', subjects: [group('system:authenticated')] },
    {
      name: 'system:public-info-viewer',
      role: 'system:public-info-viewer',
      subjects: [group('system:authenticated'), group('system:unauthenticated')],
    },
    { name: 'system:node-proxier', role: 'system:node-proxier', subjects: [user('system:kube-proxy')] },
    {
      name: 'system:kube-controller-manager',
      role: 'system:kube-controller-manager',
      subjects: [user('system:kube-controller-manager')],
    },
    { name: 'system:kube-dns', role: 'system:kube-dns', subjects: [sa('kube-system', 'kube-dns')] },
    {
      name: 'system:kube-scheduler',
      role: 'system:kube-scheduler',
      subjects: [user('system:kube-scheduler')],
    },
    {
      name: 'system:volume-scheduler',
      role: 'system:volume-scheduler',
      subjects: [user('system:kube-scheduler')],
    },
    // Deprecated since the Node authorizer: kept with no subjects.
    { name: 'system:node', role: 'system:node', subjects: [] },
    {
      name: 'system:service-account-issuer-discovery',
      role: 'system:service-account-issuer-discovery',
      subjects: [group('system:serviceaccounts')],
    },
  ];
}

/** system:controller:<name> roles, each bound to the kube-system service account <name>. */
export function controllerRoles(): ClusterRoleFact[] {
  const c = (name: string, rules: PolicyRule[]): ClusterRoleFact => ({
    name: `system:controller:${name}`,
    rules,
  });
  return [
    c('attachdetach-controller', [
      r(['list', 'watch'], core, ['persistentvolumes', 'persistentvolumeclaims']),
      r(['get', 'list', 'watch'], core, ['nodes']),
      r(['patch', 'update'], core, ['nodes/status']),
      r(['list', 'watch'], core, ['pods']),
      eventsRule(),
      r(['get', 'create', 'delete', 'list', 'watch'], storage, ['volumeattachments']),
      r(['get', 'watch', 'list'], storage, ['csidrivers']),
      r(['get', 'watch', 'list'], storage, ['csinodes']),
    ]),
    c('clusterrole-aggregation-controller', [
      r(['escalate', 'get', 'list', 'watch', 'update', 'patch'], rbac, ['clusterroles']),
    ]),
    c('cronjob-controller', [
      r(['get', 'list', 'watch', 'update'], batch, ['cronjobs']),
      r(['get', 'list', 'watch', 'create', 'update', 'delete', 'patch'], batch, ['jobs']),
      r('update', batch, ['cronjobs/status']),
      r('update', batch, ['cronjobs/finalizers']),
      r(['list', 'delete'], core, ['pods']),
      eventsRule(),
    ]),
    c('daemon-set-controller', [
      r(['get', 'list', 'watch'], [extensions, apps], ['daemonsets']),
      r('update', [extensions, apps], ['daemonsets/status']),
      r('update', [extensions, apps], ['daemonsets/finalizers']),
      r(['list', 'watch'], core, ['nodes']),
      r(['list', 'watch', 'create', 'delete', 'patch'], core, ['pods']),
      r('create', core, ['pods/binding']),
      r(['get', 'list', 'watch', 'create', 'delete', 'update', 'patch'], apps, ['controllerrevisions']),
      eventsRule(),
    ]),
    c('deployment-controller', [
      r(['get', 'list', 'watch', 'update'], [extensions, apps], ['deployments']),
      r('update', [extensions, apps], ['deployments/status']),
      r('update', [extensions, apps], ['deployments/finalizers']),
      r(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], [apps, extensions], ['replicasets']),
      r(['get', 'list', 'watch', 'update'], core, ['pods']),
      eventsRule(),
    ]),
    c('disruption-controller', [
      r(['get', 'list', 'watch'], [extensions, apps], ['deployments']),
      r(['get', 'list', 'watch'], [apps, extensions], ['replicasets']),
      r(['get', 'list', 'watch'], core, ['replicationcontrollers']),
      r(['get', 'list', 'watch'], policy, ['poddisruptionbudgets']),
      r(['get', 'list', 'watch'], apps, ['statefulsets']),
      r('update', policy, ['poddisruptionbudgets/status']),
      r('get', '*', ['*/scale']),
      eventsRule(),
      r(['patch', 'update'], core, ['pods/status']),
    ]),
    c('endpoint-controller', [
      r(['get', 'list', 'watch'], core, ['services', 'pods']),
      r(['get', 'list', 'create', 'update', 'delete'], core, ['endpoints']),
      r('create', core, ['endpoints/restricted']),
      eventsRule(),
    ]),
    c('endpointslice-controller', [
      r(['get', 'list', 'watch'], core, ['services', 'pods', 'nodes']),
      r('update', core, ['services/finalizers']),
      r(['get', 'list', 'create', 'update', 'delete'], discovery, ['endpointslices']),
      eventsRule(),
    ]),
    c('endpointslicemirroring-controller', [
      r(['get', 'list', 'watch'], core, ['services', 'endpoints']),
      r('update', core, ['services/finalizers']),
      r('update', core, ['endpoints/finalizers']),
      r(['get', 'list', 'create', 'update', 'delete'], discovery, ['endpointslices']),
      eventsRule(),
    ]),
    c('expand-controller', [
      r(['get', 'list', 'watch', 'update', 'patch'], core, ['persistentvolumes']),
      r(['update', 'patch'], core, ['persistentvolumeclaims/status']),
      r(['get', 'list', 'watch'], core, ['persistentvolumeclaims']),
      r(['get', 'list', 'watch'], storage, ['storageclasses']),
      r('get', core, ['services', 'endpoints']),
      r('get', core, ['secrets']),
      eventsRule(),
    ]),
    c('ephemeral-volume-controller', [
      r(['get', 'list', 'watch'], core, ['pods']),
      r('update', core, ['pods/finalizers']),
      r(['get', 'list', 'watch', 'create'], core, ['persistentvolumeclaims']),
      eventsRule(),
    ]),
    c('resource-claim-controller', [
      r(['get', 'list', 'watch'], core, ['pods']),
      r('update', core, ['pods/finalizers']),
      r(['get', 'list', 'watch', 'create', 'delete'], resource, ['resourceclaims']),
      r(['update', 'patch'], resource, ['resourceclaims/status']),
      r(['update', 'patch'], core, ['pods/status']),
      eventsRule(),
    ]),
    c('generic-garbage-collector', [
      r(['get', 'list', 'watch', 'patch', 'update', 'delete'], '*', ['*']),
      eventsRule(),
    ]),
    c('horizontal-pod-autoscaler', [
      r(['get', 'list', 'watch'], autoscaling, ['horizontalpodautoscalers']),
      r('update', autoscaling, ['horizontalpodautoscalers/status']),
      r(['get', 'update'], '*', ['*/scale']),
      r('list', core, ['pods']),
      r('list', 'metrics.k8s.io', ['pods']),
      r(['get', 'list'], 'custom.metrics.k8s.io', ['*']),
      r(['get', 'list'], 'external.metrics.k8s.io', ['*']),
      eventsRule(),
    ]),
    c('job-controller', [
      r(['get', 'list', 'watch', 'update', 'patch'], batch, ['jobs']),
      r('update', batch, ['jobs/status']),
      r('update', batch, ['jobs/finalizers']),
      r(['list', 'watch', 'create', 'delete', 'patch'], core, ['pods']),
      eventsRule(),
    ]),
    c('namespace-controller', [
      r(['get', 'list', 'watch', 'delete'], core, ['namespaces']),
      r('update', core, ['namespaces/finalize', 'namespaces/status']),
      r(['get', 'list', 'delete', 'deletecollection'], '*', ['*']),
    ]),
    c('node-controller', [
      r(['get', 'list', 'update', 'delete', 'patch'], core, ['nodes']),
      r(['patch', 'update'], core, ['nodes/status']),
      r(['patch', 'update'], core, ['pods/status']),
      r(['list', 'delete'], core, ['pods']),
      eventsRule(),
      r('get', core, ['pods']),
    ]),
    c('persistent-volume-binder', [
      r(['get', 'list', 'watch', 'update', 'create', 'delete'], core, ['persistentvolumes']),
      r('update', core, ['persistentvolumes/status']),
      r(['get', 'list', 'watch', 'update'], core, ['persistentvolumeclaims']),
      r('update', core, ['persistentvolumeclaims/status']),
      r(['list', 'watch', 'get', 'create', 'delete'], core, ['pods']),
      r(['get', 'list', 'watch'], storage, ['storageclasses']),
      r(['get', 'create', 'update', 'delete'], core, ['endpoints']),
      r(['get', 'create', 'delete'], core, ['services']),
      r('get', core, ['secrets']),
      r(['get', 'list'], core, ['nodes']),
      r('watch', core, ['events']),
      eventsRule(),
    ]),
    c('pod-garbage-collector', [
      r(['list', 'watch', 'delete'], core, ['pods']),
      r(['get', 'list'], core, ['nodes']),
      r('patch', core, ['pods/status']),
    ]),
    c('replicaset-controller', [
      r(['get', 'list', 'watch', 'update'], [apps, extensions], ['replicasets']),
      r('update', [apps, extensions], ['replicasets/status']),
      r('update', [apps, extensions], ['replicasets/finalizers']),
      r(['list', 'watch', 'patch', 'create', 'delete'], core, ['pods']),
      eventsRule(),
    ]),
    c('replication-controller', [
      r(['get', 'list', 'watch', 'update'], core, ['replicationcontrollers']),
      r('update', core, ['replicationcontrollers/status']),
      r('update', core, ['replicationcontrollers/finalizers']),
      r(['list', 'watch', 'patch', 'create', 'delete'], core, ['pods']),
      eventsRule(),
    ]),
    c('resourcequota-controller', [
      r(['list', 'watch'], '*', ['*']),
      r('update', core, ['resourcequotas/status']),
      eventsRule(),
    ]),
    c('route-controller', [
      r(['list', 'watch'], core, ['nodes']),
      r('patch', core, ['nodes/status']),
      eventsRule(),
    ]),
    c('service-account-controller', [r('create', core, ['serviceaccounts']), eventsRule()]),
    c('service-controller', [
      r(['get', 'list', 'watch'], core, ['services']),
      r(['patch', 'update'], core, ['services/status']),
      r(['list', 'watch'], core, ['nodes']),
      eventsRule(),
    ]),
    c('service-cidrs-controller', [
      r(['get', 'list', 'watch', 'patch', 'update'], networking, ['servicecidrs']),
      r(['patch', 'update'], networking, ['servicecidrs/finalizers']),
      r(['patch', 'update'], networking, ['servicecidrs/status']),
      r(['get', 'list', 'watch'], networking, ['ipaddresses']),
      eventsRule(),
    ]),
    c('statefulset-controller', [
      r(['list', 'watch'], core, ['pods']),
      r(['get', 'list', 'watch'], apps, ['statefulsets']),
      r('update', apps, ['statefulsets/status']),
      r('update', apps, ['statefulsets/finalizers']),
      r(['get', 'create', 'delete', 'update', 'patch'], core, ['pods']),
      r(['get', 'create', 'delete', 'update', 'patch', 'list', 'watch'], apps, ['controllerrevisions']),
      r(['get', 'create'], core, ['persistentvolumeclaims']),
      eventsRule(),
      r(['update', 'delete'], core, ['persistentvolumeclaims']),
    ]),
    c('ttl-controller', [r(['update', 'patch', 'list', 'watch'], core, ['nodes']), eventsRule()]),
    c('certificate-controller', [
      r(['get', 'list', 'watch', 'delete'], certificates, ['certificatesigningrequests']),
      r('update', certificates, ['certificatesigningrequests/status', 'certificatesigningrequests/approval']),
      r('approve', certificates, ['signers'], ['kubernetes.io/kube-apiserver-client-kubelet']),
      r(
        'sign',
        certificates,
        ['signers'],
        [
          'kubernetes.io/legacy-unknown',
          'kubernetes.io/kube-apiserver-client',
          'kubernetes.io/kube-apiserver-client-kubelet',
          'kubernetes.io/kubelet-serving',
        ],
      ),
      r('create', authz, ['subjectaccessreviews']),
      eventsRule(),
    ]),
    c('pvc-protection-controller', [
      r(['get', 'list', 'watch', 'update'], core, ['persistentvolumeclaims']),
      r(['list', 'watch', 'get'], core, ['pods']),
      eventsRule(),
    ]),
    c('pv-protection-controller', [
      r(['get', 'list', 'watch', 'update'], core, ['persistentvolumes']),
      eventsRule(),
    ]),
    c('ttl-after-finished-controller', [
      r(['get', 'list', 'watch', 'delete'], batch, ['jobs']),
      eventsRule(),
    ]),
    c('root-ca-cert-publisher', [r(['create', 'update'], core, ['configmaps']), eventsRule()]),
    c('validatingadmissionpolicy-status-controller', [
      r(['get', 'list', 'watch'], admissionregistration, ['validatingadmissionpolicies']),
      r(['get', 'patch', 'update'], admissionregistration, ['validatingadmissionpolicies/status']),
      eventsRule(),
    ]),
    c('legacy-service-account-token-cleaner', [
      r('get', core, ['configmaps'], ['kube-apiserver-legacy-service-account-token-tracking']),
      r('delete', core, ['secrets']),
    ]),
  ];
}

export function controllerRoleBindings(): BindingFact[] {
  return controllerRoles().map((role) => ({
    name: role.name,
    role: role.name,
    subjects: [sa('kube-system', role.name.slice('system:controller:'.length))],
  }));
}

export interface NamespacedRoleFact {
  namespace: string;
  name: string;
  rules: PolicyRule[];
}

export interface NamespacedBindingFact {
  namespace: string;
  name: string;
  role: string;
  subjects: Subject[];
}

export function namespaceRoles(): NamespacedRoleFact[] {
  const leaderLocking = [
    r(['create', 'get', 'list', 'update', 'watch'], coordination, ['leases']),
    r(['create', 'get', 'list', 'update', 'watch'], coordination, ['leasecandidates']),
  ];
  return [
    {
      namespace: 'kube-public',
      name: 'system:controller:bootstrap-signer',
      rules: [
        r(READ, core, ['configmaps']),
        r('update', core, ['configmaps'], ['cluster-info']),
        eventsRule(),
      ],
    },
    {
      namespace: 'kube-system',
      name: 'extension-apiserver-authentication-reader',
      rules: [r(READ, core, ['configmaps'], ['extension-apiserver-authentication'])],
    },
    {
      namespace: 'kube-system',
      name: 'system::leader-locking-kube-controller-manager',
      rules: leaderLocking,
    },
    { namespace: 'kube-system', name: 'system::leader-locking-kube-scheduler', rules: leaderLocking },
    {
      namespace: 'kube-system',
      name: 'system:controller:bootstrap-signer',
      rules: [r(READ, core, ['secrets'])],
    },
    {
      namespace: 'kube-system',
      name: 'system:controller:cloud-provider',
      rules: [r(['create', 'get', 'list', 'watch'], core, ['configmaps'])],
    },
    {
      namespace: 'kube-system',
      name: 'system:controller:token-cleaner',
      rules: [r(['delete', 'get', 'list', 'watch'], core, ['secrets']), eventsRule()],
    },
  ];
}

export function namespaceRoleBindings(): NamespacedBindingFact[] {
  return [
    {
      namespace: 'kube-public',
      name: 'system:controller:bootstrap-signer',
      role: 'system:controller:bootstrap-signer',
      subjects: [sa('kube-system', 'bootstrap-signer')],
    },
    {
      namespace: 'kube-system',
      name: 'system::extension-apiserver-authentication-reader',
      role: 'extension-apiserver-authentication-reader',
      subjects: [user('system:kube-controller-manager'), user('system:kube-scheduler')],
    },
    {
      namespace: 'kube-system',
      name: 'system::leader-locking-kube-controller-manager',
      role: 'system::leader-locking-kube-controller-manager',
      subjects: [
        user('system:kube-controller-manager'),
        sa('kube-system', 'kube-controller-manager'),
        sa('kube-system', 'leader-election-controller'),
      ],
    },
    {
      namespace: 'kube-system',
      name: 'system::leader-locking-kube-scheduler',
      role: 'system::leader-locking-kube-scheduler',
      subjects: [user('system:kube-scheduler'), sa('kube-system', 'kube-scheduler')],
    },
    {
      namespace: 'kube-system',
      name: 'system:controller:bootstrap-signer',
      role: 'system:controller:bootstrap-signer',
      subjects: [sa('kube-system', 'bootstrap-signer')],
    },
    {
      namespace: 'kube-system',
      name: 'system:controller:cloud-provider',
      role: 'system:controller:cloud-provider',
      subjects: [sa('kube-system', 'cloud-provider')],
    },
    {
      namespace: 'kube-system',
      name: 'system:controller:token-cleaner',
      role: 'system:controller:token-cleaner',
      subjects: [sa('kube-system', 'token-cleaner')],
    },
  ];
}
