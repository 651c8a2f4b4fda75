// Defaults of the other groups: admission webhooks, RBAC, scheduling,
// networking, discovery, storage, apiextensions, flowcontrol (Kubernetes 1.36).
import { asArr, asObj, asStr, ensureObj, registerDefaults, setIfUnset, type Obj } from './defaults-registry';

const ADM = 'io.k8s.api.admissionregistration.v1.';
const webhook = (h: Obj) => {
  setIfUnset(h, 'failurePolicy', 'Fail');
  setIfUnset(h, 'matchPolicy', 'Equivalent');
  setIfUnset(h, 'namespaceSelector', {});
  setIfUnset(h, 'objectSelector', {});
  setIfUnset(h, 'timeoutSeconds', 10);
};
registerDefaults(ADM + 'ValidatingWebhook', webhook);
registerDefaults(ADM + 'MutatingWebhook', (h) => {
  webhook(h);
  setIfUnset(h, 'reinvocationPolicy', 'Never');
});
registerDefaults(ADM + 'RuleWithOperations', (r) => setIfUnset(r, 'scope', '*'));
registerDefaults(ADM + 'NamedRuleWithOperations', (r) => setIfUnset(r, 'scope', '*'));
registerDefaults(ADM + 'ServiceReference', (s) => setIfUnset(s, 'port', 443));
registerDefaults(ADM + 'ValidatingAdmissionPolicySpec', (s) => setIfUnset(s, 'failurePolicy', 'Fail'));
registerDefaults(ADM + 'MutatingAdmissionPolicySpec', (s) => setIfUnset(s, 'failurePolicy', 'Fail'));
registerDefaults(ADM + 'MatchResources', (m) => {
  setIfUnset(m, 'matchPolicy', 'Equivalent');
  setIfUnset(m, 'namespaceSelector', {});
  setIfUnset(m, 'objectSelector', {});
});

const RBAC = 'io.k8s.api.rbac.v1.';
const rbacGroup = 'rbac.authorization.k8s.io';
registerDefaults(RBAC + 'RoleBinding', (b) => setIfUnset(ensureObj(b, 'roleRef'), 'apiGroup', rbacGroup));
registerDefaults(RBAC + 'ClusterRoleBinding', (b) =>
  setIfUnset(ensureObj(b, 'roleRef'), 'apiGroup', rbacGroup),
);
registerDefaults(RBAC + 'Subject', (s) => {
  if (asStr(s.apiGroup)) return;
  if (s.kind === 'ServiceAccount') s.apiGroup = '';
  else if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = rbacGroup;
});

registerDefaults('io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.ServiceReference', (s) =>
  setIfUnset(s, 'port', 443),
);

registerDefaults('io.k8s.api.scheduling.v1.PriorityClass', (pc) =>
  setIfUnset(pc, 'preemptionPolicy', 'PreemptLowerPriority'),
);

const NET = 'io.k8s.api.networking.v1.';
registerDefaults(NET + 'NetworkPolicyPort', (p) => setIfUnset(p, 'protocol', 'TCP'));
registerDefaults(NET + 'NetworkPolicy', (np) => {
  const s = ensureObj(np, 'spec');
  if (asArr(s.policyTypes).length === 0)
    s.policyTypes = asArr(s.egress).length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
});
registerDefaults(NET + 'IngressClass', (ic) => {
  const params = asObj(asObj(ic.spec)?.parameters);
  if (params) setIfUnset(params, 'scope', 'Cluster');
});

registerDefaults('io.k8s.api.discovery.v1.EndpointPort', (p) => {
  if (p.name === undefined || p.name === null) p.name = '';
  setIfUnset(p, 'protocol', 'TCP');
});

const STORAGE = 'io.k8s.api.storage.v1.';
registerDefaults(STORAGE + 'StorageClass', (sc) => {
  setIfUnset(sc, 'reclaimPolicy', 'Delete');
  setIfUnset(sc, 'volumeBindingMode', 'Immediate');
});
registerDefaults(STORAGE + 'CSIDriver', (d) => {
  const s = ensureObj(d, 'spec');
  setIfUnset(s, 'attachRequired', true);
  if (s.podInfoOnMount === undefined || s.podInfoOnMount === null) s.podInfoOnMount = false;
  if (s.storageCapacity === undefined || s.storageCapacity === null) s.storageCapacity = false;
  setIfUnset(s, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
  if (asArr(s.volumeLifecycleModes).length === 0) s.volumeLifecycleModes = ['Persistent'];
  if (s.requiresRepublish === undefined || s.requiresRepublish === null) s.requiresRepublish = false;
  if (s.seLinuxMount === undefined || s.seLinuxMount === null) s.seLinuxMount = false;
});

const EXT = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.';
registerDefaults(EXT + 'CustomResourceDefinition', (crd) => {
  const s = ensureObj(crd, 'spec');
  const names = ensureObj(s, 'names');
  const kind = asStr(names.kind);
  setIfUnset(names, 'singular', kind.toLowerCase());
  if (kind) setIfUnset(names, 'listKind', kind + 'List');
  setIfUnset(s, 'conversion', { strategy: 'None' });
  const status = ensureObj(crd, 'status');
  if (asArr(status.storedVersions).length === 0) {
    const storage = asArr(s.versions)
      .map(asObj)
      .find((v) => v?.storage === true);
    if (storage) status.storedVersions = [storage.name];
  }
});
registerDefaults(EXT + 'ServiceReference', (s) => setIfUnset(s, 'port', 443));

const FC = 'io.k8s.api.flowcontrol.v1.';
registerDefaults(FC + 'FlowSchemaSpec', (s) => {
  if (!s.matchingPrecedence) s.matchingPrecedence = 1000;
});
registerDefaults(FC + 'LimitedPriorityLevelConfiguration', (l) => {
  setIfUnset(l, 'nominalConcurrencyShares', 30);
  setIfUnset(l, 'lendablePercent', 0);
});
registerDefaults(FC + 'ExemptPriorityLevelConfiguration', (e) => {
  setIfUnset(e, 'nominalConcurrencyShares', 0);
  setIfUnset(e, 'lendablePercent', 0);
});
registerDefaults(FC + 'QueuingConfiguration', (q) => {
  if (!q.handSize) q.handSize = 8;
  if (!q.queues) q.queues = 64;
  if (!q.queueLengthLimit) q.queueLengthLimit = 50;
});
