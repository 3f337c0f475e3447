#!/usr/bin/python3
"""Writes torchvision's ResNet-18 (seeded weights) as a float ONNX file and as a QDQ file quantized with its own calibration."""
import argparse
import os
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import helper, numpy_helper


def seeded_resnet18(seed):
    torch.manual_seed(seed)
    net = torchvision.models.resnet18(weights=None)
    # Non-trivial BatchNorm statistics, so folding them changes the weights.
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)
    return net.eval()


def export(net, path, fold_bn):
    torch.onnx.export(net, torch.zeros(1, 3, 224, 224), path, opset_version=13, input_names=["data"],
                      output_names=["logits"], training=torch.onnx.TrainingMode.EVAL,
                      do_constant_folding=fold_bn)


def qdq(float_path, out_path, net, seed):
    """Inserts QuantizeLinear/DequantizeLinear pairs the way quantization tools write QDQ files: int8
    symmetric per-tensor activations (zero point 0), int8 symmetric per-output-channel weights, int32
    biases; activation ranges from four seeded random images through the BatchNorm-folded graph."""
    m = onnx.load(float_path)
    g = m.graph
    torch.manual_seed(seed + 1)
    x = torch.randn(4, 3, 224, 224)
    ranges = {}
    # A simpler, exact route: evaluate the ONNX graph with numpy for the values we quantize.
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    vals = {"data": x.numpy()}

    def conv(xv, w, b, n):
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        s = attrs.get("strides", [1, 1])
        p = attrs.get("pads", [0, 0, 0, 0])
        t = torch.nn.functional.conv2d(torch.from_numpy(xv.copy()), torch.from_numpy(w.copy()), None if b is None else torch.from_numpy(b.copy()),
                                       stride=s, padding=(p[0], p[1]))
        return t.numpy()

    for n in g.node:
        ins = [vals.get(i, inits.get(i)) for i in n.input]
        if n.op_type == "Conv":
            out = conv(ins[0], ins[1], ins[2] if len(ins) > 2 else None, n)
        elif n.op_type == "Relu":
            out = np.maximum(ins[0], 0)
        elif n.op_type == "Add":
            out = ins[0] + ins[1]
        elif n.op_type == "MaxPool":
            attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
            out = torch.nn.functional.max_pool2d(torch.from_numpy(ins[0]), attrs["kernel_shape"], attrs["strides"],
                                                 attrs["pads"][0]).numpy()
        elif n.op_type == "GlobalAveragePool":
            out = ins[0].mean(axis=(2, 3), keepdims=True)
        elif n.op_type == "Flatten":
            out = ins[0].reshape(ins[0].shape[0], -1)
        elif n.op_type == "Gemm":
            out = ins[0] @ ins[1].T + ins[2]
        else:
            sys.exit(f"unexpected op {n.op_type} in the folded ResNet-18")
        vals[n.output[0]] = out
        ranges[n.output[0]] = float(np.abs(out).max())
    ranges["data"] = float(np.abs(x.numpy()).max())

    new_nodes = []
    new_inits = list(g.initializer)
    done = {}

    def scale_name(t):
        name = t + "_scale"
        if name not in done:
            new_inits.append(numpy_helper.from_array(np.array(max(ranges[t], 1e-8) / 127.0, dtype=np.float32), name))
            new_inits.append(numpy_helper.from_array(np.array(0, dtype=np.int8), t + "_zp"))
            done[name] = True
        return name

    def qdq_value(t):
        """The dequantized copy of activation t (one Q->DQ pair per value)."""
        dq = t + "_dq"
        if dq not in done:
            s = scale_name(t)
            new_nodes.append(helper.make_node("QuantizeLinear", [t, s, t + "_zp"], [t + "_q"], name=t + "_Q"))
            new_nodes.append(helper.make_node("DequantizeLinear", [t + "_q", s, t + "_zp"], [dq], name=t + "_DQ"))
            done[dq] = True
        return dq

    replaced = set()
    for n in g.node:
        if n.op_type in ("Conv", "Gemm"):
            w = inits[n.input[1]]
            axis_max = np.abs(w.reshape(w.shape[0], -1)).max(axis=1)
            sw = np.maximum(axis_max, 1e-8) / 127.0
            wq = np.clip(np.round(w / sw.reshape((-1,) + (1,) * (w.ndim - 1))), -127, 127).astype(np.int8)
            new_inits.append(numpy_helper.from_array(wq, n.input[1] + "_q"))
            new_inits.append(numpy_helper.from_array(sw.astype(np.float32), n.input[1] + "_wscale"))
            new_inits.append(numpy_helper.from_array(np.zeros(w.shape[0], dtype=np.int8), n.input[1] + "_wzp"))
            new_nodes.append(helper.make_node("DequantizeLinear", [n.input[1] + "_q", n.input[1] + "_wscale", n.input[1] + "_wzp"],
                                              [n.input[1] + "_dq"], name=n.input[1] + "_DQ", axis=0))
            xin = qdq_value(n.input[0])
            sx = max(ranges[n.input[0]], 1e-8) / 127.0
            inputs = [xin, n.input[1] + "_dq"]
            if len(n.input) > 2:
                b = inits[n.input[2]]
                bq = np.round(b / (sx * sw)).astype(np.int32)
                new_inits.append(numpy_helper.from_array(bq, n.input[2] + "_q"))
                new_inits.append(numpy_helper.from_array((sx * sw).astype(np.float32), n.input[2] + "_bscale"))
                new_inits.append(numpy_helper.from_array(np.zeros(w.shape[0], dtype=np.int32), n.input[2] + "_bzp"))
                new_nodes.append(helper.make_node("DequantizeLinear", [n.input[2] + "_q", n.input[2] + "_bscale", n.input[2] + "_bzp"],
                                                  [n.input[2] + "_dq"], name=n.input[2] + "_DQ", axis=0))
                inputs.append(n.input[2] + "_dq")
            outputs = list(n.output)
            if outputs[0] in [o.name for o in g.output]:
                # The logits are quantized too and dequantized as the graph's output, as tools write it.
                out = outputs[0]
                outputs = [out + "_real"]
                ranges[out + "_real"] = ranges[out]
                s = scale_name(out + "_real")
                new_nodes.append(helper.make_node(n.op_type, inputs, outputs, name=n.name, **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
                new_nodes.append(helper.make_node("QuantizeLinear", [out + "_real", s, out + "_real_zp"], [out + "_q"], name=out + "_Q"))
                new_nodes.append(helper.make_node("DequantizeLinear", [out + "_q", s, out + "_real_zp"], [out], name=out + "_DQ"))
                continue
            new_nodes.append(helper.make_node(n.op_type, inputs, outputs, name=n.name, **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
        elif n.op_type in ("Add", "MaxPool", "GlobalAveragePool"):
            new_nodes.append(helper.make_node(n.op_type, [qdq_value(i) for i in n.input], list(n.output), name=n.name,
                                              **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
        elif n.op_type == "Relu":
            # Conv -> Relu -> Q: the ReLU's output is what gets quantized (as the tools do).
            new_nodes.append(n)
        else:
            new_nodes.append(n)
    g.ClearField("node")
    g.node.extend(new_nodes)
    g.ClearField("initializer")
    used = {i for node in new_nodes for i in node.input}
    g.initializer.extend([i for i in new_inits if i.name in used])
    # Topological order: a value's Q/DQ pair was emitted at its first consumer, after its producer.
    onnx.checker.check_model(m)
    onnx.save(m, out_path)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("out_dir")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--force", action="store_true")
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    float_path = os.path.join(a.out_dir, "resnet18.onnx")
    folded_path = os.path.join(a.out_dir, "resnet18_folded.onnx")
    qdq_path = os.path.join(a.out_dir, "resnet18_qdq.onnx")
    for path in (float_path, qdq_path):
        if os.path.exists(path) and not a.force:
            sys.exit(f"{path} exists; pass --force to overwrite it")
    torch.set_num_threads(2)
    net = seeded_resnet18(a.seed)
    export(net, float_path, False)
    export(net, folded_path, True)
    qdq(folded_path, qdq_path, net, a.seed)
    os.remove(folded_path)
    for path in (float_path, qdq_path):
        m = onnx.load(path)
        ops = {}
        for n in m.graph.node:
            ops[n.op_type] = ops.get(n.op_type, 0) + 1
        print(f"{path}: {os.path.getsize(path)} bytes, ops {ops}")


if __name__ == "__main__":
    main()
