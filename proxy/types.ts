// The fields of Services and EndpointSlices the proxy reads (core/v1 and
// discovery.k8s.io/v1 as served; everything else is ignored).
export interface ServicePortSpec {
  name?: string;
  protocol?: string;
  port: number;
  nodePort?: number;
}

export interface Service {
  metadata: { namespace?: string; name: string; labels?: Record<string, string> };
  spec?: {
    type?: string;
    clusterIP?: string;
    clusterIPs?: string[];
    ports?: ServicePortSpec[];
    externalIPs?: string[];
    sessionAffinity?: string;
    sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
    internalTrafficPolicy?: string;
    externalTrafficPolicy?: string;
    loadBalancerSourceRanges?: string[];
    healthCheckNodePort?: number;
  };
  status?: { loadBalancer?: { ingress?: { ip?: string; ipMode?: string }[] } };
}

export interface EndpointSliceEndpoint {
  addresses: string[];
  conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
  nodeName?: string;
}

export interface EndpointSlice {
  metadata: { namespace?: string; name: string; labels?: Record<string, string> };
  addressType?: string;
  endpoints?: EndpointSliceEndpoint[];
  ports?: { name?: string; port?: number; protocol?: string }[];
}

/** The label naming the Service an EndpointSlice belongs to. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** Services (and their slices) with this label belong to another proxy. */
export const SERVICE_PROXY_NAME_LABEL = 'service.kubernetes.io/service-proxy-name';
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';
/** kube-proxy's informer selector: what it programs at all. */
export const PROXY_LABEL_SELECTOR = `!${SERVICE_PROXY_NAME_LABEL},!${HEADLESS_LABEL}`;
