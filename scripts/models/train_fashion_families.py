#!/usr/bin/python3
"""Trains small Fashion-MNIST versions of three CNN families (MobileNetV3-style, SqueezeNet-style, ShuffleNetV2-style) and exports each as float ONNX."""
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_common as fc  # noqa: E402


class PadTo32(nn.Module):
    """The 28x28 image padded to 32x32 with zeros (black), inside the network: the input stays the
    data set's image, and the layers see the size the families are usually drawn for."""

    def forward(self, x):
        return F.pad(x, (2, 2, 2, 2))


def conv_bn(cin, cout, k, stride=1, groups=1, act=None):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


class SqueezeExcitation(nn.Module):
    def __init__(self, channels, squeezed):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, squeezed, 1)
        self.fc2 = nn.Conv2d(squeezed, channels, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        s = F.hardsigmoid(self.fc2(F.relu(self.fc1(s))))
        return x * s


class InvertedResidual(nn.Module):
    def __init__(self, cin, expanded, cout, stride, se):
        super().__init__()
        self.expand = conv_bn(cin, expanded, 1, act=nn.Hardswish)
        self.depthwise = conv_bn(expanded, expanded, 3, stride, groups=expanded, act=nn.Hardswish)
        self.se = SqueezeExcitation(expanded, max(8, expanded // 4)) if se else nn.Identity()
        self.project = conv_bn(expanded, cout, 1)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.project(self.se(self.depthwise(self.expand(x))))
        return x + y if self.residual else y


class MobileNetStyle(nn.Module):
    """Inverted residuals with depthwise convolutions, squeeze-excitation and HardSwish."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            PadTo32(), conv_bn(1, 16, 3, act=nn.Hardswish),
            InvertedResidual(16, 48, 24, 2, se=True),   # 16x16
            InvertedResidual(24, 72, 24, 1, se=True),
            InvertedResidual(24, 96, 40, 2, se=True),   # 8x8
            InvertedResidual(40, 120, 40, 1, se=True),
            conv_bn(40, 96, 1, act=nn.Hardswish))
        self.classifier = nn.Linear(96, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


class Fire(nn.Module):
    def __init__(self, cin, squeeze, expand):
        super().__init__()
        self.squeeze = nn.Sequential(nn.Conv2d(cin, squeeze, 1), nn.ReLU())
        self.expand1 = nn.Sequential(nn.Conv2d(squeeze, expand, 1), nn.ReLU())
        self.expand3 = nn.Sequential(nn.Conv2d(squeeze, expand, 3, padding=1), nn.ReLU())

    def forward(self, x):
        s = self.squeeze(x)
        return torch.cat([self.expand1(s), self.expand3(s)], 1)


class SqueezeNetStyle(nn.Module):
    """Fire modules (squeeze, then 1x1 and 3x3 expansions concatenated) and a convolutional classifier."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            PadTo32(), nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 16x16
            Fire(32, 16, 32), Fire(64, 16, 32), nn.MaxPool2d(2),                      # 8x8
            Fire(64, 24, 48), Fire(96, 24, 48))
        self.classifier = nn.Sequential(nn.Conv2d(96, 10, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())

    def forward(self, x):
        return self.classifier(self.features(x))


def channel_shuffle(x, groups):
    n, c, h, w = x.shape
    return x.reshape(n, groups, c // groups, h, w).transpose(1, 2).reshape(n, c, h, w)


class ShuffleUnit(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.stride = stride
        branch = cout // 2
        if stride == 2:
            self.branch1 = nn.Sequential(conv_bn(cin, cin, 3, 2, groups=cin), conv_bn(cin, branch, 1, act=nn.ReLU))
            inner_in = cin
        else:
            inner_in = cin // 2
        self.branch2 = nn.Sequential(conv_bn(inner_in, branch, 1, act=nn.ReLU), conv_bn(branch, branch, 3, stride, groups=branch),
                                     conv_bn(branch, branch, 1, act=nn.ReLU))

    def forward(self, x):
        if self.stride == 1:
            a, b = x.chunk(2, dim=1)
            out = torch.cat([a, self.branch2(b)], 1)
        else:
            out = torch.cat([self.branch1(x), self.branch2(x)], 1)
        return channel_shuffle(out, 2)


class ShuffleNetStyle(nn.Module):
    """ShuffleNetV2 units: channel split, depthwise convolutions, concatenation and channel shuffle."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            PadTo32(), conv_bn(1, 24, 3, act=nn.ReLU),
            ShuffleUnit(24, 48, 2), ShuffleUnit(48, 48, 1),   # 16x16
            ShuffleUnit(48, 96, 2), ShuffleUnit(96, 96, 1),   # 8x8
            conv_bn(96, 128, 1, act=nn.ReLU))
        self.classifier = nn.Linear(128, 10)

    def forward(self, x):
        return self.classifier(self.features(x).mean([2, 3]))


FAMILIES = {"mobilenet_style": MobileNetStyle, "squeezenet_style": SqueezeNetStyle, "shufflenet_style": ShuffleNetStyle}


def train(model, images, labels, epochs, batch_size, lr, seed):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    fc.train_epochs(model, torch.from_numpy(fc.to_input(images)), torch.from_numpy(labels), F.cross_entropy, optimizer,
                    epochs, batch_size, lr, seed)


def export(model, path, name):
    proto = fc.export_classifier(model, path, f"Tessera Fashion-MNIST {name}; input float32 pixel/255, NCHW 1x1x28x28 "
                                              "(padded to 32x32 inside); output logits")
    return fc.save_checked(proto, path)


def main():
    p = fc.training_arguments(__doc__, epochs=3, batch_size=128, lr=4e-3)
    p.add_argument("--family", action="append", choices=list(FAMILIES), help="only these (default: all)")
    args = p.parse_args()
    families = args.family or list(FAMILIES)
    for name in families:
        for suffix in (".onnx", ".json"):
            fc.refuse_overwrite(os.path.join(args.out_dir, name + suffix), args.force)
    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    train_images, train_labels = fc.load_split("train", args.dataset_dir)
    test_images, test_labels = fc.load_split("t10k", args.dataset_dir)
    for name in families:
        torch.manual_seed(args.seed)
        model = FAMILIES[name]()
        print(f"{name}: {sum(p.numel() for p in model.parameters())} parameters", flush=True)
        started = time.time()
        train(model, train_images, train_labels, args.epochs, args.batch_size, args.lr, args.seed)
        seconds = time.time() - started
        accuracy = fc.accuracy(model, test_images, test_labels)
        path = os.path.join(args.out_dir, name + ".onnx")
        ops = export(model, path, name)
        result = {"family": name, "seed": args.seed, "epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr,
                  "float_top1": round(accuracy, 4), "test_images": len(test_images), "train_seconds": round(seconds, 1),
                  "torch": torch.__version__, "ops": ops, "bytes": os.path.getsize(path)}
        fc.write_json(os.path.join(args.out_dir, name + ".json"), result)
        print(f"{name}: float top-1 {accuracy * 100:.2f}% on {len(test_images)} test images, trained in {seconds:.0f} s; ops {ops}", flush=True)


if __name__ == "__main__":
    main()
