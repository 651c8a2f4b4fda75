// The files of the API-backed volumes, as the kubelet's configmap, secret,
// downwardAPI and projected plugins make them: a payload (relative path →
// content and mode) that atomic-writer.ts puts in place. Service account
// tokens come from TokenRequest and are kept until 80 % of their life passed.
import type { FileProjection } from './atomic-writer';
import { containerResourceValue, podContainer, podFieldValue, type DownwardContext } from './downward';
import { ObjectNotFound, type IssuedToken, type PodObjects } from './pod-objects';

export const DEFAULT_MODE = 0o644;
/** The kubelet's default and floor for projected token lifetimes. */
const DEFAULT_TOKEN_SECONDS = 3600;

export type Payload = Map<string, FileProjection>;

export interface PayloadInputs extends DownwardContext {
  objects: PodObjects;
  now(): number;
  /** Tokens already issued for this pod, by audience/expiration/path key (kept across syncs). */
  tokens: Map<string, IssuedToken>;
}

async function fetchOptional(optional: boolean, fetch: () => Promise<any>): Promise<any | undefined> {
  try {
    return await fetch();
  } catch (err) {
    if (optional && err instanceof ObjectNotFound) return undefined;
    throw err;
  }
}

/** configMap / secret data (secret values base64-decoded) by key. */
function dataOf(obj: any, secret: boolean): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const [k, v] of Object.entries<string>(obj?.data ?? {}))
    out.set(k, secret ? Buffer.from(v, 'base64') : Buffer.from(v, 'utf8'));
  if (!secret)
    for (const [k, v] of Object.entries<string>(obj?.binaryData ?? {})) out.set(k, Buffer.from(v, 'base64'));
  return out;
}

/** kubelet's MakePayload of the configmap and secret plugins: items (or every key), with modes. */
function keysPayload(
  kind: 'configmap' | 'secret',
  data: Map<string, Buffer>,
  items: any[] | undefined,
  defaultMode: number,
  optional: boolean,
  into: Payload,
): void {
  if (!items?.length) {
    for (const [k, v] of data) into.set(k, { data: v, mode: defaultMode });
    return;
  }
  for (const it of items) {
    const v = data.get(it.key);
    if (!v) {
      if (optional) continue;
      throw new Error(
        kind === 'configmap'
          ? `configmap references non-existent config key: ${it.key}`
          : `references non-existent secret key: ${it.key}`,
      );
    }
    into.set(it.path, { data: v, mode: it.mode ?? defaultMode });
  }
}

function downwardPayload(
  pod: any,
  items: any[],
  defaultMode: number,
  d: DownwardContext,
  into: Payload,
): void {
  for (const it of items ?? []) {
    let value: string;
    if (it.fieldRef) value = podFieldValue(pod, it.fieldRef.fieldPath, d);
    else if (it.resourceFieldRef) {
      const ref = it.resourceFieldRef;
      const c = podContainer(pod, ref.containerName);
      if (!c) throw new Error(`container ${ref.containerName} not found`);
      value = containerResourceValue(c, ref.resource, ref.divisor, d);
    } else continue;
    into.set(it.path, { data: Buffer.from(value, 'utf8'), mode: it.mode ?? defaultMode });
  }
}

async function tokenPayload(
  pod: any,
  src: any,
  mode: number,
  d: PayloadInputs,
  into: Payload,
): Promise<void> {
  const audiences: string[] = src.audience ? [src.audience] : [];
  const seconds = Number(src.expirationSeconds ?? DEFAULT_TOKEN_SECONDS);
  const key = `${src.audience ?? ''}|${seconds}|${src.path}`;
  const have = d.tokens.get(key);
  const now = d.now();
  // Refreshed once 80 % of its life passed (kubelet's token manager).
  const fresh = have && now < have.expiresAt - seconds * 1000 * 0.2;
  let tok = have;
  if (!fresh) {
    tok = await d.objects.requestToken(pod, pod.spec?.serviceAccountName || 'default', audiences, seconds);
    d.tokens.set(key, tok);
  }
  into.set(src.path, { data: Buffer.from(tok!.token, 'utf8'), mode });
}

/** The payload of a configMap, secret, downwardAPI or projected volume; throws with kubelet's error text. */
export async function volumePayload(pod: any, vol: any, d: PayloadInputs): Promise<Payload> {
  const ns = pod.metadata.namespace;
  const out: Payload = new Map();
  if (vol.configMap || vol.secret) {
    const secret = !!vol.secret;
    const src = vol.configMap ?? vol.secret;
    const name = secret ? src.secretName : src.name;
    const optional = !!src.optional;
    const obj = await fetchOptional(optional, () =>
      secret ? d.objects.secret(ns, name) : d.objects.configMap(ns, name),
    );
    if (obj)
      keysPayload(
        secret ? 'secret' : 'configmap',
        dataOf(obj, secret),
        src.items,
        src.defaultMode ?? DEFAULT_MODE,
        optional,
        out,
      );
    return out;
  }
  if (vol.downwardAPI) {
    downwardPayload(pod, vol.downwardAPI.items, vol.downwardAPI.defaultMode ?? DEFAULT_MODE, d, out);
    return out;
  }
  if (vol.projected) {
    const mode = vol.projected.defaultMode ?? DEFAULT_MODE;
    for (const s of vol.projected.sources ?? []) {
      if (s.configMap || s.secret) {
        const secret = !!s.secret;
        const src = s.configMap ?? s.secret;
        const optional = !!src.optional;
        const obj = await fetchOptional(optional, () =>
          secret ? d.objects.secret(ns, src.name) : d.objects.configMap(ns, src.name),
        );
        if (obj)
          keysPayload(secret ? 'secret' : 'configmap', dataOf(obj, secret), src.items, mode, optional, out);
      } else if (s.downwardAPI) downwardPayload(pod, s.downwardAPI.items, mode, d, out);
      else if (s.serviceAccountToken) await tokenPayload(pod, s.serviceAccountToken, mode, d, out);
    }
    return out;
  }
  throw new Error('not an API-backed volume');
}
