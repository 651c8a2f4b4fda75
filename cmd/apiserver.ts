// tkube apiserver: the Kubernetes resource API over HTTPS.
import { runExecutable } from '../shared/options/command';
import { apiserverFlags } from '../apiserver/server/options';
import { startAPIServer } from '../apiserver/server/app';
import { logger } from '../shared/log';

runExecutable({
  name: 'apiserver',
  description:
    'The tkube API server validates and configures data for the API objects (pods, services, deployments ...) and serves the Kubernetes REST API over HTTPS.',
  flags: apiserverFlags,
  log: logger('apiserver'),
  start: (values) => startAPIServer(values),
});
