// From a CustomResourceDefinition to what the registry serves: one store per
// CRD in its storage version (it owns the watch cache, keys
// /registry/<group>/<plural>/...), a store per other served version sharing
// those reads, and per served version a ServedResource (conversion None:
// apiVersion rewritten, same content), its schema hooks, subresources (status,
// scale), printer, apply model, deprecation warning and OpenAPI definitions.
import { stageOf, type APIResourceInfo } from '../../../shared/api/catalog';
import { formatAPIVersion } from '../../../shared/api/schema';
import type { SubresourceFacts } from '../../../shared/api/schema-types';
import { StatusError, conflict, notFound } from '../../../shared/api/status';
import { invalid, type FieldError } from '../../../shared/api/field-errors';
import { validateObjectMetaUpdate } from '../../../shared/api/validation/metadata';
import { crdPrinter } from '../../../shared/codec/table-crd';
import { structuralModel, UNSTRUCTURED_WITH_METADATA } from '../../apply';
import {
  statusStrategy,
  type CustomSubresource,
  type Registry,
  type ServedResource,
  type SubresourceDef,
} from '../registry';
import type { SchemaHooks, StoreResource } from '../resource';
import { StorageCodec, jsonCodec } from '../storage-codec';
import type { GenericStore } from '../store';
import type { Strategy, SubresourceStrategy } from '../strategy';
import { toScale, type ScalePaths } from '../strategies/scale';
import type { FieldLabels } from '../field-labels';
import { crdFieldLabels } from './field-labels';
import { jsonEqual } from '../../../shared/api/json-value';
import { publishVersion, type PublishedVersion } from './openapi';
import { rulesCheck, type RulesCheck } from './validation-rules-eval';
import { PreparedConversion, WebhookConverter } from './conversion';
import type { WebhookServiceResolver } from '../../aggregator/service-resolver';
import {
  applySchemaDefaults,
  hasDefaults,
  normalize,
  pathSegments,
  validateAgainstSchema,
  validateCustomMeta,
  valueAt,
} from './schema';
import {
  deprecationWarning,
  storageVersion,
  type CRD,
  type CRDVersion,
  type ScaleSpec,
  type Schema,
} from './types';

/** Discovery order of a custom resource's verbs (apiextensions-apiserver). */
const VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];
const SUB_VERBS = ['get', 'patch', 'update'];
const MAX_INT32 = 2147483647;

export interface CRDServing {
  /** What the serving was built from: a rebuild is needed when it changes. */
  fingerprint: string;
  /** The storage version's store: owns the watch cache; cleanup deletes through it. */
  primary: GenericStore;
  served: ServedResource[];
  published: PublishedVersion[];
}

export interface BuildOptions {
  registry: Registry;
  /** Where a conversion webhook given as a Service is reached. */
  services: WebhookServiceResolver;
  /** Read at request time: creates are refused while the CRD is terminating. */
  terminating(): boolean;
}

/** Everything serving depends on; conditions are left out (they change while serving goes on). */
export function servingFingerprint(crd: CRD): string {
  return JSON.stringify([crd.metadata.uid, crd.spec, crd.status?.acceptedNames]);
}

/** Reads of the storage version: the version's apiVersion, pruned and defaulted as Kubernetes decodes. */
class StoredCustomResourceCodec extends StorageCodec {
  constructor(
    private readonly base: StorageCodec,
    private readonly apiVersion: string,
    private readonly schema: Schema | undefined,
  ) {
    super(jsonCodec, null);
  }

  override encode(obj: any, key: string): Buffer {
    return this.base.encode(obj, key);
  }

  override decode(data: Buffer, rv: number, key: string): any {
    const obj = this.base.decode(data, rv, key);
    obj.apiVersion = this.apiVersion;
    normalize(obj, this.schema);
    return obj;
  }
}

const withoutMetadata = (o: any) => {
  const { metadata: _m, ...rest } = o;
  return rest;
};

