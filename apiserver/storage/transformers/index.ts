// Encryption at rest (--encryption-provider-config): a value transformer
// between the object codec and the store. The storage key names the resource
// (<prefix>/secrets/ns/name, <prefix>/apps/deployments/ns/name), so the
// EncryptionConfiguration's per-resource providers are chosen from the key:
// the storage layer knows keys, not kinds. The first provider writes, every
// provider reads (key rotation); values carry Kubernetes' prefix
// k8s:enc:<provider>:v1:<keyname>:.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseConfigYAML } from '../../../shared/codec/yaml';
import { secretboxOpen, secretboxSeal } from './secretbox';

/** Transforms stored values (encrypts on the way in, decrypts on the way out). */
export interface ValueTransformer {
  toStorage(data: Buffer, key: string): Buffer;
  fromStorage(data: Buffer, key: string): Buffer;
}

const ENC = Buffer.from('k8s:enc:');

/** One configured key of one provider. */
interface Provider {
  /** Empty for identity. */
  prefix: Buffer;
  seal(data: Buffer, key: string): Buffer;
  /** Throws when the data does not decrypt. */
  open(data: Buffer, key: string): Buffer;
}

const identity: Provider = {
  prefix: Buffer.alloc(0),
  seal: (d) => d,
  open: (d) => {
    if (d.subarray(0, ENC.length).equals(ENC))
      throw new Error('identity transformer tried to read encrypted data');
    return d;
  },
};

function aescbc(name: string, secret: Buffer): Provider {
  const algo = `aes-${secret.length * 8}-cbc`;
  return {
    prefix: Buffer.from(`k8s:enc:aescbc:v1:${name}:`),
    seal(data) {
      const iv = randomBytes(16);
      const c = createCipheriv(algo, secret, iv);
      return Buffer.concat([iv, c.update(data), c.final()]);
    },
    open(data) {
      if (data.length < 32 || data.length % 16 !== 0)
        throw new Error('the stored data is not a multiple of the block size');
      const d = createDecipheriv(algo, secret, data.subarray(0, 16));
      return Buffer.concat([d.update(data.subarray(16)), d.final()]);
    },
  };
}

function aesgcm(name: string, secret: Buffer): Provider {
  const algo = `aes-${secret.length * 8}-gcm` as 'aes-256-gcm';
  return {
    prefix: Buffer.from(`k8s:enc:aesgcm:v1:${name}:`),
    // The storage key is the additional authenticated data, as in Kubernetes.
    seal(data, key) {
      const nonce = randomBytes(12);
      const c = createCipheriv(algo, secret, nonce);
      c.setAAD(Buffer.from(key));
      const ct = Buffer.concat([c.update(data), c.final()]);
      return Buffer.concat([nonce, ct, c.getAuthTag()]);
    },
    open(data, key) {
      if (data.length < 28) throw new Error('the stored data was shorter than the required size');
      const d = createDecipheriv(algo, secret, data.subarray(0, 12));
      d.setAAD(Buffer.from(key));
      d.setAuthTag(data.subarray(data.length - 16));
      return Buffer.concat([d.update(data.subarray(12, data.length - 16)), d.final()]);
    },
  };
}

function secretbox(name: string, secret: Buffer): Provider {
  return {
    prefix: Buffer.from(`k8s:enc:secretbox:v1:${name}:`),
    seal(data) {
      const nonce = randomBytes(24);
      return Buffer.concat([nonce, secretboxSeal(data, nonce, secret)]);
    },
    open(data) {
      if (data.length < 24 + 16) throw new Error('the stored data was shorter than the required size');
      const out = secretboxOpen(data.subarray(24), data.subarray(0, 24), secret);
      if (!out) throw new Error('output array was not large enough for encryption');
      return out;
    },
  };
}

/** A resource's providers: the first writes, all read (by prefix). */
class PrefixTransformer implements ValueTransformer {
  constructor(private readonly providers: Provider[]) {}

  toStorage(data: Buffer, key: string): Buffer {
    const p = this.providers[0];
    return p.prefix.length ? Buffer.concat([p.prefix, p.seal(data, key)]) : data;
  }

  fromStorage(data: Buffer, key: string): Buffer {
    let lastErr: unknown;
    for (const p of this.providers) {
      if (!data.subarray(0, p.prefix.length).equals(p.prefix)) continue;
      try {
        return p.open(data.subarray(p.prefix.length), key);
      } catch (err) {
        lastErr = err;
        // An identity provider first (migrating away from encryption) lets the encrypted ones try.
        if (p.prefix.length === 0) continue;
        throw err;
      }
    }
    throw lastErr ?? new Error('no matching prefix found');
  }
}

interface GroupResource {
  group: string;
  resource: string;
}

const KEY_LENGTHS: Record<string, number[]> = { aescbc: [16, 24, 32], aesgcm: [16, 24, 32], secretbox: [32] };

function decodeSecret(provider: string, k: any, path: string): Buffer {
  if (!k?.name) throw new Error(`${path}.name: Required value`);
  if (typeof k.name === 'string' && k.name.includes(':'))
    throw new Error(`${path}.name: Invalid value: "${k.name}": should not contain ':'`);
  if (!k.secret) throw new Error(`${path}.secret: Required value`);
  const b = Buffer.from(String(k.secret), 'base64');
  if (b.toString('base64').replace(/=+$/, '') !== String(k.secret).replace(/=+$/, ''))
    throw new Error(`${path}.secret: Invalid value: "REDACTED": secrets must be base64 encoded`);
  if (!KEY_LENGTHS[provider].includes(b.length))
    throw new Error(
      `${path}.secret: Invalid value: "REDACTED": secret is not of the expected length, got ${b.length}, expected one of ${JSON.stringify(KEY_LENGTHS[provider])}`,
    );
  return b;
}

