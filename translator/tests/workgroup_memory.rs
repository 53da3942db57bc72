//! `specialize::workgroup_memory`: the workgroup bytes an entry point uses with the pipeline's
//! specialization constants, blocks of explicit layouts sharing theirs, and what translation adds.

use matbridge_translator::ir::Module;
use matbridge_translator::profile::DeviceCaps;
use matbridge_translator::specialize::{specialize, workgroup_memory};
use matbridge_translator::{tools, translate_specialized};

fn tools_present() -> bool {
    let present = tools::find("spirv-as").is_some();
    assert!(present || std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
    present
}

fn kernel(name: &str) -> Vec<u32> {
    let path = format!("{}/../tests/kernels/{name}.spvasm", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    tools::assemble(&text, "vulkan1.3").unwrap()
}

#[test]
fn sizes_follow_specialization_and_aliasing() {
    if !tools_present() {
        eprintln!("SPIRV-Tools not found: skipped");
        return;
    }
    // A plain array of `len` floats (specialization constant 0).
    let words = kernel("workgroup_reverse");
    for len in [64u32, 1000] {
        let mut module = Module::from_words(&words).unwrap();
        specialize(&mut module, &[(0, len)]).unwrap();
        let (bytes, vars) = workgroup_memory(&module, "main").unwrap();
        assert_eq!(bytes, 4 * u64::from(len));
        assert_eq!((vars[0].name.as_deref(), vars[0].aliased), (Some("tile"), false));
    }
    assert!(workgroup_memory(&Module::from_words(&words).unwrap(), "other").is_none(), "a missing entry point has no size");

    // Two blocks viewing the same bytes (M x 16 halves as 2M uvec4): they count once.
    let words = kernel("khr_shared_blocks");
    for m in [8u32, 16] {
        let mut module = Module::from_words(&words).unwrap();
        specialize(&mut module, &[(1, m)]).unwrap();
        let (bytes, vars) = workgroup_memory(&module, "main").unwrap();
        assert_eq!(bytes, 32 * u64::from(m), "M = {m}: {vars:?}");
        assert!(vars.len() == 2 && vars.iter().all(|v| v.aliased && v.bytes == 32 * u64::from(m)), "{vars:?}");
    }

    // Padded on the H100 at M = 8, its staging arrays become blocks past the module's 256
    // bytes, one after another: a block's size (its member's offset and length) differs from
    // every other's, and the total is where the last one ends.
    let (out, _) = translate_specialized(&words, &DeviceCaps::h100(), &[(0, 32), (1, 8)]).unwrap();
    let (bytes, vars) = workgroup_memory(&Module::from_words(&out).unwrap(), "main").unwrap();
    let mut ends: Vec<u64> = vars.iter().filter(|v| v.name.is_none()).map(|v| v.bytes).collect();
    let added = ends.len();
    ends.sort_unstable();
    ends.dedup();
    assert!(added > 0 && ends.len() == added && ends[0] > 256 + 16, "{vars:?}");
    assert_eq!(bytes, ends[added - 1]);
}

/// Without `workgroupMemoryExplicitLayout` the blocks become one array of words; a matrix
/// loaded from them must start and stride at multiples of four bytes, and one whose stride is
/// three halves is refused, naming the instruction and the reason.
#[test]
fn blocks_lower_to_words_and_unprovable_strides_are_refused_by_name() {
    if !tools_present() {
        eprintln!("SPIRV-Tools not found: skipped");
        return;
    }
    let path = format!("{}/../tests/kernels/khr_shared_blocks.spvasm", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let words = tools::assemble(&text, "vulkan1.3").unwrap();
    for target in [DeviceCaps::lavapipe(), DeviceCaps::swiftshader()] {
        let (out, _) = translate_specialized(&words, &target, &[(1, 16)]).unwrap_or_else(|e| panic!("{}: {e}", target.name));
        tools::validate(&out, "vulkan1.3").unwrap();
        let module = Module::from_words(&out).unwrap();
        assert!(!module.has_capability(spirv::Capability::WorkgroupMemoryExplicitLayoutKHR), "{}", target.name);
        let (bytes, vars) = workgroup_memory(&module, "main").unwrap();
        assert!(vars.len() == 1 && !vars[0].aliased && bytes == 512, "{}: {vars:?}", target.name);
    }
    // The matrix of halves loaded with a stride of three halves (6 bytes) cannot be read in words.
    let load = "OpCooperativeMatrixLoadKHR %55 %64 %int_0 %uint_16";
    assert!(text.contains(load), "the kernel's workgroup load");
    let odd = text.replace(load, "OpCooperativeMatrixLoadKHR %55 %64 %int_0 %uint_3");
    let words = tools::assemble(&odd, "vulkan1.3").unwrap();
    let err = translate_specialized(&words, &DeviceCaps::lavapipe(), &[]).unwrap_err().to_string();
    assert!(err.contains("OpCooperativeMatrixLoadKHR") && err.contains("multiple of four bytes") && err.contains("word offset"), "{err}");
}
