#!/usr/bin/env bash
# Seeds the `translate` target's corpus with the project's real modules: the translator's
# snapshot inputs (assembled with SPIRV-Tools' spirv-as, in the environment each names), its
# binary inputs and, where MATBRIDGE_OPENCL_SPV names the folder of the compiled OpenCL test
# kernels (the Intel DPAS, 2D block and joint-matrix modules among them), those.
# Run from the repository root: bash fuzz/seed.sh
set -euo pipefail
out=fuzz/corpus/translate
mkdir -p "$out"
as=${MATBRIDGE_SPIRV_TOOLS:+$MATBRIDGE_SPIRV_TOOLS/}spirv-as
for f in translator/tests/in/*/*.spvasm tests/kernels/*.spvasm; do
    env=$(sed -n 's/^; assemble: *//p' "$f" | head -1)
    "$as" --target-env "${env:-vulkan1.3}" "$f" -o "$out/$(echo "$f" | tr / _).spv" 2>/dev/null || true
done
for f in translator/tests/in/*/*.spv; do
    cp "$f" "$out/$(echo "$f" | tr / _)"
done
if [ -n "${MATBRIDGE_OPENCL_SPV:-}" ]; then
    for f in "$MATBRIDGE_OPENCL_SPV"/*.spv; do
        cp "$f" "$out/opencl_$(basename "$f")"
    done
fi
echo "$(ls "$out" | wc -l) seeds in $out"
