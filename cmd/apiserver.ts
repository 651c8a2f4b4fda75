// tkube apiserver: the Kubernetes resource API over HTTPS. Only the flag table is
// loaded before the flags are read: `--help` (envtest runs it on every start) answers
// without loading the server.
import { runExecutable } from '../shared/options/command';
import { apiserverFlags } from '../apiserver/server/options';

runExecutable({
  name: 'apiserver',
  description:
    'The tkube API server validates and configures data for the API objects (pods, services, deployments ...) and serves the Kubernetes REST API over HTTPS.',
  flags: apiserverFlags,
  log: 'apiserver',
  start: async (values) => {
    const { startAPIServer } = await import('../apiserver/server/app.js');
    const api = await startAPIServer(values);
    if (!values.runControllerManager) return api;
    const { startEmbeddedControllerManager } = await import('../controller-manager/app/embedded.js');
    // After the post-start hooks and the first client request (envtest's read of the default
    // namespace): the controllers' start would otherwise compete with both on one event loop.
    const ready = api.server.postStartHooksSettled().then(() => api.server.clientRequestServed());
    const controllers = startEmbeddedControllerManager(ready, () => api.loopbackConfig());
    return {
      async stop() {
        await controllers.stop();
        await api.stop();
      },
    };
  },
});
