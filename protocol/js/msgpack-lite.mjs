// A minimal msgpack decoder (https://github.com/msgpack/msgpack/blob/master/spec.md) for the
// protocol's tests: every type but ext and timestamps. ES module for Node 20+, no dependencies.
// Maps decode to plain objects (keys must be strings), bin to Uint8Array, 64-bit integers to
// Number (exact up to 2^53).

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decode one msgpack value that fills `bytes` (a Uint8Array) exactly. */
export function decode(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;

  function need(n) {
    if (pos + n > bytes.length) throw new Error(`msgpack: truncated at byte ${pos}`);
  }
  function uint(n) {
    need(n);
    let value;
    if (n === 1) value = view.getUint8(pos);
    else if (n === 2) value = view.getUint16(pos);
    else if (n === 4) value = view.getUint32(pos);
    else value = Number(view.getBigUint64(pos));
    pos += n;
    return value;
  }
  function int(n) {
    need(n);
    let value;
    if (n === 1) value = view.getInt8(pos);
    else if (n === 2) value = view.getInt16(pos);
    else if (n === 4) value = view.getInt32(pos);
    else value = Number(view.getBigInt64(pos));
    pos += n;
    return value;
  }
  function raw(n) {
    need(n);
    const slice = bytes.subarray(pos, pos + n);
    pos += n;
    return slice;
  }
  const str = (n) => utf8.decode(raw(n));
  function array(n) {
    const items = [];
    for (let i = 0; i < n; i++) items.push(value());
    return items;
  }
  function map(n) {
    const object = {};
    for (let i = 0; i < n; i++) {
      const key = value();
      if (typeof key !== 'string') throw new Error(`msgpack: a map key is not a string: ${key}`);
      object[key] = value();
    }
    return object;
  }
  function value() {
    const byte = uint(1);
    if (byte <= 0x7f) return byte;
    if (byte >= 0xe0) return byte - 0x100;
    if ((byte & 0xe0) === 0xa0) return str(byte & 0x1f);
    if ((byte & 0xf0) === 0x90) return array(byte & 0x0f);
    if ((byte & 0xf0) === 0x80) return map(byte & 0x0f);
    switch (byte) {
      case 0xc0: return null;
      case 0xc2: return false;
      case 0xc3: return true;
      case 0xc4: return raw(uint(1)).slice();
      case 0xc5: return raw(uint(2)).slice();
      case 0xc6: return raw(uint(4)).slice();
      case 0xca: { need(4); const v = view.getFloat32(pos); pos += 4; return v; }
      case 0xcb: { need(8); const v = view.getFloat64(pos); pos += 8; return v; }
      case 0xcc: return uint(1);
      case 0xcd: return uint(2);
      case 0xce: return uint(4);
      case 0xcf: return uint(8);
      case 0xd0: return int(1);
      case 0xd1: return int(2);
      case 0xd2: return int(4);
      case 0xd3: return int(8);
      case 0xd9: return str(uint(1));
      case 0xda: return str(uint(2));
      case 0xdb: return str(uint(4));
      case 0xdc: return array(uint(2));
      case 0xdd: return array(uint(4));
      case 0xde: return map(uint(2));
      case 0xdf: return map(uint(4));
      default: throw new Error(`msgpack: unsupported type byte 0x${byte.toString(16)} at ${pos - 1}`);
    }
  }

  const result = value();
  if (pos !== bytes.length) throw new Error(`msgpack: ${bytes.length - pos} bytes left over`);
  return result;
}

/** Decode msgpack given as a hex string. */
export function decodeHex(hex) {
  if (!/^(?:[0-9a-f]{2})*$/.test(hex)) throw new Error('not lowercase hex');
  return decode(Uint8Array.from(Buffer.from(hex, 'hex')));
}