function providersOf(list: any[], path: string): Provider[] {
  if (!Array.isArray(list) || !list.length)
    throw new Error(`${path}: Required value: at least one provider is required`);
  const out: Provider[] = [];
  list.forEach((entry, i) => {
    const kinds = Object.keys(entry ?? {});
    if (kinds.length !== 1)
      throw new Error(`${path}[${i}]: Invalid value: exactly one provider must be configured for each entry`);
    const kind = kinds[0];
    const p = `${path}[${i}].${kind}`;
    if (kind === 'identity') {
      out.push(identity);
      return;
    }
    if (kind === 'kms')
      throw new Error(
        `${p}: Unsupported value: the kms provider needs a KMS plugin, which tkube does not support`,
      );
    const make =
      kind === 'aescbc' ? aescbc : kind === 'aesgcm' ? aesgcm : kind === 'secretbox' ? secretbox : null;
    if (!make)
      throw new Error(
        `${path}[${i}]: Unsupported value: "${kind}": supported values: "aescbc", "aesgcm", "secretbox", "identity"`,
      );
    const keys: any[] = entry[kind]?.keys ?? [];
    if (!keys.length) throw new Error(`${p}.keys: Required value: keys must contain at least one key`);
    keys.forEach((k, j) => out.push(make(k.name, decodeSecret(kind, k, `${p}.keys[${j}]`))));
  });
  return out;
}

function parseResource(s: string, path: string): GroupResource {
  if (s === '*.*') return { group: '*', resource: '*' };
  if (s === '*.') return { group: '', resource: '*' };
  const dot = s.indexOf('.');
  if (dot < 0) {
    if (s === '*')
      throw new Error(
        `${path}: Invalid value: "*": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources`,
      );
    return { group: '', resource: s };
  }
  return { group: s.slice(dot + 1), resource: s.slice(0, dot) };
}

export interface EncryptionConfig {
  /** group/resource → transformer; "*" wildcards. */
  transformers: Map<string, ValueTransformer>;
}

export function parseEncryptionConfig(text: string, file = ''): EncryptionConfig {
  const doc: any = parseConfigYAML(text);
  const where = file ? ` "${file}"` : '';
  if (
    doc?.kind !== 'EncryptionConfiguration' ||
    !/^apiserver\.config\.k8s\.io\/v1(beta1)?$/.test(doc?.apiVersion ?? '')
  )
    throw new Error(
      `error while parsing file${where}: expected kind EncryptionConfiguration of apiserver.config.k8s.io/v1, got ${doc?.apiVersion ?? ''}, Kind=${doc?.kind ?? ''}`,
    );
  const entries: any[] = doc.resources ?? [];
  if (!entries.length)
    throw new Error(
      `resources: Required value: EncryptionConfiguration.Resources must contain at least one resource`,
    );
  const transformers = new Map<string, ValueTransformer>();
  entries.forEach((e, i) => {
    const path = `resources[${i}]`;
    const names: string[] = e?.resources ?? [];
    if (!names.length)
      throw new Error(`${path}.resources: Required value: resource must contain at least one resource`);
    const t = new PrefixTransformer(providersOf(e.providers, `${path}.providers`));
    names.forEach((n, j) => {
      const gr = parseResource(String(n), `${path}.resources[${j}]`);
      const k = `${gr.group}/${gr.resource}`;
      if (!transformers.has(k)) transformers.set(k, t);
    });
  });
  return { transformers };
}

/** Legacy API groups without a dot; every other group name has one. */
const DOTLESS_GROUPS = new Set(['apps', 'batch', 'policy', 'autoscaling', 'extensions']);

/** The group and resource a storage key belongs to. */
export function resourceOfKey(key: string, prefix: string): GroupResource | null {
  if (!key.startsWith(`${prefix}/`)) return null;
  const parts = key.slice(prefix.length + 1).split('/');
  if (parts.length >= 3 && (parts[0].includes('.') || DOTLESS_GROUPS.has(parts[0])))
    return { group: parts[0], resource: parts[1] };
  return { group: '', resource: parts[0] };
}

/** Chooses each key's transformer by its resource; unlisted resources are stored in the clear. */
export class ResourceTransformer implements ValueTransformer {
  private readonly cache = new Map<string, ValueTransformer>();
  private readonly plain = new PrefixTransformer([identity]);

  constructor(
    private readonly config: EncryptionConfig,
    private readonly prefix: string,
  ) {}

  private forKey(key: string): ValueTransformer {
    const gr = resourceOfKey(key, this.prefix);
    if (!gr) return this.plain;
    const k = `${gr.group}/${gr.resource}`;
    let t = this.cache.get(k);
    if (!t) {
      const m = this.config.transformers;
      t = m.get(k) ?? m.get(`${gr.group}/*`) ?? m.get('*/*') ?? this.plain;
      this.cache.set(k, t);
    }
    return t;
  }

  toStorage(data: Buffer, key: string): Buffer {
    return this.forKey(key).toStorage(data, key);
  }

  fromStorage(data: Buffer, key: string): Buffer {
    return this.forKey(key).fromStorage(data, key);
  }
}

export async function buildTransformer(
  configFile: string | undefined,
  etcdPrefix = '/registry',
): Promise<ValueTransformer | null> {
  if (!configFile) return null;
  let text: string;
  try {
    text = readFileSync(configFile, 'utf8');
  } catch (err) {
    throw new Error(
      `error opening encryption provider configuration file "${configFile}": ${(err as Error).message}`,
      { cause: err },
    );
  }
  return new ResourceTransformer(parseEncryptionConfig(text, configFile), etcdPrefix);
}
