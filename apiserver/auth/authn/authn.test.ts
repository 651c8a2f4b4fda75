// Every authentication method against a real HTTPS apiserver (SPEC.md
// "Authentication"): the right user (SelfSubjectReview) for good credentials,
// 401 Unauthorized for forged or expired ones, anonymous under RBAC.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCA, type KeyPair } from '../../../shared/pki/certs';
import { writeKubeconfig } from '../../../shared/client/kubeconfig';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';
import { TokenIssuer } from '../serviceaccount/tokens';
import { loadPrivateKey } from '../serviceaccount/keys';
import { createPublicKey } from 'node:crypto';
import {
  anonymousConfig,
  certConfig,
  sendJSON,
  signToken,
  startHTTPS,
  tokenRequester,
  waitReady,
  whoami,
  withHeaders,
  type LocalHTTPS,
  type Requester,
} from './test-support';

describe('authentication methods', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let admin: Requester;
  let dir: string;
  let proxyCA: KeyPair;
  let oidc: LocalHTTPS;
  let webhook: LocalHTTPS;
  const oidcKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const oidcKid = 'k1';
  const now = () => Math.floor(Date.now() / 1000);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-authn-'));
    const tokenFile = join(dir, 'tokens.csv');
    writeFileSync(tokenFile, 'static-token-1,alice,uid-alice,"dev,qa"\nstatic-token-2,bob,uid-bob\n');
    proxyCA = await createCA('front-proxy-ca');
    writeFileSync(join(dir, 'front-proxy-ca.crt'), proxyCA.certPem);

    oidc = await startHTTPS((req, res) => {
      if (req.url === '/.well-known/openid-configuration')
        return sendJSON(res, 200, { issuer: oidc.url, jwks_uri: `${oidc.url}/keys` });
      if (req.url === '/keys') {
        const jwk = oidcKey.publicKey.export({ format: 'jwk' });
        return sendJSON(res, 200, { keys: [{ ...jwk, kid: oidcKid, use: 'sig', alg: 'RS256' }] });
      }
      sendJSON(res, 404, {});
    });
    writeFileSync(join(dir, 'oidc-ca.crt'), oidc.ca.certPem);

    webhook = await startHTTPS((_req, res, body) => {
      const token = body?.spec?.token;
      const ok = token === 'webhook-good';
      sendJSON(res, 200, {
        apiVersion: body.apiVersion,
        kind: 'TokenReview',
        status: ok
          ? {
              authenticated: true,
              user: { username: 'wanda', uid: 'w-1', groups: ['hooks'], extra: { scope: ['a'] } },
            }
          : { authenticated: false, error: 'unknown token' },
      });
    });
    writeKubeconfig(join(dir, 'webhook.kubeconfig'), {
      server: `${webhook.url}/authenticate`,
      caPem: webhook.ca.certPem,
    });

    srv = await startTestAPIServer({
      authorizationMode: ['RBAC'],
      tokenAuthFile: tokenFile,
      enableBootstrapTokenAuth: true,
      requestheaderClientCaFile: join(dir, 'front-proxy-ca.crt'),
      requestheaderAllowedNames: ['front-proxy-client'],
      requestheaderUsernameHeaders: ['X-Remote-User'],
      requestheaderUidHeaders: ['X-Remote-Uid'],
      requestheaderGroupHeaders: ['X-Remote-Group'],
      requestheaderExtraHeadersPrefix: ['X-Remote-Extra-'],
      oidcIssuerUrl: oidc.url,
      oidcClientId: 'tkube',
      oidcCaFile: join(dir, 'oidc-ca.crt'),
      oidcUsernameClaim: 'email',
      oidcGroupsClaim: 'groups',
      oidcGroupsPrefix: 'oidc:',
      oidcRequiredClaim: { hd: 'example.com' },
      authenticationTokenWebhookConfigFile: join(dir, 'webhook.kubeconfig'),
      authenticationTokenWebhookVersion: 'v1',
    });
    admin = testRequester(srv.config);
    await waitReady(admin);
  });

  after(async () => {
    await admin?.close();
    await srv?.stop();
    await oidc?.close();
    await webhook?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function expectUnauthorized(api: Requester): Promise<void> {
    const r = await whoami(api);
    await api.close();
    assert.equal(r.status, 401, JSON.stringify(r.json));
    assert.equal(r.json.kind, 'Status');
    assert.equal(r.json.reason, 'Unauthorized');
    assert.equal(r.json.message, 'Unauthorized');
  }

  it('x509: the certificate CN is the user and O the groups', async () => {
    const api = testRequester(await certConfig(srv, 'carol', ['devs', 'ops']));
    const r = await whoami(api);
    await api.close();
    assert.equal(r.status, 201);
    assert.deepEqual(r.user, { username: 'carol', groups: ['devs', 'ops', 'system:authenticated'] });
  });

  it('x509: a certificate from an unknown CA is refused with 401', async () => {
    const other = await createCA('someone-else');
    await expectUnauthorized(testRequester(await certConfig(srv, 'mallory', ['system:masters'], other)));
  });

  it('front proxy: an allowed proxy certificate vouches for the user in the headers', async () => {
    const api = withHeaders(await certConfig(srv, 'front-proxy-client', [], proxyCA), {
      'X-Remote-User': 'fiona',
      'X-Remote-Uid': 'uid-fiona',
      'X-Remote-Group': ['g1', 'g2'],
      'X-Remote-Extra-Scopes': 'view',
    });
    const r = await whoami(api);
    await api.close();
    assert.equal(r.status, 201, JSON.stringify(r.json));
    assert.deepEqual(r.user, {
      username: 'fiona',
      uid: 'uid-fiona',
      groups: ['g1', 'g2', 'system:authenticated'],
      extra: { scopes: ['view'] },
    });
  });

  it('front proxy: a name outside --requestheader-allowed-names is refused', async () => {
    await expectUnauthorized(
      withHeaders(await certConfig(srv, 'intruder', [], proxyCA), { 'X-Remote-User': 'fiona' }),
    );
  });

  it('front proxy: the proxy certificate never authenticates as its own CN', async () => {
    // Without user headers it is no client certificate of --client-ca-file: 401.
    await expectUnauthorized(
      testRequester(await certConfig(srv, 'front-proxy-client', ['system:masters'], proxyCA)),
    );
  });

  it('static tokens: token,user,uid,"groups" from --token-auth-file', async () => {
    const api = tokenRequester(srv, 'static-token-1');
    const r = await whoami(api);
    await api.close();
    assert.equal(r.status, 201);
    assert.deepEqual(r.user, {
      username: 'alice',
      uid: 'uid-alice',
      groups: ['dev', 'qa', 'system:authenticated'],
    });
    await expectUnauthorized(tokenRequester(srv, 'static-token-3'));
  });

  it('bootstrap tokens: secrets in kube-system, expiration, usage and extra groups', async () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const secret = (id: string, sec: string, expiration: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
      type: 'bootstrap.kubernetes.io/token',
      data: {
        'token-id': b64(id),
        'token-secret': b64(sec),
        expiration: b64(expiration),
        'usage-bootstrap-authentication': b64('true'),
        'auth-extra-groups': b64('system:bootstrappers:kubeadm:default-node-token'),
      },
    });
    const future = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const past = new Date(Date.now() - 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    for (const body of [
      secret('abcdef', '0123456789abcdef', future),
      secret('zyxwvu', '0123456789abcdef', past),
    ]) {
      const c = await admin('POST', '/api/v1/namespaces/kube-system/secrets', { body });
      assert.equal(c.status, 201, c.body.toString());
    }
    const api = tokenRequester(srv, 'abcdef.0123456789abcdef');
    const r = await whoami(api);
    await api.close();
    assert.equal(r.status, 201, JSON.stringify(r.json));
    assert.deepEqual(r.user, {
      username: 'system:bootstrap:abcdef',
      groups: [
        'system:bootstrappers',
        'system:bootstrappers:kubeadm:default-node-token',
        'system:authenticated',
      ],
    });
    await expectUnauthorized(tokenRequester(srv, 'abcdef.0123456789abcdee'));
    await expectUnauthorized(tokenRequester(srv, 'zyxwvu.0123456789abcdef'));
  });

  const oidcClaims = (extra: Record<string, unknown> = {}) => ({
    iss: oidc.url,
    aud: 'tkube',
    sub: '1234',
    email: 'olga@example.com',
    email_verified: true,
    groups: ['eng'],
    hd: 'example.com',
    iat: now(),
    exp: now() + 600,
    ...extra,
  });

  it('OIDC: an ID token of the issuer names the user by the email claim, with prefixed groups', async () => {
    const api = tokenRequester(
      srv,
      signToken(oidcClaims(), oidcKey.privateKey, { alg: 'RS256', kid: oidcKid }),
    );
    const r = await whoami(api);
    await api.close();
    assert.equal(r.status, 201, JSON.stringify(r.json));
    assert.deepEqual(r.user, { username: 'olga@example.com', groups: ['oidc:eng', 'system:authenticated'] });
  });

  it('OIDC: expired, foreign-audience, forged, unverified-email or claim-less tokens are refused', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const h = { alg: 'RS256', kid: oidcKid };
    for (const token of [
      signToken(oidcClaims({ exp: now() - 60 }), oidcKey.privateKey, h),
      signToken(oidcClaims({ aud: 'someone-else' }), oidcKey.privateKey, h),
      signToken(oidcClaims(), other.privateKey, h),
      signToken(oidcClaims({ email_verified: false }), oidcKey.privateKey, h),
      signToken(oidcClaims({ hd: 'evil.com' }), oidcKey.privateKey, h),
    ])
      await expectUnauthorized(tokenRequester(srv, token));
  });

  it('webhook: TokenReview v1 to the configured service, answers cached', async () => {
    const before = webhook.hits.get('/authenticate') ?? 0;
    for (let i = 0; i < 3; i++) {
      const api = tokenRequester(srv, 'webhook-good');
      const r = await whoami(api);
      await api.close();
      assert.equal(r.status, 201);
      assert.deepEqual(r.user, {
        username: 'wanda',
        uid: 'w-1',
        groups: ['hooks', 'system:authenticated'],
        extra: { scope: ['a'] },
      });
    }
    assert.equal((webhook.hits.get('/authenticate') ?? 0) - before, 1);
    await expectUnauthorized(tokenRequester(srv, 'webhook-bad'));
    await expectUnauthorized(tokenRequester(srv, 'webhook-bad'));
    assert.equal((webhook.hits.get('/authenticate') ?? 0) - before, 2);
  });

  it('service accounts: TokenRequest tokens authenticate; forged and expired ones do not', async () => {
    const c = await admin('POST', '/api/v1/namespaces/default/serviceaccounts', {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } },
    });
    assert.equal(c.status, 201);
    const t = await admin('POST', '/api/v1/namespaces/default/serviceaccounts/robot/token', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} },
    });
    assert.equal(t.status, 201, t.body.toString());
    const token: string = t.json.status.token;
    const api = tokenRequester(srv, token);
    const r = await whoami(api);
    await api.close();
    assert.equal(r.status, 201);
    assert.equal(r.user.username, 'system:serviceaccount:default:robot');
    assert.equal(r.user.uid, c.json.metadata.uid);
    assert.deepEqual(r.user.groups, [
      'system:serviceaccounts',
      'system:serviceaccounts:default',
      'system:authenticated',
    ]);
    assert.match(r.user.extra['authentication.kubernetes.io/credential-id'][0], /^JTI=[0-9a-f-]{36}$/);

    // One character of the signature changed.
    const sig = token.split('.')[2];
    const forged = `${token.slice(0, token.length - sig.length)}${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`;
    await expectUnauthorized(tokenRequester(srv, forged));
    // Signed with the real key, but expired two hours ago.
    const key = loadPrivateKey(join(srv.dir, 'certs', 'sa.key'));
    const issuer = new TokenIssuer(key, createPublicKey(key), 'https://kubernetes.default.svc.cluster.local');
    const old = issuer.issue(
      c.json,
      {},
      {
        expirationSeconds: 3600,
        audiences: ['https://kubernetes.default.svc.cluster.local'],
        now: Date.now() - 3 * 3600_000,
      },
    );
    await expectUnauthorized(tokenRequester(srv, old.token));
    // A token of an unknown issuer is nobody's.
    const foreign = new TokenIssuer(key, createPublicKey(key), 'https://elsewhere');
    await expectUnauthorized(
      tokenRequester(
        srv,
        foreign.issue(c.json, {}, { expirationSeconds: 3600, audiences: ['https://elsewhere'] }).token,
      ),
    );
  });

  it('anonymous under RBAC: health and version only (system:public-info-viewer)', async () => {
    const anon = testRequester(anonymousConfig(srv));
    for (const p of ['/healthz', '/livez', '/readyz', '/version'])
      assert.equal((await anon('GET', p)).status, 200, p);
    for (const p of ['/api', '/apis', '/openapi/v2', '/api/v1/namespaces', '/metrics', '/readyz/ping']) {
      const r = await anon('GET', p);
      assert.equal(r.status, 403, p);
      assert.equal(r.json.reason, 'Forbidden');
    }
    const r = await anon('GET', '/api');
    assert.equal(r.json.message, 'forbidden: User "system:anonymous" cannot get path "/api"');
    assert.deepEqual(r.json.details, {});
    const ns = await anon('GET', '/api/v1/namespaces/default/pods');
    assert.equal(
      ns.json.message,
      'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    // Authenticated users also get discovery (system:discovery).
    const carol = testRequester(await certConfig(srv, 'carol'));
    assert.equal((await carol('GET', '/api')).status, 200);
    assert.equal((await carol('GET', '/apis')).status, 200);
    await carol.close();
    await anon.close();
  });
});

