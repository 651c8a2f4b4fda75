// shared/client: the REST client every tkube component (and any third-party
// controller) uses to talk to the apiserver.
export { Client } from './client';
export {
  RestClient,
  Transport,
  decodeBody,
  defaultUserAgent,
  JSON_MEDIA_TYPE,
  PROTOBUF_MEDIA_TYPE,
} from './rest';
export type { ClientOptions, RequestOptions, RawResponse, StreamResponse, QueryValue } from './rest';
export { ResourceClient, fillItemTypes, DEFAULT_PAGE_SIZE } from './resource';
export { Watch, JsonLineDecoder, isWatchClosedError, type WatchEvent, type WatchEventType } from './watch';
export { Discovery, type DiscoveredResource, type DiscoveredGroup } from './discovery';
export {
  apiVersionOf,
  builtinResource,
  groupVersionPath,
  lookupBuiltin,
  resolveResource,
  type GroupVersionResource,
  type ResolvedResource,
  type ResourceSpec,
} from './gvr';
export * from './types';
export * from './errors';
export {
  TokenBucket,
  Unlimited,
  newRateLimiter,
  DEFAULT_BURST,
  DEFAULT_QPS,
  type RateLimiter,
} from './rate-limiter';
export { FakeClock, realClock, flush, type Clock, type Timer } from './clock';
export { loadKubeconfig, inClusterConfig, type ClientConfig } from './kubeconfig';
