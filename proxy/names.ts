// Chain and set names, as kube-proxy derives them (so rules read the same in
// `nft list` / `iptables-save` as on a kube-proxy node): a hash of the service
// port (and endpoint) keeps names unique and within the kernel's limits.
import { createHash } from 'node:crypto';
import type { ProxyEndpoint, ServicePort } from './model';

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 (Go's base32.StdEncoding) of a sha256, first n characters. */
function hash32(text: string, n: number): string {
  const bytes = createHash('sha256').update(text).digest();
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5 && out.length < n) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
    if (out.length >= n) break;
  }
  return out;
}

// iptables: <prefix>-SVC-<16 of base32(sha256(ServicePortName + protocol [+ ip:port]))>.
export const iptSvcHash = (sp: ServicePort) => hash32(sp.name + sp.protocol, 16);
export const iptSepHash = (sp: ServicePort, ep: ProxyEndpoint) =>
  hash32(`${sp.name}${sp.protocol}${ep.ip}:${ep.port}`, 16);

/** nftables' chain name limit (256) minus the longest prefix ("affinity-"). */
const NFT_BASE_MAX = 240;

function nftBase(name: string): string {
  const out = `${hash32(name, 8)}-${name}`;
  return out.length > NFT_BASE_MAX ? `${out.slice(0, NFT_BASE_MAX - 3)}...` : out;
}

/** "ns/svc/proto/port" hashed: the base of service-, local-, external- chains. */
export const nftServiceBase = (sp: ServicePort) =>
  nftBase(`${sp.namespace}/${sp.service}/${sp.protocol}/${sp.portName}`);
/** "…__ip/port": the base of endpoint- chains and affinity- sets. */
export const nftEndpointBase = (sp: ServicePort, ep: ProxyEndpoint) =>
  nftBase(`${sp.namespace}/${sp.service}/${sp.protocol}/${sp.portName}__${ep.ip}/${ep.port}`);
