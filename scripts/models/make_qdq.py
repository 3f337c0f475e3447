"""Turns a float ONNX model into a QDQ model (int8 symmetric), calibrated on .npy inputs, without onnxruntime.

BatchNormalization nodes that follow a Conv are folded into it first. Layout, as ONNX quantization tools
write QDQ files: activations int8 per-tensor with zero point 0 and scale max|x|/127 on the inputs and outputs
of Conv, Gemm, Add and pooling (a Conv/Gemm/Add whose only consumer is Relu is quantized after the Relu);
weights int8 per output channel (DequantizeLinear axis 0, or axis 1 for a Gemm without transB); biases
int32 with scale s_in * s_w per channel.
Usage: make_qdq.py MODEL.onnx OUT.onnx CALIB_DIR [--force]
"""
import argparse
import glob
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_common as fc  # noqa: E402
import onnx_numpy_eval  # noqa: E402

QUANTIZED_OPS = ("Conv", "Gemm", "Add", "MaxPool", "AveragePool", "GlobalAveragePool")


def _consumers(graph):
    users = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, []).append(node)
    return users


def fold_batchnorm(model):
    """Folds every BatchNormalization whose input is a Conv output used only by it."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    producers = {o: n for n in graph.node for o in n.output}
    users = _consumers(graph)
    removed = set()
    for bn in [n for n in graph.node if n.op_type == "BatchNormalization"]:
        conv = producers.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or len(users[bn.input[0]]) != 1:
            sys.exit(f"error: BatchNormalization {bn.name}: input is not a Conv used only by it; cannot fold")
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        gamma, beta, mean, var = (numpy_helper.to_array(inits[n]).astype(np.float64) for n in bn.input[1:5])
        w = numpy_helper.to_array(inits[conv.input[1]]).astype(np.float64)
        b = (numpy_helper.to_array(inits[conv.input[2]]).astype(np.float64) if len(conv.input) > 2
             else np.zeros(w.shape[0]))
        scale = gamma / np.sqrt(var + eps)
        w_name, b_name = conv.name + "_folded_W", conv.name + "_folded_B"
        graph.initializer.extend([
            numpy_helper.from_array((w * scale[:, None, None, None]).astype(np.float32), w_name),
            numpy_helper.from_array(((b - mean) * scale + beta).astype(np.float32), b_name)])
        del conv.input[1:]
        conv.input.extend([w_name, b_name])
        conv.output[0] = bn.output[0]
        removed.add(id(bn))
    kept = [n for n in graph.node if id(n) not in removed]
    del graph.node[:]
    graph.node.extend(kept)
    used = {i for n in graph.node for i in n.input}
    live = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(live)
    return model


def load_calibration(calib_dir, input_info):
    files = sorted(glob.glob(os.path.join(calib_dir, "*.npy")))
    if not files:
        sys.exit(f"error: {calib_dir}: no .npy calibration files")
    shape = [d.dim_value for d in input_info.type.tensor_type.shape.dim]
    arrays = []
    for f in files:
        a = np.load(f)
        if list(a.shape) != shape or a.dtype != np.float32:
            sys.exit(f"error: {f}: calibration input is {a.dtype}{list(a.shape)}, "
                     f"model input '{input_info.name}' wants float32{shape}")
        arrays.append(a)
    return np.concatenate(arrays, axis=0)


def calibrate(model, batch):
    """max |x| of every tensor over the calibration batch."""
    ranges = {}

    def record(name, value):
        if value.dtype == np.float32:
            ranges[name] = max(ranges.get(name, 0.0), float(np.abs(value).max()))
    input_name = model.graph.input[0].name
    record(input_name, batch)
    onnx_numpy_eval.run(model, {input_name: batch}, on_tensor=record)
    return ranges


def tensors_to_quantize(graph):
    users = _consumers(graph)
    producers = {o: n for n in graph.node for o in n.output}
    chosen = []

    def add(name):
        if name not in chosen:
            chosen.append(name)
    inits = {t.name for t in graph.initializer}
    for node in graph.node:
        if node.op_type not in QUANTIZED_OPS:
            continue
        activation_inputs = node.input[:1] if node.op_type in ("Conv", "Gemm") else node.input
        for name in activation_inputs:
            if name in inits:
                continue
            # Quantize the tensor a Conv/Gemm/Add+Relu chain really produces: after the Relu.
            add(name)
        out = node.output[0]
        followers = users.get(out, [])
        if node.op_type in ("Conv", "Gemm", "Add") and len(followers) == 1 and followers[0].op_type == "Relu":
            out = followers[0].output[0]
        add(out)
    # A Flatten/Reshape between a quantized tensor and a Gemm is seen by Gemm as a new tensor, handled above.
    return chosen, producers


def quantize(model, ranges):
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    tensors, producers = tensors_to_quantize(graph)
    scales = {}
    for name in tensors:
        m = ranges.get(name, 0.0)
        scales[name] = np.float32(m / 127.0 if m > 0 else 1.0)
    # MaxPool output keeps its input's scale, so the pool is exact on int8 values.
    for node in graph.node:
        if node.op_type == "MaxPool" and node.output[0] in scales and node.input[0] in scales:
            scales[node.output[0]] = scales[node.input[0]]

    new_inits = []
    dq_name = {}
    qdq_nodes = {}  # tensor name -> [Q, DQ] nodes, inserted after its producer
    graph_outputs = {o.name for o in graph.output}
    for name in tensors:
        scale_name, zp_name = name + "_scale", name + "_zero_point"
        new_inits += [numpy_helper.from_array(np.array(scales[name], np.float32), scale_name),
                      numpy_helper.from_array(np.array(0, np.int8), zp_name)]
        source = name
        if name in graph_outputs:
            # Keep the graph output's name on the final DequantizeLinear.
            source = name + "_float"
            producers[name].output[list(producers[name].output).index(name)] = source
            dequantized = name
        else:
            dequantized = name + "_DequantizeLinear_Output"
        q = helper.make_node("QuantizeLinear", [source, scale_name, zp_name], [name + "_QuantizeLinear_Output"],
                             name=name + "_QuantizeLinear")
        dq = helper.make_node("DequantizeLinear", [q.output[0], scale_name, zp_name], [dequantized],
                              name=name + "_DequantizeLinear")
        qdq_nodes[name] = [q, dq]
        dq_name[name] = dequantized

    weight_nodes = {}
    for node in graph.node:
        if node.op_type not in ("Conv", "Gemm"):
            continue
        x = node.input[0]
        if x not in scales:
            sys.exit(f"error: node {node.name}: input {x} has no calibration range")
        trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
        axis = 0 if node.op_type == "Conv" or trans_b else 1
        w = numpy_helper.to_array(inits[node.input[1]]).astype(np.float64)
        reduce_axes = tuple(i for i in range(w.ndim) if i != axis)
        w_max = np.abs(w).max(axis=reduce_axes)
        w_scale = np.where(w_max > 0, w_max / 127.0, 1.0).astype(np.float32)
        shape = [1] * w.ndim
        shape[axis] = -1
        w_q = np.clip(np.rint(w / w_scale.reshape(shape)), -127, 127).astype(np.int8)
        base = node.input[1]
        new_inits += [numpy_helper.from_array(w_q, base + "_quantized"),
                      numpy_helper.from_array(w_scale, base + "_scale"),
                      numpy_helper.from_array(np.zeros(w_scale.shape, np.int8), base + "_zero_point")]
        nodes = [helper.make_node("DequantizeLinear", [base + "_quantized", base + "_scale", base + "_zero_point"],
                                  [base + "_DequantizeLinear_Output"], name=base + "_DequantizeLinear", axis=axis)]
        node.input[1] = base + "_DequantizeLinear_Output"
        if len(node.input) > 2 and node.input[2]:
            b = numpy_helper.to_array(inits[node.input[2]]).astype(np.float64)
            b_scale = (np.float32(scales[x]) * w_scale).astype(np.float32)
            b_q = np.clip(np.rint(b / b_scale), -2**31, 2**31 - 1).astype(np.int32)
            bb = node.input[2]
            new_inits += [numpy_helper.from_array(b_q, bb + "_quantized"),
                          numpy_helper.from_array(b_scale, bb + "_scale"),
                          numpy_helper.from_array(np.zeros(b_scale.shape, np.int32), bb + "_zero_point")]
            nodes.append(helper.make_node("DequantizeLinear", [bb + "_quantized", bb + "_scale", bb + "_zero_point"],
                                          [bb + "_DequantizeLinear_Output"], name=bb + "_DequantizeLinear", axis=0))
            node.input[2] = bb + "_DequantizeLinear_Output"
        weight_nodes[id(node)] = nodes

    # Rewire consumers of each quantized tensor to its DequantizeLinear output, then rebuild in order.
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name in dq_name and not node.op_type == "QuantizeLinear":
                node.input[i] = dq_name[name]
    ordered = []
    for name in tensors:
        if name not in producers:  # graph input
            ordered += qdq_nodes[name]
    for node in list(graph.node):
        ordered += weight_nodes.get(id(node), [])
        ordered.append(node)
        for out in node.output:
            key = out[:-len("_float")] if out.endswith("_float") else out
            if key in qdq_nodes:
                ordered += qdq_nodes[key]
    del graph.node[:]
    graph.node.extend(ordered)
    used = {i for n in graph.node for i in n.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept + new_inits)
    return model


def make_qdq(model, calib_batch):
    model = fold_batchnorm(model)
    ranges = calibrate(model, calib_batch)
    model = quantize(model, ranges)
    onnx.checker.check_model(model)
    return model


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("out")
    p.add_argument("calib_dir")
    p.add_argument("--force", action="store_true", help="overwrite OUT if it exists")
    args = p.parse_args()
    fc.refuse_overwrite(args.out, args.force)
    model = onnx.load(args.model)
    batch = load_calibration(args.calib_dir, model.graph.input[0])
    model = make_qdq(model, batch)
    onnx.save(model, args.out)
    print(f"wrote {args.out} ({os.path.getsize(args.out)} bytes), ops {fc.op_histogram(model)}")


if __name__ == "__main__":
    main()
