// Controllers of the cluster's machinery (namespaces, garbage collection,
// nodes, service accounts ...).
import type { ControllerDescriptor } from '../controller';
import { namespaceController } from './namespace/namespace';
import { garbageCollectorController } from './garbagecollector/garbagecollector';
import { nodeLifecycleController } from './nodelifecycle/nodelifecycle';
import { taintEvictionController } from './nodelifecycle/taint-eviction';
import { serviceAccountController } from './serviceaccount/serviceaccount';
import { rootCACertPublisher } from './rootcacertpublisher/publisher';
import { podGCController } from './podgc/podgc';
import { ttlAfterFinishedController } from './ttlafterfinished/ttlafterfinished';
import { bootstrapSignerController, tokenCleanerController } from './bootstrap/bootstrap';
import { validatingAdmissionPolicyStatusController } from './validatingadmissionpolicystatus/controller';

export const coreControllers: ControllerDescriptor[] = [
  serviceAccountController,
  rootCACertPublisher,
  namespaceController,
  garbageCollectorController,
  nodeLifecycleController,
  taintEvictionController,
  podGCController,
  ttlAfterFinishedController,
  bootstrapSignerController,
  tokenCleanerController,
  validatingAdmissionPolicyStatusController,
];