function scaleErrors(obj: any, scale: ScaleSpec | undefined, which: 'spec' | 'status'): FieldError[] {
  if (!scale) return [];
  const path = which === 'spec' ? scale.specReplicasPath : scale.statusReplicasPath;
  const errs: FieldError[] = [];
  const v = valueAt(obj, pathSegments(path));
  if (v !== undefined && v !== null) {
    if (typeof v !== 'number' || !Number.isInteger(v))
      errs.push(invalid(path, v, `${path} accessor error: ${JSON.stringify(v)} is not an integer`));
    else if (v < 0) errs.push(invalid(path, v, 'should be a non-negative integer'));
    else if (v > MAX_INT32) errs.push(invalid(path, v, `should be less than or equal to ${MAX_INT32}`));
  }
  if (which === 'status' && scale.labelSelectorPath) {
    const sel = valueAt(obj, pathSegments(scale.labelSelectorPath));
    if (sel !== undefined && sel !== null && typeof sel !== 'string')
      errs.push(invalid(scale.labelSelectorPath, sel, `${scale.labelSelectorPath} must be a string`));
  }
  return errs;
}

/** The scale subresource of a custom resource (autoscaling/v1 Scale from the CRD's paths). */
function crdScale(scale: ScaleSpec): CustomSubresource {
  const paths: ScalePaths = {
    specReplicas: pathSegments(scale.specReplicasPath),
    statusReplicas: pathSegments(scale.statusReplicasPath),
    selector: scale.labelSelectorPath ? pathSegments(scale.labelSelectorPath) : undefined,
    selectorString: true,
  };
  const scaleOf = (obj: any) => {
    const s = toScale(obj, paths);
    if (!scale.labelSelectorPath || !s.status.selector) delete s.status.selector;
    return s;
  };
  const specPath = paths.specReplicas!;
  return {
    async get(ctx, name, served) {
      const o = await served.store.reader.get(ctx, name);
      if (served.prepare) await served.prepare([o.obj]);
      return scaleOf(served.fromStorage(o.obj));
    },
    async update(ctx, name, body, served, hooks) {
      const gr = { group: served.info.group, resource: served.info.resource };
      const replicas = body.spec?.replicas ?? 0;
      const rv = body.metadata?.resourceVersion;
      const out = await served.store.update(
        ctx,
        name,
        async (current) => {
          if (!current) throw notFound(gr, name);
          if (rv && rv !== current.metadata.resourceVersion) throw conflict(gr, name);
          // The object keeps its resourceVersion: the write is conditional on what was read.
          if (served.prepare) await served.prepare([current]);
          const obj = served.fromStorage(current);
          let target = obj;
          for (const k of specPath.slice(0, -1)) {
            if (target[k] === null || typeof target[k] !== 'object') target[k] = {};
            target = target[k];
          }
          target[specPath[specPath.length - 1]] = replicas;
          if (served.prepareWrite) await served.prepareWrite(obj);
          return served.toStorage(obj);
        },
        hooks,
      );
      if (served.prepare) await served.prepare([out.obj]);
      return { obj: scaleOf(served.fromStorage(out.obj)), created: false };
    },
  };
}

function schemaHooks(schema: Schema | undefined, namespaced: boolean): SchemaHooks {
  const update = (obj: any, old: any) => [
    ...validateObjectMetaUpdate(obj.metadata, old.metadata),
    ...validateAgainstSchema(obj, schema, old),
  ];
  return {
    applyDefaults: (obj) => normalize(obj, schema),
    validate: (obj) => [...validateCustomMeta(obj, namespaced), ...validateAgainstSchema(obj, schema)],
    validateUpdate: update,
    validateStatusUpdate: update,
  };
}

/**
 * Schema hooks for a served version behind a conversion webhook: its store sees objects of
 * both forms (patches are computed in the served version, writes arrive in the storage
 * version), so each object is checked with the schema of its own apiVersion.
 */