describe('authentication with the default AlwaysAllow mode', function () {
  this.timeout(30_000);
  let srv: TestAPIServer;
  before(async () => {
    srv = await startTestAPIServer();
  });
  after(async () => {
    await srv?.stop();
  });

  it('turns anonymous requests away (AnonymousAuth is reset with AlwaysAllow)', async () => {
    const anon = testRequester(anonymousConfig(srv));
    const r = await anon('GET', '/version');
    await anon.close();
    assert.equal(r.status, 401);
    const admin = testRequester(srv.config);
    assert.equal((await admin('GET', '/version')).status, 200);
    await admin.close();
  });

  it('refuses anonymous requests with --anonymous-auth=false under RBAC', async () => {
    const strict = await startTestAPIServer({ authorizationMode: ['RBAC'], anonymousAuth: false });
    try {
      const anon = testRequester(anonymousConfig(strict));
      const r = await anon('GET', '/healthz');
      await anon.close();
      assert.equal(r.status, 401);
      assert.equal(r.json.reason, 'Unauthorized');
    } finally {
      await strict.stop();
    }
  });

  it('front proxy sharing the cluster CA: proxy certificates still never act as themselves', async () => {
    const certDir = mkdtempSync(join(tmpdir(), 'tkube-shared-ca-'));
    const ca = await createCA('kubernetes-ca');
    writeFileSync(join(certDir, 'ca.crt'), ca.certPem);
    writeFileSync(join(certDir, 'ca.key'), ca.keyPem);
    const shared = await startTestAPIServer({
      certDir,
      authorizationMode: ['RBAC'],
      requestheaderClientCaFile: join(certDir, 'ca.crt'),
      requestheaderAllowedNames: ['front-proxy-client'],
      requestheaderUsernameHeaders: ['X-Remote-User'],
    });
    try {
      const sharedAdmin = testRequester(shared.config);
      await waitReady(sharedAdmin);
      await sharedAdmin.close();
      const proxy = testRequester(await certConfig(shared, 'front-proxy-client', ['system:masters'], ca));
      const r = await whoami(proxy);
      await proxy.close();
      assert.equal(r.status, 403);
      assert.match(r.json.message, /User "system:anonymous"/);
      const vouched = withHeaders(await certConfig(shared, 'front-proxy-client', [], ca), {
        'X-Remote-User': 'zoe',
      });
      assert.equal((await whoami(vouched)).user?.username, 'zoe');
      await vouched.close();
      const carol = testRequester(await certConfig(shared, 'carol', [], ca));
      assert.equal((await whoami(carol)).user?.username, 'carol');
      await carol.close();
    } finally {
      await shared.stop();
      rmSync(certDir, { recursive: true, force: true });
    }
  });

  it('still knows the generated service-account key pair', () => {
    assert.match(readFileSync(join(srv.dir, 'certs', 'sa.pub'), 'utf8'), /BEGIN PUBLIC KEY/);
  });
});
