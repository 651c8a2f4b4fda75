// HTTP and TLS rules of the listener: --tls-min-version, --tls-cipher-suites,
// --tls-sni-cert-key, --strict-transport-security-directives, --cors-allowed-origins.
import type { Security, SecurityDeps } from './types';

export async function buildTransport(
  _deps: SecurityDeps,
): Promise<Pick<Security, 'httpFilter' | 'tlsOptions'>> {
  return {};
}
