// Every kube-apiserver option tkube knows, under its real Kubernetes name,
// with Kubernetes' default. Behaviour lives elsewhere; this is the table.
import type { FlagSpec } from '../../shared/options/flags';
import { commonFlags } from '../../shared/options/common';
import {
  authorizationWebhookCacheFlags,
  clientCAFileFlag,
  tokenWebhookCacheTTLFlag,
} from '../../shared/options/auth';

const port = (v: number) => (v < 1 || v > 65535 ? 'must be a port number between 1 and 65535' : undefined);
const nonNegative = (v: number) => (v < 0 ? 'must not be negative' : undefined);

const serving: FlagSpec[] = [
  {
    name: 'secure-port',
    type: 'int',
    default: 6443,
    help: 'The port on which to serve HTTPS with authentication and authorization. It cannot be switched off with 0.',
    validate: port,
  },
  {
    name: 'bind-address',
    type: 'string',
    default: '0.0.0.0',
    help: 'The IP address on which to listen for the --secure-port port.',
  },
  {
    name: 'advertise-address',
    type: 'string',
    help: 'The IP address on which to advertise the apiserver to members of the cluster (the kubernetes Service endpoints). Defaults to --bind-address or the first non-loopback address.',
  },
  {
    name: 'cert-dir',
    type: 'string',
    default: '/var/run/kubernetes',
    help: 'The directory where the TLS certs are located. Ignored when --tls-cert-file and --tls-private-key-file are given.',
  },
  {
    name: 'tls-cert-file',
    type: 'string',
    help: 'File containing the default x509 certificate for HTTPS (CA cert, if any, concatenated after it). When absent, a self-signed certificate is generated into --cert-dir.',
  },
  {
    name: 'tls-private-key-file',
    type: 'string',
    help: 'File containing the default x509 private key matching --tls-cert-file.',
  },
  {
    name: 'tls-min-version',
    type: 'string',
    help: 'Minimum TLS version supported. Possible values: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13.',
  },
  {
    name: 'tls-cipher-suites',
    type: 'list',
    help: 'Comma-separated list of cipher suites for the server. If omitted, the default Go cipher suites will be used.',
  },
  {
    name: 'tls-sni-cert-key',
    type: 'array',
    help: 'A pair of x509 certificate and private key file paths, optionally suffixed with a list of domain patterns: "example.crt,example.key" or "foo.crt,foo.key:*.foo.com,foo.com". Repeatable.',
  },
  {
    name: 'strict-transport-security-directives',
    type: 'list',
    help: 'List of directives for HSTS, comma separated. If empty, no HSTS header is sent.',
  },
  {
    name: 'cors-allowed-origins',
    type: 'list',
    help: 'List of allowed origins for CORS, comma separated; regular expressions are supported. If empty, CORS is not enabled.',
  },
  {
    name: 'http2-max-streams-per-connection',
    type: 'int',
    default: 0,
    help: 'The limit that the server gives to clients for the maximum number of streams in an HTTP/2 connection. Zero means 100, as kube-apiserver.',
    validate: nonNegative,
  },
  {
    name: 'max-connection-bytes-per-sec',
    type: 'int',
    default: 0,
    help: 'If non-zero, throttle each user connection to this number of bytes/sec.',
    validate: nonNegative,
  },
  {
    name: 'write-kubeconfig',
    type: 'string',
    help: 'Write an admin kubeconfig (client certificate, CA data, server URL) to this path on start.',
  },
  {
    name: 'write-kubeconfig-server',
    type: 'string',
    help: 'The server URL written into --write-kubeconfig (default https://127.0.0.1:<secure-port>).',
  },
];

