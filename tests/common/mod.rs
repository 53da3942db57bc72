//! Shared helpers of the execution tests: which Vulkan devices to run on, with validation.
#![allow(dead_code)]

use matbridge_runtime::{Context, ContextOptions, DeviceSelector, Instance, InstanceOptions};
use std::sync::{Arc, Once};

static SETUP: Once = Once::new();

/// Points the loader at SwiftShader and the validation layer (once per test binary).
pub fn setup() {
    SETUP.call_once(matbridge_runtime::loader_env::configure);
}

/// Whether this is a CI run, where a missing driver fails instead of skipping.
pub fn in_ci() -> bool {
    std::env::var("CI").map(|v| v == "true" || v == "1").unwrap_or(false)
}

/// Names of the devices the GPU tests run on: `MATBRIDGE_TEST_DEVICES` (comma-separated name
/// substrings), by default lavapipe and SwiftShader.
pub fn device_names() -> Vec<String> {
    std::env::var("MATBRIDGE_TEST_DEVICES").unwrap_or_else(|_| "llvmpipe,swiftshader".into()).split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

/// Opens every test device with validation on (the Khronos layer, and spirv-val on every module
/// the runtime translates). A device that cannot be opened is skipped (with a message) outside
/// CI and fails the test in CI.
pub fn contexts() -> Vec<Context> {
    setup();
    let instance = match Instance::new(&InstanceOptions { validation: true }) {
        Ok(i) => Arc::new(i),
        Err(e) => {
            assert!(!in_ci(), "CI: cannot create a Vulkan instance: {e}");
            eprintln!("skipping GPU test: {e}");
            return Vec::new();
        }
    };
    if in_ci() {
        assert!(instance.validation_enabled(), "CI: the Khronos validation layer is not installed");
    }
    let mut out = Vec::new();
    for name in device_names() {
        let options = ContextOptions { check_translations: matbridge_translator::tools::find("spirv-val").is_some(), ..Default::default() };
        match Context::with_options(instance.clone(), &DeviceSelector::Name(name.clone()), &options) {
            Ok(ctx) => out.push(ctx),
            Err(e) => {
                assert!(!in_ci(), "CI: test device `{name}` is missing: {e}");
                eprintln!("skipping device `{name}`: {e}");
            }
        }
    }
    out
}

/// The spvasm test kernel `tests/kernels/<name>.spvasm`, assembled with SPIRV-Tools.
pub fn assembled(name: &str) -> Vec<u32> {
    let path = format!("{}/tests/kernels/{name}.spvasm", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    matbridge_translator::tools::assemble(&text, "vulkan1.3").expect("SPIRV-Tools assemble the test kernel (bash .ci/install-deps.sh)")
}

/// Compiles a WGSL test kernel to SPIR-V 1.3 with naga (as the shaders crate does).
pub fn wgsl(name: &str, source: &str) -> Vec<u32> {
    let module = naga::front::wgsl::parse_str(source).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .subgroup_stages(naga::valid::ShaderStages::COMPUTE)
        .subgroup_operations(naga::valid::SubgroupOperationSet::all())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    let options = naga::back::spv::Options { lang_version: (1, 3), ..Default::default() };
    naga::back::spv::write_vec(&module, &info, &options, None).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// SPIR-V of the OpenCL C test kernel `tests/kernels/opencl/<name>.cl` (or the LLVM IR
/// `<name>.ll`), compiled by clang-19
/// (`-cl-std=CL2.0 -target spir64 -O2`, plus the flags of the source's `// clang:` line) and
/// llvm-spirv (plus its `// llvm-spirv:` line) as real OpenCL producers do. Where
/// `MATBRIDGE_OPENCL_SPV` names a folder holding `<name>.spv`, that file is used instead (for
/// machines without the producers), and a module compiled here is saved there. `None` (with a
/// message) when the producers are missing outside CI; in CI that fails the test.
pub fn opencl(name: &str) -> Option<Vec<u32>> {
    opencl_with(name, &[])
}

/// [`opencl`] with more clang flags (`-O0`); the `MATBRIDGE_OPENCL_SPV` file is then
/// `<name><flags>.spv` (`control_flow-O0.spv`).
pub fn opencl_with(name: &str, clang_flags: &[&str]) -> Option<Vec<u32>> {
    let saved = std::env::var_os("MATBRIDGE_OPENCL_SPV").map(|dir| std::path::Path::new(&dir).join(format!("{name}{}.spv", clang_flags.concat())));
    if let Some(bytes) = saved.as_ref().and_then(|p| std::fs::read(p).ok()) {
        return Some(bytemuck::pod_collect_to_vec(&bytes));
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/opencl");
    // OpenCL C, or the LLVM IR a producer such as DPC++ hands llvm-spirv.
    let source = [format!("{name}.cl"), format!("{name}.ll")].into_iter().map(|f| dir.join(f)).find(|p| p.exists()).unwrap_or_else(|| dir.join(format!("{name}.cl")));
    match matbridge::cli_run::compile_opencl_with(&source, clang_flags) {
        Ok(words) => {
            if let Some(p) = saved {
                let _ = std::fs::write(p, bytemuck::cast_slice::<u32, u8>(&words));
            }
            Some(words)
        }
        Err(e) if !in_ci() && matbridge::cli_run::opencl_producers_missing(&e) => {
            eprintln!("skipping OpenCL kernel `{name}`: {e:#}");
            None
        }
        Err(e) => panic!("{name}: {e:#}"),
    }
}