function schemaHooksByVersion(
  served: { apiVersion: string; schema: Schema | undefined },
  storage: { apiVersion: string; schema: Schema | undefined },
  namespaced: boolean,
): SchemaHooks {
  const forServed = schemaHooks(served.schema, namespaced);
  const forStorage = schemaHooks(storage.schema, namespaced);
  const pick = (obj: any) => (obj?.apiVersion === served.apiVersion ? forServed : forStorage);
  return {
    applyDefaults: (obj) => pick(obj).applyDefaults(obj),
    validate: (obj) => pick(obj).validate(obj),
    validateUpdate: (obj, old) => pick(obj).validateUpdate(obj, old),
    validateStatusUpdate: (obj, old) => pick(obj).validateStatusUpdate!(obj, old),
  };
}

function strategyFor(crd: CRD, v: CRDVersion, fieldLabels: FieldLabels, o: BuildOptions): Strategy {
  const { group, names } = crd.spec;
  const scale = v.subresources?.scale;
  const rules = rulesCheck(v.schema?.openAPIV3Schema);
  return {
    allowUnconditionalUpdate: false,
    prepareForCreate(obj) {
      if (o.terminating()) {
        throw new StatusError(
          405,
          'MethodNotAllowed',
          'create not allowed while custom resource definition is terminating',
          {
            group,
            kind: names.plural,
          },
        );
      }
      obj.metadata.generation = 1;
    },
    prepareForUpdate(obj, old) {
      // Any change outside metadata (status too, without a status subresource) is a new generation.
      if (!jsonEqual(withoutMetadata(obj), withoutMetadata(old)))
        obj.metadata.generation = (old.metadata.generation ?? 0) + 1;
    },
    validate: (obj, ctx) => [...scaleErrors(obj, scale, 'spec'), ...rules(obj, undefined, ctx)],
    validateUpdate: (obj, old, ctx) => [...scaleErrors(obj, scale, 'spec'), ...rules(obj, old, ctx)],
    fieldLabels,
  };
}

function statusSubresource(scale: ScaleSpec | undefined, rules: RulesCheck): SubresourceStrategy {
  return {
    ...statusStrategy,
    validate: (obj, old, ctx) => [...scaleErrors(obj, scale, 'status'), ...rules(obj, old, ctx)],
  };
}