const storage: FlagSpec[] = [
  {
    name: 'storage-backend',
    type: 'string',
    default: 'embedded',
    help: 'The storage backend for persistence. Options: "embedded" (LMDB in --data-dir, the default), "etcd3".',
    validate: (v) => (['embedded', 'etcd3'].includes(v) ? undefined : 'must be "embedded" or "etcd3"'),
  },
  { name: 'data-dir', type: 'string', default: '/var/lib/tkube', help: 'Directory of the embedded store.' },
  {
    name: 'etcd-servers',
    type: 'list',
    help: 'List of etcd servers to connect with (scheme://ip:port), comma separated. Selects the etcd3 backend.',
  },
  {
    name: 'etcd-prefix',
    type: 'string',
    default: '/registry',
    help: 'The prefix to prepend to all resource paths in the store.',
  },
  {
    name: 'etcd-cafile',
    type: 'string',
    help: 'SSL Certificate Authority file used to secure etcd communication.',
  },
  {
    name: 'etcd-certfile',
    type: 'string',
    help: 'SSL certification file used to secure etcd communication.',
  },
  { name: 'etcd-keyfile', type: 'string', help: 'SSL key file used to secure etcd communication.' },
  {
    name: 'etcd-compaction-interval',
    type: 'duration',
    default: 300_000,
    help: 'The interval of compaction requests. If 0, the compaction request from apiserver is disabled.',
  },
  {
    name: 'etcd-count-metric-poll-period',
    type: 'duration',
    default: 60_000,
    help: 'Frequency of polling the store for the number of resources per type. 0 disables metric collection.',
  },
  {
    name: 'etcd-db-metric-poll-interval',
    type: 'duration',
    default: 30_000,
    help: 'The interval of requests to poll the store and update the database size metric. 0 disables the metric collection.',
  },
  {
    name: 'etcd-healthcheck-timeout',
    type: 'duration',
    default: 2_000,
    help: 'The timeout to use when checking the store health.',
  },
  {
    name: 'etcd-readycheck-timeout',
    type: 'duration',
    default: 2_000,
    help: 'The timeout to use when checking the store readiness.',
  },
  {
    name: 'lease-reuse-duration-seconds',
    type: 'int',
    default: 60,
    help: 'The time in seconds that each lease is reused. A lower value could avoid large number of objects reusing the same lease.',
  },
  {
    name: 'storage-media-type',
    type: 'string',
    default: 'application/vnd.kubernetes.protobuf',
    help: 'The media type to use to store objects in storage. Supported: application/json, application/yaml, application/vnd.kubernetes.protobuf.',
    validate: (v) =>
      ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'].includes(v)
        ? undefined
        : 'unsupported media type',
  },
  { name: 'watch-cache', type: 'bool', default: true, help: 'Enable watch caching in the apiserver.' },
  {
    name: 'default-watch-cache-size',
    type: 'int',
    default: 100,
    help: 'Default watch cache size. If zero, watch cache will be disabled for resources that do not have a default watch size set.',
    validate: nonNegative,
  },
  {
    name: 'watch-cache-sizes',
    type: 'list',
    help: 'Watch cache size settings for some resources (pods, nodes, etc.), comma separated. The individual setting format: resource[.group]#size.',
    validate: (v: string[]) =>
      v.find((s) => !/^[a-z0-9.-]+#\d+$/.test(s)) && 'invalid format, expected resource[.group]#size',
  },
  {
    name: 'encryption-provider-config',
    type: 'string',
    help: 'The file containing configuration for encryption providers to be used for storing secrets in the store.',
  },
  {
    name: 'encryption-provider-config-automatic-reload',
    type: 'bool',
    default: false,
    help: 'Determines if the file set by --encryption-provider-config should be automatically reloaded if the disk contents change.',
  },
  {
    name: 'delete-collection-workers',
    type: 'int',
    default: 1,
    help: 'Number of workers spawned for DeleteCollection call. These are used to speed up namespace cleanup.',
    validate: (v) => (v < 1 ? 'must be at least 1' : undefined),
  },
  {
    name: 'enable-garbage-collector',
    type: 'bool',
    default: true,
    help: 'Enables the generic garbage collector. MUST be synced with the corresponding flag of the kube-controller-manager.',
  },
];

const limits: FlagSpec[] = [
  {
    name: 'request-timeout',
    type: 'duration',
    default: 60_000,
    help: 'An optional field indicating the duration a handler must keep a request open before timing it out. This is the default request timeout for requests but may be overridden by flags such as --min-request-timeout for specific types of requests.',
  },
  {
    name: 'min-request-timeout',
    type: 'int',
    default: 1800,
    help: 'An optional field indicating the minimum number of seconds a handler must keep a request open before timing it out. Currently only honored by the watch request handler, which picks a randomized value above this number as the connection timeout, to spread out load.',
    validate: nonNegative,
  },
  {
    name: 'max-requests-inflight',
    type: 'int',
    default: 400,
    help: "This and --max-mutating-requests-inflight are summed to determine the server's total concurrency limit when priority and fairness is on. Otherwise, the maximum number of non-mutating requests in flight at a given time; 0 means no limit.",
    validate: nonNegative,
  },
  {
    name: 'max-mutating-requests-inflight',
    type: 'int',
    default: 200,
    help: 'The maximum number of mutating requests in flight at a given time (when priority and fairness is off); 0 means no limit.',
    validate: nonNegative,
  },
  {
    name: 'enable-priority-and-fairness',
    type: 'bool',
    default: true,
    help: 'If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness.',
  },
  {
    name: 'goaway-chance',
    type: 'float',
    default: 0,
    help: 'To prevent HTTP/2 clients from getting stuck on a single apiserver, randomly close a connection (GOAWAY). Min is 0 (off), Max is .02.',
    validate: (v) => (v < 0 || v > 0.02 ? 'must be between 0 and 0.02' : undefined),
  },
  {
    name: 'shutdown-delay-duration',
    type: 'duration',
    default: 0,
    help: 'Time to delay the termination. During that time the server keeps serving requests normally; /healthz and /livez return success, /readyz returns failure.',
  },
  {
    name: 'shutdown-send-retry-after',
    type: 'bool',
    default: false,
    help: 'If true the HTTP server will continue listening until all non long running requests in flight have been drained, during this window all incoming requests will be rejected with a status code 429 and a Retry-After response header.',
  },
  {
    name: 'shutdown-watch-termination-grace-period',
    type: 'duration',
    default: 0,
    help: 'The grace period for active watch requests to drain during graceful shutdown.',
  },
  {
    name: 'livez-grace-period',
    type: 'duration',
    default: 0,
    help: "This option represents the maximum amount of time it should take for apiserver to complete its startup sequence and become live. From apiserver's start time to when this amount of time has elapsed, /livez will assume that unfinished post-start hooks will complete successfully and therefore return true.",
  },
  { name: 'event-ttl', type: 'duration', default: 3_600_000, help: 'Amount of time to retain events.' },
  {
    name: 'service-cluster-ip-range',
    type: 'string',
    default: '10.0.0.0/24',
    help: 'A CIDR notation IP range from which to assign service cluster IPs. This must not overlap with any IP ranges assigned to nodes or pods. Max of two dual-stack CIDRs is allowed.',
  },
  {
    name: 'service-node-port-range',
    type: 'string',
    default: '30000-32767',
    help: 'A port range to reserve for services with NodePort visibility. Example: "30000-32767". Inclusive at both ends of the range.',
    validate: (v: string) =>
      /^\d+-\d+$/.test(v) || /^\d+\+\d+$/.test(v) ? undefined : 'invalid port range, expected "30000-32767"',
  },
  {
    name: 'endpoint-reconciler-type',
    type: 'string',
    default: 'lease',
    help: 'Use an endpoint reconciler (master-count, lease, none). master-count is deprecated, and will be removed in a future version.',
    validate: (v) =>
      ['lease', 'master-count', 'none'].includes(v) ? undefined : 'must be one of lease, master-count, none',
  },
  {
    name: 'apiserver-count',
    type: 'int',
    default: 1,
    help: 'The number of apiservers running in the cluster, must be a positive number. (In use when --endpoint-reconciler-type=master-count is enabled.)',
    deprecated: 'apiserver-count is deprecated and will be removed in a future version.',
  },
  {
    name: 'identity-lease-duration-seconds',
    type: 'int',
    default: 3600,
    help: 'The duration of kube-apiserver lease in seconds, must be a positive number.',
    hidden: true,
    validate: (v) => (v <= 0 ? 'must be positive' : undefined),
  },
  {
    name: 'identity-lease-renew-interval-seconds',
    type: 'int',
    default: 10,
    help: 'The interval of kube-apiserver renewing its lease in seconds, must be a positive number.',
    hidden: true,
    validate: (v) => (v <= 0 ? 'must be positive' : undefined),
  },
  {
    name: 'default-not-ready-toleration-seconds',
    type: 'int',
    default: 300,
    help: 'Indicates the tolerationSeconds of the toleration for notReady:NoExecute that is added by default to every pod that does not already have such a toleration.',
  },
  {
    name: 'default-unreachable-toleration-seconds',
    type: 'int',
    default: 300,
    help: 'Indicates the tolerationSeconds of the toleration for unreachable:NoExecute that is added by default to every pod that does not already have such a toleration.',
  },
  { name: 'kubelet-timeout', type: 'duration', default: 5_000, help: 'Timeout for kubelet operations.' },
  {
    name: 'kubelet-preferred-address-types',
    type: 'list',
    default: ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'],
    help: 'List of the preferred NodeAddressTypes to use for kubelet connections.',
  },
  {
    name: 'kubelet-client-certificate',
    type: 'string',
    help: 'Path to a client cert file for TLS to kubelets.',
  },
  { name: 'kubelet-client-key', type: 'string', help: 'Path to a client key file for TLS to kubelets.' },
  {
    name: 'kubelet-certificate-authority',
    type: 'string',
    help: 'Path to a cert file for the certificate authority of kubelets.',
  },
  {
    name: 'max-request-body-bytes',
    type: 'int',
    default: 3 * 1024 * 1024,
    help: 'The limit on the request body size that the server accepts (Kubernetes uses 3 MiB).',
    hidden: true,
  },
];

const authentication: FlagSpec[] = [
  {
    name: 'anonymous-auth',
    type: 'bool',
    default: true,
    help: 'Enables anonymous requests to the secure port of the API server. Requests that are not rejected by another authentication method are treated as anonymous requests. Anonymous requests have a username of system:anonymous, and a group name of system:unauthenticated.',
  },
  {
    name: 'api-audiences',
    type: 'list',
    help: 'Identifiers of the API. The service account token authenticator will validate that tokens used against the API are bound to at least one of these audiences. If empty and --service-account-issuer is set, the issuer URL is used.',
  },
  tokenWebhookCacheTTLFlag,
  {
    name: 'authentication-token-webhook-config-file',
    type: 'string',
    help: 'File with webhook configuration for token authentication in kubeconfig format.',
  },
  {
    name: 'authentication-token-webhook-version',
    type: 'string',
    default: 'v1beta1',
    help: 'The API version of the authentication.k8s.io TokenReview to send to and expect from the webhook.',
    validate: (v) => (['v1', 'v1beta1'].includes(v) ? undefined : 'must be v1 or v1beta1'),
  },
  {
    name: 'authorization-mode',
    type: 'list',
    default: ['AlwaysAllow'],
    help: 'Ordered list of plug-ins to do authorization on secure port. Comma-delimited list of: AlwaysAllow,AlwaysDeny,ABAC,Webhook,RBAC,Node.',
    validate: (v: string[]) =>
      v.find((m) => !['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'].includes(m)) &&
      `unknown authorization mode specified`,
  },
  {
    name: 'authorization-policy-file',
    type: 'string',
    help: 'File with authorization policy in json line by line format, used with --authorization-mode=ABAC, on the secure port.',
  },
  ...authorizationWebhookCacheFlags,
  {
    name: 'authorization-webhook-config-file',
    type: 'string',
    help: 'File with webhook configuration in kubeconfig format, used with --authorization-mode=Webhook.',
  },
  {
    name: 'authorization-webhook-version',
    type: 'string',
    default: 'v1beta1',
    help: 'The API version of the authorization.k8s.io SubjectAccessReview to send to and expect from the webhook.',
    validate: (v) => (['v1', 'v1beta1'].includes(v) ? undefined : 'must be v1 or v1beta1'),
  },
  clientCAFileFlag,
  {
    name: 'token-auth-file',
    type: 'string',
    help: 'If set, the file that will be used to secure the secure port of the API server via token authentication.',
  },
  {
    name: 'enable-bootstrap-token-auth',
    type: 'bool',
    default: false,
    help: "Enable to allow secrets of type 'bootstrap.kubernetes.io/token' in the 'kube-system' namespace to be used for TLS bootstrapping authentication.",
  },
  {
    name: 'oidc-issuer-url',
    type: 'string',
    help: 'The URL of the OpenID issuer, only HTTPS scheme will be accepted. If set, it will be used to verify the OIDC JSON Web Token (JWT).',
  },
  {
    name: 'oidc-client-id',
    type: 'string',
    help: 'The client ID for the OpenID Connect client, must be set if oidc-issuer-url is set.',
  },
  {
    name: 'oidc-ca-file',
    type: 'string',
    help: "If set, the OpenID server's certificate will be verified by one of the authorities in the oidc-ca-file, otherwise the host's root CA set will be used.",
  },
  {
    name: 'oidc-username-claim',
    type: 'string',
    default: 'sub',
    help: 'The OpenID claim to use as the user name.',
  },
  {
    name: 'oidc-username-prefix',
    type: 'string',
    help: "If provided, all usernames will be prefixed with this value. If not provided, username claims other than 'email' are prefixed by the issuer URL to avoid clashes. To skip any prefixing, provide the value '-'.",
  },
  {
    name: 'oidc-groups-claim',
    type: 'string',
    help: 'If provided, the name of a custom OpenID Connect claim for specifying user groups.',
  },
  {
    name: 'oidc-groups-prefix',
    type: 'string',
    help: 'If provided, all groups will be prefixed with this value to prevent conflicts with other authentication strategies.',
  },
  {
    name: 'oidc-required-claim',
    type: 'map',
    help: 'A key=value pair that describes a required claim in the ID Token. If set, the claim is verified to be present in the ID Token with a matching value. Repeat this flag to specify multiple claims.',
  },
  {
    name: 'oidc-signing-algs',
    type: 'list',
    default: ['RS256'],
    help: 'Comma-separated list of allowed JOSE asymmetric signing algorithms.',
    validate: (v: string[]) =>
      v.find(
        (a) => !['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'].includes(a),
      ) && 'unsupported signing algorithm',
  },
  {
    name: 'requestheader-client-ca-file',
    type: 'string',
    help: 'Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers.',
  },
  {
    name: 'requestheader-allowed-names',
    type: 'list',
    help: 'List of client certificate common names to allow to provide usernames in headers specified by --requestheader-username-headers. If empty, any client certificate validated by the authorities in --requestheader-client-ca-file is allowed.',
  },
  {
    name: 'requestheader-username-headers',
    type: 'list',
    help: 'List of request headers to inspect for usernames. X-Remote-User is common.',
  },
  {
    name: 'requestheader-uid-headers',
    type: 'list',
    help: 'List of request headers to inspect for UIDs. X-Remote-Uid is suggested.',
  },
  {
    name: 'requestheader-group-headers',
    type: 'list',
    help: 'List of request headers to inspect for groups. X-Remote-Group is suggested.',
  },
  {
    name: 'requestheader-extra-headers-prefix',
    type: 'list',
    help: 'List of request header prefixes to inspect. X-Remote-Extra- is suggested.',
  },
  {
    name: 'proxy-client-cert-file',
    type: 'string',
    help: 'Client certificate used to prove the identity of the aggregator or kube-apiserver when it must call out during a request.',
  },
  {
    name: 'proxy-client-key-file',
    type: 'string',
    help: 'Private key for the client certificate used to prove the identity of the aggregator or kube-apiserver when it must call out during a request.',
  },
  {
    name: 'enable-aggregator-routing',
    type: 'bool',
    // Kubernetes defaults to false; tkube has no service proxy, so a ClusterIP is not reachable from
    // this host and the host would route it off the machine.
    default: true,
    help: "Turns on aggregator routing requests to endpoints IP rather than cluster IP. In tkube it is on by default and also decides how admission webhooks and CRD conversion webhooks given as a Service are reached: a ready endpoint of the Service (TLS still verifies <service>.<namespace>.svc). Turn it off only where a service proxy makes ClusterIPs reachable from the apiserver's host: tkube runs none, and without one the host routes the Service CIDR off the machine.",
  },
  {
    name: 'service-account-issuer',
    type: 'array',
    help: 'Identifier of the service account token issuer. The issuer will assert this identifier in "iss" claim of issued tokens. Can be specified multiple times: the first is used to sign, all are accepted.',
  },
  {
    name: 'service-account-key-file',
    type: 'array',
    help: 'File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify ServiceAccount tokens. Defaults to --tls-private-key-file. Repeatable.',
  },
  {
    name: 'service-account-signing-key-file',
    type: 'string',
    help: 'Path to the file that contains the current private key of the service account token issuer.',
  },
  {
    name: 'service-account-jwks-uri',
    type: 'string',
    help: 'Overrides the URI for the JSON Web Key Set in the discovery doc served at /.well-known/openid-configuration.',
  },
  {
    name: 'service-account-lookup',
    type: 'bool',
    default: true,
    help: 'If true, validate ServiceAccount tokens exist in the store as part of authentication.',
  },
  {
    name: 'service-account-max-token-expiration',
    type: 'duration',
    default: 0,
    help: 'The maximum validity duration of a token created by the service account token issuer.',
  },
  {
    name: 'service-account-extend-token-expiration',
    type: 'bool',
    default: true,
    help: 'Turns on projected service account expiration extension during token generation, up to 1 year.',
  },
  {
    name: 'enable-admission-plugins',
    type: 'list',
    help: 'admission plugins that should be enabled in addition to default enabled ones.',
  },
  {
    name: 'disable-admission-plugins',
    type: 'list',
    help: 'admission plugins that should be disabled although they are in the default enabled plugins list.',
  },
  {
    name: 'admission-control-config-file',
    type: 'string',
    help: 'File with admission control configuration.',
  },
];

const audit: FlagSpec[] = [
  {
    name: 'audit-policy-file',
    type: 'string',
    help: 'Path to the file that defines the audit policy configuration.',
  },
  {
    name: 'audit-log-path',
    type: 'string',
    help: "If set, all requests coming to the apiserver will be logged to this file. '-' means standard out.",
  },
  {
    name: 'audit-log-format',
    type: 'string',
    default: 'json',
    help: 'Format of saved audits. "legacy" indicates 1-line text format for each event. "json" indicates structured json format.',
    validate: (v) => (['json', 'legacy'].includes(v) ? undefined : 'must be json or legacy'),
  },
  {
    name: 'audit-log-mode',
    type: 'string',
    default: 'blocking',
    help: 'Strategy for sending audit events. Blocking indicates sending events should block server responses. Batch causes the backend to buffer and write events asynchronously. Known modes are batch,blocking,blocking-strict.',
    validate: (v) =>
      ['batch', 'blocking', 'blocking-strict'].includes(v)
        ? undefined
        : 'must be batch, blocking or blocking-strict',
  },
  {
    name: 'audit-log-version',
    type: 'string',
    default: 'audit.k8s.io/v1',
    help: 'API group and version used for serializing audit events written to log.',
  },
  {
    name: 'audit-log-maxage',
    type: 'int',
    default: 0,
    help: 'The maximum number of days to retain old audit log files based on the timestamp encoded in their filename.',
  },
  {
    name: 'audit-log-maxbackup',
    type: 'int',
    default: 0,
    help: "The maximum number of old audit log files to retain. Setting a value of 0 will mean there's no restriction on the number of files.",
  },
  {
    name: 'audit-log-maxsize',
    type: 'int',
    default: 0,
    help: 'The maximum size in megabytes of the audit log file before it gets rotated.',
  },
  {
    name: 'audit-log-compress',
    type: 'bool',
    default: false,
    help: 'If set, the rotated log files will be compressed using gzip.',
  },
  {
    name: 'audit-log-batch-buffer-size',
    type: 'int',
    default: 10000,
    help: 'The size of the buffer to store events before batching and writing. Only used in batch mode.',
  },
  {
    name: 'audit-log-batch-max-size',
    type: 'int',
    default: 1,
    help: 'The maximum size of a batch. Only used in batch mode.',
  },
  {
    name: 'audit-log-batch-max-wait',
    type: 'duration',
    default: 0,
    help: "The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode.",
  },
  {
    name: 'audit-log-batch-throttle-burst',
    type: 'int',
    default: 0,
    help: 'Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.',
  },
  {
    name: 'audit-log-batch-throttle-enable',
    type: 'bool',
    default: false,
    help: 'Whether batching throttling is enabled. Only used in batch mode.',
  },
  {
    name: 'audit-log-batch-throttle-qps',
    type: 'float',
    default: 0,
    help: 'Maximum average number of batches per second. Only used in batch mode.',
  },
  {
    name: 'audit-log-truncate-enabled',
    type: 'bool',
    default: false,
    help: 'Whether event and batch truncating is enabled.',
  },
  {
    name: 'audit-log-truncate-max-batch-size',
    type: 'int',
    default: 10485760,
    help: 'Maximum size of the batch sent to the underlying backend.',
  },
  {
    name: 'audit-log-truncate-max-event-size',
    type: 'int',
    default: 102400,
    help: 'Maximum size of the audit event sent to the underlying backend.',
  },
  {
    name: 'audit-webhook-config-file',
    type: 'string',
    help: 'Path to a kubeconfig formatted file that defines the audit webhook configuration.',
  },
  {
    name: 'audit-webhook-mode',
    type: 'string',
    default: 'batch',
    help: 'Strategy for sending audit events. Known modes are batch,blocking,blocking-strict.',
    validate: (v) =>
      ['batch', 'blocking', 'blocking-strict'].includes(v)
        ? undefined
        : 'must be batch, blocking or blocking-strict',
  },
  {
    name: 'audit-webhook-batch-buffer-size',
    type: 'int',
    default: 10000,
    help: 'The size of the buffer to store events before batching and writing. Only used in batch mode.',
  },
  {
    name: 'audit-webhook-batch-max-size',
    type: 'int',
    default: 400,
    help: 'The maximum size of a batch. Only used in batch mode.',
  },
  {
    name: 'audit-webhook-batch-max-wait',
    type: 'duration',
    default: 30_000,
    help: "The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode.",
  },
  {
    name: 'audit-webhook-batch-throttle-burst',
    type: 'int',
    default: 15,
    help: 'Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.',
  },
  {
    name: 'audit-webhook-batch-throttle-enable',
    type: 'bool',
    default: true,
    help: 'Whether batching throttling is enabled. Only used in batch mode.',
  },
  {
    name: 'audit-webhook-batch-throttle-qps',
    type: 'float',
    default: 10,
    help: 'Maximum average number of batches per second. Only used in batch mode.',
  },
  {
    name: 'audit-webhook-initial-backoff',
    type: 'duration',
    default: 10_000,
    help: 'The amount of time to wait before retrying the first failed request.',
  },
  {
    name: 'audit-webhook-truncate-enabled',
    type: 'bool',
    default: false,
    help: 'Whether event and batch truncating is enabled.',
  },
  {
    name: 'audit-webhook-truncate-max-batch-size',
    type: 'int',
    default: 10485760,
    help: 'Maximum size of the batch sent to the underlying backend.',
  },
  {
    name: 'audit-webhook-truncate-max-event-size',
    type: 'int',
    default: 102400,
    help: 'Maximum size of the audit event sent to the underlying backend.',
  },
  {
    name: 'audit-webhook-version',
    type: 'string',
    default: 'audit.k8s.io/v1',
    help: 'API group and version used for serializing audit events written to webhook.',
  },
];

const workloads: FlagSpec[] = [
  {
    name: 'allow-privileged',
    type: 'bool',
    default: false,
    help: 'If true, allow privileged containers. [default=false] (accepted as kube-apiserver does; tkube does not reject privileged containers yet, so false is not enforced)',
  },
  {
    name: 'run-controller-manager',
    type: 'bool',
    default: false,
    help: "tkube only: also run the controller manager's controllers (all but the scheduler: namespace deletion, garbage collection, workloads ...) in this process, against this apiserver through its loopback client, from the first client request after start (health probes aside). The envtest kube-apiserver asset (tkube envtest-assets) sets it, since envtest starts no controller manager.",
  },
];

const versioning: FlagSpec[] = [
  {
    name: 'runtime-config',
    type: 'map',
    help: 'A set of key=value pairs that enable or disable built-in APIs. Supported keys: v1=true|false for the core API group; <group>/<version>=true|false for a specific API group and version; <group>/<version>/<resource>=true|false for a resource; api/all, api/ga, api/beta, api/alpha for all, GA, beta or alpha API versions; api/legacy is deprecated.',
  },
  {
    name: 'show-hidden-metrics-for-version',
    type: 'string',
    help: "The previous version for which you want to show hidden metrics. Only the previous minor version is meaningful, other values will not be allowed. The format is <major>.<minor>, e.g.: '1.16'.",
  },
  {
    name: 'disabled-metrics',
    type: 'list',
    help: 'This flag provides an escape hatch for misbehaving metrics. You must provide the fully qualified metric name in order to disable it. Disabling metrics takes precedence over showing hidden metrics.',
  },
];

export const apiserverFlags: FlagSpec[] = [
  ...serving,
  ...storage,
  ...limits,
  ...authentication,
  ...audit,
  ...workloads,
  ...versioning,
  ...commonFlags,
];
