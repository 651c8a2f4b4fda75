// tkube metrics-server: resource metrics of nodes and pods (metrics.k8s.io),
// served through the apiserver's aggregation layer for kubectl top and autoscalers.
import { runExecutable } from '../shared/options/command';
import { Client } from '../shared/client';
import { logger } from '../shared/log';
import { metricsServerFlags } from '../metrics-server/options';
import { MetricsServer } from '../metrics-server/server';

const log = logger('metrics-server');

runExecutable({
  name: 'metrics-server',
  description:
    'Scrapes the resource metrics of every node agent and serves them as the metrics.k8s.io API through the aggregation layer.',
  flags: metricsServerFlags,
  log,
  start: async (values) => {
    // Protobuf, as metrics-server's client asks: its pod and node watches then share the frames
    // the apiserver encodes once for every other Protobuf watcher (a JSON one costs an encode,
    // and a cached JSON copy, per pod version).
    const client = Client.fromKubeconfigOrCluster(values.kubeconfig as string | undefined);
    const server = new MetricsServer({
      client,
      bindAddress: values.bindAddress as string,
      port: values.securePort as number,
      resolutionMs: values.metricResolution as number,
      externalName: values.serviceExternalName as string,
    });
    await server.start();
    return {
      async stop() {
        await server.stop();
        await client.close();
      },
    };
  },
  stopMessage: 'Requested to terminate, exiting',
});
