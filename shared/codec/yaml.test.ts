import assert from 'node:assert/strict';
import { StatusError } from '../api/status';
import { parseYAML, readYAMLValue, toYAML, yamlDuplicateError } from './yaml';

describe('codec/yaml', () => {
  it('reads YAML 1.1 scalars like yaml.v2 and keeps timestamps as strings', () => {
    const { value } = parseYAML(
      'a: yes\nb: off\nc: 0755\nd: 2024-05-01T10:00:00Z\ne: 1:20\nf: ~\ng: "yes"\nh: 1_000\n',
    );
    assert.deepEqual(value, {
      a: true,
      b: false,
      c: 493,
      d: '2024-05-01T10:00:00Z',
      e: '1:20',
      f: null,
      g: 'yes',
      h: 1000,
    });
  });

  it('sorts map keys at every level, like Go encoding a map', () => {
    const { value } = parseYAML('spec:\n  z: 1\n  a: [ {x: 1, b: 2} ]\napiVersion: v1\n');
    assert.deepEqual(Object.keys(value as object), ['apiVersion', 'spec']);
    assert.deepEqual(JSON.stringify(value), '{"apiVersion":"v1","spec":{"a":[{"b":2,"x":1}],"z":1}}');
  });

  it('reports duplicate keys with their line, anywhere in the document', () => {
    const src = 'metadata:\n  name: a\n  name: b\nlist:\n- k: 1\n  k: 2\n1: x\n1: y\n';
    const { value, duplicates } = parseYAML(src, { detectDuplicates: true });
    assert.deepEqual(duplicates, [
      'line 3: key "name" already set in map',
      'line 6: key "k" already set in map',
      'line 8: key 1 already set in map',
    ]);
    assert.deepEqual((value as { metadata: unknown }).metadata, { name: 'b' });
    assert.equal(
      yamlDuplicateError(duplicates),
      'yaml: unmarshal errors:\n  line 3: key "name" already set in map\n  line 6: key "k" already set in map\n  line 8: key 1 already set in map',
    );
    assert.deepEqual(parseYAML(src).duplicates, []);
  });

  it('takes the first document of a stream', () => {
    assert.deepEqual(parseYAML('---\na: 1\n---\nb: 2\n').value, { a: 1 });
  });

  it('answers broken YAML with a 400 like kube-apiserver (hex summary)', () => {
    assert.throws(
      () => parseYAML('a: b: c\n', { kind: 'Pod' }),
      (e: StatusError) =>
        e.code === 400 &&
        e.message.startsWith(
          'the object provided is unrecognized (must be of type Pod): error converting YAML to JSON: yaml: line 1: ',
        ) &&
        e.message.endsWith('(613a20623a20630a)'),
    );
  });

  it('writes YAML the way Kubernetes does: order kept, yaml.v2 quoting, unindented lists', () => {
    const out = toYAML({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'x',
        creationTimestamp: '2024-05-01T10:00:00Z',
        resourceVersion: '42',
        labels: { y: 'n' },
      },
      data: {
        script: 'echo hi\necho bye\n',
        empty: '',
        star: '*',
        colon: 'a: b',
        num: '1',
        bool: 'true',
        plain: 'hello world',
      },
      list: [{ a: 1, b: [1, 2] }, 'x'],
      none: null,
      emptyMap: {},
      emptyList: [],
    });
    assert.equal(
      out,
      [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata:',
        '  name: x',
        '  creationTimestamp: "2024-05-01T10:00:00Z"',
        '  resourceVersion: "42"',
        '  labels:',
        '    "y": "n"',
        'data:',
        '  script: |',
        '    echo hi',
        '    echo bye',
        '  empty: ""',
        "  star: '*'",
        "  colon: 'a: b'",
        '  num: "1"',
        '  bool: "true"',
        '  plain: hello world',
        'list:',
        '- a: 1',
        '  b:',
        '  - 1',
        '  - 2',
        '- x',
        'none: null',
        'emptyMap: {}',
        'emptyList: []',
        '',
      ].join('\n'),
    );
  });

  it('never folds long lines', () => {
    const long = 'x'.repeat(300);
    assert.equal(toYAML({ a: long }), `a: ${long}\n`);
  });

  it('writes what a YAML 1.1 reader reads back as the same value, for awkward strings', () => {
    // A small seeded generator: the same cases on every run.
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pieces = [
      ...'abcXYZ019 :#-?.,+_*&!|>\'"%@`{}[]\n\t~=/\\',
      'é',
      '日本',
      '\u0085',
      '\u2028',
      '\u007f',
      '\u0001',
      'yes',
      'Off',
      'null',
      '0x1F',
      '1e3',
      '.inf',
      '---',
      '...',
      '1:20',
      '2024-05-01',
      ' #',
      ': ',
      '\n\n',
    ];
    const str = () => Array.from({ length: rnd(6) }, () => pieces[rnd(pieces.length)]).join('');
    const value = (depth: number): unknown => {
      const kind = rnd(depth > 2 ? 4 : 6);
      if (kind === 0) return rnd(3) === 0 ? null : rnd(2) === 0;
      if (kind === 1) return rnd(2) ? rnd(1000) - 500 : rnd(1000) / 8;
      if (kind < 4) return str();
      if (kind === 4) return Array.from({ length: rnd(4) }, () => value(depth + 1));
      const o: Record<string, unknown> = {};
      for (let i = rnd(4); i > 0; i--) {
        const k = str();
        if (k !== '<<') o[k] = value(depth + 1);
      }
      return o;
    };
    const sorted = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(sorted)
        : v !== null && typeof v === 'object'
          ? Object.fromEntries(
              Object.keys(v)
                .sort()
                .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
            )
          : v;
    for (let i = 0; i < 3000; i++) {
      const v = value(0);
      const text = toYAML(v);
      assert.deepEqual(readYAMLValue(text), sorted(v), `case ${i}:\n${text}`);
    }
  });
});

