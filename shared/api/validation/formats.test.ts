// Names, quantities and times: Kubernetes' messages and canonical forms.
import assert from 'node:assert/strict';
import {
  isConfigMapKey,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  isValidPortName,
  nameIsDNSSubdomain,
  nameIsPathSegment,
} from './names';
import { compareQuantity, formatQuantity, parseQuantity, roundUpQuantity } from './quantity';
import { formatGoTime, parseGoTime, rfc3339 } from './gotime';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

describe('names', () => {
  it('DNS-1123 subdomain and label', () => {
    assert.deepEqual(isDNS1123Subdomain('my.app-1'), []);
    assert.deepEqual(isDNS1123Subdomain('My_App'), [SUBDOMAIN_MSG]);
    assert.deepEqual(isDNS1123Subdomain('a'.repeat(254)), ['must be no more than 253 characters']);
    assert.deepEqual(isDNS1123Label('-x'), [LABEL_MSG]);
    assert.deepEqual(isDNS1123Label('a.b'), ['must not contain dots']);
    assert.deepEqual(isDNS1123Label('a'.repeat(64)), ['must be no more than 63 characters']);
  });

  it('DNS-1035 label (Service names)', () => {
    assert.deepEqual(isDNS1035Label('1web'), [
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });

  it('generateName may end with a dash; names may not', () => {
    assert.deepEqual(nameIsDNSSubdomain('web-', true), []);
    assert.deepEqual(nameIsDNSSubdomain('web-', false), [SUBDOMAIN_MSG]);
  });

  it('qualified names and label values', () => {
    assert.deepEqual(isQualifiedName('example.com/my-key'), []);
    assert.deepEqual(isQualifiedName('/x'), ['prefix part must be non-empty']);
    assert.deepEqual(isQualifiedName('Example.com/x'), ['prefix part ' + SUBDOMAIN_MSG]);
    assert.deepEqual(isQualifiedName('a/'), [
      'name part must be non-empty',
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]);
    assert.deepEqual(isQualifiedName('x'.repeat(64)), ['name part must be no more than 63 characters']);
    assert.deepEqual(isValidLabelValue(''), []);
    assert.deepEqual(isValidLabelValue('-bad'), [
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]);
  });

  it('config keys, port names, path segments', () => {
    assert.deepEqual(isConfigMapKey('..data'), ["must not start with '..'"]);
    assert.deepEqual(isConfigMapKey('a b'), [
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    ]);
    assert.deepEqual(isValidPortName('-Web--'), [
      'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      'must not contain consecutive hyphens',
      'must not begin or end with a hyphen',
    ]);
    assert.deepEqual(nameIsPathSegment('a/b%c', false), ["may not contain '/'", "may not contain '%'"]);
    assert.deepEqual(nameIsPathSegment('..', false), ["may not be '..'"]);
    assert.deepEqual(nameIsPathSegment('system:admin', false), []);
  });
});

describe('quantity', () => {
  const canon = (s: string) => formatQuantity(parseQuantity(s));
  it('writes the canonical form Kubernetes stores', () => {
    const cases: [string, string][] = [
      ['0.5', '500m'],
      ['1000m', '1'],
      ['100m', '100m'],
      ['1.5', '1500m'],
      ['1024Mi', '1Gi'],
      ['1.5Gi', '1536Mi'],
      ['0.15Gi', '161061273600m'],
      ['1.8Gi', '1932735283200m'],
      ['2.7Gi', '2899102924800m'],
      ['1000M', '1G'],
      ['.0004M', '400'],
      ['1Mi', '1Mi'],
      ['0.5Ki', '512'],
      ['1e3', '1e3'],
      ['1e4', '10e3'],
      ['1500000', '1500k'],
      ['0', '0'],
      ['0.0000000001', '1n'],
      ['-1.5', '-1500m'],
      ['+1', '+1'],
      ['12Ki', '12Ki'],
    ];
    for (const [input, out] of cases) assert.equal(canon(input), out, input);
  });

  it("fails with Kubernetes' messages", () => {
    assert.throws(() => parseQuantity('abc'), /quantities must match the regular expression/);
    assert.throws(() => parseQuantity('1Qi'), /quantities must match the regular expression/);
    assert.throws(() => parseQuantity('1e'), /unable to parse quantity's suffix/);
    assert.throws(() => parseQuantity(''), /quantities must match/);
  });

  it('compares and rounds to milli like ResourceList defaulting', () => {
    assert.equal(compareQuantity(parseQuantity('1'), parseQuantity('1000m')), 0);
    assert.equal(compareQuantity(parseQuantity('1Gi'), parseQuantity('1G')), 1);
    assert.equal(formatQuantity(roundUpQuantity(parseQuantity('100u'), -3)), '1m');
    assert.equal(formatQuantity(roundUpQuantity(parseQuantity('1500u'), -3)), '2m');
    assert.equal(formatQuantity(roundUpQuantity(parseQuantity('250m'), -3)), '250m');
  });

  it('parses each spelling once, and stays right past the remembered ones', () => {
    const q = parseQuantity('0.5Gi');
    assert.equal(parseQuantity('0.5Gi'), q, 'a second parse of the same spelling is the remembered value');
    // More spellings than are remembered: the memory starts over, the answers stay the same.
    for (let i = 0; i < 5000; i++) assert.equal(canon(`${2 * i + 1}m`), `${2 * i + 1}m`);
    assert.notEqual(parseQuantity('0.5Gi'), q);
    assert.deepEqual(parseQuantity('0.5Gi'), q);
    assert.equal(formatQuantity(q), '512Mi');
    assert.throws(() => parseQuantity('abc'), /quantities must match/, 'a bad spelling throws every time');
  });
});

describe('Go times', () => {
  it('rfc3339 formats a moment to the second, also across second boundaries and before 1970', () => {
    const cases: [number, string][] = [
      [0, '1970-01-01T00:00:00Z'],
      [999, '1970-01-01T00:00:00Z'],
      [1000, '1970-01-01T00:00:01Z'],
      [-1, '1969-12-31T23:59:59Z'],
      [Date.UTC(2026, 10, 26, 18, 40, 5, 500), '2026-11-26T18:40:05Z'],
      [Date.UTC(2026, 10, 26, 18, 40, 6), '2026-11-26T18:40:06Z'],
      [999, '1970-01-01T00:00:00Z'],
    ];
    for (const [ms, want] of cases) assert.equal(rfc3339(new Date(ms)), want, String(ms));
    assert.throws(() => rfc3339(new Date(NaN)), RangeError);
  });
  it('parses RFC 3339 and writes UTC seconds (Time) or microseconds (MicroTime)', () => {
    assert.equal(
      formatGoTime(parseGoTime('2024-05-01T12:00:00.987+02:00', false), false),
      '2024-05-01T10:00:00Z',
    );
    assert.equal(
      formatGoTime(parseGoTime('2024-05-01T10:00:00.123456Z', true), true),
      '2024-05-01T10:00:00.123456Z',
    );
    assert.equal(
      formatGoTime(parseGoTime('2024-05-01T10:00:00.123456-01:30', true), true),
      '2024-05-01T11:30:00.123456Z',
    );
  });

  it("fails with Go's messages", () => {
    const msg = (s: string, micro = false) => {
      try {
        parseGoTime(s, micro);
        return '';
      } catch (e) {
        return (e as Error).message;
      }
    };
    assert.equal(
      msg('2024-05-01'),
      'parsing time "2024-05-01" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"',
    );
    assert.equal(msg('2024-02-30T00:00:00Z'), 'parsing time "2024-02-30T00:00:00Z": day out of range');
    assert.equal(msg('2024-05-01T25:00:00Z'), 'parsing time "2024-05-01T25:00:00Z": hour out of range');
    assert.equal(
      msg('2024-05-01T10:00:00Zjunk'),
      'parsing time "2024-05-01T10:00:00Zjunk": extra text: "junk"',
    );
    assert.equal(
      msg('2024-05-01T10:00:00.123Z', true),
      'parsing time "2024-05-01T10:00:00.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"',
    );
  });
});
