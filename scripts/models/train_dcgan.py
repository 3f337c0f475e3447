#!/usr/bin/python3
"""Trains a DCGAN on Fashion-MNIST and exports its generator (ConvTranspose, BatchNorm, ReLU, Tanh) as float ONNX with reference latents and outputs."""
import os
import sys
import time

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_common as fc  # noqa: E402

LATENT = 64


def generator():
    """Latent [N,64,1,1] -> image [N,1,28,28] in [-1,1]: four transposed convolutions (kernels 4, 3, 4,
    4; the last three stride 2), BatchNorm and ReLU between them, Tanh at the end."""
    def up(cin, cout, k, stride, pad):
        return [nn.ConvTranspose2d(cin, cout, k, stride, pad, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
    return nn.Sequential(*up(LATENT, 128, 4, 1, 0),   # 1 -> 4
                         *up(128, 64, 3, 2, 1),       # 4 -> 7
                         *up(64, 32, 4, 2, 1),        # 7 -> 14
                         nn.ConvTranspose2d(32, 1, 4, 2, 1), nn.Tanh())  # 14 -> 28


def discriminator():
    return nn.Sequential(nn.Conv2d(1, 32, 4, 2, 1), nn.LeakyReLU(0.2),                       # 28 -> 14
                         nn.Conv2d(32, 64, 4, 2, 1, bias=False), nn.BatchNorm2d(64), nn.LeakyReLU(0.2),  # 14 -> 7
                         nn.Conv2d(64, 1, 7), nn.Flatten())


def init_weights(module):
    # DCGAN's initialisation: N(0, 0.02) convolutions, BatchNorm scales N(1, 0.02).
    if isinstance(module, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(module.weight, 0.0, 0.02)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.BatchNorm2d):
        nn.init.normal_(module.weight, 1.0, 0.02)
        nn.init.zeros_(module.bias)


def train(gen, disc, images, epochs, batch_size, lr, seed):
    rng = torch.Generator().manual_seed(seed)
    opt_g = torch.optim.Adam(gen.parameters(), lr=lr, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(disc.parameters(), lr=lr, betas=(0.5, 0.999))
    real_all = torch.from_numpy(fc.to_input(images)) * 2.0 - 1.0  # the generator's range, [-1,1]
    steps = len(images) // batch_size
    for epoch in range(epochs):
        gen.train()
        disc.train()
        order = torch.randperm(len(images), generator=rng)
        loss_d_sum = loss_g_sum = 0.0
        started = time.time()
        for step in range(steps):
            real = real_all[order[step * batch_size:(step + 1) * batch_size]]
            z = torch.randn(batch_size, LATENT, 1, 1, generator=rng)
            fake = gen(z)
            ones, zeros = torch.ones(batch_size, 1), torch.zeros(batch_size, 1)
            opt_d.zero_grad()
            loss_d = (F.binary_cross_entropy_with_logits(disc(real), ones) +
                      F.binary_cross_entropy_with_logits(disc(fake.detach()), zeros))
            loss_d.backward()
            opt_d.step()
            opt_g.zero_grad()
            loss_g = F.binary_cross_entropy_with_logits(disc(fake), ones)
            loss_g.backward()
            opt_g.step()
            loss_d_sum += float(loss_d)
            loss_g_sum += float(loss_g)
            if step % 100 == 99:
                print(f"    step {step + 1}/{steps} ({time.time() - started:.0f} s)", flush=True)
        print(f"  epoch {epoch + 1}/{epochs}: discriminator loss {loss_d_sum / steps:.3f}, generator loss "
              f"{loss_g_sum / steps:.3f} ({time.time() - started:.0f} s)", flush=True)


def export(gen, path):
    gen.eval()
    torch.onnx.export(gen, torch.zeros(1, LATENT, 1, 1), path, opset_version=13, input_names=["latent"],
                      output_names=["image"], training=torch.onnx.TrainingMode.EVAL, do_constant_folding=True)
    proto = fc.inline_identities(onnx.load(path))
    del proto.metadata_props[:]
    entry = proto.metadata_props.add()
    # tessera run --png maps this range to black..white.
    entry.key, entry.value = "image_range", "-1,1"
    proto.doc_string = (f"Tessera DCGAN generator for Fashion-MNIST; input float32 latent N(0,1), [1,{LATENT},1,1]; "
                        "output image [1,1,28,28] in [-1,1] (white garment on black)")
    return fc.save_checked(proto, path)


def main():
    args = fc.training_arguments(__doc__, epochs=5, batch_size=128, lr=2e-4).parse_args()
    names = ["generator.onnx", "generator.json", "reference_latents.npy", "reference_images.npy"]
    names += [f"calib/latent_{i:02d}.npy" for i in range(16)]
    for name in names:
        fc.refuse_overwrite(os.path.join(args.out_dir, name), args.force)
    os.makedirs(os.path.join(args.out_dir, "calib"), exist_ok=True)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    # Denormal activations and gradients (a GAN's small weights can make them) are slow on x86;
    # flushed to zero, they cannot stall an epoch. Part of how the shipped files were made.
    torch.set_flush_denormal(True)
    torch.manual_seed(args.seed)
    images, _ = fc.load_split("train", args.dataset_dir)
    gen, disc = generator(), discriminator()
    gen.apply(init_weights)
    disc.apply(init_weights)
    print(f"generator: {sum(q.numel() for q in gen.parameters())} parameters; discriminator: "
          f"{sum(q.numel() for q in disc.parameters())}", flush=True)
    started = time.time()
    train(gen, disc, images, args.epochs, args.batch_size, args.lr, args.seed)
    seconds = time.time() - started
    path = os.path.join(args.out_dir, "generator.onnx")
    ops = export(gen, path)
    # Calibration latents and reference latents with PyTorch's outputs for them (the float model's
    # answer the C++ tests compare with), all N(0,1) from a RandomState of their own.
    rng = np.random.RandomState(args.seed + 1)
    for i in range(16):
        np.save(os.path.join(args.out_dir, f"calib/latent_{i:02d}.npy"), rng.standard_normal((1, LATENT, 1, 1)).astype(np.float32))
    latents = rng.standard_normal((16, LATENT, 1, 1)).astype(np.float32)
    with torch.no_grad():
        outputs = gen(torch.from_numpy(latents)).numpy()
    np.save(os.path.join(args.out_dir, "reference_latents.npy"), latents)
    np.save(os.path.join(args.out_dir, "reference_images.npy"), outputs.astype(np.float32))
    result = {"model": "dcgan generator", "seed": args.seed, "epochs": args.epochs, "batch_size": args.batch_size,
              "lr": args.lr, "latent": LATENT, "train_images": len(images), "train_seconds": round(seconds, 1),
              "torch": torch.__version__, "ops": ops, "bytes": os.path.getsize(path)}
    fc.write_json(os.path.join(args.out_dir, "generator.json"), result)
    print(f"generator: trained in {seconds:.0f} s; ops {ops}; {os.path.getsize(path)} bytes", flush=True)


if __name__ == "__main__":
    main()
