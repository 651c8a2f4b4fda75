import assert from 'node:assert/strict';
import { isStatusError } from '../../shared/api/status';
import {
  isPrettyPrint,
  negotiateBody,
  negotiateOutput,
  parseAccept,
  parseBodyContentType,
  type OutputEndpoint,
} from './negotiation';

// What kubectl 1.32 and client-go send.
const KUBECTL_GET =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const KUBECTL_GET_YAML = 'application/json';
const CLIENT_GO_PROTOBUF = 'application/vnd.kubernetes.protobuf, */*';
const METADATA_CLIENT =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

const list: OutputEndpoint = { verb: 'list' };
const get: OutputEndpoint = { verb: 'get' };
const watch: OutputEndpoint = { verb: 'watch' };
const crList: OutputEndpoint = { verb: 'list', protobuf: false };

const ALL =
  'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf';
const STREAMS =
  'only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch';

const notAcceptable = (message: string) => (e: unknown) =>
  isStatusError(e, 'NotAcceptable') && e.code === 406 && e.message === message;

describe('negotiation: kubectl and client-go Accept headers', () => {
  it('kubectl get: a meta.k8s.io/v1 Table in JSON', () => {
    assert.deepEqual(negotiateOutput(KUBECTL_GET, list), {
      format: 'json',
      as: { kind: 'Table', version: 'v1' },
      stream: false,
      mediaType: 'application/json',
      pretty: false,
    });
    assert.deepEqual(negotiateOutput(KUBECTL_GET, get).as, { kind: 'Table', version: 'v1' });
  });

  it('kubectl get on an endpoint without tables falls back to the plain object', () => {
    assert.deepEqual(negotiateOutput(KUBECTL_GET, { verb: 'list', table: false }), {
      format: 'json',
      stream: false,
      mediaType: 'application/json',
      pretty: false,
    });
  });

  it('kubectl get -o yaml (and -o json): plain JSON', () => {
    const d = negotiateOutput(KUBECTL_GET_YAML, list);
    assert.equal(d.format, 'json');
    assert.equal(d.as, undefined);
  });

  it('kubectl get -w: Table watch, answered as application/json', () => {
    assert.deepEqual(negotiateOutput(KUBECTL_GET, watch), {
      format: 'json',
      as: { kind: 'Table', version: 'v1' },
      stream: true,
      mediaType: 'application/json',
      pretty: false,
    });
  });

  it('kubectl get -w -o yaml: plain JSON watch', () => {
    assert.deepEqual(negotiateOutput(KUBECTL_GET_YAML, watch), {
      format: 'json',
      stream: true,
      mediaType: 'application/json',
      pretty: false,
    });
  });

  it('client-go with protobuf: protobuf for built-ins, JSON for custom resources', () => {
    assert.deepEqual(negotiateOutput(CLIENT_GO_PROTOBUF, list), {
      format: 'protobuf',
      stream: false,
      mediaType: 'application/vnd.kubernetes.protobuf',
      pretty: false,
    });
    assert.equal(negotiateOutput(CLIENT_GO_PROTOBUF, crList).format, 'json');
    assert.deepEqual(negotiateOutput(CLIENT_GO_PROTOBUF, watch), {
      format: 'protobuf',
      stream: true,
      mediaType: 'application/vnd.kubernetes.protobuf;stream=watch',
      pretty: false,
    });
    assert.throws(() => negotiateOutput('application/vnd.kubernetes.protobuf', crList), notAcceptable(ALL));
  });

  it('metadata client: PartialObjectMetadataList in protobuf, also for custom resources', () => {
    const want = { format: 'protobuf', as: { kind: 'PartialObjectMetadataList', version: 'v1' } };
    assert.deepEqual(negotiateOutput(METADATA_CLIENT, list), {
      ...want,
      stream: false,
      mediaType: 'application/vnd.kubernetes.protobuf',
      pretty: false,
    });
    assert.deepEqual(negotiateOutput(METADATA_CLIENT, crList).as, want.as);
    assert.deepEqual(
      negotiateOutput('application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1', get).as,
      {
        kind: 'PartialObjectMetadata',
        version: 'v1beta1',
      },
    );
  });
});

