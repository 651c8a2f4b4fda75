// HPACK's Huffman code (RFC 7541 appendix B), decode side only: tkube's own
// header blocks are sent as plain literals. The code is canonical (codes of one
// length are consecutive, in symbol order, after the shorter ones), so the bit
// length of each symbol is all it takes to rebuild it; EOS is 30 ones.

/** Bit length of the code of each octet 0..255, from the RFC's table. */
const LENGTHS = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28,
  28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7,
  8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19,
  13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13,
  28, 20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21,
  22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23,
  22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25,
  25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
];
const MAX_BITS = 30;

/** Canonical decoding tables: per length, the first code, how many codes, and where its symbols start. */
const first = new Int32Array(MAX_BITS + 1);
const count = new Int32Array(MAX_BITS + 1);
const offset = new Int32Array(MAX_BITS + 1);
const symbols = Array.from({ length: 256 }, (_, s) => s).sort((a, b) => LENGTHS[a] - LENGTHS[b] || a - b);
for (const s of symbols) count[LENGTHS[s]]++;
for (let len = 1, code = 0, at = 0; len <= MAX_BITS; len++) {
  first[len] = code;
  offset[len] = at;
  code = (code + count[len]) << 1;
  at += count[len];
}

/** Decodes b[start, end) as Latin-1 text; throws on a code that is not there, or padding that is not EOS's prefix. */
export function huffmanDecode(b: Uint8Array, start: number, end: number): string {
  let out = '';
  let code = 0;
  let len = 0;
  for (let i = start; i < end; i++) {
    const byte = b[i];
    for (let bit = 7; bit >= 0; bit--) {
      code = (code << 1) | ((byte >> bit) & 1);
      len++;
      const k = code - first[len];
      if (k < count[len]) {
        out += String.fromCharCode(symbols[offset[len] + k]);
        code = 0;
        len = 0;
      } else if (len === MAX_BITS) throw new Error('hpack: invalid Huffman code');
    }
  }
  // At most 7 bits of padding, all ones (the start of EOS).
  if (len > 7 || code !== (1 << len) - 1) throw new Error('hpack: invalid Huffman padding');
  return out;
}
