// NaCl secretbox (XSalsa20-Poly1305), written from the specifications
// (Bernstein: Salsa20, "Extending the Salsa20 nonce", Poly1305; RFC 8439 for
// the Poly1305 arithmetic): node:crypto has neither Salsa20 nor Poly1305.
// Sealed form as golang.org/x/crypto/nacl/secretbox: 16-byte tag, then ciphertext.

const SIGMA = [0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]; // "expand 32-byte k"

const rotl = (v: number, c: number) => ((v << c) | (v >>> (32 - c))) >>> 0;

/** The 20 Salsa20 rounds over a 16-word state, in place. */
function rounds(x: Uint32Array): void {
  for (let i = 0; i < 20; i += 2) {
    x[4] ^= rotl((x[0] + x[12]) >>> 0, 7);
    x[8] ^= rotl((x[4] + x[0]) >>> 0, 9);
    x[12] ^= rotl((x[8] + x[4]) >>> 0, 13);
    x[0] ^= rotl((x[12] + x[8]) >>> 0, 18);
    x[9] ^= rotl((x[5] + x[1]) >>> 0, 7);
    x[13] ^= rotl((x[9] + x[5]) >>> 0, 9);
    x[1] ^= rotl((x[13] + x[9]) >>> 0, 13);
    x[5] ^= rotl((x[1] + x[13]) >>> 0, 18);
    x[14] ^= rotl((x[10] + x[6]) >>> 0, 7);
    x[2] ^= rotl((x[14] + x[10]) >>> 0, 9);
    x[6] ^= rotl((x[2] + x[14]) >>> 0, 13);
    x[10] ^= rotl((x[6] + x[2]) >>> 0, 18);
    x[3] ^= rotl((x[15] + x[11]) >>> 0, 7);
    x[7] ^= rotl((x[3] + x[15]) >>> 0, 9);
    x[11] ^= rotl((x[7] + x[3]) >>> 0, 13);
    x[15] ^= rotl((x[11] + x[7]) >>> 0, 18);
    x[1] ^= rotl((x[0] + x[3]) >>> 0, 7);
    x[2] ^= rotl((x[1] + x[0]) >>> 0, 9);
    x[3] ^= rotl((x[2] + x[1]) >>> 0, 13);
    x[0] ^= rotl((x[3] + x[2]) >>> 0, 18);
    x[6] ^= rotl((x[5] + x[4]) >>> 0, 7);
    x[7] ^= rotl((x[6] + x[5]) >>> 0, 9);
    x[4] ^= rotl((x[7] + x[6]) >>> 0, 13);
    x[5] ^= rotl((x[4] + x[7]) >>> 0, 18);
    x[11] ^= rotl((x[10] + x[9]) >>> 0, 7);
    x[8] ^= rotl((x[11] + x[10]) >>> 0, 9);
    x[9] ^= rotl((x[8] + x[11]) >>> 0, 13);
    x[10] ^= rotl((x[9] + x[8]) >>> 0, 18);
    x[12] ^= rotl((x[15] + x[14]) >>> 0, 7);
    x[13] ^= rotl((x[12] + x[15]) >>> 0, 9);
    x[14] ^= rotl((x[13] + x[12]) >>> 0, 13);
    x[15] ^= rotl((x[14] + x[13]) >>> 0, 18);
  }
}

function initState(key: Uint8Array, in16: Uint8Array): Uint32Array {
  const k = (i: number) => key[i] | (key[i + 1] << 8) | (key[i + 2] << 16) | (key[i + 3] << 24);
  const n = (i: number) => in16[i] | (in16[i + 1] << 8) | (in16[i + 2] << 16) | (in16[i + 3] << 24);
  return Uint32Array.from([
    SIGMA[0],
    k(0),
    k(4),
    k(8),
    k(12),
    SIGMA[1],
    n(0),
    n(4),
    n(8),
    n(12),
    SIGMA[2],
    k(16),
    k(20),
    k(24),
    k(28),
    SIGMA[3],
  ]);
}

