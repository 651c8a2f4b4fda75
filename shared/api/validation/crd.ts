// apiextensions.k8s.io/v1 CustomResourceDefinition (SPEC Notable change 3):
// the object's rules (crd-object.ts), the structural schema of each version
// (crd-schema.ts) and what an update may change (crd-update.ts).
import { validateCRD, validateCRDStatus } from './crd-object';
import { validateCRDUpdate } from './crd-update';
import { registerKindRules } from './registry';

registerKindRules('apiextensions.k8s.io', 'CustomResourceDefinition', {
  ownMetadata: true,
  validate: validateCRD,
  validateUpdate: validateCRDUpdate,
  validateStatusUpdate: (obj) => validateCRDStatus(obj),
  updateOnly: true,
});
