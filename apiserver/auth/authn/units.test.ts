// Authentication building blocks without an apiserver: the token-file CSV,
// JWT signatures for every algorithm, and OIDC's claim and prefix rules
// against a local HTTPS issuer.
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { parseCSV } from './token-file';
import { algorithmFor, parseJWT, publicJWK, signJWS, verifyJWS } from './jwt';
import { OIDCAuthenticator, usernamePrefix, type OIDCOptions } from './oidc';
import { sendJSON, signToken, startHTTPS, type LocalHTTPS } from './test-support';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeKubeconfig } from '../../../shared/client/kubeconfig';
import { WebhookTokenAuthenticator } from './webhook';
import { WebhookAuthorizer } from '../authz/webhook';
import { nonResourceAttributes } from '../authz/types';

describe('token file CSV', () => {
  it('parses quoted group lists, doubled quotes and leading spaces', () => {
    assert.deepEqual(parseCSV('t1,alice,u1,"a,b"\n t2, bob,u2\r\n"t""3",carl,u3,\n\n'), [
      ['t1', 'alice', 'u1', 'a,b'],
      ['t2', 'bob', 'u2'],
      ['t"3', 'carl', 'u3', ''],
    ]);
  });
});

describe('JWT signatures', () => {
  type Pair = { privateKey: KeyObject; publicKey: KeyObject };
  const rsa: Pair[] = [];
  const rsaPair = (): Pair => {
    // Two RSA pairs, shared (generating them is slow); each test takes the one it did not take last.
    while (rsa.length < 2) rsa.push(generateKeyPairSync('rsa', { modulusLength: 2048 }));
    rsa.reverse();
    return rsa[0];
  };
  const pairs: [string, () => Pair][] = [
    ['RS256', rsaPair],
    ['RS384', rsaPair],
    ['RS512', rsaPair],
    ['PS256', rsaPair],
    ['ES256', () => generateKeyPairSync('ec', { namedCurve: 'P-256' })],
    ['ES384', () => generateKeyPairSync('ec', { namedCurve: 'P-384' })],
    ['ES512', () => generateKeyPairSync('ec', { namedCurve: 'P-521' })],
  ];
  for (const [alg, make] of pairs)
    it(`signs and verifies ${alg}; tampering breaks it`, () => {
      const { privateKey, publicKey } = make();
      const token = signJWS({ alg, kid: 'k' }, { sub: 'x', b: 1, a: 2 }, privateKey);
      const jwt = parseJWT(token)!;
      assert.deepEqual(jwt.payload, { a: 2, b: 1, sub: 'x' });
      assert.ok(verifyJWS(jwt, publicKey));
      const other = make().publicKey;
      assert.ok(!verifyJWS(jwt, other));
      const [h, , s] = token.split('.');
      const forged = parseJWT(`${h}.${Buffer.from('{"sub":"y"}').toString('base64url')}.${s}`)!;
      assert.ok(!verifyJWS(forged, publicKey));
    });

  it('names algorithms and JWKs like kube-apiserver', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    assert.equal(algorithmFor(ec), 'ES256');
    const jwk = publicJWK(ec);
    assert.equal(jwk.alg, 'ES256');
    assert.equal(jwk.use, 'sig');
    assert.equal(createPublicKey({ key: jwk as any, format: 'jwk' }).asymmetricKeyType, 'ec');
    assert.equal(parseJWT('not.a.jwt'), null);
    assert.equal(parseJWT('a.b'), null);
  });
});

