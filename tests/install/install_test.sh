#!/usr/bin/env bash
# Installs the build into a temporary prefix and uses it as another project would: the installed CLI, a
# CMake project (find_package(Tessera)), a C program through pkg-config, and the .deb CPack builds.
# usage: install_test.sh BUILD_DIR SOURCE_DIR [deb]
set -uo pipefail
build=$1; src=$2; want_deb=${3:-}
work=$(mktemp -d); serve_pid=""
trap '[ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null; rm -rf "$work"' EXIT
prefix="$work/prefix"
passed=0; failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
run() { "$@" > "$work/log" 2>&1 || { bad "'$*' failed:"; tail -20 "$work/log"; return 1; }; }

run cmake --install "$build" --prefix "$prefix" || exit 1
for f in bin/tessera lib/libtessera_runtime.a lib/libtessera_compiler_op.a lib/libtessera_compiler_model.a \
         lib/libtessera_compiler_graph.a include/tessera/compiler/op/compile.h include/tessera/compiler/model/run.h \
         include/vta/driver.h include/vta/runtime.h include/tessera/runtime/tessera.h include/tessera/c/model.h \
         include/tessera/gen/host_interface.h lib/cmake/Tessera/TesseraConfig.cmake lib/pkgconfig/tessera.pc \
         lib/tessera/tessera-cli-model.so lib/tessera/tessera-cli-serve.so share/tessera/configs/default.json; do
  [ -e "$prefix/$f" ] && ok || bad "not installed: $f"
done

# The installed CLI finds its own plugins (bin/../lib/tessera): the model commands and a plugin target.
model="$src/models/fashion_mnist"
export TESSERA_PLUGIN_PATH=  # nothing from the environment
run "$prefix/bin/tessera" compile "$model/fashion_cnn_qdq.onnx" -o "$work/m.tsm" && ok
run "$prefix/bin/tessera" run "$work/m.tsm" --input "$model/sample_0.npy" --output-dir "$work/cli" --no-layer-cycles && ok
cli_out=$(ls "$work"/cli/*.npy 2>/dev/null | head -1)
[ -n "$cli_out" ] && ok || bad "tessera run wrote no output .npy"

# A CMake project outside the tree.
run cmake -S "$src/tests/install/consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release && ok
run cmake --build "$work/consumer" && ok
# The same logits as the installed CLI, on fsim and on a plugin target found through TESSERA_PLUGIN_PATH.
# A version-1 .npy file's data: after the 10-byte preamble and the header whose length is at bytes 8-9.
payload() { local hl; hl=$(od -An -tu2 -j8 -N2 "$1" | tr -d ' '); tail -c +$((10 + hl + 1)) "$1"; }
if [ -n "$cli_out" ] && [ -x "$work/consumer/run_model" ]; then
  payload "$cli_out" > "$work/cli.bin"
  run "$work/consumer/run_model" "$work/m.tsm" "$model/sample_0.npy" fsim "$work/fsim.bin" && ok
  cmp -s "$work/fsim.bin" "$work/cli.bin" && ok || bad "run_model on fsim differs from tessera run"
  TESSERA_PLUGIN_PATH="$prefix/lib/tessera" run "$work/consumer/run_model" "$work/m.tsm" "$model/sample_0.npy" hls "$work/hls.bin" && ok
  cmp -s "$work/hls.bin" "$work/cli.bin" && ok || bad "run_model on hls differs from tessera run on fsim"
  "$work/consumer/run_model" "$work/m.tsm" "$model/sample_0.npy" warp "$work/x.bin" > "$work/log" 2>&1
  [ $? -eq 1 ] && grep -q "warp" "$work/log" && ok || bad "an unknown target: no clear error ($(cat "$work/log"))"
fi
[ -x "$work/consumer/compile_conv" ] && run "$work/consumer/compile_conv" fsim && ok
[ -x "$work/consumer/compile_conv" ] && TESSERA_PLUGIN_PATH="$prefix/lib/tessera" run "$work/consumer/compile_conv" hls && ok

# The installed CLI serves a device (its serve module) and reaches it through the remote plugin; a
# board target is found by its manifest and asks for its device.
"$prefix/bin/tessera" serve --port 0 --port-file "$work/port" --quiet > "$work/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.1; done
if [ -s "$work/port" ]; then
  run "$prefix/bin/tessera" regress --programs 3 --targets "fsim,remote:127.0.0.1:$(cat "$work/port")/fsim" && ok
else
  bad "the installed tessera serve did not start: $(cat "$work/serve.log")"
fi
kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null; serve_pid=""
"$prefix/bin/tessera" sim --target zynq --insn 0x10000:1 > "$work/log" 2>&1
grep -q "UIO device 'tessera'" "$work/log" && ok || bad "the installed zynq target: $(cat "$work/log")"

# A C program through pkg-config, with the prefix moved: the .pc file finds it relative to itself.
mv "$prefix" "$work/moved"; prefix="$work/moved"
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs tessera) && ok || bad "pkg-config tessera"
run cc -O1 -o "$work/run_model_pc" "$src/tests/install/consumer/run_model.c" $flags && ok
if [ -x "$work/run_model_pc" ]; then
  run "$work/run_model_pc" "$work/m.tsm" "$model/sample_0.npy" fsim "$work/pc.bin" && ok
  cmp -s "$work/pc.bin" "$work/cli.bin" && ok || bad "the pkg-config build's output differs from tessera run"
fi

# The Debian package: CPack in a copy of the build's packaging config, checked with dpkg-deb.
if [ "$want_deb" = deb ]; then
  (cd "$work" && cpack --config "$build/CPackConfig.cmake" -B "$work/deb" > "$work/log" 2>&1) || { bad "cpack failed"; tail -20 "$work/log"; }
  deb=$(ls "$work"/deb/*.deb 2>/dev/null | head -1)
  if [ -n "$deb" ]; then
    dpkg-deb -c "$deb" > "$work/contents"
    grep -q "./usr/bin/tessera$" "$work/contents" && ok || bad "the .deb has no /usr/bin/tessera"
    # Every plugin of the build, each with its manifest, and the CLI's modules; a plugin built on
    # request and not built yet (tsim-mut) with neither.
    for f in "$build"/lib/tessera/*.targets; do
      name=$(basename "$f" .targets)
      if [ -f "$build/lib/tessera/$name.so" ]; then
        grep -q "./usr/lib/tessera/$name.so$" "$work/contents" && grep -q "./usr/lib/tessera/$name.targets$" "$work/contents" \
          && ok || bad "the .deb lacks the plugin $name.so or its manifest"
      else
        grep -q "^# build: " "$f" && ! grep -q "./usr/lib/tessera/$name\." "$work/contents" \
          && ok || bad "the build has no $name.so, yet it is not a plugin built on request, or the .deb holds its manifest"
      fi
    done
    for m in tessera-cli-model.so tessera-cli-serve.so; do
      grep -q "./usr/lib/tessera/$m$" "$work/contents" && ok || bad "the .deb has no $m"
    done
    dpkg-deb -f "$deb" Depends | grep -q "libc6" && ok || bad "the .deb declares no shared-library dependencies"
    echo "package: $(basename "$deb"), $(du -k "$deb" | cut -f1) KiB"
  else
    bad "cpack wrote no .deb"
  fi
fi

echo "install test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
