// Static pods (--pod-manifest-path, --manifest-url) as the kubelet's config
// sources make them: a Pod (or, from a URL, a PodList) read from YAML or JSON,
// named "<name>-<node>", given a uid hashed from its content and source, the
// config annotations, spec.nodeName, a NoExecute toleration (file pods), and
// the defaults of the API; and the mirror pod that shows it in the API.
import { createHash } from 'node:crypto';
import { parseConfigYAML } from '../../shared/codec/yaml';
import { applyDefaults } from '../../shared/api/defaults';
import type { KubeObject } from '../../shared/client/types';
import { canonical } from '../status/node';

export const CONFIG_HASH = 'kubernetes.io/config.hash';
export const CONFIG_SOURCE = 'kubernetes.io/config.source';
export const CONFIG_SEEN = 'kubernetes.io/config.seen';
export const CONFIG_MIRROR = 'kubernetes.io/config.mirror';

export type PodSource = 'api' | 'file' | 'http';

export const isMirrorPod = (pod: any) => !!pod?.metadata?.annotations?.[CONFIG_MIRROR];

/** A parsed document: a Pod, or the pods of a PodList. */
function podsOf(doc: any, where: string): any[] {
  if (!doc || typeof doc !== 'object') throw new Error(`${where}: not a Pod`);
  if (doc.kind === 'PodList' || (Array.isArray(doc.items) && !doc.kind)) return doc.items ?? [];
  if (doc.kind !== 'Pod') throw new Error(`${where}: invalid pod: kind "${doc.kind ?? ''}" (want Pod)`);
  if (doc.apiVersion && doc.apiVersion !== 'v1')
    throw new Error(`${where}: invalid pod: apiVersion "${doc.apiVersion}" (want v1)`);
  return [doc];
}

/** Reads the pods of a manifest (one YAML or JSON document; a URL may serve a PodList). */
export function parseManifest(text: string, where: string, allowList: boolean): any[] {
  let doc: any;
  try {
    doc = parseConfigYAML(text);
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
  }
  const pods = podsOf(doc, where);
  if (!allowList && (doc.kind === 'PodList' || Array.isArray(doc.items)))
    throw new Error(`${where}: a file holds one Pod`);
  return pods;
}

export interface StaticDefaultsOptions {
  nodeName: string;
  source: PodSource;
  /** The file path or URL. */
  location: string;
  now: number;
}

/** The kubelet's applyDefaults for a static pod, then the API defaults; validates the essentials. */
export function staticPod(raw: any, o: StaticDefaultsOptions): KubeObject {
  const pod = structuredClone(raw);
  pod.apiVersion = 'v1';
  pod.kind = 'Pod';
  pod.metadata ??= {};
  pod.spec ??= {};
  if (!pod.metadata.name) throw new Error(`${o.location}: invalid pod: metadata.name is required`);
  if (!Array.isArray(pod.spec.containers) || !pod.spec.containers.length)
    throw new Error(`${o.location}: invalid pod "${pod.metadata.name}": spec.containers: Required value`);
  for (const c of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) {
    if (!c?.name)
      throw new Error(`${o.location}: invalid pod "${pod.metadata.name}": a container has no name`);
    if (!c.image)
      throw new Error(
        `${o.location}: invalid pod "${pod.metadata.name}": container "${c.name}" has no image`,
      );
  }
  if (!pod.metadata.uid) {
    const h = createHash('md5').update(canonical(pod));
    if (o.source === 'file') h.update(`host:${o.nodeName}`).update(`file:${o.location}`);
    else h.update(`url:${o.location}`);
    pod.metadata.uid = h.digest('hex');
  }
  pod.metadata.name = `${pod.metadata.name}-${o.nodeName.toLowerCase()}`;
  pod.metadata.namespace ||= 'default';
  pod.spec.nodeName = o.nodeName;
  pod.metadata.annotations = {
    ...(pod.metadata.annotations ?? {}),
    [CONFIG_HASH]: pod.metadata.uid,
    [CONFIG_SOURCE]: o.source,
    [CONFIG_SEEN]: new Date(o.now).toISOString(),
  };
  if (o.source === 'file') {
    const tol: any[] = pod.spec.tolerations ?? [];
    if (!tol.some((t) => t.operator === 'Exists' && t.effect === 'NoExecute' && !t.key))
      pod.spec.tolerations = [...tol, { operator: 'Exists', effect: 'NoExecute' }];
  }
  applyDefaults(pod);
  pod.status = { phase: 'Pending' };
  return pod;
}

/** The mirror pod of a static pod: the same pod, marked and owned by the Node. */
export function mirrorPodFor(pod: KubeObject, node: { name: string; uid?: string }): KubeObject {
  const meta = pod.metadata;
  const { uid: _uid, resourceVersion: _rv, creationTimestamp: _ct, ...rest } = meta;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...rest,
      annotations: {
        ...(meta.annotations ?? {}),
        [CONFIG_MIRROR]: meta.annotations?.[CONFIG_HASH] ?? meta.uid ?? '',
      },
      ...(node.uid
        ? {
            ownerReferences: [
              { apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid, controller: true },
            ],
          }
        : {}),
    },
    spec: structuredClone(pod.spec),
  };
}

/** Whether a mirror pod in the API shows this static pod's current version. */
export function mirrorMatches(mirror: any, pod: any): boolean {
  return mirror?.metadata?.annotations?.[CONFIG_MIRROR] === pod?.metadata?.annotations?.[CONFIG_HASH];
}
