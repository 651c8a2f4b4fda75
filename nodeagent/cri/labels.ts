// The labels and annotations kubelet puts on CRI sandboxes and containers.
// They are how a restarted agent finds its pods' sandboxes and containers
// again (by pod uid and container name) and knows each container's attempt,
// so it adopts them instead of starting duplicates.

export const LABEL = {
  podName: 'io.kubernetes.pod.name',
  podNamespace: 'io.kubernetes.pod.namespace',
  podUID: 'io.kubernetes.pod.uid',
  containerName: 'io.kubernetes.container.name',
} as const;

export const ANNOTATION = {
  restartCount: 'io.kubernetes.container.restartCount',
  hash: 'io.kubernetes.container.hash',
  terminationMessagePath: 'io.kubernetes.container.terminationMessagePath',
  terminationMessagePolicy: 'io.kubernetes.container.terminationMessagePolicy',
  gracePeriod: 'io.kubernetes.pod.terminationGracePeriod',
  /** tkube's own: which list of the pod spec the container comes from (init or regular). */
  kind: 'tkube.io/container-kind',
  /** tkube's own: the image as the pod spec names it (the runtime only keeps the resolved id). */
  image: 'tkube.io/container-image',
} as const;

/** The labels of a pod's sandbox: the pod's own labels plus kubelet's identity labels. */
export function sandboxLabels(pod: any): Record<string, string> {
  const md = pod.metadata;
  return {
    ...(md.labels ?? {}),
    [LABEL.podName]: md.name,
    [LABEL.podNamespace]: md.namespace,
    [LABEL.podUID]: md.uid,
  };
}

/** The labels of a container: only kubelet's identity labels (pod labels stay on the sandbox). */
export function containerLabels(pod: any, containerName: string): Record<string, string> {
  const md = pod.metadata;
  return {
    [LABEL.podName]: md.name,
    [LABEL.podNamespace]: md.namespace,
    [LABEL.podUID]: md.uid,
    [LABEL.containerName]: containerName,
  };
}