/** The served resources, stores and published schemas of an established CRD. */
export function buildServing(crd: CRD, o: BuildOptions): CRDServing {
  const { group } = crd.spec;
  const accepted = crd.status?.acceptedNames ?? crd.spec.names;
  const plural = crd.spec.names.plural;
  const kind = accepted.kind || crd.spec.names.kind;
  const listKind = accepted.listKind || `${kind}List`;
  const singular = accepted.singular || kind.toLowerCase();
  const namespaced = crd.spec.scope === 'Namespaced';
  const sv = storageVersion(crd) ?? crd.spec.versions[0];
  const storageGV = formatAPIVersion(group, sv.name);
  const keyRoot = o.registry.keyRoot(group, plural);
  const fieldLabels = crdFieldLabels(crd);
  const resFor = (v: CRDVersion): StoreResource => ({
    group,
    resource: plural,
    kind,
    apiVersion: storageGV,
    namespaced,
    keyRoot,
    hasStatus: !!v.subresources?.status,
  });
  const schemaOf = (v: CRDVersion) => v.schema?.openAPIV3Schema;
  const webhook = crd.spec.conversion?.strategy === 'Webhook';
  const converter = webhook
    ? new WebhookConverter(crd.spec.conversion?.webhook ?? {}, kind, o.services)
    : undefined;
  const primary = o.registry.newStore(resFor(sv), {
    schema: schemaHooks(schemaOf(sv), namespaced),
    strategy: strategyFor(crd, sv, fieldLabels, o),
    codec: new StoredCustomResourceCodec(o.registry.codec, storageGV, schemaOf(sv)),
  });

  const served: ServedResource[] = [];
  const published: PublishedVersion[] = [];
  for (const v of crd.spec.versions) {
    if (!v.served) continue;
    const schema = schemaOf(v);
    const gv = formatAPIVersion(group, v.name);
    const isStorage = v.name === sv.name;
    // The registry works on stored (storage version) objects: with a webhook between the
    // versions, writes of a served version are checked in storage form (and its CEL rules too).
    const store = isStorage
      ? primary
      : o.registry.newStore(resFor(v), {
          schema: converter
            ? schemaHooksByVersion(
                { apiVersion: gv, schema },
                { apiVersion: storageGV, schema: schemaOf(sv) },
                namespaced,
              )
            : schemaHooks(schema, namespaced),
          strategy: strategyFor(crd, converter ? sv : v, fieldLabels, o),
          sharedReads: primary,
        });
    const subFacts: SubresourceFacts[] = [];
    const subresources = new Map<string, SubresourceDef>();
    if (v.subresources?.status) {
      subFacts.push({ name: 'status', kind, verbs: SUB_VERBS });
      subresources.set('status', {
        name: 'status',
        kind,
        group,
        version: v.name,
        verbs: SUB_VERBS,
        strategy: statusSubresource(v.subresources.scale, rulesCheck(schema)),
      });
    }
    if (v.subresources?.scale) {
      subFacts.push({ name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: SUB_VERBS });
      subresources.set('scale', {
        name: 'scale',
        kind: 'Scale',
        group: 'autoscaling',
        version: 'v1',
        verbs: SUB_VERBS,
        custom: crdScale(v.subresources.scale),
      });
    }
    const info: APIResourceInfo = {
      group,
      version: v.name,
      resource: plural,
      kind,
      singular,
      namespaced,
      verbs: VERBS,
      // No built-in definition: handlers treat the resource as custom (JSON only, no strategic merge).
      definition: '',
      ...(accepted.shortNames?.length ? { shortNames: accepted.shortNames } : {}),
      ...(accepted.categories?.length ? { categories: accepted.categories } : {}),
      ...(v.deprecated ? { deprecated: true as const } : {}),
      ...(subFacts.length ? { subresources: subFacts } : {}),
      groupVersion: gv,
      listKind,
      stage: stageOf(v.name),
    };
    const warning = deprecationWarning(crd, v);
    const defaults = hasDefaults(schema);
    const prepared = converter && !isStorage ? new PreparedConversion(converter, gv, storageGV) : undefined;
    const conversion = isStorage
      ? { toStorage: (x: any) => x, fromStorage: (x: any) => x }
      : prepared
        ? {
            toStorage: prepared.toStorage,
            fromStorage: (x: any) => {
              const out = prepared.fromStorage(x);
              if (defaults) applySchemaDefaults(out, schema);
              return out;
            },
            prepare: (objs: any[]) => prepared.prepare(objs),
            prepareWrite: (obj: any) => prepared.prepareWrite(obj),
          }
        : {
            toStorage: (x: any) => ({ ...x, apiVersion: storageGV }),
            fromStorage: (x: any) => {
              const out = defaults ? structuredClone(x) : { ...x };
              out.apiVersion = gv;
              if (defaults) applySchemaDefaults(out, schema);
              return out;
            },
          };
    served.push({
      info,
      store,
      ...conversion,
      isStorageVersion: isStorage,
      printer: crdPrinter(v.additionalPrinterColumns),
      customSchema: schema,
      subresources,
      fieldModel: schema ? structuralModel(schema) : UNSTRUCTURED_WITH_METADATA,
      ...(warning ? { deprecation: { warning, removedRelease: '' } } : {}),
    });
    const { groupVersion: _gv, listKind: _lk, stage: _st, definition: _d, ...facts } = info;
    published.push(publishVersion(facts, listKind, schema, crd.spec.preserveUnknownFields === true));
  }
  return { fingerprint: servingFingerprint(crd), primary, served, published };
}
