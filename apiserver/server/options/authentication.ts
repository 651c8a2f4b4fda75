// kube-apiserver's authentication and authorization flags, with Kubernetes' defaults.
import type { FlagSpec } from '../../../shared/options/flags';
import {
  authorizationWebhookCacheFlags,
  clientCAFileFlag,
  tokenWebhookCacheTTLFlag,
} from '../../../shared/options/auth';

export const authentication: FlagSpec[] = [
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
