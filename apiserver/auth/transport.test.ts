// The listener's TLS and HTTP rules with real TLS clients: minimum version,
// cipher suites, SNI certificates, HSTS and CORS.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tls from 'node:tls';
import { createCA, createServingCert } from '../../shared/pki/certs';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';
import { cipherString, minTLSVersion } from './transport';

function handshake(
  port: number,
  opts: tls.ConnectionOptions,
): Promise<{ protocol: string | null; cipher: string; subject: string }> {
  return new Promise((resolve, reject) => {
    const s = tls.connect(
      { host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'], ...opts },
      () => {
        const out = {
          protocol: s.getProtocol(),
          cipher: s.getCipher().name,
          subject: s.getPeerX509Certificate()?.subject ?? '',
        };
        s.end();
        resolve(out);
      },
    );
    s.on('error', reject);
  });
}

describe('transport: TLS options, HSTS and CORS', function () {
  this.timeout(60_000);

  it('maps flag values and refuses unknown ones with Kubernetes wording', () => {
    assert.equal(minTLSVersion('VersionTLS12'), 'TLSv1.2');
    assert.throws(() => minTLSVersion('TLS1.2'), /unexpected TLS version "TLS1.2"/);
    assert.match(cipherString(['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'])!, /ECDHE-RSA-AES128-GCM-SHA256/);
    assert.throws(
      () => cipherString(['TLS_NOPE']),
      /^Error: Cipher suite TLS_NOPE not supported or doesn't exist$/,
    );
  });

  describe('a server with every option', () => {
    let srv: TestAPIServer;
    let api: ReturnType<typeof testRequester>;
    let dir: string;
    before(async () => {
      const ca = await createCA('sni-ca');
      const sni = await createServingCert(ca, 'sni.example.com', { dnsNames: ['sni.example.com'], ips: [] });
      dir = (await import('node:fs')).mkdtempSync(join((await import('node:os')).tmpdir(), 'tkube-sni-'));
      writeFileSync(join(dir, 'sni.crt'), sni.certPem);
      writeFileSync(join(dir, 'sni.key'), sni.keyPem);
      srv = await startTestAPIServer({
        tlsMinVersion: 'VersionTLS12',
        tlsCipherSuites: ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256'],
        tlsSniCertKey: [
          `${join(dir, 'sni.crt')},${join(dir, 'sni.key')}`,
          `${join(dir, 'sni.crt')},${join(dir, 'sni.key')}:*.wild.test`,
        ],
        strictTransportSecurityDirectives: ['max-age=31536000', 'includeSubDomains', 'preload'],
        corsAllowedOrigins: ['^https://allowed\\.example\\.com$'],
      });
      api = testRequester(srv.config);
    });
    after(async () => {
      await api.close();
      await srv.stop();
      (await import('node:fs')).rmSync(dir, { recursive: true, force: true });
    });

    it('refuses clients below the minimum version', async () => {
      await assert.rejects(
        handshake(srv.port, { minVersion: 'TLSv1.1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' }),
      );
      const ok = await handshake(srv.port, { maxVersion: 'TLSv1.2' });
      assert.equal(ok.protocol, 'TLSv1.2');
      assert.match(ok.cipher, /^ECDHE-(RSA|ECDSA)-AES128-GCM-SHA256$/);
      await assert.rejects(
        handshake(srv.port, {
          maxVersion: 'TLSv1.2',
          ciphers: 'ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES256-GCM-SHA384',
        }),
      );
      assert.equal((await handshake(srv.port, {})).protocol, 'TLSv1.3');
    });

    it('serves the SNI certificate for its names, the default one otherwise', async () => {
      assert.match(
        (await handshake(srv.port, { servername: 'sni.example.com' })).subject,
        /CN=sni.example.com/,
      );
      assert.match((await handshake(srv.port, { servername: 'a.wild.test' })).subject, /CN=sni.example.com/);
      assert.match((await handshake(srv.port, { servername: 'localhost' })).subject, /CN=kube-apiserver/);
    });

    it('sends HSTS on every response', async () => {
      for (const path of ['/version', '/api/v1/namespaces/default/configmaps/nope', '/nothing'])
        assert.equal(
          (await api('GET', path)).headers['strict-transport-security'],
          'max-age=31536000; includeSubDomains; preload',
        );
    });

    it('answers CORS preflights with 204 and decorates allowed origins only', async () => {
      const pre = await api('OPTIONS', '/api/v1/namespaces', {
        headers: { origin: 'https://allowed.example.com' },
      });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers['access-control-allow-origin'], 'https://allowed.example.com');
      assert.equal(pre.headers['access-control-allow-methods'], 'POST, GET, OPTIONS, PUT, DELETE, PATCH');
      assert.equal(
        pre.headers['access-control-allow-headers'],
        'Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since',
      );
      assert.equal(pre.headers['access-control-expose-headers'], 'Date');
      assert.equal(pre.headers['access-control-allow-credentials'], 'true');
      const get = await api('GET', '/version', { headers: { origin: 'https://allowed.example.com' } });
      assert.equal(get.status, 200);
      assert.equal(get.headers['access-control-allow-origin'], 'https://allowed.example.com');
      const other = await api('GET', '/version', { headers: { origin: 'https://evil.example.com' } });
      assert.equal(other.headers['access-control-allow-origin'], undefined);
    });
  });

  it('refuses unknown cipher suites and TLS versions at startup', async () => {
    await assert.rejects(
      startTestAPIServer({ tlsCipherSuites: ['TLS_BOGUS'] }),
      /Cipher suite TLS_BOGUS not supported/,
    );
    await assert.rejects(startTestAPIServer({ tlsMinVersion: 'VersionTLS99' }), /unexpected TLS version/);
  });
});
