// One-node ONNX models for the onnxruntime-web rows, encoded here rather than
// committed as opaque .onnx files: a protobuf writer of a few lines covers the
// handful of ModelProto fields a one-node graph needs (field numbers from
// onnx/onnx.proto).

const WIRE_VARINT = 0;
const WIRE_FIXED32 = 5;
const WIRE_BYTES = 2;

/** A protobuf varint; negative int64 values go as their 64-bit two's complement. */
function varint(value) {
  const bytes = [];
  let v = BigInt.asUintN(64, BigInt(value));
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v !== 0n);
  return bytes;
}

const key = (field, wire) => varint((field << 3) | wire);
const intField = (field, value) => [...key(field, WIRE_VARINT), ...varint(value)];
const bytesField = (field, bytes) => [...key(field, WIRE_BYTES), ...varint(bytes.length), ...bytes];
const stringField = (field, text) => bytesField(field, [...new TextEncoder().encode(text)]);
const floatField = (field, value) => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setFloat32(0, value, true);
  return [...key(field, WIRE_FIXED32), ...b];
};

const ELEM_FLOAT = 1; // TensorProto.DataType.FLOAT
const ATTR_FLOAT = 1; // AttributeProto.AttributeType
const ATTR_INT = 2;

/** ValueInfoProto of a float tensor; dims are numbers or symbolic names. */
function tensorInfo(name, dims) {
  const shape = dims.flatMap((d) => bytesField(1,
    typeof d === 'number' ? intField(1, d) : stringField(2, d)));
  const tensorType = [...intField(1, ELEM_FLOAT), ...bytesField(2, shape)];
  return [...stringField(1, name), ...bytesField(2, bytesField(1, tensorType))];
}

function attribute(name, value) {
  return Number.isInteger(value) && name !== 'epsilon'
    ? [...stringField(1, name), ...intField(3, value), ...intField(20, ATTR_INT)]
    : [...stringField(1, name), ...floatField(2, value), ...intField(20, ATTR_FLOAT)];
}

/**
 * A model of one node `opType(X, scale) -> Y` in the default ai.onnx domain,
 * X of shape [rows, dim] (rows symbolic), scale of shape [dim].
 * @returns {Uint8Array} the serialized ModelProto
 */
export function normModel(opType, { dim, eps, opset }) {
  const node = [
    ...stringField(1, 'X'), ...stringField(1, 'scale'), ...stringField(2, 'Y'),
    ...stringField(3, 'norm'), ...stringField(4, opType),
    ...bytesField(5, attribute('axis', -1)),
    ...bytesField(5, attribute('epsilon', eps)),
  ];
  const graph = [
    ...bytesField(1, node), ...stringField(2, 'bench'),
    ...bytesField(11, tensorInfo('X', ['rows', dim])),
    ...bytesField(11, tensorInfo('scale', [dim])),
    ...bytesField(12, tensorInfo('Y', ['rows', dim])),
  ];
  const model = [
    ...intField(1, 10), // ir_version 10 (ONNX 1.16): ORT 1.30 reads it with opset 23
    ...stringField(2, 'rmsnorm-wasm bench'),
    ...bytesField(7, graph),
    ...bytesField(8, [...stringField(1, ''), ...intField(2, opset)]),
  ];
  return Uint8Array.from(model);
}
