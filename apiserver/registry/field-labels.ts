// Field selectors, Kubernetes' way: each served group/version/kind accepts its own list of
// field labels (the scheme's field-label conversion funcs, pkg/apis/<group>/<version>/conversion.go)
// and maps each onto a field of the stored object's selectable set (the registry strategy's
// ToSelectableFields). Both halves live in this one table; the store computes an object's set
// once per object version, and a request's labels are converted once per request.
import { goQuote } from '../../shared/codec/go-strconv';

/** The labels one served version accepts: label -> the selectable field it reads. */
export interface LabelSet {
  readonly labels: Readonly<Record<string, string>>;
  /** The error text (a 400) for any other label. */
  refuse(label: string): string;
}

/** A resource's field labels in every served version, and the values they select. */
export interface FieldLabels {
  /** The labels a request of this served version ("v1", "events.k8s.io/v1") may use. */
  forVersion(apiVersion: string): LabelSet;
  /** Selectable fields of a stored object beyond metadata.name and metadata.namespace. */
  values?(obj: any): Record<string, string>;
}

const META = ['metadata.name', 'metadata.namespace'];
const same = (labels: string[]): Record<string, string> => Object.fromEntries(labels.map((l) => [l, l]));
const notSupported = (label: string) => `field label not supported: ${label}`;
const accepting = (labels: string[], refuse = notSupported): LabelSet => ({ labels: same(labels), refuse });

/** Kinds without a list of their own (runtime.DefaultMetaV1FieldSelectorConversion). */
export const defaultLabels: LabelSet = {
  labels: same(META),
  refuse: (label) =>
    `${goQuote(label)} is not a known field selector: only ${goQuote(META[0])}, ${goQuote(META[1])}`,
};

const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

interface TableEntry {
  /** Label sets by served "group/version"; a version not listed takes the default. */
  versions: Record<string, LabelSet>;
  values(obj: any): Record<string, string>;
}

const coreEventLabels = accepting([
  ...META,
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
]);

// events.k8s.io names the core fields its own way; the selectable set stays core's.
const eventsV1Labels: LabelSet = {
  labels: {
    ...same([...META, 'reason', 'source', 'type']),
    ...Object.fromEntries(
      ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'].map((f) => [
        `regarding.${f}`,
        `involvedObject.${f}`,
      ]),
    ),
    reportingController: 'reportingComponent',
  },
  refuse: notSupported,
};

const resourceSliceLabels = (gv: string): LabelSet =>
  accepting(
    ['metadata.name', 'spec.nodeName', 'spec.driver'],
    (label) => `field label not supported for ${gv}, Kind=ResourceSlice: ${label}`,
  );

const signerName = (o: any) => ({ 'spec.signerName': str(o.spec?.signerName) });
const replicas = (o: any) => ({ 'status.replicas': str(o.status?.replicas ?? 0) });

