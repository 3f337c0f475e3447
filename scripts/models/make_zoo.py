#!/usr/bin/python3
"""Exports torchvision's classification architectures (seeded weights, BatchNorm statistics from synthetic images) as float ONNX files with calibration and test inputs and the float outputs."""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torchvision

# Every classification architecture the zoo issue names (and ViT-B/16), each as torchvision 0.14
# builds it; the value is whether the network has depthwise or grouped convolutions (its MAC-share
# target is 95%, else 99%).
ARCHITECTURES = {
    "resnet18": False,
    "resnet50": False,
    "vgg11_bn": False,
    "alexnet": False,
    "squeezenet1_1": False,
    "googlenet": False,
    "densenet121": False,
    "mobilenet_v2": True,
    "mobilenet_v3_small": True,
    "mobilenet_v3_large": True,
    "efficientnet_b0": True,
    "shufflenet_v2_x1_0": True,
    "mnasnet0_5": True,
    "regnet_x_400mf": True,
    "resnext50_32x4d": True,
    # A vision transformer (issue 30's figure): its projections and MLP run as convolutions over
    # the tokens; its attention products, LayerNorms, GELUs and softmaxes on the host.
    "vit_b_16": False,
}

SIZE = 224


def synthetic_images(count, seed):
    """Smooth random images normalised like ImageNet inputs: low-frequency noise upsampled, so
    activations have the spatial correlation of photographs rather than white noise."""
    g = torch.Generator().manual_seed(seed)
    coarse = torch.rand(count, 3, 14, 14, generator=g)
    fine = torch.rand(count, 3, 56, 56, generator=g)
    x = 0.7 * torch.nn.functional.interpolate(coarse, size=(SIZE, SIZE), mode="bilinear", align_corners=False)
    x += 0.3 * torch.nn.functional.interpolate(fine, size=(SIZE, SIZE), mode="bilinear", align_corners=False)
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    return ((x - mean) / std).float()


def build(arch, seed):
    torch.manual_seed(seed)
    kwargs = {"weights": None}
    if arch == "googlenet":
        kwargs.update(aux_logits=False, init_weights=True)
    net = getattr(torchvision.models, arch)(**kwargs)
    if arch == "vit_b_16":
        # torchvision zero-initializes ViT's classification head, which would make every logit 0.
        torch.nn.init.normal_(net.heads.head.weight, std=0.02)
    # BatchNorm statistics from synthetic images: a cumulative average over a few batches in
    # training mode, so folding BatchNorm changes the weights the way a trained network's does.
    bns = [m for m in net.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    net.train()
    with torch.no_grad():
        for b in range(4):
            net(synthetic_images(8, seed * 100 + b))
    return net.eval()


def export(arch, out_dir, seed, samples, calibration):
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, arch + ".onnx")
    net = build(arch, seed)
    torch.onnx.export(net, torch.zeros(1, 3, SIZE, SIZE), path, opset_version=13, input_names=["data"],
                      output_names=["logits"], training=torch.onnx.TrainingMode.EVAL, do_constant_folding=True)
    calib_dir = os.path.join(out_dir, arch + "_calib")
    os.makedirs(calib_dir, exist_ok=True)
    for i, img in enumerate(synthetic_images(calibration, seed * 100 + 50)):
        np.save(os.path.join(calib_dir, f"calib_{i:02d}.npy"), img.unsqueeze(0).numpy())
    inputs = synthetic_images(samples, seed * 100 + 90)
    with torch.no_grad():
        logits = net(inputs)
    for i in range(samples):
        np.save(os.path.join(out_dir, f"{arch}_input_{i}.npy"), inputs[i:i + 1].numpy())
        np.save(os.path.join(out_dir, f"{arch}_float_{i}.npy"), logits[i:i + 1].numpy())
    macs = sum(int(np.prod(m.weight.shape)) for m in net.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)))
    return {"file": os.path.basename(path), "grouped": ARCHITECTURES[arch], "inputs": samples,
            "calibration": calibration, "seed": seed, "parameters_in_conv_and_linear": macs}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out_dir")
    ap.add_argument("--arch", action="append", help="only these architectures (default: all)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--samples", type=int, default=2, help="test inputs per architecture")
    ap.add_argument("--calibration", type=int, default=8, help="calibration inputs per architecture")
    ap.add_argument("--force", action="store_true", help="export again even if the file exists")
    ap.add_argument("--list", action="store_true", help="print the architectures and exit")
    args = ap.parse_args()
    if args.list:
        print("\n".join(ARCHITECTURES))
        return
    archs = args.arch or list(ARCHITECTURES)
    for a in archs:
        if a not in ARCHITECTURES:
            sys.exit(f"make_zoo.py: unknown architecture '{a}' (known: {', '.join(ARCHITECTURES)})")
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    os.makedirs(args.out_dir, exist_ok=True)
    for a in archs:
        # One description per architecture (parallel ctest fixtures export different ones).
        info_path = os.path.join(args.out_dir, a + ".json")
        if not args.force and os.path.exists(info_path):
            continue
        t0 = time.time()
        info = export(a, args.out_dir, args.seed, args.samples, args.calibration)
        print(f"{a}: exported in {time.time() - t0:.1f} s", flush=True)
        tmp = f"{info_path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(info, f, indent=1, sort_keys=True)
        os.replace(tmp, info_path)

if __name__ == "__main__":
    main()
