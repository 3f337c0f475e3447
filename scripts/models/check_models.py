"""Checks model files: onnx checker, op histogram, size; Fashion-MNIST ones also get top-1 from the numpy evaluator.
Usage: check_models.py FILE.onnx... [--fashion-count N]"""
import argparse
import os
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_common as fc  # noqa: E402
import onnx_numpy_eval  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("files", nargs="+")
    p.add_argument("--fashion-count", type=int, default=10000, help="test images for Fashion models (0: none)")
    args = p.parse_args()
    test = None
    for path in args.files:
        model = onnx.load(path)
        onnx.checker.check_model(model)
        shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
        print(f"{path}: {os.path.getsize(path)} bytes, checker ok, input {model.graph.input[0].name}{shape}, "
              f"output {model.graph.output[0].name}, ops {fc.op_histogram(model)}")
        if shape == [1, 1, 28, 28] and args.fashion_count > 0:
            if test is None:
                test = fc.load_split("t10k")
            images, labels = test[0][:args.fashion_count], test[1][:args.fashion_count]
            correct = 0
            for start in range(0, len(images), 500):
                logits = onnx_numpy_eval.run(model, {model.graph.input[0].name: fc.to_input(images[start:start + 500])})[0]
                correct += int((logits.argmax(axis=1) == labels[start:start + 500]).sum())
            print(f"  numpy-evaluator top-1 over {len(images)} test images: {100 * correct / len(images):.2f}%")


if __name__ == "__main__":
    main()
