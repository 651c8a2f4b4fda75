// HTTP and TLS rules of the listener: --tls-min-version, --tls-cipher-suites,
// --tls-sni-cert-key, --strict-transport-security-directives, --cors-allowed-origins.
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import type { SecureVersion } from 'node:tls';
import type { Security, SecurityDeps } from './types';
import type { Req, Res } from '../server/http';

const TLS_VERSIONS: Record<string, SecureVersion> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
};

/** Go's crypto/tls cipher suite names and their OpenSSL names. */
const CIPHER_SUITES: Record<string, string> = {
  TLS_RSA_WITH_RC4_128_SHA: 'RC4-SHA',
  TLS_RSA_WITH_3DES_EDE_CBC_SHA: 'DES-CBC3-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA256: 'AES128-SHA256',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_RC4_128_SHA: 'ECDHE-ECDSA-RC4-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_RC4_128_SHA: 'ECDHE-RSA-RC4-SHA',
  TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA: 'ECDHE-RSA-DES-CBC3-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_AES_128_GCM_SHA256: 'TLS_AES_128_GCM_SHA256',
  TLS_AES_256_GCM_SHA384: 'TLS_AES_256_GCM_SHA384',
  TLS_CHACHA20_POLY1305_SHA256: 'TLS_CHACHA20_POLY1305_SHA256',
};
/** Go does not let TLS 1.3 suites be configured: they stay on whatever the list says. */
const TLS13_SUITES = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];

export function minTLSVersion(name: string | undefined): SecureVersion | undefined {
  if (!name) return undefined;
  const v = TLS_VERSIONS[name];
  if (!v)
    throw new Error(
      `unexpected TLS version "${name}" (must be one of: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13)`,
    );
  return v;
}

/** The OpenSSL cipher string for Go suite names; throws for unknown names. */
export function cipherString(names: string[] | undefined): string | undefined {
  if (!names?.length) return undefined;
  const out = new Set<string>(TLS13_SUITES);
  for (const n of names) {
    const o = CIPHER_SUITES[n];
    if (!o) throw new Error(`Cipher suite ${n} not supported or doesn't exist`);
    out.add(o);
  }
  return [...out].join(':');
}

interface SNIEntry {
  names: string[];
  context: tls.SecureContext;
}

/** Names a certificate serves: its DNS SANs, else its CN. */
function certNames(certPem: string): string[] {
  const c = new X509Certificate(certPem);
  const dns = (c.subjectAltName ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4).toLowerCase());
  if (dns.length) return dns;
  const cn = /CN=([^\n,]+)/.exec(c.subject)?.[1];
  return cn ? [cn.toLowerCase()] : [];
}

function nameMatches(pattern: string, host: string): boolean {
  if (pattern === host) return true;
  if (pattern.startsWith('*.')) {
    const dot = host.indexOf('.');
    return dot > 0 && host.slice(dot + 1) === pattern.slice(2);
  }
  return false;
}

/** --tls-sni-cert-key values: "cert,key" or "cert,key:name1,name2". */
export function parseSNICertKeys(values: string[], base: tls.SecureContextOptions): SNIEntry[] {
  return values.map((v) => {
    const colon = v.indexOf(':');
    const pair = (colon < 0 ? v : v.slice(0, colon)).split(',');
    const explicit =
      colon < 0
        ? []
        : v
            .slice(colon + 1)
            .split(',')
            .map((n) => n.trim().toLowerCase())
            .filter(Boolean);
    if (pair.length !== 2 || !pair[0] || !pair[1])
      throw new Error(`invalid --tls-sni-cert-key "${v}": expected "certfile,keyfile[:name,...]"`);
    const cert = readFileSync(pair[0], 'utf8');
    const key = readFileSync(pair[1], 'utf8');
    const names = explicit.length ? explicit : certNames(cert);
    return { names, context: tls.createSecureContext({ ...base, cert, key }) };
  });
}

const HSTS_DIRECTIVE = /^(max-age=\d+|includeSubDomains|preload)$/;

const CORS_METHODS = 'POST, GET, OPTIONS, PUT, DELETE, PATCH';
const CORS_HEADERS =
  'Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since';
const CORS_EXPOSED = 'Date';

export async function buildTransport(
  deps: SecurityDeps,
): Promise<Pick<Security, 'httpFilter' | 'tlsOptions'>> {
  const v = deps.values;
  const minVersion = minTLSVersion(v.tlsMinVersion as string | undefined);
  const ciphers = cipherString(v.tlsCipherSuites as string[] | undefined);
  const base: tls.SecureContextOptions = {
    ...(minVersion ? { minVersion } : {}),
    ...(ciphers ? { ciphers } : {}),
    ...(deps.tls.clientCaPem ? { ca: deps.tls.clientCaPem } : {}),
  };
  const tlsOptions: Security['tlsOptions'] = {
    ...(minVersion ? { minVersion } : {}),
    ...(ciphers ? { ciphers } : {}),
  };
  const sni = parseSNICertKeys(((v.tlsSniCertKey as string[] | undefined) ?? []).filter(Boolean), base);
  if (sni.length) {
    tlsOptions.SNICallback = (servername, cb) => {
      const host = servername.toLowerCase();
      const exact = sni.find((e) => e.names.includes(host));
      const wild = exact ?? sni.find((e) => e.names.some((n) => nameMatches(n, host)));
      cb(null, wild?.context);
    };
  }

  const hsts = ((v.strictTransportSecurityDirectives as string[] | undefined) ?? []).filter(Boolean);
  for (const d of hsts)
    if (!HSTS_DIRECTIVE.test(d))
      throw new Error(
        '--strict-transport-security-directives invalid, allowed values: max-age=expireTime, includeSubDomains, preload. see https://tools.ietf.org/html/rfc6797#section-6.1 for more information',
      );
  const hstsValue = hsts.join('; ');

  const origins = ((v.corsAllowedOrigins as string[] | undefined) ?? []).filter(Boolean).map((p) => {
    try {
      return new RegExp(p.toLowerCase());
    } catch (err) {
      throw new Error(`--cors-allowed-origins has an invalid regular expression: ${(err as Error).message}`, {
        cause: err,
      });
    }
  });

  let httpFilter: Security['httpFilter'];
  if (hstsValue || origins.length) {
    httpFilter = (req: Req, res: Res): boolean => {
      if (hstsValue) res.setHeader('Strict-Transport-Security', hstsValue);
      if (!origins.length) return false;
      const origin = req.headers.origin;
      if (typeof origin !== 'string' || !origin) return false;
      const lower = origin.toLowerCase();
      if (!origins.some((re) => re.test(lower))) return false;
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Methods', CORS_METHODS);
      res.setHeader('Access-Control-Allow-Headers', CORS_HEADERS);
      res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSED);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      if (req.method === 'OPTIONS') {
        res.writeHead(204);
        res.end();
        return true;
      }
      return false;
    };
  }
  return { ...(httpFilter ? { httpFilter } : {}), ...(Object.keys(tlsOptions).length ? { tlsOptions } : {}) };
}
