// How a Go client trusts a server: crypto/x509 accepts a chain that ends at any
// certificate in the root pool, a leaf included (envtest's webhook caBundle is
// the serving certificate itself, and kubeconfigs may pin one). OpenSSL wants a
// self-signed root unless partial chains are allowed, so every TLS client that
// stands in for a Go one (webhooks, the REST client) spreads these options.
export const GO_ROOT_POOL_TRUST = { allowPartialTrustChain: true } as const;
