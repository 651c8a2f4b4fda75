// Test fixtures: realistic objects and helpers shared by the field manager tests.
import assert from 'node:assert/strict';
import { StatusError, type Status } from '../../../shared/api/status';
import type { JSONObject } from '../json-util';
import { apply, update, type ApplyOptions, type KubeObject, type UpdateOptions } from './field-manager';
import { decodeManagedFields, parseIdentifier } from './managed';
import { pathString } from './path';

export const T0 = Date.parse('2024-05-01T10:00:00Z');

/** A clock that moves one second per reading. */
export function ticking(start = T0) {
  let t = start;
  return () => new Date((t += 1000));
}

export function deployment(spec: JSONObject = {}, metadata: JSONObject = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'nginx', namespace: 'default', ...metadata },
    spec,
  };
}

/** The deployment of the Kubernetes docs, as kubectl applies it. */
export const nginxDeployment = (replicas = 3, image = 'nginx:1.14.2'): KubeObject =>
  deployment(
    {
      replicas,
      selector: { matchLabels: { app: 'nginx' } },
      template: {
        metadata: { labels: { app: 'nginx' } },
        spec: { containers: [{ name: 'nginx', image, ports: [{ containerPort: 80 }] }] },
      },
    },
    { labels: { app: 'nginx' } },
  );

export const configMap = (data: JSONObject, metadata: JSONObject = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cfg', namespace: 'default', ...metadata },
  data,
});

export const pod = (spec: JSONObject, metadata: JSONObject = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', ...metadata },
  spec,
});

/** Stores an object like the registry does: uid and resourceVersion set. */
export function stored(obj: KubeObject, rv = 1): KubeObject {
  const meta = obj.metadata as JSONObject;
  meta.uid ??= '7f3c6a2e-0000-4000-8000-000000000001';
  meta.resourceVersion = String(rv);
  return obj;
}

export const gvOf = (o: KubeObject) => o.apiVersion as string;

export function applied(
  live: KubeObject | null,
  config: KubeObject,
  manager: string,
  extra: Partial<ApplyOptions> = {},
): KubeObject {
  const out = apply(live, structuredClone(config), {
    manager,
    apiVersion: gvOf(config),
    now: new Date(T0),
    ...extra,
  });
  return stored(out);
}

export function updated(
  live: KubeObject | null,
  next: KubeObject,
  manager: string,
  extra: Partial<UpdateOptions> = {},
): KubeObject {
  const out = update(live, structuredClone(next), {
    manager,
    apiVersion: gvOf(next),
    now: new Date(T0),
    ...extra,
  });
  return stored(out);
}

/** Paths each manager owns, keyed "manager" or "manager/Update" etc. by operation. */
export function owners(obj: KubeObject): Record<string, string[]> {
  const m = decodeManagedFields((obj.metadata as JSONObject).managedFields);
  const out: Record<string, string[]> = {};
  for (const [id, vs] of m.fields) {
    const who = parseIdentifier(id);
    const name = `${who.manager}${vs.applied ? '' : ':Update'}${who.subresource ? '/' + who.subresource : ''}`;
    out[name] = vs.set.paths().map(pathString);
  }
  return out;
}

export function statusOf(fn: () => unknown): Status {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof StatusError, String(e));
    return e.status;
  }
  assert.fail('expected a StatusError');
}

/** A deep property read for assertions. */
export function at(obj: unknown, ...path: (string | number)[]): unknown {
  let cur: unknown = obj;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[p];
  }
  return cur;
}