/** By storage "group/resource"; values read the stored (storage version) object. */
const TABLE: Record<string, TableEntry> = {
  '/pods': {
    versions: {
      v1: {
        labels: {
          ...same([
            ...META,
            'spec.nodeName',
            'spec.restartPolicy',
            'spec.schedulerName',
            'spec.serviceAccountName',
            'spec.hostNetwork',
            'status.phase',
            'status.podIP',
            'status.podIPs',
            'status.nominatedNodeName',
          ]),
          // Old v1 clients' name for spec.nodeName.
          'spec.host': 'spec.nodeName',
        },
        refuse: notSupported,
      },
    },
    // status.podIPs is accepted but not in Kubernetes' selectable set: it selects as "".
    values: (p) => ({
      'spec.nodeName': str(p.spec?.nodeName),
      'spec.restartPolicy': str(p.spec?.restartPolicy),
      'spec.schedulerName': str(p.spec?.schedulerName),
      'spec.serviceAccountName': str(p.spec?.serviceAccountName || p.spec?.serviceAccount),
      'spec.hostNetwork': String(!!p.spec?.hostNetwork),
      'status.phase': str(p.status?.phase),
      'status.podIP': str(p.status?.podIP || p.status?.podIPs?.[0]?.ip),
      'status.nominatedNodeName': str(p.status?.nominatedNodeName),
    }),
  },
  '/events': {
    versions: { v1: coreEventLabels, 'events.k8s.io/v1': eventsV1Labels },
    values: (e) => {
      const ref = e.involvedObject ?? {};
      return {
        'involvedObject.kind': str(ref.kind),
        'involvedObject.namespace': str(ref.namespace),
        'involvedObject.name': str(ref.name),
        'involvedObject.uid': str(ref.uid),
        'involvedObject.apiVersion': str(ref.apiVersion),
        'involvedObject.resourceVersion': str(ref.resourceVersion),
        'involvedObject.fieldPath': str(ref.fieldPath),
        reason: str(e.reason),
        reportingComponent: str(e.reportingComponent),
        // Events written through events.k8s.io carry no source: their reporting controller stands in.
        source: str(e.source?.component || e.reportingComponent),
        type: str(e.type),
      };
    },
  },
  '/nodes': {
    versions: { v1: accepting(['metadata.name', 'spec.unschedulable']) },
    values: (n) => ({ 'spec.unschedulable': String(!!n.spec?.unschedulable) }),
  },
  '/namespaces': {
    versions: { v1: accepting(['metadata.name', 'status.phase']) },
    values: (n) => ({ 'status.phase': str(n.status?.phase) }),
  },
  '/secrets': {
    versions: { v1: accepting([...META, 'type']) },
    values: (s) => ({ type: str(s.type) }),
  },
  '/services': {
    versions: { v1: accepting([...META, 'spec.clusterIP', 'spec.type']) },
    values: (s) => ({ 'spec.clusterIP': str(s.spec?.clusterIP), 'spec.type': str(s.spec?.type) }),
  },
  '/replicationcontrollers': {
    versions: { v1: accepting([...META, 'status.replicas']) },
    values: replicas,
  },
  'apps/replicasets': {
    versions: { 'apps/v1': accepting([...META, 'status.replicas']) },
    values: replicas,
  },
  'batch/jobs': {
    versions: {
      'batch/v1': accepting(
        [...META, 'status.successful'],
        (l) => `field label ${goQuote(l)} not supported for Job`,
      ),
    },
    values: (j) => ({ 'status.successful': str(j.status?.succeeded ?? 0) }),
  },
  'certificates.k8s.io/certificatesigningrequests': {
    versions: { 'certificates.k8s.io/v1': accepting(['metadata.name', 'spec.signerName']) },
    values: signerName,
  },
  'certificates.k8s.io/clustertrustbundles': {
    versions: {
      'certificates.k8s.io/v1alpha1': accepting(['metadata.name', 'spec.signerName']),
      'certificates.k8s.io/v1beta1': accepting(['metadata.name', 'spec.signerName']),
    },
    values: signerName,
  },
  'certificates.k8s.io/podcertificaterequests': {
    versions: {
      'certificates.k8s.io/v1beta1': accepting([
        'metadata.name',
        'spec.signerName',
        'spec.podName',
        'spec.nodeName',
      ]),
    },
    values: (r) => ({
      ...signerName(r),
      'spec.podName': str(r.spec?.podName),
      'spec.nodeName': str(r.spec?.nodeName),
    }),
  },
  'resource.k8s.io/resourceslices': {
    versions: Object.fromEntries(
      ['v1', 'v1beta1', 'v1beta2'].map((v) => [
        `resource.k8s.io/${v}`,
        resourceSliceLabels(`resource.k8s.io/${v}`),
      ]),
    ),
    values: (s) => ({ 'spec.nodeName': str(s.spec?.nodeName), 'spec.driver': str(s.spec?.driver) }),
  },
};

const metadataOnly: FieldLabels = { forVersion: () => defaultLabels };

/** The field labels of a built-in resource, by its storage group and resource. */
export function builtinFieldLabels(group: string, resource: string): FieldLabels {
  const entry = TABLE[`${group}/${resource}`];
  if (!entry) return metadataOnly;
  return { forVersion: (gv) => entry.versions[gv] ?? defaultLabels, values: entry.values };
}
