// gRPC's length-prefixed message framing (PROTOCOL-HTTP2.md), shared by the etcd3 client and the etcd stand-in.

/** A gRPC message with its 5-byte prefix: not compressed, then the length (big-endian). */
export function grpcFramed(msg: Buffer): Buffer {
  const b = Buffer.allocUnsafe(5 + msg.length);
  b[0] = 0;
  b.writeUInt32BE(msg.length, 1);
  msg.copy(b, 5);
  return b;
}
