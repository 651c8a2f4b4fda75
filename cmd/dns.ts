// tkube dns: the cluster DNS server (what CoreDNS with its kubernetes plugin
// is in kubeadm and kind clusters): Services, endpoints and pods of the
// cluster by name, as the Kubernetes DNS specification 1.1.0 defines them.
import { runExecutable } from '../shared/options/command';
import { logger } from '../shared/log';
import { dnsFlags } from '../dns/app/options';
import { startDns } from '../dns/app/app';

const log = logger('dns');

runExecutable({
  name: 'dns',
  description:
    'The tkube cluster DNS server answers the names of Services, their endpoints and pods under the cluster domain over UDP and TCP, from informers on the apiserver, and forwards other names to the host resolvers.',
  flags: dnsFlags,
  log,
  // klog's "-v=2": commander reads a short option's "=2" as the value, so spell it --v=2.
  argv: (argv) => argv.map((a) => (/^-v=/.test(a) ? `--v=${a.slice(3)}` : a)),
  start: (values) => startDns(values),
  stopMessage: 'Requested to terminate, exiting',
});
