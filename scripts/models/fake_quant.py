#!/usr/bin/env python3
"""Where int8 post-training quantization loses accuracy on a zoo architecture: PyTorch fake quantization of Tessera's scheme, weights and activations separately."""
# Builds the architecture exactly as make_zoo.py does (same seed, same BatchNorm statistics), folds
# BatchNorm, and compares the float logits of make_zoo.py's two test inputs with those of the same
# network with, in turn:
#   input        the input image alone in int8, one symmetric scale from the max |x| over the
#                calibration inputs: what any int8 accelerator costs before its first layer;
#   weights      int8 weights, one symmetric scale per output channel (as Tessera quantizes them);
#   activations  int8 activations, one symmetric scale per tensor from the max |x| over the
#                calibration inputs, at each convolution's or dense layer's output (after its
#                activation function when one follows);
#   both         the two together: the scheme Tessera's accelerator computes exactly;
#   per-channel  both, with one activation scale per channel instead: what per-tensor scales cost.
# It prints the cosine similarity per input for each, so a figure Tessera misses can be told apart
# from one the scheme itself misses.
import argparse
import sys
from pathlib import Path

import torch
import torch.nn as nn
from torch.nn.utils.fusion import fuse_conv_bn_eval

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_zoo  # noqa: E402

ACTIVATIONS = (nn.ReLU, nn.ReLU6, nn.Hardswish, nn.Hardsigmoid, nn.SiLU, nn.Sigmoid)


def fold_batchnorm(module):
    names = list(module._modules.keys())
    for i, name in enumerate(names):
        child = module._modules[name]
        if isinstance(child, nn.Conv2d) and i + 1 < len(names) and isinstance(module._modules[names[i + 1]], nn.BatchNorm2d):
            module._modules[name] = fuse_conv_bn_eval(child, module._modules[names[i + 1]])
            module._modules[names[i + 1]] = nn.Identity()
        elif child is not None:
            fold_batchnorm(child)


def quantization_points(net):
    """The modules whose outputs Tessera quantizes: layers without a following activation, and activations."""
    points = []
    for parent_name, parent in net.named_modules():
        children = list(parent.named_children())
        for i, (name, child) in enumerate(children):
            full = f"{parent_name}.{name}" if parent_name else name
            if isinstance(child, ACTIVATIONS):
                points.append((full, child))
            elif isinstance(child, (nn.Conv2d, nn.Linear)):
                j = i + 1
                while j < len(children) and isinstance(children[j][1], nn.Identity):
                    j += 1
                if not (j < len(children) and isinstance(children[j][1], ACTIVATIONS)):
                    points.append((full, child))
    return points


def per_channel_int8(w):
    s = w.abs().flatten(1).max(1)[0].clamp(min=1e-12) / 127
    s = s.view(-1, *[1] * (w.dim() - 1))
    return torch.round(w / s).clamp(-127, 127) * s


def run(arch, seed, mode, calib, tests, reference):
    net = make_zoo.build(arch, seed).eval()
    fold_batchnorm(net)
    points = quantization_points(net)
    if mode in ("weights", "both", "per-channel"):
        for m in net.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                m.weight.data = per_channel_int8(m.weight.data)
    if mode in ("activations", "both", "per-channel"):
        ranges = {}

        def record(name):
            def hook(_m, _i, out):
                axes = (0, 2, 3) if (mode == "per-channel" and out.dim() == 4) else tuple(range(out.dim()))
                r = out.abs().amax(dim=axes)
                ranges[name] = torch.maximum(ranges[name], r) if name in ranges else r
            return hook

        hooks = [m.register_forward_hook(record(n)) for n, m in points]
        with torch.no_grad():
            for x in calib:
                net(x.unsqueeze(0))
        for h in hooks:
            h.remove()

        def quantize(name):
            def hook(_m, _i, out):
                s = ranges[name].clamp(min=1e-12) / 127
                if s.dim() == 1:
                    s = s.view(1, -1, 1, 1)
                return torch.round(out / s).clamp(-128, 127) * s
            return hook

        for n, m in points:
            m.register_forward_hook(quantize(n))
    if mode == "input":
        s = max(float(x.abs().max()) for x in calib) / 127
        tests = [torch.round(x / s).clamp(-128, 127) * s for x in tests]
    cosines = []
    with torch.no_grad():
        for x, r in zip(tests, reference):
            y = net(x.unsqueeze(0)).flatten()
            cosines.append(float(torch.dot(y, r) / (y.norm() * r.norm())))
    return cosines


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("arch", help="a make_zoo.py architecture, e.g. mobilenet_v2")
    ap.add_argument("--seed", type=int, default=7, help="make_zoo.py's seed (default 7)")
    ap.add_argument("--calibration", type=int, default=8, help="calibration inputs (default 8, as make_zoo.py)")
    args = ap.parse_args()
    if args.arch not in make_zoo.ARCHITECTURES:
        sys.exit(f"fake_quant.py: unknown architecture '{args.arch}' (known: {', '.join(make_zoo.ARCHITECTURES)})")
    torch.set_num_threads(1)
    calib = list(make_zoo.synthetic_images(args.calibration, args.seed * 100 + 50))
    tests = list(make_zoo.synthetic_images(2, args.seed * 100 + 90))
    net = make_zoo.build(args.arch, args.seed).eval()
    with torch.no_grad():
        reference = [net(x.unsqueeze(0)).flatten() for x in tests]
    for mode in ("input", "weights", "activations", "both", "per-channel"):
        c = run(args.arch, args.seed, mode, calib, tests, reference)
        print(f"{args.arch} {mode:12s} cosine " + " ".join(f"{v:.4f}" for v in c))


if __name__ == "__main__":
    main()
