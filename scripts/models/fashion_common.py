"""Shared pieces of the Fashion-MNIST model scripts: IDX reading, the CNN, ONNX export and clean-up."""
import gzip
import json
import os
import sys

import numpy as np

DATASET_DIR = "/usr/share/datasets/fashion-mnist"
LABELS = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
          "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]

_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.dtype(">i2"),
               0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


def read_idx(path):
    """Returns the array stored in an IDX file (gzip-compressed or plain)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        sys.exit(f"error: {path}: not an IDX file (bad magic)")
    type_code, ndim = data[2], data[3]
    if type_code not in _IDX_DTYPES:
        sys.exit(f"error: {path}: unknown IDX element type 0x{type_code:02x}")
    header_end = 4 + 4 * ndim
    if len(data) < header_end:
        sys.exit(f"error: {path}: truncated IDX header")
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    dtype = np.dtype(_IDX_DTYPES[type_code])
    expected = int(np.prod(dims)) * dtype.itemsize
    if len(data) - header_end != expected:
        sys.exit(f"error: {path}: payload is {len(data) - header_end} bytes, dims {dims} need {expected}")
    return np.frombuffer(data, dtype=dtype, offset=header_end).reshape(dims)


def load_split(split, dataset_dir=DATASET_DIR):
    """Images as float32 N x 1 x 28 x 28 in [0,1] (pixel/255) and labels as int64, for 'train' or 't10k'."""
    images = read_idx(os.path.join(dataset_dir, f"{split}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(dataset_dir, f"{split}-labels-idx1-ubyte.gz"))
    if images.shape[0] != labels.shape[0]:
        sys.exit(f"error: {split}: {images.shape[0]} images but {labels.shape[0]} labels")
    return images, labels.astype(np.int64)


def to_input(images_u8):
    """The model's input convention: float32 pixel/255, NCHW with one channel."""
    return (images_u8.astype(np.float32) / 255.0)[:, None, :, :]


def accuracy(model, images, labels, batch=1000):
    """Top-1 of a torch model over IDX images (uint8) and labels, in eval mode."""
    import torch
    model.eval()
    correct = 0
    with torch.no_grad():
        for start in range(0, len(images), batch):
            x = torch.from_numpy(to_input(images[start:start + batch]))
            correct += int((model(x).argmax(dim=1).numpy() == labels[start:start + batch]).sum())
    return correct / len(images)


def build_model():
    import torch.nn as nn

    class ResidualBlock(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(channels)
            self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
            self.bn2 = nn.BatchNorm2d(channels)
            self.relu = nn.ReLU()

        def forward(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return self.relu(y + x)

    class FashionCnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                                      nn.MaxPool2d(2))
            self.block = ResidualBlock(16)
            self.down = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32),
                                      nn.ReLU())
            self.flatten = nn.Flatten()
            self.fc = nn.Linear(32 * 7 * 7, 10)

        def forward(self, x):
            return self.fc(self.flatten(self.down(self.block(self.stem(x)))))

    return FashionCnn()


def inline_identities(model_proto):
    """Removes Identity nodes. The exporter emits them when two parameters hold equal values
    (it shares one initializer); the compiler should see plain initializers instead."""
    import onnx
    graph = model_proto.graph
    inits = {t.name: t for t in graph.initializer}
    outputs = {o.name for o in graph.output}
    rename = {}
    kept = []
    for node in graph.node:
        if node.op_type == "Identity" and node.output[0] not in outputs:
            src = rename.get(node.input[0], node.input[0])
            if src in inits:
                copy = onnx.TensorProto()
                copy.CopyFrom(inits[src])
                copy.name = node.output[0]
                graph.initializer.append(copy)
                inits[copy.name] = copy
            else:
                rename[node.output[0]] = src
            continue
        kept.append(node)
    for node in kept:
        for i, name in enumerate(node.input):
            if name in rename:
                node.input[i] = rename[name]
    del graph.node[:]
    graph.node.extend(kept)
    return model_proto


def refuse_overwrite(path, force):
    if os.path.exists(path) and not force:
        sys.exit(f"error: {path} exists; pass --force to overwrite it")


def op_histogram(model_proto):
    counts = {}
    for node in model_proto.graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return dict(sorted(counts.items()))


def save_checked(model_proto, path):
    """Checks an exported model, saves it and returns its operator histogram."""
    import onnx
    onnx.checker.check_model(model_proto)
    onnx.save(model_proto, path)
    return op_histogram(model_proto)


def training_arguments(description, epochs, batch_size, lr):
    """The options the training scripts share: OUT_DIR, the data set, seed, epochs, batch size, peak
    learning rate, --force."""
    import argparse
    p = argparse.ArgumentParser(description=description)
    p.add_argument("out_dir")
    p.add_argument("--dataset-dir", default=DATASET_DIR)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=epochs)
    p.add_argument("--batch-size", type=int, default=batch_size)
    p.add_argument("--lr", type=float, default=lr)
    p.add_argument("--force", action="store_true")
    return p


def train_epochs(model, inputs, targets, loss_of, optimizer, epochs, batch_size, lr, seed):
    """Minibatches in a seeded random order each epoch, the learning rate on a one-cycle schedule
    peaking at `lr` (15% warm-up); prints each epoch's mean loss and time."""
    import time
    import torch
    generator = torch.Generator().manual_seed(seed)
    steps = (len(inputs) + batch_size - 1) // batch_size
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=lr, epochs=epochs, steps_per_epoch=steps, pct_start=0.15)
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(inputs), generator=generator)
        total, started = 0.0, time.time()
        for step in range(steps):
            idx = order[step * batch_size:(step + 1) * batch_size]
            optimizer.zero_grad()
            loss = loss_of(model(inputs[idx]), targets[idx])
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += float(loss) * len(idx)
        print(f"  epoch {epoch + 1}/{epochs}: loss {total / len(inputs):.4f} ({time.time() - started:.0f} s)", flush=True)


def export_classifier(model, path, doc_string, preserve_batchnorm=False):
    """Exports a Fashion-MNIST classifier at opset 13 (input `image` [1,1,28,28], output `logits`,
    the labels as metadata) and returns the cleaned model, not yet saved. `preserve_batchnorm`: with
    the model in eval mode, PRESERVE exports inference BatchNormalization nodes, where EVAL would run
    torch's eval peephole pass, which folds them into Conv even with constant folding off."""
    import onnx
    import torch
    model.eval()
    mode = torch.onnx.TrainingMode.PRESERVE if preserve_batchnorm else torch.onnx.TrainingMode.EVAL
    torch.onnx.export(model, torch.zeros(1, 1, 28, 28), path, opset_version=13, input_names=["image"],
                      output_names=["logits"], training=mode, do_constant_folding=not preserve_batchnorm)
    proto = inline_identities(onnx.load(path))
    del proto.metadata_props[:]
    entry = proto.metadata_props.add()
    entry.key, entry.value = "labels", ",".join(LABELS)
    proto.doc_string = doc_string
    return proto


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=1)
        f.write("\n")
