// The /etc/hosts file the kubelet manages for a pod (<pod dir>/etc-hosts,
// bind-mounted into each container that does not mount its own): localhost
// entries and the pod's own name (with its FQDN when it has a subdomain), or
// the node's hosts file for host-network pods, then the pod's hostAliases.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** kubelet's GeneratePodHostNameAndDomain: spec.hostname or the pod name (63 chars), and the subdomain's domain. */
export function podHostnameAndDomain(pod: any, clusterDomain: string | undefined): [string, string] {
  let host: string = pod.spec?.hostname || pod.metadata.name;
  if (host.length > 63) host = host.slice(0, 63).replace(/[-.]+$/, '');
  const sub = pod.spec?.subdomain;
  const domain = sub && clusterDomain ? `${sub}.${pod.metadata.namespace}.svc.${clusterDomain}` : '';
  return [host, domain];
}

/** The content kubelet's managedHostsFileContent writes. */
export function hostsFileContent(
  pod: any,
  podIPs: string[],
  clusterDomain?: string,
  nodeHosts?: string,
): string {
  let out: string;
  if (pod.spec?.hostNetwork) {
    out = `# Kubernetes-managed hosts file (host network).\n${nodeHosts ?? ''}`;
  } else {
    out =
      '# Kubernetes-managed hosts file.\n' +
      '127.0.0.1\tlocalhost\n' +
      '::1\tlocalhost ip6-localhost ip6-loopback\n' +
      'fe00::0\tip6-localnet\n' +
      'fe00::0\tip6-mcastprefix\n' +
      'fe00::1\tip6-allnodes\n' +
      'fe00::2\tip6-allrouters\n';
    const [host, domain] = podHostnameAndDomain(pod, clusterDomain);
    for (const ip of podIPs) out += domain ? `${ip}\t${host}.${domain}\t${host}\n` : `${ip}\t${host}\n`;
  }
  const aliases: any[] = pod.spec?.hostAliases ?? [];
  if (aliases.length) {
    out += '\n# Entries added by HostAliases.\n';
    for (const a of aliases) out += `${a.ip}\t${(a.hostnames ?? []).join('\t')}\n`;
  }
  return out;
}

/** Writes the pod's hosts file once (kubelet leaves an existing one alone); its path. */
export function ensureHostsFile(
  path: string,
  pod: any,
  podIPs: string[],
  clusterDomain?: string,
  nodeHostsPath = '/etc/hosts',
): string {
  if (existsSync(path)) return path;
  let nodeHosts = '';
  if (pod.spec?.hostNetwork) {
    try {
      nodeHosts = readFileSync(nodeHostsPath, 'utf8');
    } catch {
      // no hosts file on the node
    }
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, hostsFileContent(pod, podIPs, clusterDomain, nodeHosts), { mode: 0o644 });
  return path;
}