/** HSalsa20: a 32-byte subkey from a 32-byte key and 16 bytes of nonce. */
export function hsalsa20(key: Uint8Array, nonce16: Uint8Array): Buffer {
  const x = initState(key, nonce16);
  rounds(x);
  const out = Buffer.alloc(32);
  [0, 5, 10, 15, 6, 7, 8, 9].forEach((w, i) => out.writeUInt32LE(x[w], i * 4));
  return out;
}

/** XORs data with the Salsa20 keystream of key and 8-byte nonce (block counter from 0). */
export function salsa20XOR(key: Uint8Array, nonce8: Uint8Array, data: Uint8Array): Buffer {
  const out = Buffer.alloc(data.length);
  const input = new Uint8Array(16);
  input.set(nonce8, 0);
  const block = Buffer.alloc(64);
  for (let off = 0, counter = 0n; off < data.length; off += 64, counter++) {
    for (let i = 0; i < 8; i++) input[8 + i] = Number((counter >> BigInt(8 * i)) & 0xffn);
    const s = initState(key, input);
    const x = s.slice();
    rounds(x);
    for (let i = 0; i < 16; i++) block.writeUInt32LE((x[i] + s[i]) >>> 0, i * 4);
    const n = Math.min(64, data.length - off);
    for (let i = 0; i < n; i++) out[off + i] = data[off + i] ^ block[i];
  }
  return out;
}

const P1305 = (1n << 130n) - 5n;

function leBig(b: Uint8Array): bigint {
  let v = 0n;
  for (let i = b.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]);
  return v;
}

/** The Poly1305 one-time authenticator of msg under a 32-byte key. */
export function poly1305(key: Uint8Array, msg: Uint8Array): Buffer {
  const r = leBig(key.subarray(0, 16)) & 0x0ffffffc0ffffffc0ffffffc0fffffffn;
  const s = leBig(key.subarray(16, 32));
  let acc = 0n;
  for (let off = 0; off < msg.length; off += 16) {
    const chunk = msg.subarray(off, Math.min(off + 16, msg.length));
    const n = leBig(chunk) | (1n << BigInt(8 * chunk.length));
    acc = ((acc + n) * r) % P1305;
  }
  acc = (acc + s) & ((1n << 128n) - 1n);
  const out = Buffer.alloc(16);
  for (let i = 0; i < 16; i++) out[i] = Number((acc >> BigInt(8 * i)) & 0xffn);
  return out;
}

/** XSalsa20 keystream for a 24-byte nonce: the first 32 bytes key Poly1305, the rest encrypt. */
function stream(key: Uint8Array, nonce: Uint8Array, data: Uint8Array): { polyKey: Buffer; out: Buffer } {
  const subkey = hsalsa20(key, nonce.subarray(0, 16));
  const padded = Buffer.concat([Buffer.alloc(32), data]);
  const x = salsa20XOR(subkey, nonce.subarray(16, 24), padded);
  return { polyKey: x.subarray(0, 32), out: x.subarray(32) };
}

export function secretboxSeal(message: Uint8Array, nonce: Uint8Array, key: Uint8Array): Buffer {
  if (key.length !== 32 || nonce.length !== 24)
    throw new Error('secretbox: key must be 32 bytes and nonce 24');
  const { polyKey, out } = stream(key, nonce, message);
  return Buffer.concat([poly1305(polyKey, out), out]);
}

/** The message, or null when the box does not authenticate. */
export function secretboxOpen(box: Uint8Array, nonce: Uint8Array, key: Uint8Array): Buffer | null {
  if (key.length !== 32 || nonce.length !== 24 || box.length < 16) return null;
  const tag = box.subarray(0, 16);
  const ct = box.subarray(16);
  const subkey = hsalsa20(key, nonce.subarray(0, 16));
  const polyKey = salsa20XOR(subkey, nonce.subarray(16, 24), Buffer.alloc(32));
  const expect = poly1305(polyKey, ct);
  let diff = 0;
  for (let i = 0; i < 16; i++) diff |= expect[i] ^ tag[i];
  if (diff !== 0) return null;
  return stream(key, nonce, ct).out;
}
