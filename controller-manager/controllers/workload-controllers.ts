// Controllers that make workloads run (ReplicaSet, Deployment, Job ...), and the scheduler.
// Each is named as kube-controller-manager's --controllers knows it; workers come from
// the --concurrent-*-syncs options (camelCase in ctx.options, SPEC defaults when absent).
import type { ControllerDescriptor } from '../controller';
import { replicaSetController, replicationController } from './replicaset/replicaset';
import { deploymentController } from './deployment/deployment';
import { statefulSetController } from './statefulset/statefulset';
import { daemonSetController } from './daemonset/daemonset';
import { jobController } from './job/job';
import { cronJobController } from './cronjob/cronjob';
import { endpointController } from './endpoint/endpoint';
import { endpointSliceController } from './endpointslice/endpointslice';
import { resourceQuotaController } from './resourcequota/resourcequota';
import { disruptionController } from './disruption/disruption';
import { schedulerController } from './scheduler/scheduler';
import { horizontalPodAutoscalerController } from './podautoscaler/podautoscaler';

export const workloadControllers: ControllerDescriptor[] = [
  replicaSetController, // --concurrent-replicaset-syncs (concurrentReplicasetSyncs, 5)
  replicationController, // --concurrent-rc-syncs (concurrentRcSyncs, 5)
  deploymentController, // --concurrent-deployment-syncs (concurrentDeploymentSyncs, 5)
  statefulSetController, // --concurrent-statefulset-syncs (concurrentStatefulsetSyncs, 5)
  daemonSetController, // --concurrent-daemonset-syncs (concurrentDaemonsetSyncs, 2)
  jobController, // --concurrent-job-syncs (concurrentJobSyncs, 5)
  cronJobController, // --concurrent-cron-job-syncs (concurrentCronJobSyncs, 5)
  endpointController, // --concurrent-endpoint-syncs (concurrentEndpointSyncs, 5)
  endpointSliceController, // --concurrent-service-endpoint-syncs, --max-endpoints-per-slice
  resourceQuotaController, // --concurrent-resource-quota-syncs, --resource-quota-sync-period
  disruptionController,
  horizontalPodAutoscalerController, // --horizontal-pod-autoscaler-* (sync period, tolerance, stabilization)
  schedulerController,
];
