// kube-system/extension-apiserver-authentication, as kube-apiserver's
// cluster-authentication-trust controller keeps it: the client CA and the
// front-proxy (requestheader) settings that extension apiservers read to trust
// this server's client certificates and the user it names in request headers.
// What is there already (other apiservers of the cluster) is merged in, expired
// certificates dropped; the CA files are re-read when they change and every minute.
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { isStatusError } from '../../shared/api/status';
import { logger } from '../../shared/log';
import { systemContext } from '../registry/context';
import { jsonEqual } from '../../shared/api/json-value';
import type { Registry } from '../registry/registry';
import { CoalescedRuns } from './coalesced';

const log = logger('cluster-authentication-trust');

export const AUTH_CONFIGMAP_NAMESPACE = 'kube-system';
export const AUTH_CONFIGMAP_NAME = 'extension-apiserver-authentication';

export interface AuthenticationInfo {
  /** PEM bundle that verifies client certificates (--client-ca-file). */
  clientCA?: string;
  /** PEM bundle that verifies the front proxy (--requestheader-client-ca-file). */
  requestHeaderCA?: string;
  usernameHeaders: string[];
  uidHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
  allowedNames: string[];
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Certificates of both bundles, once each, without those expired more than five minutes ago. */
export function combineBundles(a: string | undefined, b: string | undefined): string {
  const out: string[] = [];
  const seen = new Set<string>();
  const cutoff = Date.now() - 5 * 60_000;
  for (const pem of [...(a ?? '').matchAll(PEM_BLOCK), ...(b ?? '').matchAll(PEM_BLOCK)].map((m) => m[0])) {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(pem);
    } catch {
      continue;
    }
    const raw = cert.raw.toString('base64');
    if (seen.has(raw) || Date.parse(cert.validTo) < cutoff) continue;
    seen.add(raw);
    // Re-encoded as Go's pem.Encode writes it: 64 columns.
    out.push(
      `-----BEGIN CERTIFICATE-----\n${raw.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`,
    );
  }
  return out.join('');
}

const unique = (a: string[], b: string[]) => [...new Set([...a, ...b])];

function parseList(s: string | undefined): string[] {
  if (!s) return [];
  try {
    const v = JSON.parse(s);
    return Array.isArray(v) ? v.filter((x) => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** The ConfigMap data for the existing data merged with ours (getConfigMapDataFor). */
export function configMapData(
  existing: Record<string, string>,
  ours: AuthenticationInfo,
): Record<string, string> {
  const data: Record<string, string> = {};
  const clientCA = combineBundles(existing['client-ca-file'], ours.clientCA);
  if (clientCA) data['client-ca-file'] = clientCA;
  const requestHeaderCA = combineBundles(existing['requestheader-client-ca-file'], ours.requestHeaderCA);
  if (!requestHeaderCA) return data;
  const list = (key: string, mine: string[]) => JSON.stringify(unique(parseList(existing[key]), mine));
  data['requestheader-username-headers'] = list('requestheader-username-headers', ours.usernameHeaders);
  data['requestheader-uid-headers'] = list('requestheader-uid-headers', ours.uidHeaders);
  data['requestheader-group-headers'] = list('requestheader-group-headers', ours.groupHeaders);
  data['requestheader-extra-headers-prefix'] = list(
    'requestheader-extra-headers-prefix',
    ours.extraHeaderPrefixes,
  );
  data['requestheader-client-ca-file'] = requestHeaderCA;
  data['requestheader-allowed-names'] = list('requestheader-allowed-names', ours.allowedNames);
  return data;
}

export interface AuthenticationTrustOptions {
  registry: Registry;
  /** Reads the current settings (CA files are read again on every call). */
  info: () => AuthenticationInfo;
  /** Files whose change triggers a sync. */
  files: string[];
  resyncMs?: number;
}

/** Keeps the ConfigMap current: at start, when a CA file changes, when the ConfigMap changes, every minute. */
export class AuthenticationTrustController {
  private timer: NodeJS.Timeout | null = null;
  private watchers: FSWatcher[] = [];
  private readonly runs = new CoalescedRuns(
    () => this.sync(),
    (err) => log.warn('sync failed', { err: String(err) }),
  );

  constructor(private readonly o: AuthenticationTrustOptions) {}

  async start(): Promise<void> {
    await this.sync();
    for (const f of this.o.files) {
      try {
        this.watchers.push(watch(f, () => this.enqueue()));
      } catch (err) {
        log.warn('cannot watch file', { file: f, err: String(err) });
      }
    }
    this.timer = setInterval(() => this.enqueue(), this.o.resyncMs ?? 60_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }

  /** Schedules a sync (one at a time; a request during one runs another after it). */
  enqueue(): void {
    this.runs.request();
  }

  async sync(): Promise<void> {
    const served = this.o.registry.preferred('', 'configmaps');
    if (!served) return;
    let ours: AuthenticationInfo;
    try {
      ours = this.o.info();
    } catch (err) {
      log.warn('cannot read the CA files', { err: String(err) });
      return;
    }
    const ctx = systemContext(AUTH_CONFIGMAP_NAMESPACE);
    try {
      await served.store.update(
        ctx,
        AUTH_CONFIGMAP_NAME,
        (cur) => {
          const data = configMapData(cur?.data ?? {}, ours);
          if (cur && jsonEqual(cur.data ?? {}, data)) return cur;
          return {
            ...(cur ?? { apiVersion: 'v1', kind: 'ConfigMap' }),
            metadata: {
              ...(cur?.metadata ?? {}),
              name: AUTH_CONFIGMAP_NAME,
              namespace: AUTH_CONFIGMAP_NAMESPACE,
            },
            data,
          };
        },
        {},
        { allowCreate: true },
      );
    } catch (err) {
      if (isStatusError(err, 'NotFound')) return; // kube-system not there yet: the next sync writes it
      throw err;
    }
  }
}

/** The settings from the apiserver's flag values (files read now). */
export function authenticationInfoFromFlags(
  values: Record<string, any>,
  servingClientCA: () => string | undefined,
): AuthenticationInfo {
  const list = (v: unknown) => ((v as string[] | undefined) ?? []).filter(Boolean);
  return {
    clientCA: servingClientCA(),
    requestHeaderCA: values.requestheaderClientCaFile
      ? readFileSync(values.requestheaderClientCaFile, 'utf8')
      : undefined,
    usernameHeaders: list(values.requestheaderUsernameHeaders),
    uidHeaders: list(values.requestheaderUidHeaders),
    groupHeaders: list(values.requestheaderGroupHeaders),
    extraHeaderPrefixes: list(values.requestheaderExtraHeadersPrefix),
    allowedNames: list(values.requestheaderAllowedNames),
  };
}
