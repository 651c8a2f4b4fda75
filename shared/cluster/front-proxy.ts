// The aggregation layer's credentials of a local cluster, as kubeadm makes
// them: a front-proxy CA and the client certificate the apiserver presents to
// extension apiservers (CN front-proxy-client), and the apiserver flags that
// name them with the suggested X-Remote-* headers. Kept in the data dir so a
// restart reuses them.
import { createCA, createClientCert, loadOrCreate } from '../pki/certs';

export const FRONT_PROXY_CLIENT = 'front-proxy-client';

export async function frontProxyFlags(dir: string): Promise<string[]> {
  const ca = await loadOrCreate(dir, 'front-proxy-ca', () => createCA('front-proxy-ca'));
  const client = await loadOrCreate(dir, FRONT_PROXY_CLIENT, () =>
    createClientCert(ca, { commonName: FRONT_PROXY_CLIENT }, 3650),
  );
  return [
    `--requestheader-client-ca-file=${ca.certFile}`,
    `--requestheader-allowed-names=${FRONT_PROXY_CLIENT}`,
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    `--proxy-client-cert-file=${client.certFile}`,
    `--proxy-client-key-file=${client.keyFile}`,
  ];
}
