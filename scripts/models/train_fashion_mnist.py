#!/usr/bin/python3
"""Trains the shipped Fashion-MNIST CNN (seeded, CPU) and exports it to ONNX with its calibration samples."""
import argparse
import gzip
import os
import sys
import time

import numpy as np
import onnx
import torch
import torch.nn as nn

LABELS = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    dims = magic & 0xFF
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


class Net(nn.Module):
    """conv-BN-ReLU, max pooling, a residual block, a strided conv, global average pooling, dense."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.block_a = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.block_b = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16))
        self.relu = nn.ReLU()
        self.down = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU())
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(self.stem(x))
        x = self.relu(self.block_b(self.block_a(x)) + x)
        x = self.gap(self.down(x))
        return self.fc(torch.flatten(x, 1))


def write_pgm(path, image):
    with open(path, "wb") as f:
        f.write(b"P5\n28 28\n255\n" + image.astype(np.uint8).tobytes())


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--out", default="models/fashion_mnist")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    a = p.parse_args()
    model_path = os.path.join(a.out, "fashion_cnn.onnx")
    if os.path.exists(model_path) and not a.force:
        sys.exit(f"{model_path} exists; pass --force to overwrite it")
    torch.manual_seed(a.seed)
    np.random.seed(a.seed)
    torch.set_num_threads(2)
    train_x = read_idx(os.path.join(a.data, "train-images-idx3-ubyte.gz")).astype(np.float32) / 255.0
    train_y = read_idx(os.path.join(a.data, "train-labels-idx1-ubyte.gz")).astype(np.int64)
    test_x = read_idx(os.path.join(a.data, "t10k-images-idx3-ubyte.gz")).astype(np.float32) / 255.0
    test_y = read_idx(os.path.join(a.data, "t10k-labels-idx1-ubyte.gz")).astype(np.int64)
    tx = torch.from_numpy(train_x).unsqueeze(1)
    ty = torch.from_numpy(train_y)
    net = Net()
    opt = torch.optim.Adam(net.parameters(), lr=2e-3)
    steps = a.epochs * ((len(tx) + 127) // 128)
    schedule = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=4e-3, total_steps=steps)
    start = time.time()
    for epoch in range(a.epochs):
        net.train()
        order = torch.randperm(len(tx))
        for i in range(0, len(tx), 128):
            idx = order[i:i + 128]
            opt.zero_grad()
            loss = nn.functional.cross_entropy(net(tx[idx]), ty[idx])
            loss.backward()
            opt.step()
            schedule.step()
        print(f"epoch {epoch + 1}: loss {loss.item():.4f} ({time.time() - start:.0f} s)", flush=True)
    net.eval()
    with torch.no_grad():
        logits = net(torch.from_numpy(test_x).unsqueeze(1))
    accuracy = float((logits.argmax(1).numpy() == test_y).mean())
    print(f"float test top-1: {100 * accuracy:.2f}% over {len(test_y)} images")
    os.makedirs(os.path.join(a.out, "calib"), exist_ok=True)
    # torch's exporter folds BatchNormalization into the convolutions in eval mode (the graph
    # compiler's own BatchNorm folding is exercised by ResNet-18, whose builder keeps BN nodes).
    torch.onnx.export(net, torch.zeros(1, 1, 28, 28), model_path, opset_version=13, input_names=["image"],
                      output_names=["logits"], training=torch.onnx.TrainingMode.EVAL, do_constant_folding=False)
    m = onnx.load(model_path)
    entry = m.metadata_props.add()
    entry.key = "labels"
    entry.value = ",".join(LABELS)
    entry = m.metadata_props.add()
    entry.key = "float_top1"
    entry.value = f"{accuracy:.4f}"
    onnx.checker.check_model(m)
    onnx.save(m, model_path)
    ops = {}
    for n in m.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    print("ops:", ops)
    for i in range(16):
        np.save(os.path.join(a.out, "calib", f"train_{i:02d}.npy"), train_x[i * 997][None, None, :, :])
    np.save(os.path.join(a.out, "sample_0.npy"), test_x[0][None, None, :, :])
    write_pgm(os.path.join(a.out, "sample_0.pgm"), test_x[0] * 255.0)
    with open(os.path.join(a.out, "labels.txt"), "w") as f:
        f.write("\n".join(LABELS) + "\n")
    print(f"sample_0 label: {test_y[0]} ({LABELS[test_y[0]]}); wrote {model_path} in {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
