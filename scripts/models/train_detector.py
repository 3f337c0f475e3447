#!/usr/bin/python3
"""Trains a small YOLO-style single-stage detector on a synthetic shapes data set (circles, squares, triangles on textured backgrounds) and exports it as float ONNX; also writes evaluation sets."""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_common as fc  # noqa: E402

SIZE = 64          # input images are SIZE x SIZE RGB
GRID = 8           # output cells per side; each cell is SIZE / GRID pixels
CLASSES = ["circle", "square", "triangle"]
MIN_SIDE, MAX_SIDE = 12, 28


def background(rng):
    """A textured background: a base colour plus two random gratings and pixel noise, kept dim so the
    shapes stand out without being trivially separable by brightness alone."""
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    img = np.empty((3, SIZE, SIZE), np.float32)
    base = rng.uniform(0.1, 0.5, 3)
    for _ in range(2):
        angle, freq = rng.uniform(0, np.pi), rng.uniform(0.1, 0.6)
        phase, amp = rng.uniform(0, 2 * np.pi), rng.uniform(0.03, 0.12)
        wave = amp * np.sin(freq * (np.cos(angle) * xx + np.sin(angle) * yy) + phase)
        base = base[:, None, None] + wave[None] if base.ndim == 1 else base + wave[None]
    img[:] = base + rng.normal(0, 0.03, (3, SIZE, SIZE))
    return img


def shape_mask(kind, cx, cy, side):
    """Pixels of a shape centred at (cx, cy) with bounding box side `side`, and that box (x, y, w, h)."""
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32) + 0.5
    half = side / 2.0
    if kind == 0:
        mask = (xx - cx) ** 2 + (yy - cy) ** 2 <= half * half
    elif kind == 1:
        mask = (np.abs(xx - cx) <= half) & (np.abs(yy - cy) <= half)
    else:  # triangle, apex up: the half-width grows from 0 at the top to `half` at the bottom
        t = (yy - (cy - half)) / side
        mask = (t >= 0) & (t <= 1) & (np.abs(xx - cx) <= half * t)
    ys, xs = np.nonzero(mask)
    box = (float(xs.min()), float(ys.min()), float(xs.max() + 1 - xs.min()), float(ys.max() + 1 - ys.min()))
    return mask, box