describe('YAML: hostile documents', () => {
  const laughs = () => {
    const names = 'abcdefghi';
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let l = 1; l < names.length; l++)
      lines.push(
        `${names[l]}: &${names[l]} [${Array(9)
          .fill('*' + names[l - 1])
          .join(',')}]`,
      );
    return lines.join('\n');
  };

  it('refuses an alias bomb with a 400 before expanding it', () => {
    const before = process.memoryUsage().heapUsed;
    assert.throws(
      () => parseYAML(laughs(), { kind: 'ConfigMap' }),
      (e: any) =>
        e.status?.code === 400 &&
        e.status.reason === 'BadRequest' &&
        e.message.includes('error converting YAML to JSON: yaml: document contains excessive aliasing'),
    );
    assert.ok(process.memoryUsage().heapUsed - before < 200 << 20);
  });

  it('refuses few aliases of a large value that expand past the bound, and self-reference', () => {
    const wide = `big: &b "${'y'.repeat(100_000)}"\nmore: [${Array(400).fill('*b').join(',')}]`;
    assert.throws(() => parseYAML(wide), /excessive aliasing/);
    assert.throws(() => readYAMLValue(wide), /excessive aliasing/);
    assert.throws(
      () => parseYAML('a: &a [*a]'),
      (e: any) => e.status?.code === 400,
    );
  });

  it('refuses block nesting too deep for the parser with a 400', () => {
    for (const y of ['- '.repeat(50_000) + 'x', '? '.repeat(50_000) + 'x'])
      assert.throws(() => parseYAML(y), /exceeded max depth/);
  });

  it('still expands ordinary anchors', () => {
    const v = parseYAML('base: &b {a: 1}\none: *b\ntwo: [*b, *b]').value as any;
    assert.deepEqual(v.two, [{ a: 1 }, { a: 1 }]);
    assert.deepEqual(v.one, { a: 1 });
  });
});
