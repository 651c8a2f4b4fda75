// CustomResourceDefinitions (apiextensions.k8s.io/v1): the controller that
// serves them (controller.ts), how one is turned into served resources
// (served.ts, schema.ts, openapi.ts) and the CRD resource's own registry
// behaviour (strategy.ts).
export { CRDController, type CRDControllerOptions } from './controller';
export { crdBehaviour } from './strategy';
export { CLEANUP_FINALIZER } from './types';
