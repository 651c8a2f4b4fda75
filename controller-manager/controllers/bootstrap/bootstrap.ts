// Bootstrap tokens (off by default, like kube):
// - tokencleaner deletes bootstrap-token Secrets in kube-system whose
//   "expiration" has passed (and looks again when the next one expires);
// - bootstrapsigner signs the "kubeconfig" of the cluster-info ConfigMap in
//   kube-public with every valid signing token: a detached JWS (HS256, kid =
//   token id, key = token secret) under "jws-kubeconfig-<token-id>"; stale
//   signatures are removed.
import { createHmac } from 'node:crypto';
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import { isConflict, isNotFound, type KubeObject } from '../../../shared/client';
import { runWorkers, unwrapTombstone } from '../../../shared/informers';
import { cachesSynced, go, queueFor } from '../../app/controller-util';
import { parseTime } from '../util/base';

export const BOOTSTRAP_TOKEN_TYPE = 'bootstrap.kubernetes.io/token';
export const CLUSTER_INFO = 'cluster-info';
export const JWS_PREFIX = 'jws-kubeconfig-';
const SYSTEM_NS = 'kube-system';
const PUBLIC_NS = 'kube-public';
const TOKEN_ID = /^[a-z0-9]{6}$/;
const TOKEN_SECRET = /^[a-z0-9]{16}$/;

/** A value of secret.data (base64) or secret.stringData. */
function secretValue(s: KubeObject, key: string): string | undefined {
  const raw = s.data?.[key];
  if (typeof raw === 'string') return Buffer.from(raw, 'base64').toString('utf8');
  if (raw instanceof Uint8Array) return Buffer.from(raw).toString('utf8');
  const str = s.stringData?.[key];
  return typeof str === 'string' ? str : undefined;
}

