// Endpoint parsing and error mapping (no etcd needed).
import assert from 'node:assert/strict';
import { isStorageError } from '../errors';
import { parseEndpoint } from './connection';
import { isCompactedError, isFutureRevisionError, toStorageError } from './etcd-errors';
import { GrpcCallError, GrpcStatus } from './grpc-client';

const grpcError = (code: GrpcStatus, details: string) => new GrpcCallError(code, details);

describe('etcd3 connection', () => {
  it('parses --etcd-servers URLs into gRPC targets', () => {
    assert.deepEqual(parseEndpoint('http://127.0.0.1:2379'), { target: '127.0.0.1:2379', secure: false });
    assert.deepEqual(parseEndpoint('https://etcd.local:2379'), { target: 'etcd.local:2379', secure: true });
    assert.deepEqual(parseEndpoint('https://[::1]:2379'), { target: '[::1]:2379', secure: true });
    assert.deepEqual(parseEndpoint('https://etcd.local'), { target: 'etcd.local:443', secure: true });
    assert.deepEqual(parseEndpoint('10.0.0.1:2379'), { target: '10.0.0.1:2379', secure: false });
    assert.deepEqual(parseEndpoint('unix:///run/etcd.sock'), {
      target: 'unix:/run/etcd.sock',
      secure: false,
    });
    assert.throws(() => parseEndpoint('ftp://x:1'));
  });

  it('maps etcd and gRPC failures to storage error codes', () => {
    const code = (e: Error) => (isStorageError(e) ? e.code : 'plain');
    assert.equal(
      code(toStorageError(grpcError(GrpcStatus.UNAVAILABLE, 'No connection established'))),
      'Unavailable',
    );
    assert.equal(
      code(toStorageError(grpcError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded'))),
      'Timeout',
    );
    assert.equal(
      code(toStorageError(grpcError(GrpcStatus.UNAVAILABLE, 'etcdserver: request timed out'))),
      'Timeout',
    );
    assert.equal(
      code(toStorageError(grpcError(GrpcStatus.UNAVAILABLE, 'etcdserver: no leader'))),
      'Unavailable',
    );
    assert.equal(
      code(toStorageError(grpcError(GrpcStatus.INVALID_ARGUMENT, 'etcdserver: request is too large'))),
      'InvalidObject',
    );
    assert.equal(
      code(toStorageError(grpcError(GrpcStatus.PERMISSION_DENIED, 'etcdserver: permission denied'))),
      'plain',
    );
    assert.ok(
      isCompactedError(
        grpcError(GrpcStatus.OUT_OF_RANGE, 'etcdserver: mvcc: required revision has been compacted'),
      ),
    );
    assert.ok(
      isFutureRevisionError(
        grpcError(GrpcStatus.OUT_OF_RANGE, 'etcdserver: mvcc: required revision is a future revision'),
      ),
    );
  });
});
