#!/usr/bin/env bash
# Installs every Debian package Tessera needs; idempotent, the only set-up step.
set -euo pipefail

# Each package is what one part of the build looks for (checked on a bare Debian 12 by
# scripts/fresh-check.sh): the toolchain and generators; GoogleTest and Google Benchmark (tests/);
# Boost.Program_options (the CLI); Boost.Asio, header-only in libboost1.74-dev (remote execution:
# tessera serve, remote: targets); OpenSSL's libcrypto, libssl-dev (remote execution's HMAC-SHA-256
# challenge-response); nlohmann-json (configs); Verilator and zlib (tsim: FST waveforms
# are compressed); SystemC (rtl-sc, hls-sc); Yosys (RTL synthesis checks, the Xilinx resource
# report, gate-level netlists) and Z3 (the SMT solver of yosys-smtbmc's formal proofs, tests/formal);
# lcov (genhtml: the HTML report of tessera coverage); slurm-wlm and munge (the farm test, a scratch
# single-node Slurm cluster that runs scripts/regress-slurm.sh); nextpnr-ice40 and fpga-icestorm (the iCE40 fit check); Python 3 (the
# HLS synthesizable-subset check, CLI tests); tclsh (FPGA flow checks); ONNX and protobuf (the model
# importer), libpng (image inputs), the ONNX backend node tests and Fashion-MNIST (conformance and
# model tests); NumPy, PyTorch, torchvision and the onnx module (scripts/models, which train and
# export the test models; nothing at run time needs Python); pkg-config and dpkg-dev (the install test's
# pkg-config build and the .deb's shared-library dependencies; file, which CPack's DEB generator runs on every
# installed file); clang-14, libFuzzer and clang's sanitizer runtimes, libclang-rt-14-dev (the fuzz
# harnesses, tests/fuzz, built with -fsanitize=fuzzer,address,undefined; GCC has no libFuzzer); llvm-14-dev (the host-side code generator: LLVM IR, the ORC
# JIT, object files; docs/aot.md); Debian's armhf and arm64 cross compilers and qemu-user (the cross
# builds of the runtime and an ahead-of-time compiled model, run under qemu by ctest label `cross`);
# OpenBLAS (the host executor's float convolutions and matrix products when calibrating and in
# eval's float reference; docs/graph.md; its LAPACK fits the area model, tessera-area-fit); gnuplot
# (tessera explore's plot of the explored front; docs/explore.md).
packages=(
  build-essential cmake ninja-build
  libgtest-dev libbenchmark-dev
  libboost-program-options-dev libboost1.74-dev libssl-dev nlohmann-json3-dev
  verilator zlib1g-dev libsystemc-dev yosys z3 lcov nextpnr-ice40 fpga-icestorm
  slurm-wlm munge
  python3 tcl
  libonnx-dev libprotobuf-dev protobuf-compiler libpng-dev
  libonnx-testdata dataset-fashion-mnist
  python3-numpy python3-onnx python3-torch python3-torchvision
  pkg-config dpkg-dev file
  clang-14 libfuzzer-14-dev libclang-rt-14-dev
  llvm-14-dev g++-arm-linux-gnueabihf g++-aarch64-linux-gnu qemu-user
  libopenblas-dev gnuplot-nox
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
