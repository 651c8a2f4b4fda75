// /openapi/v2 (JSON or gnostic Protobuf) and /openapi/v3 (index and one
// document per group-version), as kubectl explain and apply --validate read them.
import type { OpenAPIService } from '../../shared/api/openapi';
import { OPENAPI_V2_PROTOBUF } from '../../shared/api/openapi';
import { send, type Req, type Res } from '../server/http';

const V2_PROTOBUF_TYPES = [OPENAPI_V2_PROTOBUF, 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf'];

function notModified(req: Req, res: Res, etag: string): boolean {
  if (req.headers['if-none-match'] !== etag) return false;
  (res as any).writeHead(304, { etag });
  res.end();
  return true;
}

/** Serves an OpenAPI path; returns false when the path is not one. */
export function serveOpenAPI(
  service: OpenAPIService,
  req: Req,
  res: Res,
  path: string,
  query: URLSearchParams,
): boolean {
  if (path === '/openapi/v2') {
    const doc = service.v2();
    const etag = `"${doc.hash}"`;
    if (notModified(req, res, etag)) return true;
    const accept = String(req.headers.accept ?? '');
    if (V2_PROTOBUF_TYPES.some((t) => accept.includes(t))) {
      // Kubernetes answers with the dotted form: Go clients cannot parse the '@' of the request type.
      send(res, 200, V2_PROTOBUF_TYPES[1], service.v2Protobuf(), { etag, vary: 'Accept' });
    } else {
      send(res, 200, 'application/json', doc.json, { etag, vary: 'Accept' });
    }
    return true;
  }
  if (path === '/openapi/v3' || path === '/openapi/v3/') {
    send(res, 200, 'application/json', service.v3Index());
    return true;
  }
  if (path.startsWith('/openapi/v3/')) {
    const doc = service.v3(path.slice('/openapi/v3/'.length));
    if (!doc) {
      send(res, 404, 'text/plain; charset=utf-8', '404 page not found\n');
      return true;
    }
    const etag = `"${doc.hash}"`;
    if (notModified(req, res, etag)) return true;
    const hash = query.get('hash');
    const cache = hash && hash === doc.hash ? 'public, immutable' : 'no-cache, private';
    send(res, 200, 'application/json', doc.json, { etag, 'cache-control': cache });
    return true;
  }
  return false;
}
