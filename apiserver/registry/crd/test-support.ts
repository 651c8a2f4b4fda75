// Helpers of the CRD tests: CRD objects and waiting for them to be served.
import assert from 'node:assert/strict';
import type { testRequester } from '../../server/testing';

export type API = ReturnType<typeof testRequester>;

export const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls fn until it returns a truthy value. */
export async function until<T>(
  fn: () => Promise<T | undefined | null | false>,
  what: string,
  ms = 5000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

export const WIDGET_SCHEMA = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer', minimum: 1, maximum: 10 },
        color: { type: 'string', enum: ['red', 'blue'], default: 'red' },
        replicas: { type: 'integer' },
        selector: { type: 'string' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string' }, port: { type: 'integer' } },
          },
        },
      },
    },
    status: { type: 'object', properties: { replicas: { type: 'integer' }, phase: { type: 'string' } } },
  },
};

export interface CRDOptions {
  group?: string;
  plural?: string;
  kind?: string;
  scope?: 'Namespaced' | 'Cluster';
  names?: Record<string, unknown>;
  versions?: any[];
}

export function crd(o: CRDOptions = {}): any {
  const group = o.group ?? 'example.com';
  const plural = o.plural ?? 'widgets';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: o.scope ?? 'Namespaced',
      names: o.names ?? { plural, kind: o.kind ?? 'Widget' },
      versions: o.versions ?? [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: WIDGET_SCHEMA } },
      ],
    },
  };
}

/** Creates a CRD and waits until its first served version answers a list. */
export async function establish(api: API, obj: any, path?: string): Promise<any> {
  const res = await api('POST', CRDS, { body: obj });
  assert.equal(res.status, 201, JSON.stringify(res.json));
  const spec = obj.spec;
  const v = spec.versions.find((x: any) => x.served).name;
  const list =
    path ??
    (spec.scope === 'Namespaced'
      ? `/apis/${spec.group}/${v}/namespaces/default/${spec.names.plural}`
      : `/apis/${spec.group}/${v}/${spec.names.plural}`);
  await until(async () => (await api('GET', list)).status === 200, `${obj.metadata.name} served`);
  return (await api('GET', `${CRDS}/${obj.metadata.name}`)).json;
}

/** Deletes a CRD and waits until it is gone. */
export async function removeCRD(api: API, name: string): Promise<void> {
  await api('DELETE', `${CRDS}/${name}`);
  await until(async () => (await api('GET', `${CRDS}/${name}`)).status === 404, `${name} deleted`, 10_000);
}