def iou(a, b):
    ax2, ay2, bx2, by2 = a[0] + a[2], a[1] + a[3], b[0] + b[2], b[1] + b[3]
    iw, ih = max(0.0, min(ax2, bx2) - max(a[0], b[0])), max(0.0, min(ay2, by2) - max(a[1], b[1]))
    inter = iw * ih
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def scene(rng):
    """One image (uint8 3 x SIZE x SIZE) and its objects [(class, x, y, w, h)]: 1 to 4 shapes of random
    colour and size, boxes overlapping little and centres in distinct cells."""
    img = background(rng)
    objects = []
    for _ in range(rng.randint(1, 5)):
        for _attempt in range(20):
            kind, side = rng.randint(0, 3), rng.uniform(MIN_SIDE, MAX_SIDE)
            cx, cy = rng.uniform(side / 2 + 1, SIZE - side / 2 - 1, 2)
            mask, box = shape_mask(kind, cx, cy, side)
            cell = (int((box[0] + box[2] / 2) // (SIZE // GRID)), int((box[1] + box[3] / 2) // (SIZE // GRID)))
            if all(iou(box, o[1:]) < 0.15 and cell != o[5] for o in objects):
                colour = rng.uniform(0.55, 1.0, 3)
                colour[rng.randint(0, 3)] = rng.uniform(0.0, 0.3)  # saturated, so colour does not name the class
                img[:, mask] = colour[:, None]
                objects.append((kind, *box, cell))
                break
    pixels = np.clip(np.round(img * 255), 0, 255).astype(np.uint8)
    return pixels, [o[:5] for o in objects]


def data_set(count, seed):
    rng = np.random.RandomState(seed)
    images = np.empty((count, 3, SIZE, SIZE), np.uint8)
    boxes = []
    for i in range(count):
        images[i], objects = scene(rng)
        boxes.extend((i, *o) for o in objects)
    return images, np.array(boxes, np.float32).reshape(-1, 6)


def targets(boxes, count):
    """Per cell: objectness, centre offset in the cell, size as a fraction of the image, one-hot class."""
    t = np.zeros((count, 5 + len(CLASSES), GRID, GRID), np.float32)
    cell = SIZE / GRID
    for image, kind, x, y, w, h in boxes:
        cx, cy = x + w / 2, y + h / 2
        gx, gy = int(cx // cell), int(cy // cell)
        t[int(image), 0:5, gy, gx] = [1.0, cx / cell - gx, cy / cell - gy, w / SIZE, h / SIZE]
        t[int(image), 5 + int(kind), gy, gx] = 1.0
    return t


def build_model():
    import torch
    import torch.nn as nn

    def conv(cin, cout, k=3):
        return [nn.Conv2d(cin, cout, k, padding=k // 2, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

    class Detector(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(*conv(3, 16), nn.MaxPool2d(2),     # 32x32
                                      *conv(16, 32), nn.MaxPool2d(2),    # 16x16
                                      *conv(32, 64), nn.MaxPool2d(2))    # 8x8, stride 8
            self.deep = nn.Sequential(*conv(64, 128), nn.MaxPool2d(2),   # 4x4, stride 16
                                      *conv(128, 64, 1))
            self.up = nn.Upsample(scale_factor=2, mode="nearest")        # back to 8x8
            self.head = nn.Sequential(*conv(128, 64), nn.Conv2d(64, 5 + len(CLASSES), 1))

        def forward(self, x):
            fine = self.stem(x)
            merged = torch.cat([fine, self.up(self.deep(fine))], dim=1)
            return torch.sigmoid(self.head(merged))

    return Detector()


def loss_of(pred, t):
    import torch.nn.functional as F
    obj = t[:, 0]
    positives = obj > 0.5
    loss = F.binary_cross_entropy(pred[:, 0], obj, reduction="sum") / max(1, int(positives.sum()))
    if positives.any():
        p = pred.permute(0, 2, 3, 1)[positives]
        q = t.permute(0, 2, 3, 1)[positives]
        loss = loss + 5.0 * F.binary_cross_entropy(p[:, 1:5], q[:, 1:5], reduction="mean") + \
            F.binary_cross_entropy(p[:, 5:], q[:, 5:], reduction="mean")
    return loss


def decode(pred, score_threshold=0.05, nms_iou=0.45):
    """Boxes (class, score, x, y, w, h) of one image's prediction [5+C, GRID, GRID], after per-class NMS."""
    cell = SIZE / GRID
    found = []
    for gy in range(GRID):
        for gx in range(GRID):
            v = pred[:, gy, gx]
            kind = int(np.argmax(v[5:]))
            score = float(v[0] * v[5 + kind])
            if score < score_threshold:
                continue
            w, h = v[3] * SIZE, v[4] * SIZE
            cx, cy = (gx + v[1]) * cell, (gy + v[2]) * cell
            found.append((kind, score, cx - w / 2, cy - h / 2, w, h))
    found.sort(key=lambda b: -b[1])
    kept = []
    for b in found:
        if all(k[0] != b[0] or iou(k[2:], b[2:]) <= nms_iou for k in kept):
            kept.append(b)
    return kept


def mean_average_precision(detections, truth, iou_threshold=0.5):
    """mAP@0.5, VOC all-point interpolation, over classes: detections [(image, class, score, x, y, w, h)],
    truth rows (image, class, x, y, w, h)."""
    aps = []
    for kind in range(len(CLASSES)):
        gt = {}
        for row in truth:
            if int(row[1]) == kind:
                gt.setdefault(int(row[0]), []).append([row[2:6], False])
        total = sum(len(v) for v in gt.values())
        dets = sorted((d for d in detections if d[1] == kind), key=lambda d: -d[2])
        tp = np.zeros(len(dets))
        for i, d in enumerate(dets):
            best, match = iou_threshold, None
            for entry in gt.get(d[0], []):
                o = iou(d[3:7], entry[0])
                if o >= best and not entry[1]:
                    best, match = o, entry
            if match is not None:
                match[1] = True
                tp[i] = 1
        if total == 0:
            continue
        ctp = np.cumsum(tp)
        recall = ctp / total
        precision = ctp / np.arange(1, len(dets) + 1)
        mrec = np.concatenate([[0.0], recall, [1.0]])
        mpre = np.concatenate([[0.0], precision, [0.0]])
        for i in range(len(mpre) - 2, -1, -1):
            mpre[i] = max(mpre[i], mpre[i + 1])
        steps = np.nonzero(mrec[1:] != mrec[:-1])[0]
        aps.append(float(np.sum((mrec[steps + 1] - mrec[steps]) * mpre[steps + 1])))
    return float(np.mean(aps))


def evaluate(model, images, truth):
    import torch
    model.eval()
    detections = []
    with torch.no_grad():
        for start in range(0, len(images), 250):
            pred = model(torch.from_numpy(images[start:start + 250].astype(np.float32) / 255.0)).numpy()
            for i, p in enumerate(pred):
                detections.extend((start + i, *b) for b in decode(p))
    return mean_average_precision(detections, truth)


def train(model, images, boxes, epochs, batch_size, lr, seed):
    import torch
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    fc.train_epochs(model, torch.from_numpy(images.astype(np.float32) / 255.0), torch.from_numpy(targets(boxes, len(images))),
                    loss_of, optimizer, epochs, batch_size, lr, seed)


def export(model, path):
    import onnx
    import torch
    model.eval()
    torch.onnx.export(model, torch.zeros(1, 3, SIZE, SIZE), path, opset_version=13, input_names=["image"],
                      output_names=["detections"], training=torch.onnx.TrainingMode.EVAL, do_constant_folding=True)
    proto = fc.inline_identities(onnx.load(path))
    del proto.metadata_props[:]
    for key, value in (("labels", ",".join(CLASSES)), ("detector", "grid")):
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    proto.doc_string = (f"Tessera shapes detector; input float32 RGB pixel/255, NCHW 1x3x{SIZE}x{SIZE}; output "
                        f"[1,{5 + len(CLASSES)},{GRID},{GRID}] after sigmoid: objectness, centre x and y in the cell, "
                        "width and height as fractions of the image, class probabilities (docs/beyond-classification.md)")
    return fc.save_checked(proto, path)


def write_set(out_dir, name, count, seed, force):
    paths = [os.path.join(out_dir, f"{name}_images.npy"), os.path.join(out_dir, f"{name}_boxes.npy")]
    for p in paths:
        fc.refuse_overwrite(p, force)
    images, boxes = data_set(count, seed)
    np.save(paths[0], images)
    np.save(paths[1], boxes)
    return images, boxes


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("out_dir")
    p.add_argument("--eval-set", type=int, metavar="N",
                   help="only write N evaluation images (eval_images.npy uint8 [N,3,64,64]) and their boxes "
                        "(eval_boxes.npy float32 rows image, class, x, y, w, h), seed 1; no torch needed")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train-images", type=int, default=12000)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--force", action="store_true")
    args = p.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    if args.eval_set:
        write_set(args.out_dir, "eval", args.eval_set, 1, args.force)
        return
    import torch
    for name in ("detector.onnx", "detector.json", "calib.npy", "sample_0.png", "sample_boxes.json"):
        fc.refuse_overwrite(os.path.join(args.out_dir, name), args.force)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(args.seed)
    train_images, train_boxes = data_set(args.train_images, 100 + args.seed)
    eval_images, eval_boxes = data_set(1000, 1)
    model = build_model()
    print(f"detector: {sum(q.numel() for q in model.parameters())} parameters; {len(train_boxes)} training objects", flush=True)
    started = time.time()
    train(model, train_images, train_boxes, args.epochs, args.batch_size, args.lr, args.seed)
    seconds = time.time() - started
    float_map = evaluate(model, eval_images, eval_boxes)
    path = os.path.join(args.out_dir, "detector.onnx")
    ops = export(model, path)
    # Calibration: 16 training images (uint8; tessera converts to pixel/255). A sample image as PNG.
    np.save(os.path.join(args.out_dir, "calib.npy"), train_images[:16])
    write_png(os.path.join(args.out_dir, "sample_0.png"), eval_images[0])
    with open(os.path.join(args.out_dir, "sample_boxes.json"), "w") as f:
        json.dump([[CLASSES[int(b[1])]] + [round(float(v), 1) for v in b[2:]] for b in eval_boxes if b[0] == 0], f)
        f.write("\n")
    result = {"model": "shapes detector", "seed": args.seed, "epochs": args.epochs, "batch_size": args.batch_size,
              "lr": args.lr, "train_images": args.train_images, "eval_images": 1000, "eval_seed": 1,
              "float_map50": round(float_map, 4), "train_seconds": round(seconds, 1), "torch": torch.__version__,
              "ops": ops, "bytes": os.path.getsize(path)}
    fc.write_json(os.path.join(args.out_dir, "detector.json"), result)
    print(f"detector: float mAP@0.5 {float_map * 100:.2f} over 1000 evaluation images, trained in {seconds:.0f} s; ops {ops}",
          flush=True)


def write_png(path, chw):
    """A uint8 3 x H x W image as PNG (Pillow, which torchvision brings)."""
    from PIL import Image
    Image.fromarray(np.ascontiguousarray(chw.transpose(1, 2, 0))).save(path)


if __name__ == "__main__":
    main()
