// Whether a local cluster's Nodes say Ready, as its launcher and tests wait for them.
import { getWithKubeconfig } from './process';

const isReady = (node: any) =>
  (node.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');

/** How many Nodes say Ready. */
export async function readyNodeCount(kubeconfig: string): Promise<number> {
  // A list of thousands of Nodes from a busy apiserver takes more than a few seconds.
  const r = await getWithKubeconfig(kubeconfig, '/api/v1/nodes', 60_000);
  if (r.status !== 200) return 0;
  return (JSON.parse(r.body).items ?? []).filter(isReady).length;
}

export async function nodeIsReady(kubeconfig: string, name: string): Promise<boolean> {
  const r = await getWithKubeconfig(kubeconfig, `/api/v1/nodes/${name}`);
  return r.status === 200 && isReady(JSON.parse(r.body));
}
