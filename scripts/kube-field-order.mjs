// The field order of Kubernetes' built-in Go types, which kube-apiserver's JSON follows (Go's encoding/json writes a
// struct's fields in their declaration order) and which the OpenAPI documents do not carry (their properties are
// sorted). kubectl is built from the same k8s.io/api types and carries, for each API group version, the protobuf
// descriptor of its generated.proto (gzip-compressed, as gogo-protobuf registers it). go-to-protobuf writes a
// message's fields in the Go struct's order, with the json name as the field's name, so each message lists its type's
// JSON fields in the order a real server writes them. A struct embedded inline (`json:",inline"`, such as a Volume's
// VolumeSource) is a field of the message type named after the Go field; the caller splices it.
//
// Read here by hand: a scan for gzip members and a few varint fields of FileDescriptorProto are all it takes, and no
// protobuf library reads descriptors out of an executable.
import { readFileSync } from 'node:fs';
import { constants, inflateRawSync } from 'node:zlib';

// gogo-protobuf compresses with Go's compress/gzip at best compression: no name, no time, OS "unknown"
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xff]);

/** The protobuf fields of `buf` as [number, value]: a varint as a number, a length-delimited field as a Buffer. */
function* protoFields(buf) {
  let i = 0;
  const varint = () => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = buf[i++];
      if (b === undefined) throw new Error('truncated varint');
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
      shift += 7;
    }
  };
  while (i < buf.length) {
    const key = varint();
    const number = Math.floor(key / 8);
    switch (key & 7) {
      case 0:
        yield [number, varint()];
        break;
      case 1:
        i += 8;
        break;
      case 2: {
        const n = varint();
        yield [number, buf.subarray(i, i + n)];
        i += n;
        break;
      }
      case 5:
        i += 4;
        break;
      default:
        throw new Error(`wire type ${key & 7} in a descriptor`);
    }
  }
}

/** The gzip member starting at `start` (its header already matched), decompressed; undefined if it is not one. */
function gunzipAt(binary, start) {
  // the deflate stream after the 10-byte header: gunzip would run on into the next member, which often follows at
  // once (each group version's descriptor is its own member), while a raw inflate stops at the stream's end
  try {
    return inflateRawSync(binary.subarray(start + GZIP_HEADER.length, start + 4_000_000), {
      finishFlush: constants.Z_SYNC_FLUSH,
    });
  } catch {
    return undefined;
  }
}

/** `k8s.io.api.apps.v1` and `DeploymentSpec` → the OpenAPI name `io.k8s.api.apps.v1.DeploymentSpec`. */
function openapiName(protoPackage, message) {
  // a proto package cannot hold a dash: `k8s.io.apiextensions_apiserver…` is the Go package apiextensions-apiserver
  const [first, second, ...rest] = protoPackage.replaceAll('_', '-').split('.');
  return [second, first, ...rest, message].join('.');
}

/**
 * Every message of the k8s.io descriptors in the executable at `path`: its OpenAPI type name → its fields in order,
 * each `{name, type}` (`type` the OpenAPI name of a message field's type, else undefined).
 * @param {string} path
 * @returns {Map<string, Array<{name: string, type: string | undefined}>>}
 */
export function kubeFieldOrder(path) {
  const binary = readFileSync(path);
  const out = new Map();
  for (let at = binary.indexOf(GZIP_HEADER); at >= 0; at = binary.indexOf(GZIP_HEADER, at + 1)) {
    const file = gunzipAt(binary, at);
    if (!file) continue;
    let name = '';
    let pkg = '';
    const messages = [];
    try {
      for (const [n, v] of protoFields(file)) {
        if (n === 1) name = v.toString('utf8');
        else if (n === 2) pkg = v.toString('utf8');
        else if (n === 4) messages.push(v);
      }
    } catch {
      continue;
    }
    if (!name.startsWith('k8s.io/') || !name.endsWith('generated.proto')) continue;
    for (const message of messages) {
      let messageName = '';
      const fields = [];
      for (const [n, v] of protoFields(message)) {
        if (n === 1) messageName = v.toString('utf8');
        else if (n === 2) {
          let field = '';
          let type;
          for (const [fn, fv] of protoFields(v)) {
            if (fn === 1) field = fv.toString('utf8');
            else if (fn === 6) type = fv.toString('utf8');
          }
          // a message type is named `.k8s.io.api.core.v1.VolumeSource`
          const dot = type?.lastIndexOf('.') ?? -1;
          fields.push({
            name: field,
            type: type && dot > 0 ? openapiName(type.slice(1, dot), type.slice(dot + 1)) : undefined,
          });
        }
      }
      out.set(openapiName(pkg, messageName), fields);
    }
  }
  return out;
}