describe('negotiation: rules', () => {
  it('JSON for an empty header, */* and application/*', () => {
    for (const h of [
      undefined,
      null,
      '',
      '*/*',
      '*',
      'application/*',
      'application/*;q=0.8,text/html;q=0.9',
    ]) {
      assert.equal(negotiateOutput(h, list).format, 'json', String(h));
    }
  });

  it('q-values order the clauses', () => {
    assert.equal(negotiateOutput('application/json;q=0.5, application/yaml;q=0.9', list).format, 'yaml');
    assert.equal(negotiateOutput('application/json;q=0.1, application/yaml', list).format, 'yaml');
    assert.equal(negotiateOutput('*/*;q=0.1, application/vnd.kubernetes.protobuf', list).format, 'protobuf');
    // Equal q: specific before wildcard, otherwise the header's order.
    assert.equal(negotiateOutput('application/yaml, application/json', list).format, 'yaml');
    assert.equal(negotiateOutput('*/*, application/yaml', list).format, 'yaml');
  });

  it('q=0 refuses a type even when a wildcard would take it', () => {
    assert.equal(negotiateOutput('application/json;q=0, */*', list).format, 'yaml');
    assert.equal(negotiateOutput('application/json;q=0, application/yaml;q=0, */*', list).format, 'protobuf');
    assert.throws(() => negotiateOutput('*/*;q=0', list), notAcceptable(ALL));
    assert.throws(() => negotiateOutput('application/json;q=0', list), notAcceptable(ALL));
  });

  it('a Table for another group or version, or in protobuf, falls through to the next entry', () => {
    assert.deepEqual(
      negotiateOutput('application/json;as=Table;v=v1;g=example.com, application/yaml', list),
      {
        format: 'yaml',
        stream: false,
        mediaType: 'application/yaml',
        pretty: false,
      },
    );
    assert.equal(
      negotiateOutput('application/json;as=Table;v=v2;g=meta.k8s.io, application/yaml', list).as,
      undefined,
    );
    assert.equal(negotiateOutput('application/json;as=Table, application/yaml', list).format, 'yaml');
    assert.equal(
      negotiateOutput('application/json;g=meta.k8s.io;v=v1, application/yaml', list).format,
      'yaml',
    );
    assert.equal(
      negotiateOutput('application/json;as=Unknown;g=meta.k8s.io;v=v1, application/yaml', list).format,
      'yaml',
    );
    const proto = negotiateOutput(
      'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json',
      list,
    );
    assert.equal(proto.format, 'json');
    assert.equal(proto.as, undefined);
    assert.deepEqual(negotiateOutput('application/yaml;as=Table;v=v1beta1;g=meta.k8s.io', list).as, {
      kind: 'Table',
      version: 'v1beta1',
    });
  });

  it('406 when nothing fits, listing the served types', () => {
    assert.throws(() => negotiateOutput('text/html', list), notAcceptable(ALL));
    assert.throws(
      () => negotiateOutput('application/json;as=Table;v=v1;g=example.com', list),
      notAcceptable(ALL),
    );
    assert.throws(() => negotiateOutput('Application/JSON', list), notAcceptable(ALL)); // case-sensitive, as in Kubernetes
  });

  it('watch needs a stream framing: YAML is refused with the stream types', () => {
    assert.throws(() => negotiateOutput('application/yaml', watch), notAcceptable(STREAMS));
    assert.throws(
      () => negotiateOutput('application/yaml;as=Table;v=v1;g=meta.k8s.io', watch),
      notAcceptable(STREAMS),
    );
    assert.throws(() => negotiateOutput('text/html', watch), notAcceptable(ALL));
    assert.deepEqual(negotiateOutput('application/json;stream=watch', watch), {
      format: 'json',
      stream: true,
      mediaType: 'application/json',
      pretty: false,
    });
  });

  it('stream, sv, pretty and charset parameters', () => {
    assert.equal(negotiateOutput('application/yaml;stream=watch, application/json', list).format, 'json');
    assert.equal(negotiateOutput('application/json;stream=other, application/yaml', list).format, 'yaml');
    assert.equal(negotiateOutput('application/json;stream=watch', list).format, 'json');
    assert.equal(negotiateOutput('application/json;sv=v2, application/yaml', list).format, 'yaml');
    assert.equal(negotiateOutput('application/json;sv=v1', list).format, 'json');
    assert.equal(negotiateOutput('application/json;pretty=1', list).pretty, true);
    assert.equal(negotiateOutput('application/json; charset=utf-8', list).format, 'json');
  });

  it('pretty printing for the query parameter and human user agents', () => {
    assert.equal(isPrettyPrint('true', 'kubectl/v1.32.0'), true);
    assert.equal(isPrettyPrint('0', 'curl/8.5.0'), false);
    assert.equal(isPrettyPrint(undefined, 'curl/8.5.0'), true);
    assert.equal(isPrettyPrint(undefined, 'Mozilla/5.0 (X11; Linux x86_64)'), true);
    assert.equal(isPrettyPrint(undefined, 'kubectl/v1.32.0 (linux/amd64)'), false);
    assert.equal(isPrettyPrint('maybe', undefined), false);
  });

  it('parses Accept like goautoneg', () => {
    assert.deepEqual(parseAccept(' text/html;level=1 ;q=0.5, application/json,*,bogus, */json'), [
      { type: 'application', subtype: 'json', q: 1, params: {} },
      { type: '*', subtype: 'json', q: 1, params: {} },
      { type: '*', subtype: '*', q: 1, params: {} },
      { type: 'text', subtype: 'html', q: 0.5, params: { level: '1' } },
    ]);
    // An unparseable q counts as 0.
    assert.equal(parseAccept('application/json;q=high')[0].q, 0);
  });
});

