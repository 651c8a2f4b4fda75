// A pod's DNS resolver configuration, as kubelet's GetPodDNS forms it from its
// --cluster-dns, --cluster-domain and --resolv-conf and the pod's dnsPolicy and
// dnsConfig: the nameservers, search domains and options the runtime writes
// into the pod's /etc/resolv.conf (CRI DNSConfig). Pure: the host's resolv.conf
// comes in as text, and what kubelet reports as events comes back as warnings.
import { readFileSync } from 'node:fs';

/** kubelet's flags of the same names (KubeletConfiguration clusterDNS, clusterDomain, resolvConf). */
export interface ClusterDNSSettings {
  clusterDNS: string[];
  /** Empty: no cluster search domains (kubelet's default; kubeadm sets cluster.local). */
  clusterDomain: string;
  /** Empty: pods of policy Default get a localhost nameserver and search "." */
  resolvConf: string;
}

/** The CRI DNSConfig: nameserver, search and options lines of a resolv.conf. */
export interface ResolverConfig {
  servers: string[];
  searches: string[];
  options: string[];
}

/** A Warning event kubelet records while forming the config (on the pod, or on the node). */
export interface DNSWarning {
  on: 'pod' | 'node';
  reason: 'DNSConfigForming' | 'MissingClusterDNS';
  message: string;
}

// The API's limits (validation.MaxDNSNameservers, MaxDNSSearchPathsExpanded,
// MaxDNSSearchListCharsExpanded: ExpandedDNSConfig is GA) and a DNS-1123 subdomain's length.
const MAX_NAMESERVERS = 3;
const MAX_SEARCH_PATHS = 32;
const MAX_SEARCH_LIST_CHARS = 2048;
const MAX_SEARCH_PATH_CHARS = 253;
/** kubelet reads at most this much of the host's resolv.conf. */
const MAX_RESOLV_CONF_BYTES = 10 << 20;
const CLUSTER_FIRST_OPTIONS = ['ndots:5'];

/**
 * kubelet's reading of a resolv.conf: nameserver lines add up, the last search line and the
 * last options line win, search domains lose a trailing dot, lines starting with # are comments.
 */
export function parseResolvConf(text: string): ResolverConfig {
  const out: ResolverConfig = { servers: [], searches: [], options: [] };
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.startsWith('#')) continue;
    const [key, ...rest] = trimmed.split(/\s+/);
    if (key === 'nameserver' && rest[0]) out.servers.push(rest[0]);
    else if (key === 'search') out.searches = rest.map((s) => s.replace(/\.$/, ''));
    else if (key === 'options') out.options = rest;
  }
  return out;
}

/** The host's resolv.conf as kubelet reads it; throws when it cannot be read (the sandbox fails). */
export function readHostResolvConf(path: string): string {
  if (!path) return '';
  return readFileSync(path).subarray(0, MAX_RESOLV_CONF_BYTES).toString('utf8');
}

/**
 * kubelet's CheckLimitsForResolvConf (every 30 s, a Warning event on the Node): why the host's
 * resolv.conf cannot give every pod its search line (the cluster's three domains counted), or
 * undefined. text is the file, or the error reading it.
 */
export function hostResolvConfProblem(
  path: string,
  text: string | Error,
  clusterDomain: string,
): string | undefined {
  if (text instanceof Error) return text.message;
  const { searches } = parseResolvConf(text);
  const maxDomains = MAX_SEARCH_PATHS - (clusterDomain ? 3 : 0);
  if (searches.length > maxDomains)
    return `Resolv.conf file '${path}' contains search line consisting of more than ${maxDomains} domains!`;
  if (searches.some((s) => s.length > MAX_SEARCH_PATH_CHARS))
    return `Resolv.conf file "${path}" contains a search path which length is more than allowed ${MAX_SEARCH_PATH_CHARS} chars!`;
  if (searches.join(' ').length > MAX_SEARCH_LIST_CHARS)
    return `Resolv.conf file '${path}' contains search line which length is more than allowed ${MAX_SEARCH_LIST_CHARS} chars!`;
  return undefined;
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}

