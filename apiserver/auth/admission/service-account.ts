// ServiceAccount (plugin/pkg/admission/serviceaccount): pods run as a
// ServiceAccount ("default" when unset) that must exist; its API credentials
// are mounted as a projected kube-api-access-<random> volume; its
// imagePullSecrets are copied; mirror pods may reference neither.
import type { Registry } from '../../registry/registry';
import { generateName } from '../../registry/meta';
import type { AdmissionAttributes, AdmissionPlugin } from './types';
import { admissionForbidden, allContainers, isPods, Lister, MIRROR_POD_ANNOTATION } from './util';

export const DEFAULT_SERVICE_ACCOUNT = 'default';
export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
export const VOLUME_PREFIX = 'kube-api-access-';
const ENFORCE_MOUNTABLE = 'kubernetes.io/enforce-mountable-secrets';
/** serviceaccount.WarnOnlyBoundTokenExpirationSeconds: 1h + 7s, recognisable by the token extension. */
const TOKEN_EXPIRATION_SECONDS = 3607;

export function tokenVolumeSource(): any {
  return {
    defaultMode: 420,
    sources: [
      { serviceAccountToken: { expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      {
        downwardAPI: {
          items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
        },
      },
    ],
  };
}

/** Names of the Secrets a pod references (volumes, env, envFrom, imagePullSecrets, projections). */
function podSecretNames(spec: any): string[] {
  const out: string[] = [];
  for (const s of spec?.imagePullSecrets ?? []) if (s?.name) out.push(s.name);
  for (const v of spec?.volumes ?? []) {
    if (v.secret?.secretName) out.push(v.secret.secretName);
    for (const p of v.projected?.sources ?? []) if (p.secret?.name) out.push(p.secret.name);
    for (const ref of [v.cephfs, v.cinder, v.flexVolume, v.iscsi, v.rbd, v.scaleIO, v.storageos, v.csi])
      if (ref?.secretRef?.name) out.push(ref.secretRef.name);
    if (v.azureFile?.secretName) out.push(v.azureFile.secretName);
    if (v.csi?.nodePublishSecretRef?.name) out.push(v.csi.nodePublishSecretRef.name);
  }
  for (const c of allContainers(spec)) {
    for (const e of c.env ?? []) if (e.valueFrom?.secretKeyRef?.name) out.push(e.valueFrom.secretKeyRef.name);
    for (const e of c.envFrom ?? []) if (e.secretRef?.name) out.push(e.secretRef.name);
  }
  return out;
}

export class ServiceAccount implements AdmissionPlugin {
  readonly name = 'ServiceAccount';
  private readonly accounts: Lister;

  constructor(
    registry: () => Registry,
    /** Attempts (and the wait between them) for the "default" account, which a controller creates. */
    private readonly defaultAttempts = 10,
  ) {
    this.accounts = new Lister(registry, '', 'serviceaccounts');
  }

  private static ignored(a: AdmissionAttributes): boolean {
    return !isPods(a) || (a.subresource !== '' && a.subresource !== 'ephemeralcontainers') || !a.object;
  }

  /** The account, or throws the NotFound error text Kubernetes wraps. */
  private async account(a: AdmissionAttributes, name: string): Promise<any> {
    const attempts = name === DEFAULT_SERVICE_ACCOUNT ? this.defaultAttempts : 1;
    const interval = 100 + Math.floor(Math.random() * 100);
    for (let i = 0; i < attempts; i++) {
      if (i) await new Promise((r) => setTimeout(r, interval));
      const sa = await this.accounts.get(a.namespace, name);
      if (sa) return sa;
    }
    throw admissionForbidden(
      a,
      `error looking up service account ${a.namespace}/${name}: serviceaccount "${name}" not found`,
    );
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (ServiceAccount.ignored(a) || a.operation !== 'CREATE' || a.subresource) return;
    const pod = a.object;
    pod.spec ??= {};
    if (pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined) return;
    if (!pod.spec.serviceAccountName) pod.spec.serviceAccountName = DEFAULT_SERVICE_ACCOUNT;
    const sa = await this.account(a, pod.spec.serviceAccountName);
    if (shouldAutomount(sa, pod)) mountToken(pod);
    if (!pod.spec.imagePullSecrets?.length && sa.imagePullSecrets?.length)
      pod.spec.imagePullSecrets = sa.imagePullSecrets.map((s: any) => ({ name: s.name }));
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (ServiceAccount.ignored(a)) return;
    const pod = a.object;
    if (a.operation === 'UPDATE' && a.subresource === 'ephemeralcontainers') {
      const name = pod.spec?.serviceAccountName;
      if (!name)
        throw admissionForbidden(
          a,
          `no service account specified for pod ${a.namespace}/${pod.metadata?.name}`,
        );
      const sa = await this.account(a, name);
      if (enforceMountable(sa)) {
        const allowed = new Set((sa.secrets ?? []).map((s: any) => s.name));
        for (const c of pod.spec?.ephemeralContainers ?? []) {
          for (const e of c.env ?? []) {
            const ref = e.valueFrom?.secretKeyRef?.name;
            if (ref && !allowed.has(ref))
              throw admissionForbidden(
                a,
                `ephemeral container ${c.name} with envVar ${e.name} referencing secret.secretName="${ref}" is not allowed because service account ${sa.metadata.name} does not reference that secret`,
              );
          }
        }
      }
      return;
    }
    if (a.operation !== 'CREATE' || a.subresource) return;
    if (pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined) {
      if (pod.spec?.serviceAccountName)
        throw admissionForbidden(a, 'a mirror pod may not reference service accounts');
      if (podSecretNames(pod.spec).length)
        throw admissionForbidden(a, 'a mirror pod may not reference secrets');
      for (const v of pod.spec?.volumes ?? [])
        for (const p of v.projected?.sources ?? [])
          if (p.serviceAccountToken)
            throw admissionForbidden(a, 'a mirror pod may not use ServiceAccountToken volume projections');
      return;
    }
    const name = pod.spec?.serviceAccountName;
    if (!name)
      throw admissionForbidden(
        a,
        `no service account specified for pod ${a.namespace}/${pod.metadata?.name}`,
      );
    const sa = await this.account(a, name);
    if (enforceMountable(sa)) limitSecretReferences(a, sa, pod);
  }
}

function shouldAutomount(sa: any, pod: any): boolean {
  if (typeof pod.spec.automountServiceAccountToken === 'boolean')
    return pod.spec.automountServiceAccountToken;
  if (typeof sa.automountServiceAccountToken === 'boolean') return sa.automountServiceAccountToken;
  return true;
}

function enforceMountable(sa: any): boolean {
  const v = sa.metadata?.annotations?.[ENFORCE_MOUNTABLE];
  return v !== undefined && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v);
}

function limitSecretReferences(a: AdmissionAttributes, sa: any, pod: any): void {
  const mountable = new Set((sa.secrets ?? []).map((s: any) => s.name));
  const saName = sa.metadata.name;
  for (const v of pod.spec?.volumes ?? []) {
    const n = v.secret?.secretName;
    if (n !== undefined && !mountable.has(n))
      throw admissionForbidden(
        a,
        `volume with secret.secretName="${n}" is not allowed because service account ${saName} does not reference that secret`,
      );
  }
  const check = (list: any[], what: string) => {
    for (const c of list ?? []) {
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef?.name;
        if (ref !== undefined && !mountable.has(ref))
          throw admissionForbidden(
            a,
            `${what} ${c.name} with envVar ${e.name} referencing secret.secretName="${ref}" is not allowed because service account ${saName} does not reference that secret`,
          );
      }
      for (const e of c.envFrom ?? []) {
        const ref = e.secretRef?.name;
        if (ref !== undefined && !mountable.has(ref))
          throw admissionForbidden(
            a,
            `${what} ${c.name} with envFrom referencing secret.secretName="${ref}" is not allowed because service account ${saName} does not reference that secret`,
          );
      }
    }
  };
  check(pod.spec?.initContainers, 'init container');
  check(pod.spec?.containers, 'container');
  const pull = new Set((sa.imagePullSecrets ?? []).map((s: any) => s.name));
  (pod.spec?.imagePullSecrets ?? []).forEach((ref: any, i: number) => {
    if (!pull.has(ref.name))
      throw admissionForbidden(
        a,
        `imagePullSecrets[${i}].name="${ref.name}" is not allowed because service account ${saName} does not reference that imagePullSecret`,
      );
  });
}

/** Adds the kube-api-access volume and mounts it in every container without a mount at the token path. */
function mountToken(pod: any): void {
  const spec = pod.spec;
  let volumeName = '';
  let hasVolume = false;
  for (const v of spec.volumes ?? []) {
    if (typeof v.name === 'string' && v.name.startsWith(VOLUME_PREFIX)) {
      volumeName = v.name;
      hasVolume = true;
      break;
    }
  }
  if (!volumeName) volumeName = generateName(VOLUME_PREFIX);
  let needed = false;
  for (const list of [spec.initContainers, spec.containers]) {
    for (const c of list ?? []) {
      const mounts: any[] = c.volumeMounts ?? [];
      if (mounts.some((m) => m.mountPath === TOKEN_MOUNT_PATH)) continue;
      c.volumeMounts = [...mounts, { name: volumeName, readOnly: true, mountPath: TOKEN_MOUNT_PATH }];
      needed = true;
    }
  }
  if (!hasVolume && needed)
    spec.volumes = [...(spec.volumes ?? []), { name: volumeName, projected: tokenVolumeSource() }];
}
