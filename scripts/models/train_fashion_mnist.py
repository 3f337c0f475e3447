"""Trains the shipped Fashion-MNIST CNN on Debian's dataset-fashion-mnist and exports it to ONNX with its samples."""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_common as fc  # noqa: E402

CALIB_COUNT = 16


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("out_dir", help="directory for fashion_cnn.onnx, labels.txt, calib/, sample_0.*")
    p.add_argument("--dataset-dir", default=fc.DATASET_DIR)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--force", action="store_true", help="overwrite existing output files")
    return p.parse_args()


def train(model, images, labels, args):
    # The one-cycle rate decays to zero over the run: the last epoch settles BN statistics and weights together.
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    fc.train_epochs(model, torch.from_numpy(fc.to_input(images)), torch.from_numpy(labels), nn.CrossEntropyLoss(), optimizer,
                    args.epochs, args.batch_size, args.lr, args.seed)


def export(model, path):
    proto = fc.export_classifier(model, path, "Tessera Fashion-MNIST CNN; input float32 pixel/255, NCHW 1x1x28x28; output logits",
                                 preserve_batchnorm=True)
    ops = fc.op_histogram(proto)
    if ops.get("BatchNormalization", 0) != 4:
        sys.exit(f"error: {path}: expected 4 BatchNormalization nodes, export gave {ops}")
    return fc.save_checked(proto, path)


def write_pgm(path, image_u8):
    with open(path, "wb") as f:
        f.write(b"P5\n28 28\n255\n" + image_u8.astype(np.uint8).tobytes())


def main():
    args = parse_args()
    outputs = ["fashion_cnn.onnx", "labels.txt", "sample_0.npy", "sample_0.pgm", "train_result.json"]
    outputs += [os.path.join("calib", f"calib_{i:02d}.npy") for i in range(CALIB_COUNT)]
    for name in outputs:
        fc.refuse_overwrite(os.path.join(args.out_dir, name), args.force)
    os.makedirs(os.path.join(args.out_dir, "calib"), exist_ok=True)

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)

    train_images, train_labels = fc.load_split("train", args.dataset_dir)
    test_images, test_labels = fc.load_split("t10k", args.dataset_dir)

    started = time.time()
    model = fc.build_model()
    train(model, train_images, train_labels, args)
    train_seconds = time.time() - started
    accuracy = fc.accuracy(model, test_images, test_labels)
    print(f"float top-1 on all {len(test_images)} test images: {accuracy * 100:.2f}%")

    onnx_path = os.path.join(args.out_dir, "fashion_cnn.onnx")
    ops = export(model, onnx_path)
    print(f"wrote {onnx_path} ({os.path.getsize(onnx_path)} bytes), ops {ops}")

    with open(os.path.join(args.out_dir, "labels.txt"), "w") as f:
        f.write("\n".join(fc.LABELS) + "\n")

    calib_indices = np.random.RandomState(args.seed).choice(len(train_images), CALIB_COUNT, replace=False)
    for i, index in enumerate(calib_indices):
        np.save(os.path.join(args.out_dir, "calib", f"calib_{i:02d}.npy"), fc.to_input(train_images[index:index + 1]))
    np.save(os.path.join(args.out_dir, "sample_0.npy"), fc.to_input(test_images[0:1]))
    write_pgm(os.path.join(args.out_dir, "sample_0.pgm"), test_images[0])

    result = {"seed": args.seed, "epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr,
              "float_top1": round(accuracy, 4), "test_images": len(test_images),
              "train_seconds": round(train_seconds, 1), "torch": torch.__version__,
              "calib_train_indices": [int(i) for i in calib_indices],
              "sample_0": {"test_index": 0, "label": int(test_labels[0]), "name": fc.LABELS[test_labels[0]]}}
    with open(os.path.join(args.out_dir, "train_result.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
