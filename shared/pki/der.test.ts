// The DER encoder and reader against X.690's rules, and against openssl asn1parse.
import assert from 'node:assert/strict';
import * as der from './der';
import { openssl, pemDir } from './openssl.test-support';

const hex = (b: Buffer) => b.toString('hex');

describe('pki/der', () => {
  it('writes short lengths below 128 and the minimal long form from 128 on', () => {
    const header = (n: number) => hex(der.octetString(Buffer.alloc(n)).subarray(0, 5));
    assert.equal(header(0).slice(0, 4), '0400');
    assert.equal(header(127).slice(0, 4), '047f');
    assert.equal(header(128).slice(0, 6), '048180');
    assert.equal(header(255).slice(0, 6), '0481ff');
    assert.equal(header(256).slice(0, 8), '04820100');
    assert.equal(header(65535).slice(0, 8), '0482ffff');
    assert.equal(header(65536), '0483010000');
    for (const n of [0, 127, 128, 256, 65536]) {
      const buf = der.octetString(Buffer.alloc(n, 7));
      const e = der.read(buf);
      assert.deepEqual([e.tag, e.end - e.contentStart, e.end], [0x04, n, buf.length]);
    }
  });

  it('writes INTEGERs minimal and positive: a 0x00 before a set high bit', () => {
    assert.equal(hex(der.integer(0)), '020100');
    assert.equal(hex(der.integer(127)), '02017f');
    assert.equal(hex(der.integer(128)), '02020080');
    assert.equal(hex(der.integer(256)), '02020100');
    assert.equal(hex(der.integer(2n ** 64n)), '0209010000000000000000');
    assert.equal(hex(der.integer(Buffer.from([0, 0, 0x80, 1]))), '0203008001');
    assert.equal(hex(der.integer(Buffer.from([0xff, 0xff]))), '020300ffff');
    assert.equal(hex(der.integer(Buffer.from([0, 0]))), '020100');
    assert.equal(hex(der.integer(Buffer.alloc(0))), '020100');
    assert.throws(() => der.integer(-1), /negative/);
  });

  it('writes OIDs base 128, the first two arcs in one', () => {
    assert.equal(hex(der.oid('1.2.840.113549.1.1.11')), '06092a864886f70d01010b');
    assert.equal(hex(der.oid('2.5.29.17')), '0603551d11');
    assert.equal(hex(der.oid('2.999.3')), '0603883703'); // X.690 8.19.5's example
    for (const bad of ['1', '3.1', '1.40', '1..2', 'a.b']) assert.throws(() => der.oid(bad), /bad OID/);
  });

  it('writes UTCTime up to 2049 and GeneralizedTime from 2050 (RFC 5280 4.1.2.5)', () => {
    const t = (iso: string) => der.time(new Date(iso));
    assert.equal(hex(t('2049-12-31T23:59:59.999Z')), '170d' + hex(Buffer.from('491231235959Z')));
    assert.equal(hex(t('2050-01-01T00:00:00Z')), '180f' + hex(Buffer.from('20500101000000Z')));
    assert.equal(hex(t('1950-01-01T00:00:00Z')), '170d' + hex(Buffer.from('500101000000Z')));
    assert.equal(hex(t('1949-12-31T23:59:59Z')), '180f' + hex(Buffer.from('19491231235959Z')));
    assert.throws(() => der.time(new Date(NaN)), /invalid date/);
  });

  it('writes named bits without trailing zero bits', () => {
    assert.equal(hex(der.namedBits([0, 5, 6])), '03020186'); // digitalSignature, keyCertSign, cRLSign
    assert.equal(hex(der.namedBits([0, 2])), '030205a0'); // digitalSignature, keyEncipherment
    assert.equal(hex(der.namedBits([0, 2, 5])), '030202a4');
    assert.equal(hex(der.namedBits([7])), '03020001');
    assert.equal(hex(der.namedBits([8])), '0303070080'); // decipherOnly
    assert.equal(hex(der.namedBits([])), '030100');
  });

  it('writes context tags, booleans and a SET OF in DER order', () => {
    assert.equal(hex(der.explicit(0, der.integer(2))), 'a003020102');
    assert.equal(hex(der.explicit(3, der.sequence())), 'a3023000');
    assert.equal(hex(der.implicit(2, Buffer.from('a'))), '820161');
    assert.equal(hex(der.implicit(7, Buffer.from([127, 0, 0, 1]))), '87047f000001');
    assert.equal(hex(der.boolean(true)), '0101ff');
    assert.equal(hex(der.set(der.integer(2), der.integer(1))), '3106020101020102');
    assert.equal(hex(der.printableString('a:b')), '1303613a62');
    assert.throws(() => der.printableString('a@b'), /PrintableString/);
    assert.equal(hex(der.utf8String('ü')), '0c02c3bc');
  });

  it('reads nested elements and rejects truncated, indefinite and overlong lengths', () => {
    const buf = der.sequence(
      der.integer(1),
      der.sequence(der.oid('2.5.4.3')),
      der.octetString(Buffer.alloc(300)),
    );
    const kids = der.children(buf, der.read(buf));
    assert.deepEqual(
      kids.map((k) => k.tag),
      [0x02, 0x30, 0x04],
    );
    assert.equal(hex(der.contentOf(buf, der.children(buf, kids[1])[0])), '550403');
    assert.throws(() => der.read(buf.subarray(0, buf.length - 1)), /truncated/);
    assert.throws(() => der.read(Buffer.from([0x30, 0x80, 0, 0])), /bad length/);
    assert.throws(() => der.read(Buffer.from([0x04, 0x85, 1, 1, 1, 1, 1])), /bad length/);
    // A child running past its parent's end.
    assert.throws(
      () => der.children(Buffer.from('3003040500', 'hex'), der.read(Buffer.from('3003040500', 'hex'))),
      /truncated/,
    );
    assert.throws(() => der.read(Buffer.from([0x1f, 0x01, 0])), /multi-byte tags/);
  });

  it('openssl asn1parse reads what it writes', function () {
    const tmp = pemDir('der');
    try {
      const value = der.sequence(
        der.integer(Buffer.from([0x80, 1])),
        der.oid('1.2.840.10045.4.3.2'),
        der.time(new Date('2049-06-01T12:00:00Z')),
        der.time(new Date('2051-06-01T12:00:00Z')),
        der.octetString(Buffer.alloc(65536, 1)),
        der.explicit(0, der.boolean(true)),
      );
      const file = tmp.write('v.der', value);
      // Without the 64 KiB hex dump of the OCTET STRING (the line it is on is cut).
      const out = openssl(tmp.dir, 'asn1parse', '-inform', 'DER', '-in', file).replace(
        /\[HEX DUMP\]:\w+/g,
        '',
      );
      assert.match(out, /cons: SEQUENCE/);
      assert.match(out, /prim: INTEGER\s+:8001/);
      assert.match(out, /prim: OBJECT\s+:ecdsa-with-SHA256/);
      assert.match(out, /prim: UTCTIME\s+:490601120000Z/);
      assert.match(out, /prim: GENERALIZEDTIME\s+:20510601120000Z/);
      assert.match(out, /hl=5 l=65536 prim: OCTET STRING/);
      assert.match(out, /prim: BOOLEAN\s+:255/);
    } finally {
      tmp.remove();
    }
  });
});
