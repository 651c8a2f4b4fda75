// Serving certificates and the admin credentials of the apiserver: given files (flags, or
// a serving certificate alone in --cert-dir), or a cluster CA and serving certificate
// generated into --cert-dir.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import {
  certCovers,
  signedBy,
  createCA,
  createClientCert,
  createServingCert,
  loadOrCreate,
  type KeyPair,
} from '../../shared/pki/certs';

export interface ServingTLS {
  certPem: string;
  keyPem: string;
  /** CA bundle clients need to verify the serving certificate. */
  caPem: string;
  /** CA that signs client certificates the server accepts (x509 authentication). */
  clientCaPem?: string;
  /** The generated cluster CA, when tkube made one (signs admin and node certificates). */
  clusterCA?: KeyPair & { certFile: string; keyFile: string };
}

export interface TLSOptions {
  certDir: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  clientCaFile?: string;
  /** Names and IPs the generated serving certificate must cover. */
  dnsNames: string[];
  ips: string[];
  /**
   * The IPs a kept certificate must still cover, else a new one is made: the `kubernetes`
   * Service's ClusterIP and the advertise address (a new --service-cluster-ip-range or
   * address on a reused --cert-dir); the host's other addresses come and go. Default 127.0.0.1.
   */
  requiredIPs?: string[];
}

export function localAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (!a.internal && a.family === 'IPv4') out.push(a.address);
  }
  return out;
}

export function defaultServingNames(
  serviceIP: string | undefined,
  extraIPs: string[],
): { dnsNames: string[]; ips: string[]; requiredIPs: string[] } {
  const dnsNames = [
    'localhost',
    hostname(),
    'kubernetes',
    'kubernetes.default',
    'kubernetes.default.svc',
    'kubernetes.default.svc.cluster.local',
  ];
  const ips = [
    ...new Set(['127.0.0.1', '::1', ...(serviceIP ? [serviceIP] : []), ...localAddresses(), ...extraIPs]),
  ];
  const requiredIPs = [...new Set(['127.0.0.1', ...(serviceIP ? [serviceIP] : []), ...extraIPs])];
  return { dnsNames, ips, requiredIPs };
}

export async function setupServingTLS(o: TLSOptions): Promise<ServingTLS> {
  const clientCaFromFile = o.clientCaFile ? readFileSync(o.clientCaFile, 'utf8') : undefined;
  if (o.tlsCertFile && o.tlsPrivateKeyFile) {
    const certPem = readFileSync(o.tlsCertFile, 'utf8');
    return {
      certPem,
      keyPem: readFileSync(o.tlsPrivateKeyFile, 'utf8'),
      caPem: certPem,
      clientCaPem: clientCaFromFile,
    };
  }
  const given = givenServingCert(o.certDir);
  if (given) {
    // A serving certificate put in --cert-dir by someone else (envtest's) and no cluster CA:
    // used as given, as kube-apiserver does, and no CA is made — the loopback client
    // authenticates with an in-memory token, not a certificate.
    return { ...given, caPem: given.certPem, clientCaPem: clientCaFromFile };
  }
  const ca = await loadOrCreate(o.certDir, 'ca', () => createCA('kubernetes-ca'));
  let serving = await loadOrCreate(o.certDir, 'apiserver', () =>
    createServingCert(ca, 'kube-apiserver', { dnsNames: o.dnsNames, ips: o.ips }),
  );
  // One the cert dir's CA issued is tkube's own, made again once it no longer covers what it
  // must; one put there by someone else beside tkube's CA is used as given, unless it lacks
  // even localhost.
  const covered = signedBy(serving.certPem, ca.certPem)
    ? certCovers(serving.certPem, o.dnsNames, o.requiredIPs ?? ['127.0.0.1'])
    : certCovers(serving.certPem, o.dnsNames.slice(0, 1), ['127.0.0.1']);
  if (!covered) {
    const fresh = await createServingCert(ca, 'kube-apiserver', { dnsNames: o.dnsNames, ips: o.ips });
    writeFileSync(serving.keyFile, fresh.keyPem, { mode: 0o600 });
    writeFileSync(serving.certFile, fresh.certPem, { mode: 0o600 });
    serving = { ...serving, ...fresh };
  }
  return {
    certPem: serving.certPem,
    keyPem: serving.keyPem,
    caPem: ca.certPem,
    clientCaPem: clientCaFromFile ? `${clientCaFromFile}\n${ca.certPem}` : ca.certPem,
    clusterCA: ca,
  };
}

/**
 * The serving certificate of a cert dir that holds one but no cluster CA of tkube's, when it
 * covers localhost and 127.0.0.1 (else tkube makes its CA and a certificate of its own).
 */
function givenServingCert(certDir: string): KeyPair | undefined {
  const [certFile, keyFile] = [join(certDir, 'apiserver.crt'), join(certDir, 'apiserver.key')];
  if (existsSync(join(certDir, 'ca.crt')) || !existsSync(certFile) || !existsSync(keyFile)) return undefined;
  const certPem = readFileSync(certFile, 'utf8');
  if (!certCovers(certPem, ['localhost'], ['127.0.0.1'])) return undefined;
  return { certPem, keyPem: readFileSync(keyFile, 'utf8') };
}

/** The admin client certificate (CN kubernetes-admin, O system:masters), kept in the cert dir. */
export async function adminCredentials(tls: ServingTLS, certDir: string): Promise<KeyPair | undefined> {
  if (!tls.clusterCA) return undefined;
  return loadOrCreate(certDir, 'admin', () =>
    createClientCert(
      tls.clusterCA!,
      { commonName: 'kubernetes-admin', organizations: ['system:masters'] },
      3650,
    ),
  );
}

export const certPath = (certDir: string, name: string) => join(certDir, name);
