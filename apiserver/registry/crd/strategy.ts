// The registry behaviour of CustomResourceDefinitions themselves (Kubernetes'
// customresourcedefinition strategy and REST.Delete): status reset on create
// with the storage version recorded in status.storedVersions, generation on
// spec changes, unconditional updates refused, and a first delete that only
// marks the CRD (deletionTimestamp, the cleanup finalizer, Terminating) so the
// controller can remove its custom resources first.
import type { ResourceBehaviour } from '../registry';
import { rfc3339 } from '../../../shared/api/validation/gotime';
import { CLEANUP_FINALIZER, setCondition, storageVersion, type CRD } from './types';
import type { FieldError } from '../../../shared/api/field-errors';
import { featureGates } from '../../../shared/options/feature-gates';
import { compileSchemaRules, hasValidationRules } from './validation-rules';

/** x-kubernetes-validations compiled (and cost-estimated) on every version's schema. */
function validationRuleErrors(crd: CRD): FieldError[] {
  if (!featureGates.enabled('CustomResourceValidationExpressions')) return [];
  const versions = Array.isArray(crd.spec?.versions) ? crd.spec.versions : [];
  return versions.flatMap((v, i) => {
    const schema = v?.schema?.openAPIV3Schema;
    if (!hasValidationRules(schema)) return [];
    return compileSchemaRules(schema!, `spec.versions[${i}].schema.openAPIV3Schema`).errors;
  });
}

function recordStorageVersion(crd: CRD): void {
  const sv = storageVersion(crd);
  if (!sv) return;
  const status = (crd.status ??= {});
  const stored = (status.storedVersions ??= []);
  if (!stored.includes(sv.name)) stored.push(sv.name);
}

export const crdBehaviour: ResourceBehaviour = {
  strategy: {
    tracksGeneration: true,
    allowUnconditionalUpdate: false,
    prepareForCreate(obj: CRD) {
      obj.status = { acceptedNames: { plural: '', kind: '' }, storedVersions: [] };
      if (Array.isArray(obj.spec?.versions)) recordStorageVersion(obj);
    },
    prepareForUpdate(obj: CRD) {
      if (Array.isArray(obj.spec?.versions)) recordStorageVersion(obj);
    },
    validate: (obj: CRD) => validationRuleErrors(obj),
    validateUpdate: (obj: CRD) => validationRuleErrors(obj),
    onDelete(obj: CRD, ctx) {
      const md = obj.metadata;
      if (!md.deletionTimestamp) {
        md.deletionTimestamp = rfc3339(ctx.now());
        const finalizers = (md.finalizers ??= []);
        if (!finalizers.includes(CLEANUP_FINALIZER)) finalizers.push(CLEANUP_FINALIZER);
        setCondition(
          obj,
          {
            type: 'Terminating',
            status: 'True',
            reason: 'InstanceDeletionPending',
            message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
          },
          md.deletionTimestamp,
        );
        return obj;
      }
      return md.finalizers?.length ? obj : null;
    },
  },
};
