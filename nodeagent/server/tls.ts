// The serving certificate of the secure port: --tls-cert-file and
// --tls-private-key-file, or (like the kubelet) a self-signed pair kept in
// --cert-dir as kubelet.crt / kubelet.key: a CA "<node>-ca@<time>" and a
// serving certificate for the node's names and addresses, the CA appended.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerOptions } from 'node:https';
import type { SecureVersion } from 'node:tls';
import { certCovers, createCA, createServingCert, loadOrCreate } from '../../shared/pki/certs';
import type { NodeAgentConfig } from '../app/config';

export interface ServingCert {
  certPem: string;
  keyPem: string;
  certFile?: string;
  keyFile?: string;
  /** Client certificates signed by these are accepted (--client-ca-file). */
  clientCaPem?: string;
}

/** The flags the serving certificate comes from. */
export type ServingCertConfig = Pick<
  NodeAgentConfig,
  'certDir' | 'tlsCertFile' | 'tlsPrivateKeyFile' | 'clientCAFile' | 'nodeName' | 'hostname'
>;

/** The certificate of the node's secure port, self-signed ones covering its names and nodeIPs. */
export async function servingCertificate(o: ServingCertConfig, nodeIPs: string[]): Promise<ServingCert> {
  const clientCaPem = o.clientCAFile ? readFileSync(o.clientCAFile, 'utf8') : undefined;
  if (o.tlsCertFile || o.tlsPrivateKeyFile) {
    if (!o.tlsCertFile || !o.tlsPrivateKeyFile)
      throw new Error('--tls-cert-file and --tls-private-key-file must be given together');
    return {
      certPem: readFileSync(o.tlsCertFile, 'utf8'),
      keyPem: readFileSync(o.tlsPrivateKeyFile, 'utf8'),
      certFile: o.tlsCertFile,
      keyFile: o.tlsPrivateKeyFile,
      clientCaPem,
    };
  }
  const dnsNames = [...new Set([o.hostname, o.nodeName, 'localhost'])];
  const ips = [...new Set(['127.0.0.1', ...nodeIPs])];
  const make = async () => {
    const stamp = Math.floor(Date.now() / 1000);
    const ca = await createCA(`${o.nodeName}-ca@${stamp}`, 365);
    const leaf = await createServingCert(ca, `${o.nodeName}@${stamp}`, { dnsNames, ips, days: 365 });
    return { certPem: leaf.certPem + ca.certPem, keyPem: leaf.keyPem };
  };
  let pair = await loadOrCreate(o.certDir, 'kubelet', make);
  if (!certCovers(pair.certPem, dnsNames, ips)) {
    // Other names or addresses now (or close to expiry): make a new pair.
    rmSync(join(o.certDir, 'kubelet.crt'), { force: true });
    rmSync(join(o.certDir, 'kubelet.key'), { force: true });
    pair = await loadOrCreate(o.certDir, 'kubelet', make);
  }
  return {
    certPem: pair.certPem,
    keyPem: pair.keyPem,
    certFile: pair.certFile,
    keyFile: pair.keyFile,
    clientCaPem,
  };
}

const TLS_VERSIONS: Record<string, SecureVersion> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
};

/** The secure port's TLS: the serving pair, client certificates asked for when --client-ca-file is set. */
export function secureServerOptions(tls: ServingCert, tlsMinVersion?: string): ServerOptions {
  return {
    cert: tls.certPem,
    key: tls.keyPem,
    ...(tls.clientCaPem ? { ca: tls.clientCaPem, requestCert: true, rejectUnauthorized: false } : {}),
    ...(tlsMinVersion ? { minVersion: TLS_VERSIONS[tlsMinVersion] } : {}),
  };
}
