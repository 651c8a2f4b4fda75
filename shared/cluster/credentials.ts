// Credentials of the cluster's components: client certificates from the
// apiserver's generated cluster CA, written as kubeconfigs (the controller
// manager as system:kube-controller-manager, each node as system:node:<name>).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClientCert, loadOrCreate, type SubjectInfo } from '../pki/certs';
import { writeKubeconfig } from '../client/kubeconfig';

export interface ComponentCredentialOptions {
  /** The apiserver's --cert-dir, holding ca.crt and ca.key. */
  certDir: string;
  server: string;
  subject: SubjectInfo;
  /** Where the kubeconfig goes; the key pair is kept beside it. */
  kubeconfig: string;
}

export async function writeComponentKubeconfig(o: ComponentCredentialOptions): Promise<void> {
  const caCert = join(o.certDir, 'ca.crt');
  const caKey = join(o.certDir, 'ca.key');
  if (!existsSync(caCert) || !existsSync(caKey))
    throw new Error(`no cluster CA in ${o.certDir} (the apiserver creates it on first start)`);
  const ca = { certPem: readFileSync(caCert, 'utf8'), keyPem: readFileSync(caKey, 'utf8') };
  const dir = join(o.kubeconfig, '..');
  const base = o.subject.commonName.replace(/[^a-zA-Z0-9.-]+/g, '-');
  const pair = await loadOrCreate(dir, base, () => createClientCert(ca, o.subject, 3650));
  writeKubeconfig(
    o.kubeconfig,
    {
      server: o.server,
      caPem: ca.certPem,
      certPem: pair.certPem,
      keyPem: pair.keyPem,
      userName: o.subject.commonName,
    },
    'json',
  );
}
