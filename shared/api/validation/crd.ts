// apiextensions.k8s.io/v1 CustomResourceDefinition (SPEC Notable change 3):
// name, group, scope, names, versions (unique, exactly one storage), a
// structural openAPIV3Schema per version, conversion.
import type { FieldError } from '../field-errors';
import { forbidden, invalid, notSupported, required } from '../field-errors';
import { validateObjectMeta, validateObjectMetaUpdate } from './metadata';
import { isDNS1035Label, isDNS1123Subdomain, nameIsDNSSubdomain } from './names';
import { asArr, asObj, asStr, child, index, isSet, key, type Obj } from './path';
import { registerKindRules } from './registry';
import { validateClientConfig, validateReviewVersions } from './admission';

function validateNames(names: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const dns = (v: string, f: string, prefix = '') => {
    const e = isDNS1035Label(v);
    if (v && e.length) errs.push(invalid(child(p, f), v, prefix + e.join(',')));
  };
  const plural = asStr(names.plural);
  const singular = asStr(names.singular);
  const kind = asStr(names.kind);
  const listKind = asStr(names.listKind);
  dns(plural, 'plural');
  dns(singular, 'singular');
  if (kind && isDNS1035Label(kind.toLowerCase()).length)
    errs.push(
      invalid(
        child(p, 'kind'),
        kind,
        'may have mixed case, but should otherwise match: ' + isDNS1035Label(kind.toLowerCase()).join(','),
      ),
    );
  if (listKind && isDNS1035Label(listKind.toLowerCase()).length)
    errs.push(
      invalid(
        child(p, 'listKind'),
        listKind,
        'may have mixed case, but should otherwise match: ' +
          isDNS1035Label(listKind.toLowerCase()).join(','),
      ),
    );
  asArr(names.shortNames).forEach((s, i) => {
    const e = isDNS1035Label(asStr(s));
    if (e.length) errs.push(invalid(index(child(p, 'shortNames'), i), s, e.join(',')));
  });
  if (kind && kind === listKind)
    errs.push(invalid(child(p, 'listKind'), listKind, 'kind and listKind may not be the same'));
  asArr(names.categories).forEach((c, i) => {
    const e = isDNS1035Label(asStr(c));
    if (e.length) errs.push(invalid(index(child(p, 'categories'), i), c, e.join(',')));
  });
  return errs;
}

