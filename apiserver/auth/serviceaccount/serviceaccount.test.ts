// Service-account tokens against a real HTTPS apiserver: the TokenRequest
// subresource (defaults, validation, bound objects, expiration rules), the
// issuer discovery documents (verified independently with node:crypto), and
// the token authenticator (audiences, several issuers, bound-object lookups).
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, verify, type JsonWebKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';
import { tokenRequester, whoami, type Requester } from '../authn/test-support';
import { TokenIssuer } from './tokens';
import { loadPrivateKey } from './keys';
import { signJWS } from '../authn/jwt';

const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

async function tokenReview(admin: Requester, token: string, audiences?: string[]) {
  const r = await admin('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token, ...(audiences ? { audiences } : {}) },
    },
  });
  assert.equal(r.status, 201, r.body.toString());
  return r.json.status;
}

describe('service-account tokens', function () {
  this.timeout(60_000);

  describe('with the generated key pair and default issuer', () => {
    let srv: TestAPIServer;
    let admin: Requester;
    let sa: any;
    const create = async (path: string, body: any) => {
      const r = await admin('POST', path, { body });
      assert.equal(r.status, 201, `${path}: ${r.body.toString()}`);
      return r.json;
    };
    const requestToken = (name: string, spec: any = {}, metadata: any = {}) =>
      admin('POST', `/api/v1/namespaces/default/serviceaccounts/${name}/token`, {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata, spec },
      });

    before(async () => {
      srv = await startTestAPIServer();
      admin = testRequester(srv.config);
      sa = await create('/api/v1/namespaces/default/serviceaccounts', {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'robot' },
      });
    });
    after(async () => {
      await admin?.close();
      await srv?.stop();
    });

    it('publishes the issuer and its keys; issued tokens verify against them', async () => {
      const conf = await admin('GET', '/.well-known/openid-configuration');
      assert.equal(conf.status, 200);
      assert.equal(conf.headers['content-type'], 'application/json');
      assert.deepEqual(conf.json, {
        issuer: 'https://kubernetes.default.svc.cluster.local',
        jwks_uri: 'https://kubernetes.default.svc.cluster.local/openid/v1/jwks',
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['ES256', 'RS256'],
      });
      const jwks = await admin('GET', '/openid/v1/jwks');
      assert.equal(jwks.headers['content-type'], 'application/jwk-set+json');
      const t = await requestToken('robot');
      assert.equal(t.status, 201);
      const [h, p, s] = t.json.status.token.split('.');
      const header = decode(h);
      assert.equal(header.alg, 'RS256');
      const jwk = jwks.json.keys.find((k: any) => k.kid === header.kid);
      assert.ok(jwk, 'the signing key is published');
      assert.equal(jwk.use, 'sig');
      const key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
      assert.ok(verify('sha256', Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url')));
      const claims = decode(p);
      assert.equal(claims.iss, 'https://kubernetes.default.svc.cluster.local');
      assert.equal(claims.sub, 'system:serviceaccount:default:robot');
      assert.deepEqual(claims.aud, ['https://kubernetes.default.svc.cluster.local']);
      assert.equal(claims.exp - claims.iat, 3600);
      assert.equal(claims.nbf, claims.iat);
      assert.deepEqual(claims['kubernetes.io'], {
        namespace: 'default',
        serviceaccount: { name: 'robot', uid: sa.metadata.uid },
      });
      // The TokenRequest answer.
      assert.equal(t.json.kind, 'TokenRequest');
      assert.equal(t.json.apiVersion, 'authentication.k8s.io/v1');
      // boundObjectRef is a pointer without omitempty: Go writes null.
      assert.deepEqual(t.json.spec, {
        audiences: ['https://kubernetes.default.svc.cluster.local'],
        expirationSeconds: 3600,
        boundObjectRef: null,
      });
      const exp = Date.parse(t.json.status.expirationTimestamp);
      assert.ok(Math.abs(exp - Date.now() - 3600_000) < 5000);
    });

    it('validates the request like Kubernetes', async () => {
      let r = await requestToken('robot', { expirationSeconds: 60 });
      assert.equal(r.status, 422);
      assert.equal(
        r.json.message,
        'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
      );
      r = await requestToken('robot', {}, { namespace: 'elsewhere' });
      assert.equal(r.status, 422);
      assert.match(
        r.json.message,
        /metadata\.namespace: Invalid value: "elsewhere": must match the service account namespace if specified/,
      );
      r = await requestToken('ghost');
      assert.equal(r.status, 404);
      assert.equal(r.json.message, 'serviceaccounts "ghost" not found');
      r = await requestToken('robot', { boundObjectRef: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x' } });
      assert.equal(r.status, 400);
      assert.equal(r.json.message, 'cannot bind token to object of type /v1, Kind=ConfigMap');
    });

    it('binds tokens to pods (with their node), secrets and nodes; they die with the object', async () => {
      const node = await create('/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'n1' },
      });
      const pod = await create('/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'worker' },
        spec: { serviceAccountName: 'robot', nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
      });
      const other = await create('/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'stranger' },
        spec: { serviceAccountName: 'someone', containers: [{ name: 'c', image: 'i' }] },
      });
      const podRef = { apiVersion: 'v1', kind: 'Pod', name: 'worker' };
      let r = await requestToken('robot', { boundObjectRef: podRef });
      assert.equal(r.status, 201, r.body.toString());
      const claims = decode(r.json.status.token.split('.')[1]);
      assert.deepEqual(claims['kubernetes.io'].pod, { name: 'worker', uid: pod.metadata.uid });
      assert.deepEqual(claims['kubernetes.io'].node, { name: 'n1', uid: node.metadata.uid });
      const status = await tokenReview(admin, r.json.status.token);
      assert.equal(status.authenticated, true);
      assert.equal(status.user.username, 'system:serviceaccount:default:robot');
      assert.deepEqual(status.user.extra['authentication.kubernetes.io/pod-name'], ['worker']);
      assert.deepEqual(status.user.extra['authentication.kubernetes.io/pod-uid'], [pod.metadata.uid]);
      assert.deepEqual(status.user.extra['authentication.kubernetes.io/node-name'], ['n1']);
      assert.deepEqual(status.user.extra['authentication.kubernetes.io/node-uid'], [node.metadata.uid]);

      r = await requestToken('robot', {
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'stranger' },
      });
      assert.equal(r.status, 400);
      assert.equal(
        r.json.message,
        'cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.',
      );
      void other;
      r = await requestToken('robot', { boundObjectRef: { ...podRef, uid: 'not-the-uid' } });
      assert.equal(r.status, 409);
      assert.match(
        r.json.message,
        /the UID in the bound object reference \(not-the-uid\) does not match the UID in record/,
      );

      // A token not yet used (not cached) stops working when its pod goes.
      const doomed = (await requestToken('robot', { boundObjectRef: podRef })).json.status.token;
      assert.equal(
        (await admin('DELETE', '/api/v1/namespaces/default/pods/worker?gracePeriodSeconds=0')).status,
        200,
      );
      const gone = await tokenReview(admin, doomed);
      assert.equal(gone.authenticated, undefined);
      assert.match(gone.error, /pods "worker" not found/);

      await create('/api/v1/namespaces/default/secrets', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'anchor' },
      });
      const secretToken = (
        await requestToken('robot', { boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: 'anchor' } })
      ).json.status.token;
      assert.equal(decode(secretToken.split('.')[1])['kubernetes.io'].secret.name, 'anchor');
      assert.equal((await admin('DELETE', '/api/v1/namespaces/default/secrets/anchor')).status, 200);
      assert.match((await tokenReview(admin, secretToken)).error, /secrets "anchor" not found/);

      const nodeToken = (
        await requestToken('robot', { boundObjectRef: { apiVersion: 'v1', kind: 'Node', name: 'n1' } })
      ).json.status.token;
      const ns = await tokenReview(admin, nodeToken);
      assert.deepEqual(ns.user.extra['authentication.kubernetes.io/node-name'], ['n1']);
    });

    it('authenticates legacy secret-based tokens against their Secret', async () => {
      const key = loadPrivateKey(join(srv.dir, 'certs', 'sa.key'));
      const legacy = (secret: string) =>
        signJWS(
          { alg: 'RS256', kid: '' },
          {
            iss: 'kubernetes/serviceaccount',
            sub: 'system:serviceaccount:default:robot',
            'kubernetes.io/serviceaccount/namespace': 'default',
            'kubernetes.io/serviceaccount/secret.name': secret,
            'kubernetes.io/serviceaccount/service-account.name': 'robot',
            'kubernetes.io/serviceaccount/service-account.uid': sa.metadata.uid,
          },
          key,
        );
      const token = legacy('robot-token');
      await create('/api/v1/namespaces/default/secrets', {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'kubernetes.io/service-account-token',
        metadata: { name: 'robot-token', annotations: { 'kubernetes.io/service-account.name': 'robot' } },
        data: { token: Buffer.from(token).toString('base64') },
      });
      const ok = await tokenReview(admin, token);
      assert.equal(ok.authenticated, true);
      assert.equal(ok.user.username, 'system:serviceaccount:default:robot');
      assert.equal(ok.user.uid, sa.metadata.uid);
      // A token naming a Secret that does not hold it.
      const bad = await tokenReview(
        admin,
        legacy('robot-token').replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
      );
      assert.equal(bad.authenticated, undefined);
      const missing = await tokenReview(admin, legacy('no-such-secret'));
      assert.equal(missing.authenticated, undefined);
    });

    it('stops authenticating tokens of a deleted (or re-created) service account', async () => {
      await create('/api/v1/namespaces/default/serviceaccounts', {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'temp' },
      });
      const token = (await requestToken('temp')).json.status.token;
      assert.equal((await admin('DELETE', '/api/v1/namespaces/default/serviceaccounts/temp')).status, 200);
      await create('/api/v1/namespaces/default/serviceaccounts', {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'temp' },
      });
      const api = tokenRequester(srv, token);
      const r = await whoami(api);
      await api.close();
      assert.equal(r.status, 401);
    });
  });

  describe('with flags: ES256 signing key, two issuers, API audiences, max expiration', () => {
    let srv: TestAPIServer;
    let admin: Requester;
    let dir: string;
    const requestToken = (spec: any = {}) =>
      admin('POST', '/api/v1/namespaces/default/serviceaccounts/robot/token', {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec },
      });

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'tkube-sa-'));
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      writeFileSync(join(dir, 'sa.key'), privateKey.export({ type: 'sec1', format: 'pem' }) as string);
      writeFileSync(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }) as string);
      srv = await startTestAPIServer({
        serviceAccountIssuer: ['https://issuer.example/cluster', 'https://old.example'],
        serviceAccountSigningKeyFile: join(dir, 'sa.key'),
        serviceAccountKeyFile: [join(dir, 'sa.pub')],
        apiAudiences: ['api', 'vault'],
        serviceAccountMaxTokenExpiration: 7200_000,
      });
      admin = testRequester(srv.config);
      const r = await admin('POST', '/api/v1/namespaces/default/serviceaccounts', {
        body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } },
      });
      assert.equal(r.status, 201);
    });
    after(async () => {
      await admin?.close();
      await srv?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('signs with ES256 and publishes the EC key under the first issuer', async () => {
      const conf = (await admin('GET', '/.well-known/openid-configuration')).json;
      assert.equal(conf.issuer, 'https://issuer.example/cluster');
      assert.equal(conf.jwks_uri, 'https://issuer.example/openid/v1/jwks');
      assert.ok(conf.id_token_signing_alg_values_supported.includes('ES256'));
      const t = await requestToken();
      const [h, p, s] = t.json.status.token.split('.');
      const header = decode(h);
      assert.equal(header.alg, 'ES256');
      const jwk = (await admin('GET', '/openid/v1/jwks')).json.keys.find((k: any) => k.kid === header.kid);
      assert.equal(jwk.kty, 'EC');
      assert.equal(jwk.crv, 'P-256');
      const key = createPublicKey({ key: jwk, format: 'jwk' });
      assert.ok(
        verify(
          'sha256',
          Buffer.from(`${h}.${p}`),
          { key, dsaEncoding: 'ieee-p1363' },
          Buffer.from(s, 'base64url'),
        ),
      );
      assert.deepEqual(decode(p).aud, ['api', 'vault']);
    });

    it('caps the expiration, with a warning', async () => {
      const t = await requestToken({ expirationSeconds: 86400 });
      assert.equal(t.status, 201);
      assert.equal(t.json.spec.expirationSeconds, 7200);
      assert.match(
        String(t.headers.warning),
        /requested expiration of 86400 seconds shortened to 7200 seconds/,
      );
      const c = decode(t.json.status.token.split('.')[1]);
      assert.equal(c.exp - c.iat, 7200);
    });

    it('checks audiences: API audiences by default, others only when asked for', async () => {
      const own = (await requestToken()).json.status.token;
      let s = await tokenReview(admin, own);
      assert.equal(s.authenticated, true);
      assert.deepEqual(s.audiences, ['api', 'vault']);
      s = await tokenReview(admin, own, ['vault', 'x']);
      assert.deepEqual(s.audiences, ['vault']);
      const foreign = (await requestToken({ audiences: ['other'] })).json.status.token;
      s = await tokenReview(admin, foreign);
      assert.equal(s.authenticated, undefined);
      assert.match(
        s.error,
        /token audiences \["other"\] is invalid for the target audiences \["api","vault"\]/,
      );
      s = await tokenReview(admin, foreign, ['other']);
      assert.equal(s.authenticated, true);
      assert.deepEqual(s.audiences, ['other']);
      // Tokens of every configured issuer are accepted (here: the second one, same key).
      const robot = (await admin('GET', '/api/v1/namespaces/default/serviceaccounts/robot')).json;
      const key = loadPrivateKey(join(dir, 'sa.key'));
      const old = new TokenIssuer(key, createPublicKey(key), 'https://old.example');
      s = await tokenReview(
        admin,
        old.issue(robot, {}, { expirationSeconds: 600, audiences: ['api'] }).token,
      );
      assert.equal(s.authenticated, true);
      assert.equal(s.user.username, 'system:serviceaccount:default:robot');
      // A request to the API with a foreign-audience token is unauthorized.
      const api = tokenRequester(srv, foreign);
      assert.equal((await whoami(api)).status, 401);
      await api.close();
    });

    it('extends kubelet-style pod tokens to a year (warnafter at the requested expiration)', async () => {
      const pod = await admin('POST', '/api/v1/namespaces/default/pods', {
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'p' },
          spec: { serviceAccountName: 'robot', containers: [{ name: 'c', image: 'i' }] },
        },
      });
      assert.equal(pod.status, 201);
      const t = await requestToken({
        expirationSeconds: 3607,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p' },
      });
      assert.equal(t.status, 201);
      const c = decode(t.json.status.token.split('.')[1]);
      assert.equal(c.exp - c.iat, 365 * 24 * 3600);
      assert.equal(c['kubernetes.io'].warnafter - c.iat, 3607);
      assert.equal(t.json.spec.expirationSeconds, 3607);
    });
  });
});