describe('OIDC claims and prefixes', function () {
  this.timeout(20_000);
  let issuer: LocalHTTPS;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const made: OIDCAuthenticator[] = [];
  before(async () => {
    issuer = await startHTTPS((req, res) => {
      if (req.url === '/.well-known/openid-configuration')
        return sendJSON(res, 200, { issuer: issuer.url, jwks_uri: `${issuer.url}/jwks` });
      sendJSON(res, 200, {
        keys: [
          { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'r', use: 'sig' },
          { ...ec.publicKey.export({ format: 'jwk' }), kid: 'e', use: 'sig' },
        ],
      });
    });
  });
  after(async () => {
    for (const m of made) m.stop();
    await issuer.close();
  });
  const make = (o: Partial<OIDCOptions>) => {
    const a = new OIDCAuthenticator({
      issuerURL: issuer.url,
      clientID: 'app',
      caPem: issuer.ca.certPem,
      usernameClaim: 'sub',
      requiredClaims: {},
      signingAlgs: ['RS256'],
      ...o,
    });
    made.push(a);
    return a;
  };
  const claims = (extra: Record<string, unknown> = {}) => ({
    iss: issuer.url,
    aud: ['app', 'other'],
    sub: 's-1',
    email: 'e@x',
    exp: Math.floor(Date.now() / 1000) + 300,
    ...extra,
  });

  it('prefixes non-email usernames with the issuer unless told otherwise', async () => {
    assert.equal(
      usernamePrefix({ issuerURL: 'https://i', usernameClaim: 'sub' } as OIDCOptions),
      'https://i#',
    );
    assert.equal(usernamePrefix({ issuerURL: 'https://i', usernameClaim: 'email' } as OIDCOptions), '');
    assert.equal(
      usernamePrefix({ issuerURL: 'https://i', usernameClaim: 'sub', usernamePrefix: '-' } as OIDCOptions),
      '',
    );
    assert.equal(
      usernamePrefix({
        issuerURL: 'https://i',
        usernameClaim: 'sub',
        usernamePrefix: 'oidc:',
      } as OIDCOptions),
      'oidc:',
    );
    const token = signToken(claims({ groups: 'solo' }), rsa.privateKey, { alg: 'RS256', kid: 'r' });
    assert.deepEqual((await make({ groupsClaim: 'groups' }).authenticateToken(token))?.user, {
      name: `${issuer.url}#s-1`,
      groups: ['solo'],
    });
    assert.equal((await make({ usernamePrefix: '-' }).authenticateToken(token))?.user.name, 's-1');
  });

  it('honours --oidc-signing-algs and ignores tokens of other issuers', async () => {
    const es = signToken(claims(), ec.privateKey, { alg: 'ES256', kid: 'e' });
    await assert.rejects(() => make({}).authenticateToken(es), /unsupported algorithm/);
    assert.equal(
      (await make({ signingAlgs: ['ES256'] }).authenticateToken(es))?.user.name,
      `${issuer.url}#s-1`,
    );
    const foreign = signToken(claims({ iss: 'https://elsewhere' }), rsa.privateKey, {
      alg: 'RS256',
      kid: 'r',
    });
    assert.equal(await make({}).authenticateToken(foreign), null);
  });

  it('refuses https-less issuers at start', () => {
    assert.throws(
      () => new OIDCAuthenticator({ issuerURL: 'http://x', clientID: 'a' } as OIDCOptions),
      /must use https scheme/,
    );
  });
});

describe('webhooks (v1beta1)', function () {
  this.timeout(20_000);
  let hook: LocalHTTPS;
  let dir: string;
  const seen: any[] = [];
  let answer: any = {};
  before(async () => {
    hook = await startHTTPS((_req, res, body) => {
      seen.push(body);
      sendJSON(res, 200, { apiVersion: body.apiVersion, kind: body.kind, status: answer });
    });
    dir = mkdtempSync(join(tmpdir(), 'tkube-hooks-'));
    writeKubeconfig(join(dir, 'hook.kubeconfig'), { server: hook.url, caPem: hook.ca.certPem });
  });
  after(async () => {
    await hook.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('token webhook: sends v1beta1 TokenReviews with the audiences and checks the answer’s audiences', async () => {
    const w = new WebhookTokenAuthenticator({
      configFile: join(dir, 'hook.kubeconfig'),
      version: 'v1beta1',
      cacheTTLMs: 0,
      implicitAudiences: ['api'],
    });
    try {
      answer = { authenticated: true, user: { username: 'x', groups: ['g'] } };
      const r = await w.authenticateToken('t1', ['api', 'other']);
      assert.deepEqual(r, { user: { name: 'x', groups: ['g'] }, audiences: ['api'] });
      assert.equal(seen.at(-1).apiVersion, 'authentication.k8s.io/v1beta1');
      assert.deepEqual(seen.at(-1).spec, { token: 't1', audiences: ['api', 'other'] });
      answer = { authenticated: true, user: { username: 'x' }, audiences: ['elsewhere'] };
      assert.equal(await w.authenticateToken('t1', ['api']), null);
      answer = { authenticated: false, error: 'nope' };
      await assert.rejects(() => w.authenticateToken('t2', undefined), /nope/);
    } finally {
      w.close();
    }
  });

  it('authorizer webhook: v1beta1 names the groups "group"; errors are evaluation errors', async () => {
    const z = new WebhookAuthorizer({
      configFile: join(dir, 'hook.kubeconfig'),
      version: 'v1beta1',
      authorizedTTLMs: 0,
      unauthorizedTTLMs: 0,
    });
    try {
      answer = { allowed: true };
      const a = nonResourceAttributes({ name: 'u', groups: ['g1'], extra: { k: ['v'] } }, 'get', '/healthz');
      assert.equal((await z.authorize(a)).decision, 'allow');
      assert.deepEqual(seen.at(-1).spec, {
        nonResourceAttributes: { path: '/healthz', verb: 'get' },
        user: 'u',
        group: ['g1'],
        extra: { k: ['v'] },
      });
      await hook.close();
      const r = await z.authorize(a);
      assert.equal(r.decision, 'noopinion');
      assert.ok(r.error);
    } finally {
      z.close();
    }
  });
});