/** Milliseconds until the token expires: undefined = never, <= 0 = expired. */
export function tokenTTL(s: KubeObject, now: number): number | undefined {
  const exp = secretValue(s, 'expiration');
  if (!exp) return undefined;
  const t = parseTime(exp);
  if (t === undefined) return 0; // unparseable: treated as expired, as kube does
  return t - now;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** jws.ComputeDetachedSignature: "<protected header>..<signature>". */
export function detachedSignature(content: string, tokenID: string, tokenSecret: string): string {
  const header = b64url(JSON.stringify({ alg: 'HS256', kid: tokenID }));
  const input = `${header}.${b64url(content)}`;
  const sig = createHmac('sha256', tokenSecret).update(input).digest();
  return `${header}..${b64url(sig)}`;
}

/**
 * Secrets of kube-system (kube selects type=bootstrap.kubernetes.io/token on the
 * server; tkube's apiserver does not support that field selector yet, so the type
 * is checked here).
 */
function tokenSecrets(ctx: ControllerContext) {
  return ctx.informers.forResource('secrets', { namespace: SYSTEM_NS });
}

export function startTokenCleaner(ctx: ControllerContext): void {
  const secrets = tokenSecrets(ctx);
  const queue = queueFor<string>(ctx, 'token_cleaner');
  const enqueue = (s: KubeObject) => {
    if (s.type === BOOTSTRAP_TOKEN_TYPE) queue.add(`${s.metadata.namespace}/${s.metadata.name}`);
  };
  secrets.addEventHandler({ onAdd: enqueue, onUpdate: (_o, s) => enqueue(s) });
  const client = ctx.client.resource('secrets').namespace(SYSTEM_NS);
  const sync = async (key: string): Promise<void> => {
    const s = secrets.lister().get(key);
    if (!s || s.type !== BOOTSTRAP_TOKEN_TYPE) return;
    const ttl = tokenTTL(s, ctx.now());
    if (ttl === undefined) return;
    if (ttl > 0) {
      queue.addAfter(key, ttl);
      return;
    }
    ctx.log.v(3)?.info('Deleting expired secret', { secret: key });
    try {
      await client.delete(s.metadata.name!, { preconditions: { uid: s.metadata.uid }, signal: ctx.signal });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  };
  go(ctx, 'token cleaner', async () => {
    if (!(await cachesSynced(ctx, 'token_cleaner', secrets))) return;
    await runWorkers(queue, sync, { workers: 1, signal: ctx.signal });
  });
}

export function startBootstrapSigner(ctx: ControllerContext): void {
  const secrets = tokenSecrets(ctx);
  const configMaps = ctx.informers.forResource('configmaps', { namespace: PUBLIC_NS });
  const queue = queueFor<string>(ctx, 'bootstrap_signer_queue');
  const KEY = 'signConfigMap';
  const poke = () => queue.add(KEY);
  const pokeFor = (s: KubeObject) => {
    if (s.type === BOOTSTRAP_TOKEN_TYPE) poke();
  };
  secrets.addEventHandler({
    onAdd: pokeFor,
    onUpdate: (_o, s) => pokeFor(s),
    onDelete: (s) => pokeFor(unwrapTombstone(s)),
  });
  configMaps.addEventHandler({
    onAdd: (cm) => cm.metadata.name === CLUSTER_INFO && poke(),
    onUpdate: (_o, cm) => cm.metadata.name === CLUSTER_INFO && poke(),
  });
  const client = ctx.client.resource('configmaps').namespace(PUBLIC_NS);

  /** token id -> secret of valid signing tokens. */
  const signingTokens = (): Map<string, string> => {
    const out = new Map<string, string>();
    for (const s of secrets.lister().list()) {
      if (s.type !== BOOTSTRAP_TOKEN_TYPE) continue;
      const id = secretValue(s, 'token-id') ?? '';
      const secret = secretValue(s, 'token-secret') ?? '';
      if (!TOKEN_ID.test(id) || !TOKEN_SECRET.test(secret)) continue;
      if (s.metadata.name !== `bootstrap-token-${id}`) continue;
      if (secretValue(s, 'usage-bootstrap-signing') !== 'true') continue;
      const ttl = tokenTTL(s, ctx.now());
      if (ttl !== undefined && ttl <= 0) continue;
      out.set(id, secret);
      // Signatures of a token go when it expires.
      if (ttl !== undefined) queue.addAfter(KEY, ttl + 10);
    }
    return out;
  };

  const sign = async (): Promise<void> => {
    const cm = configMaps.lister().get(`${PUBLIC_NS}/${CLUSTER_INFO}`);
    if (!cm) return;
    const content = cm.data?.kubeconfig;
    if (typeof content !== 'string') {
      ctx.log.v(3)?.info('No kubeconfig key in ConfigMap', { configMap: `${PUBLIC_NS}/${CLUSTER_INFO}` });
      return;
    }
    const data: Record<string, string> = { ...cm.data };
    let changed = false;
    const tokens = signingTokens();
    for (const [id, secret] of tokens) {
      const sig = detachedSignature(content, id, secret);
      if (data[JWS_PREFIX + id] !== sig) {
        data[JWS_PREFIX + id] = sig;
        changed = true;
      }
    }
    for (const key of Object.keys(data)) {
      if (key.startsWith(JWS_PREFIX) && !tokens.has(key.slice(JWS_PREFIX.length))) {
        delete data[key];
        changed = true;
      }
    }
    if (!changed) return;
    await client.update({ ...cm, data }, { signal: ctx.signal });
  };

  go(ctx, 'bootstrap signer', async () => {
    if (!(await cachesSynced(ctx, 'bootstrap_signer', secrets, configMaps))) return;
    await runWorkers(queue, sign, { workers: 1, signal: ctx.signal });
  });
}

export const tokenCleanerController: ControllerDescriptor = {
  name: 'tokencleaner',
  aliases: ['token-cleaner-controller'],
  disabledByDefault: true,
  start: startTokenCleaner,
};

export const bootstrapSignerController: ControllerDescriptor = {
  name: 'bootstrapsigner',
  aliases: ['bootstrap-signer-controller'],
  disabledByDefault: true,
  start: startBootstrapSigner,
};
