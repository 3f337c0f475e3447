#!/usr/bin/python3
"""Trains a small vision transformer (patch embedding, class token, 4 encoder blocks of multi-head attention and GELU MLPs, LayerNorm) on Fashion-MNIST and exports it as float ONNX."""
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_common as fc  # noqa: E402

PATCH, DIM, DEPTH, HEADS, MLP = 4, 64, 4, 4, 128


class Attention(nn.Module):
    """Multi-head self-attention written out (not nn.MultiheadAttention), so the export is plain
    MatMul, Reshape, Transpose and Softmax: Q.K^T and A.V are the products of two activations."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)

    def forward(self, x):
        n, t, _ = x.shape
        q, k, v = self.qkv(x).reshape(n, t, 3, HEADS, DIM // HEADS).permute(2, 0, 3, 1, 4)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(DIM // HEADS))
        out = torch.matmul(scores.softmax(dim=-1), v)
        return self.proj(out.transpose(1, 2).reshape(n, t, DIM))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(DIM), Attention()
        self.norm2 = nn.LayerNorm(DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, MLP), nn.GELU(), nn.Linear(MLP, DIM))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class VisionTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        tokens = (28 // PATCH) ** 2
        self.embed = nn.Conv2d(1, DIM, PATCH, stride=PATCH)
        self.cls = nn.Parameter(torch.zeros(1, 1, DIM))
        self.pos = nn.Parameter(torch.randn(1, tokens + 1, DIM) * 0.02)
        self.blocks = nn.Sequential(*[Block() for _ in range(DEPTH)])
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, 10)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


def train(model, images, labels, epochs, batch_size, lr, seed):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    fc.train_epochs(model, torch.from_numpy(fc.to_input(images)), torch.from_numpy(labels), F.cross_entropy, optimizer,
                    epochs, batch_size, lr, seed)


def export(model, path):
    proto = fc.export_classifier(model, path, f"Tessera Fashion-MNIST vision transformer: {PATCH}x{PATCH} patches, dim {DIM}, "
                                              f"{DEPTH} blocks, {HEADS} heads, MLP {MLP}, class token; input float32 "
                                              "pixel/255, NCHW 1x1x28x28; output logits")
    return fc.save_checked(proto, path)


def main():
    args = fc.training_arguments(__doc__, epochs=8, batch_size=128, lr=2e-3).parse_args()
    for name in ("vit.onnx", "vit.json"):
        fc.refuse_overwrite(os.path.join(args.out_dir, name), args.force)
    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    torch.set_flush_denormal(True)
    torch.manual_seed(args.seed)
    train_images, train_labels = fc.load_split("train", args.dataset_dir)
    test_images, test_labels = fc.load_split("t10k", args.dataset_dir)
    model = VisionTransformer()
    print(f"vit: {sum(q.numel() for q in model.parameters())} parameters", flush=True)
    started = time.time()
    train(model, train_images, train_labels, args.epochs, args.batch_size, args.lr, args.seed)
    seconds = time.time() - started
    accuracy = fc.accuracy(model, test_images, test_labels)
    path = os.path.join(args.out_dir, "vit.onnx")
    ops = export(model, path)
    result = {"model": "vit", "patch": PATCH, "dim": DIM, "depth": DEPTH, "heads": HEADS, "mlp": MLP, "seed": args.seed,
              "epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr, "float_top1": round(accuracy, 4),
              "test_images": len(test_images), "train_seconds": round(seconds, 1), "torch": torch.__version__,
              "ops": ops, "bytes": os.path.getsize(path)}
    fc.write_json(os.path.join(args.out_dir, "vit.json"), result)
    print(f"vit: float top-1 {accuracy * 100:.2f}% on {len(test_images)} test images, trained in {seconds:.0f} s; ops {ops}",
          flush=True)


if __name__ == "__main__":
    main()