describe('negotiation: request bodies', () => {
  const create = { verb: 'create' } as const;
  const patch = { verb: 'patch' } as const;
  const unsupported = (message: string) => (e: unknown) =>
    isStatusError(e, 'UnsupportedMediaType') &&
    e.code === 415 &&
    e.message === message &&
    e.status.details === undefined;

  it('create and update: JSON (default), YAML, protobuf; parameters and case are tolerated', () => {
    assert.deepEqual(negotiateBody(undefined, create), {
      kind: 'object',
      format: 'json',
      mediaType: 'application/json',
    });
    assert.equal(negotiateBody('application/json; charset=utf-8', { verb: 'update' }).format, 'json');
    assert.equal(negotiateBody('Application/YAML', create).format, 'yaml');
    assert.equal(negotiateBody('application/vnd.kubernetes.protobuf', create).format, 'protobuf');
  });

  it('create: 415 for other types, and for protobuf on custom resources', () => {
    assert.throws(
      () => negotiateBody('text/plain', create),
      unsupported(
        'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
      ),
    );
    assert.throws(() => negotiateBody('application/merge-patch+json', create), /unknown format/);
    assert.throws(
      () => negotiateBody('application/vnd.kubernetes.protobuf', { verb: 'create', protobuf: false }),
      unsupported(
        'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
      ),
    );
    assert.equal(negotiateBody('application/json;', create).format, 'json'); // a trailing ';' is fine
    assert.throws(() => negotiateBody('application/json; bad', create), /unknown format/);
  });

  it('patch: the four patch types; apply is YAML', () => {
    assert.deepEqual(negotiateBody('application/merge-patch+json', patch), {
      kind: 'patch',
      patchType: 'merge-patch',
      format: 'json',
      mediaType: 'application/merge-patch+json',
    });
    assert.equal(negotiateBody('application/json-patch+json', patch).kind, 'patch');
    assert.deepEqual(negotiateBody('application/apply-patch+yaml', patch), {
      kind: 'patch',
      patchType: 'apply-patch',
      format: 'yaml',
      mediaType: 'application/apply-patch+yaml',
    });
    assert.equal(
      (negotiateBody('application/strategic-merge-patch+json; charset=utf-8', patch) as { patchType: string })
        .patchType,
      'strategic-merge-patch',
    );
  });

  it('patch: 415 lists the endpoint patch types; custom resources take no strategic merge patch', () => {
    const all =
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml';
    assert.throws(() => negotiateBody('application/json', patch), unsupported(all));
    assert.throws(() => negotiateBody(undefined, patch), unsupported(all));
    assert.throws(() => negotiateBody('Application/Merge-Patch+JSON', patch), unsupported(all));
    assert.throws(
      () => negotiateBody('application/merge-patch+json ; charset=utf-8', patch),
      unsupported(all),
    );
    assert.throws(
      () =>
        negotiateBody('application/strategic-merge-patch+json', {
          verb: 'patch',
          strategicMergePatch: false,
        }),
      unsupported(
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
      ),
    );
  });

  it('classifies content types', () => {
    assert.deepEqual(parseBodyContentType('application/json-patch+json'), {
      kind: 'patch',
      patchType: 'json-patch',
      format: 'json',
      mediaType: 'application/json-patch+json',
    });
    assert.deepEqual(parseBodyContentType('application/yaml'), {
      kind: 'object',
      format: 'yaml',
      mediaType: 'application/yaml',
    });
    assert.deepEqual(parseBodyContentType('text/plain'), { kind: 'unknown', mediaType: 'text/plain' });
    assert.deepEqual(parseBodyContentType('not a type'), { kind: 'unknown', mediaType: '' });
  });
});