/** The structural-schema rules users meet first (type everywhere, object at the root). */
export function validateStructural(schema: Obj, p: string, root = true): FieldError[] {
  const errs: FieldError[] = [];
  const type = asStr(schema.type);
  const loose =
    schema['x-kubernetes-int-or-string'] === true || schema['x-kubernetes-preserve-unknown-fields'] === true;
  if (root) {
    if (!type) errs.push(required(child(p, 'type'), 'must not be empty at the root'));
    else if (type !== 'object') errs.push(invalid(child(p, 'type'), type, 'must be object at the root'));
    const meta = asObj(asObj(schema.properties)?.metadata);
    if (meta) {
      const extra = Object.keys(meta).filter((k) => k !== 'type');
      const props = Object.keys(asObj(meta.properties) ?? {}).filter(
        (k) => k !== 'name' && k !== 'generateName',
      );
      if (extra.length > 0 && (props.length > 0 || extra.some((k) => k !== 'properties')))
        errs.push(
          forbidden(
            key(child(p, 'properties'), 'metadata'),
            'must not specify anything other than name and generateName, but metadata is implicitly specified',
          ),
        );
    }
  }
  if (schema['x-kubernetes-preserve-unknown-fields'] === false)
    errs.push(invalid(child(p, 'x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'));
  for (const [name, sub] of Object.entries(asObj(schema.properties) ?? {})) {
    const sp = key(child(p, 'properties'), name);
    const s = asObj(sub) ?? {};
    if (
      !asStr(s.type) &&
      s['x-kubernetes-int-or-string'] !== true &&
      s['x-kubernetes-preserve-unknown-fields'] !== true
    )
      errs.push(required(child(sp, 'type'), 'must not be empty for specified object fields'));
    errs.push(...validateStructural(s, sp, false));
  }
  const items = asObj(schema.items);
  if (type === 'array' && !items && !loose) errs.push(required(child(p, 'items'), 'must be specified'));
  if (items) {
    if (
      !asStr(items.type) &&
      items['x-kubernetes-int-or-string'] !== true &&
      items['x-kubernetes-preserve-unknown-fields'] !== true
    )
      errs.push(required(child(child(p, 'items'), 'type'), 'must not be empty for specified array items'));
    errs.push(...validateStructural(items, child(p, 'items'), false));
  }
  const additional = asObj(schema.additionalProperties);
  if (additional) errs.push(...validateStructural(additional, child(p, 'additionalProperties'), false));
  return errs;
}

function validateCRD(o: Obj): FieldError[] {
  const spec = asObj(o.spec) ?? {};
  const names = asObj(spec.names) ?? {};
  const requiredName = `${asStr(names.plural)}.${asStr(spec.group)}`;
  return [
    ...validateObjectMeta(asObj(o.metadata), {
      namespaced: false,
      name: (n, prefix) => [
        ...nameIsDNSSubdomain(n, prefix),
        ...(n !== requiredName ? ['must be spec.names.plural+"."+spec.group'] : []),
      ],
    }),
    ...validateCRDSpec(spec),
  ];
}

function validateCRDSpec(spec: Obj): FieldError[] {
  const names = asObj(spec.names) ?? {};
  const group = asStr(spec.group);
  const errs: FieldError[] = [];
  if (!group) errs.push(required('spec.group', ''));
  else if (isDNS1123Subdomain(group).length)
    errs.push(invalid('spec.group', group, isDNS1123Subdomain(group).join(',')));
  else if (group.split('.').length < 2)
    errs.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  const scope = asStr(spec.scope);
  if (!scope) errs.push(required('spec.scope', ''));
  else if (scope !== 'Cluster' && scope !== 'Namespaced')
    errs.push(notSupported('spec.scope', scope, ['Cluster', 'Namespaced']));
  const versions = asArr(spec.versions).map((v) => asObj(v) ?? {});
  const seen = new Set<string>();
  let unique = true;
  let storage = 0;
  versions.forEach((v, i) => {
    const vp = index('spec.versions', i);
    const name = asStr(v.name);
    if (v.storage === true) storage++;
    if (seen.has(name)) unique = false;
    seen.add(name);
    const e = isDNS1035Label(name);
    if (e.length) errs.push(invalid(child(vp, 'name'), name, e.join(',')));
    const schema = asObj(asObj(v.schema)?.openAPIV3Schema);
    if (!schema) errs.push(required(child(vp, 'schema.openAPIV3Schema'), 'schemas are required'));
    else errs.push(...validateStructural(schema, child(vp, 'schema.openAPIV3Schema')));
  });
  if (!unique) errs.push(invalid('spec.versions', versions, 'must contain unique version names'));
  if (storage !== 1)
    errs.push(invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  for (const f of ['plural', 'singular', 'kind', 'listKind'])
    if (!asStr(names[f])) errs.push(required(`spec.names.${f}`, ''));
  errs.push(...validateNames(names, 'spec.names'));
  if (spec.preserveUnknownFields === true)
    errs.push(
      invalid(
        'spec.preserveUnknownFields',
        true,
        'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ),
    );
  const conv = asObj(spec.conversion);
  if (conv) {
    const strategy = asStr(conv.strategy);
    if (strategy !== 'None' && strategy !== 'Webhook')
      errs.push(notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook']));
    const hook = asObj(conv.webhook);
    if (strategy === 'Webhook') {
      if (!hook) errs.push(required('spec.conversion.webhook', 'required when strategy is set to Webhook'));
      else {
        if (hook.clientConfig)
          errs.push(
            ...validateClientConfig(asObj(hook.clientConfig) ?? {}, 'spec.conversion.webhook.clientConfig'),
          );
        else
          errs.push(
            required('spec.conversion.webhook.clientConfig', 'required when strategy is set to Webhook'),
          );
        errs.push(
          ...validateReviewVersions(
            hook.conversionReviewVersions,
            'spec.conversion.webhook.conversionReviewVersions',
          ),
        );
      }
    } else if (isSet(conv.webhook))
      errs.push(
        forbidden('spec.conversion.webhook', 'should not be set when strategy is not set to Webhook'),
      );
  }
  return errs;
}

registerKindRules('apiextensions.k8s.io', 'CustomResourceDefinition', {
  ownMetadata: true,
  validate: validateCRD,
  validateUpdate(o, old) {
    const s = asObj(o.spec) ?? {};
    const os = asObj(old.spec) ?? {};
    const errs = [...validateObjectMetaUpdate(asObj(o.metadata), asObj(old.metadata)), ...validateCRDSpec(s)];
    if (s.group !== os.group) errs.push(invalid('spec.group', s.group ?? '', 'field is immutable'));
    const n = asObj(s.names) ?? {};
    const on = asObj(os.names) ?? {};
    if (n.plural !== on.plural) errs.push(invalid('spec.names.plural', n.plural ?? '', 'field is immutable'));
    return errs;
  },
  updateOnly: true,
});
