// Controllers that make workloads run (ReplicaSet, Deployment, Job ...), and the scheduler.
import type { ControllerDescriptor } from '../controller';

export const workloadControllers: ControllerDescriptor[] = [];
