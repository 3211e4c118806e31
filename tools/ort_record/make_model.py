#!/usr/bin/env python3
"""Writes the text-format ModelProto of a two-layer MLP (MatMul, Add, Relu,
MatMul, Add) with deterministic weights, for `protoc --encode=onnx.ModelProto
onnx_model.proto`. Prints the initializer byte total on stderr: the number a
session must hold for its weights, the outside truth the recording is
checked against.

usage: make_model.py INPUTS HIDDEN OUTPUTS > model.txtpb
"""
import struct
import sys

FLOAT = 1  # TensorProto.DataType.FLOAT


def weights(count, seed):
    # A linear congruential sequence scaled into [-0.5, 0.5): reproducible
    # without numpy, and never all zero (ORT would not fold them away anyway).
    state = seed
    values = []
    for _ in range(count):
        state = (state * 1103515245 + 12345) % (1 << 31)
        values.append(state / float(1 << 31) - 0.5)
    return struct.pack("<%df" % count, *values)


def text_bytes(data):
    return "".join("\\%03o" % b for b in data)


def initializer(name, dims, seed):
    count = 1
    for d in dims:
        count *= d
    data = weights(count, seed)
    dims_text = " ".join("dims: %d" % d for d in dims)
    text = ('  initializer { %s data_type: %d name: "%s" raw_data: "%s" }\n'
            % (dims_text, FLOAT, name, text_bytes(data)))
    return text, len(data)


def value_info(name, dims):
    dims_text = " ".join("dim { dim_value: %d }" % d for d in dims)
    return ('  %%s { name: "%s" type { tensor_type { elem_type: %d shape { %s } } } }\n'
            % (name, FLOAT, dims_text))


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: make_model.py INPUTS HIDDEN OUTPUTS > model.txtpb")
    inputs, hidden, outputs = (int(a) for a in sys.argv[1:])
    parts = []
    total = 0
    for name, dims, seed in (("w1", (inputs, hidden), 1), ("b1", (hidden,), 2),
                             ("w2", (hidden, outputs), 3), ("b2", (outputs,), 4)):
        text, size = initializer(name, dims, seed)
        parts.append(text)
        total += size
    nodes = [("MatMul", ("x", "w1"), "h0"), ("Add", ("h0", "b1"), "h1"),
             ("Relu", ("h1",), "h2"), ("MatMul", ("h2", "w2"), "y0"),
             ("Add", ("y0", "b2"), "y")]
    out = ['ir_version: 8\nproducer_name: "edgemem tools/ort_record"\n',
           'opset_import { domain: "" version: 17 }\n', 'graph {\n  name: "mlp"\n']
    for i, (op, ins, result) in enumerate(nodes):
        inputs_text = " ".join('input: "%s"' % n for n in ins)
        out.append('  node { %s output: "%s" name: "n%d" op_type: "%s" }\n'
                   % (inputs_text, result, i, op))
    out.extend(parts)
    out.append(value_info("x", (1, inputs)) % "input")
    out.append(value_info("y", (1, outputs)) % "output")
    out.append("}\n")
    sys.stdout.write("".join(out))
    sys.stderr.write("initializer bytes: %d\n" % total)


if __name__ == "__main__":
    main()
