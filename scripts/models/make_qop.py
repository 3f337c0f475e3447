"""Turns a float ONNX CNN into a QOperator model: QuantizeLinear -> QLinearConv / MaxPool / QLinearMatMul on
uint8 asymmetric activations -> DequantizeLinear, calibrated (min/max) on .npy inputs.

Handles the chain shapes of the shipped Fashion-MNIST model: Conv(+BN)(+Relu), MaxPool, Flatten, Gemm, and
Add(+Relu) as DequantizeLinear + Add (+Relu) + QuantizeLinear (QLinearAdd is a com.microsoft op). Gemm becomes
QLinearMatMul (per-column int8 weights) then DequantizeLinear + Add of the float bias (QLinearMatMul has none).
Usage: make_qop.py MODEL.onnx OUT.onnx CALIB_DIR [--force]
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_common as fc  # noqa: E402
import make_qdq  # noqa: E402
import onnx_numpy_eval  # noqa: E402


def uint8_params(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    zp = int(np.clip(np.rint(-lo / scale), 0, 255))
    return np.float32(scale), np.uint8(zp)


def build(model, batch):
    model = make_qdq.fold_batchnorm(model)
    graph = model.graph
    ranges = {}

    def record(name, value):
        lo, hi = ranges.get(name, (np.inf, -np.inf))
        ranges[name] = (min(lo, float(value.min())), max(hi, float(value.max())))
    input_name = graph.input[0].name
    record(input_name, batch)
    env = onnx_numpy_eval.run(model, {input_name: batch}, keep_all=True, on_tensor=record)
    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    users = make_qdq._consumers(graph)
    out_name = graph.output[0].name

    nodes, new_inits = [], []
    quantized = {}  # float tensor name -> (uint8 tensor name, scale name, zp name)

    def params(tensor):
        s, z = uint8_params(*ranges[tensor])
        sn, zn = tensor + "_scale", tensor + "_zero_point"
        new_inits.extend([numpy_helper.from_array(np.array(s), sn), numpy_helper.from_array(np.array(z), zn)])
        return sn, zn

    def const(name, array):
        new_inits.append(numpy_helper.from_array(array, name))
        return name

    sn, zn = params(input_name)
    nodes.append(helper.make_node("QuantizeLinear", [input_name, sn, zn], [input_name + "_quantized"]))
    quantized[input_name] = (input_name + "_quantized", sn, zn)
    skip = set()
    for node in graph.node:
        if id(node) in skip:
            continue
        follower = users.get(node.output[0], [])
        relu = follower[0] if len(follower) == 1 and follower[0].op_type == "Relu" else None
        result = relu.output[0] if relu is not None and node.op_type in ("Conv", "Add") else node.output[0]
        if relu is not None and result != node.output[0]:
            skip.add(id(relu))
        if node.op_type == "Conv":
            xq, xs, xz = quantized[node.input[0]]
            w = inits[node.input[1]].astype(np.float64)
            w_scale = (np.abs(w).reshape(w.shape[0], -1).max(axis=1) / 127.0).astype(np.float32)
            w_q = np.clip(np.rint(w / w_scale[:, None, None, None]), -127, 127).astype(np.int8)
            x_scale = np.float32(numpy_helper.to_array(next(t for t in new_inits if t.name == xs)))
            b_q = np.rint(inits[node.input[2]].astype(np.float64) / (x_scale * w_scale)).astype(np.int32)
            base = node.output[0]
            ys, yz = params(result)
            inputs = [xq, xs, xz, const(base + "_W_quantized", w_q), const(base + "_W_scale", w_scale),
                      const(base + "_W_zero_point", np.zeros(w_scale.shape, np.int8)), ys, yz,
                      const(base + "_B_quantized", b_q)]
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            nodes.append(helper.make_node("QLinearConv", inputs, [result + "_quantized"], name=node.name + "_quant", **attrs))
            quantized[result] = (result + "_quantized", ys, yz)
        elif node.op_type in ("MaxPool", "Flatten"):
            xq, xs, xz = quantized[node.input[0]]
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            nodes.append(helper.make_node(node.op_type, [xq], [node.output[0] + "_quantized"], name=node.name, **attrs))
            quantized[node.output[0]] = (node.output[0] + "_quantized", xs, xz)
        elif node.op_type == "Add":
            floats = []
            for name in node.input:
                q, s, z = quantized[name]
                nodes.append(helper.make_node("DequantizeLinear", [q, s, z], [name + "_dequantized"]))
                floats.append(name + "_dequantized")
            nodes.append(helper.make_node("Add", floats, [node.output[0] + "_f"], name=node.name))
            last = node.output[0] + "_f"
            if result != node.output[0]:
                nodes.append(helper.make_node("Relu", [last], [result + "_f"], name=relu.name))
                last = result + "_f"
            ys, yz = params(result)
            nodes.append(helper.make_node("QuantizeLinear", [last, ys, yz], [result + "_quantized"]))
            quantized[result] = (result + "_quantized", ys, yz)
        elif node.op_type == "Gemm":
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            if attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0:
                sys.exit(f"error: Gemm {node.name}: only transA=0, alpha=beta=1 supported")
            xq, xs, xz = quantized[node.input[0]]
            w = inits[node.input[1]].astype(np.float64)
            b = w.T if attrs.get("transB", 0) else w                      # K x N
            b_scale = (np.abs(b).max(axis=0) / 127.0).astype(np.float32)
            b_q = np.clip(np.rint(b / b_scale[None, :]), -127, 127).astype(np.int8)
            base = node.output[0]
            # The matmul result before the bias is what QLinearMatMul quantizes; calibrate it directly.
            matmul = env[node.input[0]] @ (b_q.astype(np.float32) * b_scale[None, :])
            ranges[base + "_matmul"] = (float(matmul.min()), float(matmul.max()))
            ys, yz = params(base + "_matmul")
            nodes.append(helper.make_node(
                "QLinearMatMul", [xq, xs, xz, const(base + "_W_quantized", b_q), const(base + "_W_scale", b_scale),
                                  const(base + "_W_zero_point", np.zeros(b_scale.shape, np.int8)), ys, yz],
                [base + "_matmul_quantized"], name=node.name + "_quant"))
            nodes.append(helper.make_node("DequantizeLinear", [base + "_matmul_quantized", ys, yz], [base + "_matmul"]))
            nodes.append(helper.make_node("Add", [base + "_matmul", const(base + "_bias", inits[node.input[2]])],
                                          [node.output[0]], name=node.name + "_bias"))
            quantized[node.output[0]] = None
        else:
            sys.exit(f"error: node {node.name}: op {node.op_type} not handled by make_qop")
    if quantized.get(out_name, "missing") is not None:
        q, s, z = quantized[out_name]
        nodes.append(helper.make_node("DequantizeLinear", [q, s, z], [out_name]))
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(new_inits)
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
    model = build(model, make_qdq.load_calibration(args.calib_dir, model.graph.input[0]))
    onnx.save(model, args.out)
    print(f"wrote {args.out} ({os.path.getsize(args.out)} bytes), ops {fc.op_histogram(model)}")


if __name__ == "__main__":
    main()
