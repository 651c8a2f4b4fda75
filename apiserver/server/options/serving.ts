// kube-apiserver's serving flags (listener, TLS, CORS, shutdown), with Kubernetes' defaults.
import type { FlagSpec } from '../../../shared/options/flags';
import { nonNegative, port } from './checks';

export const serving: FlagSpec[] = [
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
