// CustomResourceDefinitions (apiextensions.k8s.io/v1): the controller that
// serves them (controller.ts: watch and sync; conditions.ts: NamesAccepted,
// Established, Terminating; serving.ts: registry, discovery and OpenAPI;
// cleanup.ts: custom resources deleted with their CRD), how one is turned
// into served resources (served.ts, schema.ts, openapi.ts) and the CRD
// resource's own registry behaviour (strategy.ts).
export { CRDController, type CRDControllerOptions } from './controller';
export { crdBehaviour } from './strategy';
export { CLEANUP_FINALIZER } from './types';
