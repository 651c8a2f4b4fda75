// Authentication and authorization flags that mean the same in every
// executable that serves HTTPS with them (Kubernetes' delegating auth options):
// client certificates, and how long webhook answers are cached.
import type { FlagSpec } from './flags';

export const clientCAFileFlag: FlagSpec = {
  name: 'client-ca-file',
  type: 'string',
  help: 'If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.',
};

export const tokenWebhookCacheTTLFlag: FlagSpec = {
  name: 'authentication-token-webhook-cache-ttl',
  type: 'duration',
  default: 120_000,
  help: 'The duration to cache responses from the webhook token authenticator.',
};

export const authorizationWebhookCacheFlags: FlagSpec[] = [
  {
    name: 'authorization-webhook-cache-authorized-ttl',
    type: 'duration',
    default: 300_000,
    help: "The duration to cache 'authorized' responses from the webhook authorizer.",
  },
  {
    name: 'authorization-webhook-cache-unauthorized-ttl',
    type: 'duration',
    default: 30_000,
    help: "The duration to cache 'unauthorized' responses from the webhook authorizer.",
  },
];
