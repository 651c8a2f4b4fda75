// A CRI v1 client: the RuntimeService and ImageService rpcs over gRPC
// (@grpc/grpc-js) on the runtime's socket, messages encoded with the types
// built from the facts (proto.ts). Every call has the --runtime-request-timeout
// deadline, as kubelet's remote runtime does (pulls have none of their own:
// kubelet lets them run). A runtime that lacks an rpc answers UNIMPLEMENTED,
// which callers can test with isUnimplemented.
import * as grpc from '@grpc/grpc-js';
import { criSchema } from './proto';

export class CriError extends Error {
  constructor(
    readonly rpc: string,
    readonly code: grpc.status,
    readonly details: string,
  ) {
    super(`rpc error: code = ${grpc.status[code] ?? code} desc = ${details}`);
  }
}

export const isUnimplemented = (err: unknown) =>
  err instanceof CriError && err.code === grpc.status.UNIMPLEMENTED;
export const isNotFoundError = (err: unknown) =>
  err instanceof CriError && err.code === grpc.status.NOT_FOUND;

/** kubelet's endpoint forms: unix:///path, a bare /path, or npipe/tcp addresses grpc-js understands. */
export function grpcTarget(endpoint: string): string {
  if (endpoint.startsWith('/')) return `unix://${endpoint}`;
  return endpoint;
}

export interface CriClientOptions {
  /** --container-runtime-endpoint. */
  runtimeEndpoint: string;
  /** --image-service-endpoint; empty: the runtime endpoint. */
  imageEndpoint?: string;
  /** --runtime-request-timeout in ms (kubelet: 2 min). */
  requestTimeoutMs: number;
}

const DECODE: any = {
  longs: String,
  enums: String,
  defaults: true,
  arrays: true,
  objects: true,
  bytes: Buffer,
};

export class CriClient {
  private readonly runtime: grpc.Client;
  private readonly image: grpc.Client;

  constructor(private readonly o: CriClientOptions) {
    const creds = grpc.credentials.createInsecure();
    // Large enough for ListContainers on a busy node and ExecSync output (kubelet allows 16 MiB).
    const opts = { 'grpc.max_receive_message_length': 16 * 1024 * 1024 };
    this.runtime = new grpc.Client(grpcTarget(o.runtimeEndpoint), creds, opts);
    this.image =
      o.imageEndpoint && o.imageEndpoint !== o.runtimeEndpoint
        ? new grpc.Client(grpcTarget(o.imageEndpoint), creds, opts)
        : this.runtime;
  }

  /**
   * Calls one rpc by its CRI name (Version, RunPodSandbox, PullImage ...) with a plain request
   * object (camelCase fields, enums by name, int64 as number or string); resolves with the
   * response as a plain object (int64 as decimal strings, enums by name, every field present).
   */
  call<T = any>(rpc: string, request: object = {}, timeoutMs = this.o.requestTimeoutMs): Promise<T> {
    const schema = criSchema();
    const r = schema.rpcs.get(rpc);
    if (!r) return Promise.reject(new Error(`unknown CRI rpc ${rpc}`));
    const reqType = schema.type(r.request);
    const resType = schema.type(r.response);
    const client = r.service === 'ImageService' ? this.image : this.runtime;
    const path = `/runtime.v1.${r.service}/${rpc}`;
    const options: grpc.CallOptions = timeoutMs > 0 ? { deadline: Date.now() + timeoutMs } : {};
    return new Promise<T>((resolve, reject) => {
      client.makeUnaryRequest(
        path,
        (v: object) => Buffer.from(reqType.encode(reqType.fromObject(v)).finish()),
        (b: Buffer) => resType.toObject(resType.decode(b), DECODE) as T,
        request,
        new grpc.Metadata(),
        options,
        (err, res) => {
          if (err) reject(new CriError(rpc, err.code ?? grpc.status.UNKNOWN, err.details ?? err.message));
          else resolve(res as T);
        },
      );
    });
  }

  close(): void {
    this.runtime.close();
    if (this.image !== this.runtime) this.image.close();
  }
}