/** Options by name, the pod's dnsConfig winning; value-less ones bare ("edns0"). */
function mergeOptions(base: string[], extra: { name: string; value?: string }[]): string[] {
  const byName = new Map<string, string>();
  for (const o of base) {
    const i = o.indexOf(':');
    byName.set(i < 0 ? o : o.slice(0, i), i < 0 ? '' : o.slice(i + 1));
  }
  for (const o of extra) byName.set(o.name, o.value ?? '');
  return [...byName].map(([name, value]) => (value ? `${name}:${value}` : name));
}

function fitSearches(searches: string[], warn: (m: string) => void): string[] {
  let out = searches.slice(0, MAX_SEARCH_PATHS);
  let exceeded = out.length < searches.length;
  const kept = out.filter((s) => s.length <= MAX_SEARCH_PATH_CHARS);
  exceeded ||= kept.length < out.length;
  out = kept;
  // The joined line over its limit: whole domains cut from the end until it fits.
  let length = out.join(' ').length;
  if (length > MAX_SEARCH_LIST_CHARS) {
    exceeded = true;
    while (out.length && length > MAX_SEARCH_LIST_CHARS) length -= out.pop()!.length + 1;
  }
  if (exceeded)
    warn(
      `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${out.join(' ')}`,
    );
  return out;
}

/**
 * kubelet's GetPodDNS. ClusterFirst (and ClusterFirstWithHostNet): the cluster nameservers,
 * the pod's namespace, svc and cluster domains before the host's search domains, ndots:5;
 * ClusterFirst on the host network, and ClusterFirst without --cluster-dns (a
 * MissingClusterDNS warning), are Default: the host's resolv.conf; None starts empty. The
 * pod's dnsConfig is then added, and the result cut to the resolver's limits.
 */
export function podResolverConfig(
  pod: any,
  s: ClusterDNSSettings,
  hostResolvConf: string,
  nodeIPs: string[] = [],
): { config: ResolverConfig; warnings: DNSWarning[] } {
  const warnings: DNSWarning[] = [];
  const host = parseResolvConf(hostResolvConf);
  const spec = pod.spec ?? {};
  let policy: string = spec.dnsPolicy ?? 'ClusterFirst';
  if (policy === 'ClusterFirst' && spec.hostNetwork) policy = 'Default';
  else if (policy === 'ClusterFirstWithHostNet') policy = 'ClusterFirst';

  let config: ResolverConfig = host;
  if (policy === 'None') config = { servers: [], searches: [], options: [] };
  else if (policy === 'ClusterFirst' && s.clusterDNS.length) {
    const d = s.clusterDomain;
    const ns = pod.metadata?.namespace ?? 'default';
    config = {
      servers: [...s.clusterDNS],
      searches: d ? unique([`${ns}.svc.${d}`, `svc.${d}`, d, ...host.searches]) : host.searches,
      options: [...CLUSTER_FIRST_OPTIONS],
    };
  } else {
    if (policy === 'ClusterFirst') {
      const note =
        'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.';
      const md = pod.metadata ?? {};
      warnings.push({ on: 'node', reason: 'MissingClusterDNS', message: note });
      warnings.push({
        on: 'pod',
        reason: 'MissingClusterDNS',
        message: `pod: "${md.name}_${md.namespace}(${md.uid})". ${note}`,
      });
    }
    // --resolv-conf="": the local machine's nameserver, no search.
    if (!s.resolvConf) {
      const servers = nodeIPs.map((ip) => (ip.includes(':') ? '::1' : '127.0.0.1'));
      config = { servers: servers.length ? servers : ['127.0.0.1'], searches: ['.'], options: [] };
    }
  }

  const extra = spec.dnsConfig;
  if (extra)
    config = {
      servers: unique([...config.servers, ...(extra.nameservers ?? [])]),
      searches: unique([...config.searches, ...(extra.searches ?? [])]),
      options: mergeOptions(config.options, extra.options ?? []),
    };

  const warn = (message: string) => warnings.push({ on: 'pod', reason: 'DNSConfigForming', message });
  let servers = config.servers;
  if (servers.length > MAX_NAMESERVERS) {
    servers = servers.slice(0, MAX_NAMESERVERS);
    warn(
      `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${servers.join(' ')}`,
    );
  }
  return {
    config: { servers, searches: fitSearches(config.searches, warn), options: config.options },
    warnings,
  };
}
