//! Damaged real modules never make the translator panic: every mutation of a valid kernel either
//! translates or fails with an error, for every built-in target profile.

mod common;

use common::{snapshot_cases, Case};
use matbridge_translator::{translate, translate_with, DeviceCaps};
use proptest::prelude::*;

/// Real kernels: NV cooperative matrices (f16 and int8, the general and the wide GEMM, the
/// throughput probe) and a plain subgroup GEMM.
const MODULES: [&str; 5] =
    ["coop_peak_f16_f32.spv", "coop_peak_s8_s32.spv", "coop_gemm_f16_f32_wide_128x128x32_w2x2.spv", "coop_gemm_s8_s32_128x128x64_w4x4_n16_s2_p2_e.spv", "sgemm_32x32x16_r1x1.spv"];

/// Inputs that reach the other rewrites (integer dot products, NV matrices in arrays and
/// through spec-constant operations, cooperative-matrix emulation, padding and tiling, narrow
/// types in blocks, behind buffer references and in atomics, OpenCL kernels, real producers'
/// cooperative-matrix kernels with packed stores, element access, spec-constant layouts, f16vec4
/// staging and quantized blocks, f32 atomics in every kind of memory, sub-group operations on
/// 64-bit vectors, bfloat16 conversions, wide vectors in variables),
/// assembled when SPIRV-Tools is installed: snapshot inputs, and execution-test kernels (`../`).
const ASSEMBLY: [&str; 53] = [
    "lower_integer_dot/int_dot.spvasm",
    "nv_to_khr/nv_array_f16.spvasm",
    "nv_to_khr/nv_spec_op_layout.spvasm",
    "emulate_cooperative_matrix/psb_spec_shape.spvasm",
    "fuse_k_chains/fused.spvasm",
    "pad_cooperative_matrix/grid.spvasm",
    "pad_cooperative_matrix/packed_words.spvasm",
    "tile_cooperative_matrix/grid.spvasm",
    "legalize_narrow_types/blocks.spvasm",
    "legalize_narrow_types/physical_pointers.spvasm",
    "legalize_narrow_types/packed_workgroup.spvasm",
    "legalize_narrow_types/workgroup_atomics.spvasm",
    "lower_kernel_pointers/pointers.spvasm",
    "lower_byte_pointers/narrow_vectors.spvasm",
    "split_wide_vectors/wide_vectors.spvasm",
    "structurize_control_flow/control_flow.spvasm",
    "../../../tests/kernels/narrow_int_atomics.spvasm",
    "../../../tests/kernels/narrow_refs.spvasm",
    "tile_cooperative_matrix/element_access.spvasm",
    "../../../tests/kernels/khr_packed_io.spvasm",
    "../../../tests/kernels/khr_packed_pad.spvasm",
    "../../../tests/kernels/khr_mul_mm.spvasm",
    "../../../tests/kernels/khr_shmem_gemm.spvasm",
    "../../../tests/kernels/slang_coop_bytes.spvasm",
    "../../../tests/kernels/khr_attention.spvasm",
    "../../../tests/kernels/khr_q4_blocks.spvasm",
    "../../../tests/kernels/float_atomics.spvasm",
    "emulate_float_atomics/memories.spvasm",
    "upgrade_memory_model/nv_glsl450.spvasm",
    "../../../tests/kernels/coop_loop_headers.spvasm",
    "../../../tests/kernels/narrow_atomics_refs.spvasm",
    "../../../tests/kernels/narrow_ref_values.spvasm",
    "lower_work_group_collectives/scan_broadcast.spvasm",
    "../../../tests/kernels/khr_tiled_refs.spvasm",
    "../../../tests/kernels/khr_small_workgroup.spvasm",
    "../../../tests/kernels/subgroup_exchange.spvasm",
    "../../../tests/kernels/khr_narrow_words.spvasm",
    "../../../tests/kernels/khr_struct_tiles.spvasm",
    "../../../tests/kernels/khr_int32_saturating.spvasm",
    "../../../tests/kernels/nv_functions.spvasm",
    "../../../tests/kernels/narrow_int_to_half.spvasm",
    "../../../tests/kernels/narrow_int_to_bf16.spvasm",
    "../../../tests/kernels/khr_variable_pointers.spvasm",
    "../../../tests/kernels/khr_use_a_elementwise.spvasm",
    "../../../tests/kernels/khr_int8_reinterpreted.spvasm",
    "lower_subgroup_extended_types/wide.spvasm",
    "lower_bfloat16_conversions/round_trip.spvasm",
    "split_wide_vectors/casts_in_variables.spvasm",
    "fold_widened_operands/widened.spvasm",
    "fold_widened_operands/kept.spvasm",
    "match_accumulator_signedness/unsigned_accumulator.spvasm",
    "../../../tests/kernels/iree_matmul_f16.spvasm",
    "../../../tests/kernels/iree_matmul_i8.spvasm",
];

fn module(i: usize) -> Vec<u32> {
    let path = format!("{}/../shaders/prebuilt/{}", env!("CARGO_MANIFEST_DIR"), MODULES[i]);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Every module to damage: the binaries, then the assembled inputs (none without SPIRV-Tools,
/// which CI must have).
fn corpus() -> &'static [Vec<u32>] {
    static CORPUS: std::sync::OnceLock<Vec<Vec<u32>>> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut all: Vec<Vec<u32>> = (0..MODULES.len()).map(module).collect();
        let have_tools = matbridge_translator::tools::find("spirv-as").is_some();
        assert!(have_tools || std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        if have_tools {
            for name in ASSEMBLY {
                let path = format!("{}/tests/in/{name}", env!("CARGO_MANIFEST_DIR"));
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
                all.push(matbridge_translator::tools::assemble(&text, "vulkan1.3").unwrap_or_else(|e| panic!("{path}: {e}")));
            }
        }
        all
    })
}

/// Damaged modules per property: 400, or `MATBRIDGE_DAMAGE_CASES` for longer campaigns.
fn damage_cases() -> u32 {
    std::env::var("MATBRIDGE_DAMAGE_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(400)
}

fn targets() -> [DeviceCaps; 4] {
    [DeviceCaps::h100(), DeviceCaps::lavapipe(), DeviceCaps::swiftshader(), DeviceCaps::generic_subgroup()]
}

/// One way of damaging a module; positions are taken modulo its length.
#[derive(Clone, Debug)]
enum Damage {
    /// Overwrite one word.
    Word(usize, u32),
    /// Overwrite an instruction-sized header: a word count and an opcode.
    Header(usize, u16, u16),
    /// Cut the module short.
    Truncate(usize),
    /// Repeat a run of words in place.
    Repeat(usize, usize),
    /// Drop a run of words.
    Drop(usize, usize),
}

/// Opcodes the passes rewrite or read.
fn rewritten_opcodes() -> Vec<u16> {
    use spirv::Op::*;
    [
        TypeCooperativeMatrixNV,
        CooperativeMatrixLoadNV,
        CooperativeMatrixStoreNV,
        CooperativeMatrixMulAddNV,
        TypeCooperativeMatrixKHR,
        CooperativeMatrixLoadKHR,
        CooperativeMatrixStoreKHR,
        CooperativeMatrixMulAddKHR,
        SDot,
        UDot,
        SUDot,
        SDotAccSat,
        TypeInt,
        TypeFloat,
        TypeVector,
        Constant,
        Decorate,
        Capability,
        Extension,
        ExtInstImport,
    ]
    .into_iter()
    .map(|op| op as u16)
    .collect()
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), any::<u32>()).prop_map(|(i, w)| Damage::Word(i, w)),
        // Small values: mostly other ids, so the module still parses and the passes see wrong
        // types, operands and constants.
        (any::<usize>(), 0u32..300).prop_map(|(i, w)| Damage::Word(i, w)),
        (any::<usize>(), 0u32..300).prop_map(|(i, w)| Damage::Word(i, w)),
        (any::<usize>(), 0u16..12, any::<u16>()).prop_map(|(i, n, op)| Damage::Header(i, n, op)),
        // Opcodes the passes rewrite or read, with plausible and implausible word counts.
        (any::<usize>(), 0u16..12, prop::sample::select(rewritten_opcodes())).prop_map(|(i, n, op)| Damage::Header(i, n, op)),
        any::<usize>().prop_map(Damage::Truncate),
        (any::<usize>(), 1usize..24).prop_map(|(i, n)| Damage::Repeat(i, n)),
        (any::<usize>(), 1usize..24).prop_map(|(i, n)| Damage::Drop(i, n)),
    ]
}

fn apply(words: &mut Vec<u32>, d: &Damage) {
    let len = words.len();
    match *d {
        Damage::Word(i, w) => words[i % len] = w,
        // Past the five-word header, where instructions start.
        Damage::Header(i, n, op) => words[5 + i % (len - 5)] = (u32::from(n) << 16) | u32::from(op),
        Damage::Truncate(i) => words.truncate(i % len),
        Damage::Repeat(i, n) => {
            let at = i % len;
            let run: Vec<u32> = words[at..(at + n).min(len)].to_vec();
            words.splice(at..at, run);
        }
        Damage::Drop(i, n) => {
            let at = i % len;
            words.drain(at..(at + n).min(len));
        }
    }
}

/// `words` with each of `damages` applied in turn (none once only the header is left).
fn damaged(words: &[u32], damages: &[Damage]) -> Vec<u32> {
    let mut words = words.to_vec();
    for d in damages {
        if words.len() > 5 {
            apply(&mut words, d);
        }
    }
    words
}

#[test]
fn every_module_translates_undamaged() {
    for (i, words) in corpus().iter().enumerate() {
        assert!(translate(words, &DeviceCaps::h100()).is_ok(), "module {i}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(damage_cases()))]

    #[test]
    fn damaged_modules_translate_or_fail_without_panicking(
        which in any::<prop::sample::Index>(),
        damages in prop::collection::vec(damage(), 1..4),
    ) {
        let words = damaged(which.get::<Vec<u32>>(corpus()), &damages);
        for target in targets() {
            // Either outcome is fine; a panic fails the property.
            if let Err(e) = translate(&words, &target) {
                prop_assert!(!e.to_string().is_empty());
            }
        }
    }

    /// The same for every snapshot input, translated for its own targets with its own requests.
    #[test]
    fn damaged_snapshot_inputs_translate_or_fail_without_panicking(
        which in any::<prop::sample::Index>(),
        damages in prop::collection::vec(damage(), 1..4),
    ) {
        let cases = snapshot_cases();
        if !cases.is_empty() {
            let case = which.get(cases);
            let words = damaged(&case.words, &damages);
            for target in &case.targets {
                if let Err(e) = translate_with(&words, target, &case.requests) {
                    prop_assert!(!e.to_string().is_empty(), "{}", case.name);
                }
            }
        }
    }
}

/// Damaged modules that still validate must translate into modules that validate, for every
/// target the translation succeeds for (one operand word replaced by a small value: mostly
/// another id or literal). The modules are the lists above, for the built-in targets, and the
/// snapshot inputs, for their own targets and requests. 6,000 seeds were run once on the lists:
/// 610 valid inputs, no invalid output.
#[test]
fn valid_damaged_modules_translate_to_valid_modules() {
    if matbridge_translator::tools::find("spirv-val").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    }
    // `N` draws seeds 0..N; `A..B` draws the same sequence but checks only seeds A..B, to go on
    // with a campaign or to reproduce one seed quickly.
    let seeds = std::env::var("MATBRIDGE_VALID_DAMAGE_SEEDS").unwrap_or_default();
    let (first, seeds): (u64, u64) = match seeds.split_once("..") {
        Some((a, b)) => (a.parse().unwrap_or(0), b.parse().unwrap_or(120)),
        None => (0, seeds.parse().unwrap_or(120)),
    };
    // `MATBRIDGE_VALID_DAMAGE_MODULES` names a folder whose `.spv` and `.spvasm` files are
    // damaged instead (real producers' modules, such as the OpenCL kernels the execution tests
    // compile, or the execution tests' own kernels), for the built-in targets.
    let folder = std::env::var_os("MATBRIDGE_VALID_DAMAGE_MODULES");
    let listed: Vec<Case> = match &folder {
        Some(dir) => {
            let mut paths: Vec<_> =
                std::fs::read_dir(dir).expect("MATBRIDGE_VALID_DAMAGE_MODULES").filter_map(|e| Some(e.ok()?.path())).filter(|p| p.extension().is_some_and(|e| e == "spv" || e == "spvasm")).collect();
            paths.sort();
            paths
                .iter()
                .map(|p| {
                    let words = if p.extension().is_some_and(|e| e == "spvasm") {
                        let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                        let env = text.lines().find_map(|l| l.strip_prefix("; assemble:")).map_or("vulkan1.3", str::trim);
                        matbridge_translator::tools::assemble(&text, env).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
                    } else {
                        let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                        bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
                    };
                    Case { name: p.display().to_string(), words, targets: targets().to_vec(), requests: Vec::new() }
                })
                .collect()
        }
        None => {
            corpus().iter().zip(MODULES.iter().chain(&ASSEMBLY)).map(|(words, name)| Case { name: name.to_string(), words: words.clone(), targets: targets().to_vec(), requests: Vec::new() }).collect()
        }
    };
    assert!(!listed.is_empty(), "no modules to damage");
    let snapshots = if folder.is_some() { &[][..] } else { snapshot_cases() };
    let modules: Vec<&Case> = listed.iter().chain(snapshots).collect();
    let mut valid_inputs = 0;
    let mut rng = proptest::test_runner::TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha);
    for seed in 0..seeds {
        let mut r = |n: usize| rng.random_range(0..n);
        let Case { name, words, targets, requests } = modules[r(modules.len())];
        let mut words = words.clone();
        // Operand words only: every word after an instruction's first.
        let mut operands = Vec::new();
        let mut i = 5;
        while i < words.len() {
            let count = (words[i] >> 16) as usize;
            operands.extend(i + 1..i + count);
            i += count.max(1);
        }
        let at = operands[r(operands.len())];
        words[at] = r(200) as u32;
        // OpenCL kernels are valid SPIR-V for the core rules; the others for Vulkan's.
        let kernel = words.windows(2).any(|w| w[0] == (2 << 16 | spirv::Op::Capability as u32) && w[1] == spirv::Capability::Kernel as u32);
        if seed < first || matbridge_translator::tools::validate(&words, if kernel { "spv1.4" } else { "vulkan1.3" }).is_err() {
            continue;
        }
        valid_inputs += 1;
        for target in targets {
            if let Ok((out, _)) = translate_with(&words, target, requests) {
                if let Err(e) = matbridge_translator::tools::validate(&out, "vulkan1.3") {
                    panic!("seed {seed}: {name}: word {at} = {}: valid input, invalid output for {}: {e}", words[at], target.name);
                }
            }
        }
    }
    assert!(valid_inputs > 0, "no damaged module validated in seeds {first}..{seeds}");
}

/// A MulAdd whose dimensions disagree only once specialization constants take their defaults
/// (spirv-val cannot see it): every target refuses it by name instead of tiling or emulating a
/// wrong product (found by damaging `khr_mul_mm`: B's rows became 16 where A has 32 columns).
#[test]
fn muladds_whose_dimensions_disagree_are_refused() {
    if matbridge_translator::tools::find("spirv-as").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    }
    let text = r#"
               OpCapability Shader
               OpCapability Float16
               OpCapability StorageBuffer16BitAccess
               OpCapability VulkanMemoryModel
               OpCapability CooperativeMatrixKHR
               OpExtension "SPV_KHR_cooperative_matrix"
               OpMemoryModel Logical Vulkan
               OpEntryPoint GLCompute %main "main" %a %c
               OpExecutionMode %main LocalSize 32 1 1
               OpDecorate %m SpecId 0
               OpDecorate %k SpecId 1
               OpDecorate %ha ArrayStride 2
               OpDecorate %fa ArrayStride 4
               OpMemberDecorate %hs 0 Offset 0
               OpMemberDecorate %fs 0 Offset 0
               OpDecorate %hs Block
               OpDecorate %fs Block
               OpDecorate %a DescriptorSet 0
               OpDecorate %a Binding 0
               OpDecorate %c DescriptorSet 0
               OpDecorate %c Binding 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
       %half = OpTypeFloat 16
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
     %uint_3 = OpConstant %uint 3
    %uint_16 = OpConstant %uint 16
          %m = OpSpecConstant %uint 32
          %k = OpSpecConstant %uint 16
        %mta = OpTypeCooperativeMatrixKHR %half %uint_3 %m %m %uint_0
        %mtb = OpTypeCooperativeMatrixKHR %half %uint_3 %k %m %uint_1
        %mtc = OpTypeCooperativeMatrixKHR %float %uint_3 %m %m %uint_2
         %ha = OpTypeRuntimeArray %half
         %fa = OpTypeRuntimeArray %float
         %hs = OpTypeStruct %ha
         %fs = OpTypeStruct %fa
        %phs = OpTypePointer StorageBuffer %hs
        %pfs = OpTypePointer StorageBuffer %fs
         %ph = OpTypePointer StorageBuffer %half
         %pf = OpTypePointer StorageBuffer %float
          %a = OpVariable %phs StorageBuffer
          %c = OpVariable %pfs StorageBuffer
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %pa = OpAccessChain %ph %a %uint_0 %uint_0
         %va = OpCooperativeMatrixLoadKHR %mta %pa %uint_0 %uint_16
         %vb = OpCooperativeMatrixLoadKHR %mtb %pa %uint_1 %uint_16
         %pc = OpAccessChain %pf %c %uint_0 %uint_0
         %vc = OpCooperativeMatrixLoadKHR %mtc %pc %uint_0 %uint_16
         %vr = OpCooperativeMatrixMulAddKHR %mtc %va %vb %vc
               OpCooperativeMatrixStoreKHR %pc %vr %uint_0 %uint_16
               OpReturn
               OpFunctionEnd
"#;
    let words = matbridge_translator::tools::assemble(text, "vulkan1.3").unwrap();
    matbridge_translator::tools::validate(&words, "vulkan1.3").expect("spirv-val accepts the input");
    for target in targets() {
        let e = translate(&words, &target).expect_err(&target.name).to_string();
        assert!(e.contains("OpCooperativeMatrixMulAddKHR at word offset") && e.contains("32x32 by 16x32 plus 32x32 into 32x32"), "{}: {e}", target.name);
    }
}

/// Inputs that spirv-val accepts although the specs forbid them, found by damaging snapshot
/// inputs and test kernels: every target that rewrites the instruction refuses it by name (the
/// others pass it through, as they found it). Each entry is a module, edits of its text, the
/// targets that rewrite the last edited instruction, and what the error says beside that
/// opcode's name and word offset.
#[test]
fn spec_violations_spirv_val_misses_are_refused_by_name() {
    if matbridge_translator::tools::find("spirv-as").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    }
    type Entry = (&'static str, &'static [(&'static str, &'static str)], &'static [&'static str], &'static str);
    const ENTRIES: &[Entry] = &[
        // A vector accumulator for a scalar dot product.
        ("lower_integer_dot/int_dot.spvasm", &[("OpSUDotAccSat %int %va %vb %c", "OpSUDotAccSat %int %va %vb %vbi")], &["generic-subgroup"], "not the result type"),
        // A specialization constant as an NV load's memory scope (a KHR load's is checked).
        (
            "nv_to_khr/nv_array_f16.spvasm",
            &[
                ("%uint_1 = OpConstant %uint 1\n", "%uint_1 = OpConstant %uint 1\n%visible = OpSpecConstant %uint 1\n"),
                ("OpCooperativeMatrixLoadNV %36 %60 %71 %false None", "OpCooperativeMatrixLoadNV %36 %60 %71 %false MakePointerVisible|NonPrivatePointer %visible"),
            ],
            &["h100", "lavapipe"],
            "memory access scope %",
        ),
        // A specialization constant as a barrier's scope, which spirv-val lets pass in a module
        // declaring CooperativeMatrixNV only.
        (
            "nv_to_khr/nv_array_f16.spvasm",
            &[
                ("%uint_1 = OpConstant %uint 1\n", "%uint_1 = OpConstant %uint 1\n%sub = OpSpecConstant %uint 3\n"),
                ("               OpStore %tm %18", "               OpNop\n               OpStore %tm %18"),
                ("OpNop", "OpControlBarrier %sub %sub %uint_0"),
            ],
            &["h100", "lavapipe", "swiftshader"],
            "scope %",
        ),
        // An NV spec-constant matrix length whose result is the matrix type itself.
        (
            "nv_to_khr/nv_square_f16.spvasm",
            &[("%44 = OpSpecConstantOp %uint CooperativeMatrixLengthNV %12", "%44 = OpSpecConstantOp %12 CooperativeMatrixLengthNV %12")],
            &["h100", "lavapipe", "swiftshader"],
            "not a 32-bit integer",
        ),
        // A spec-constant matrix length of a pointer type.
        (
            "materialize_matrix_length/spec_constant_length.spvasm",
            &[("CooperativeMatrixLengthKHR %mat_acc", "CooperativeMatrixLengthKHR %a_ptr")],
            &["h100", "lavapipe", "swiftshader", "generic-subgroup"],
            "not a cooperative matrix",
        ),
        // A spec-constant composite extract without an index, which narrow-type legalization
        // turns into an instruction.
        (
            "../../../tests/kernels/khr_tiled_refs.spvasm",
            &[("OpSpecConstantOp %half FConvert %alpha", "OpSpecConstantOp %half CompositeExtract %alpha")],
            &["swiftshader", "generic-subgroup"],
            "without an index",
        ),
        // A half-precision specialization constant as a work-group size.
        (
            "../../../tests/kernels/khr_tiled_refs.spvasm",
            &[("LocalSizeId %7 %uint_1 %uint_1", "LocalSizeId %7 %uint_1 %317")],
            &["h100", "lavapipe", "swiftshader", "generic-subgroup"],
            "work-group size %",
        ),
        // An OpenCL kernel's sub-group scope computed at run time (Vulkan needs constants).
        ("lower_kernel_subgroups/subgroups.spvasm", &[("%32 = OpGroupIAdd %6 %31 Reduce %25", "%32 = OpGroupIAdd %6 %25 Reduce %25")], &["h100", "lavapipe", "swiftshader"], "(scope) %"),
        // A sub-group scan of a pointer into an integer result.
        (
            "lower_kernel_subgroups/subgroups.spvasm",
            &[("%38 = OpGroupUMax %6 %31 ExclusiveScan %25", "%38 = OpGroupUMax %6 %31 ExclusiveScan %24")],
            &["h100", "lavapipe", "swiftshader"],
            "not of the result type",
        ),
        // An INTEL sub-group shuffle of a pointer into an integer result.
        (
            "lower_kernel_subgroups/subgroups.spvasm",
            &[("%83 = OpSubgroupShuffleXorINTEL %6 %25 %42", "%83 = OpSubgroupShuffleXorINTEL %6 %18 %42")],
            &["h100", "lavapipe", "swiftshader"],
            "not of the result type",
        ),
        // A pointer as a kernel's `OpPtrAccessChain` element.
        (
            "lower_kernel_pointers/generic_local.spvasm",
            &[("%41 = OpInBoundsPtrAccessChain %9 %15 %40", "%41 = OpInBoundsPtrAccessChain %9 %15 %16")],
            &["h100", "lavapipe", "swiftshader"],
            "is not an integer scalar",
        ),
        // An integer type whose signedness is neither 0 nor 1.
        ("lower_kernel_pointers/generic_local.spvasm", &[("%2 = OpTypeInt 64 0", "%2 = OpTypeInt 64 21")], &["h100", "lavapipe", "swiftshader"], "signedness 21"),
        // A kernel's function variable decorated as a built-in (spirv-val accepts it in
        // kernels; Vulkan allows built-ins on Input variables only).
        (
            "lower_opencl_std/special.spvasm",
            &[("OpDecorate %__spirv_BuiltInGlobalInvocationId Constant", "OpDecorate %27 BuiltIn GlobalInvocationId")],
            &["h100", "lavapipe", "swiftshader"],
            "not an Input variable",
        ),
        // A 32-bit integer reinterpreted as a 64-bit global pointer, where pointers are held as
        // two words and 64-bit integers are narrowed.
        ("lower_kernel_pointers/generic_local.spvasm", &[("%58 = OpBitcast %9 %16", "%58 = OpBitcast %9 %26")], &["swiftshader"], "reinterprets an integer as a pointer"),
        // A 2D block load of 2^22 x 2^22 elements (found by fuzzing: its size overflowed).
        (
            "lower_subgroup_2d_block_io/load_store.spvasm",
            &[
                ("%uint_1 = OpConstant %uint 1\n", "%uint_1 = OpConstant %uint 1\n%huge = OpConstant %uint 4194304\n"),
                ("OpSubgroup2DBlockLoadTransformINTEL %uint_2 %uint_8 %uint_4", "OpSubgroup2DBlockLoadTransformINTEL %uint_2 %huge %huge"),
            ],
            &["h100", "lavapipe", "swiftshader"],
            "at most 65536 are lowered",
        ),
        // An image write of a scalar texel (OpenCL's writes give four components).
        ("lower_kernel_images/sampled.spvasm", &[("OpImageWrite %15 %28 %54", "OpImageWrite %15 %28 %uint_0")], &["h100", "lavapipe", "swiftshader"], "not a 4-component vector"),
    ];
    for &(input, edits, rewriting, expected) in ENTRIES {
        let (text, words) = edited(input, edits);
        // The last edit is in the refused instruction.
        let to = edits.last().map_or("", |e| e.1);
        let line = text.lines().find(|l| l.contains(to)).unwrap();
        let opcode = line.split_whitespace().find(|w| w.starts_with("Op")).unwrap().to_owned();
        for &target in rewriting {
            let target = DeviceCaps::builtin(target).unwrap();
            let e = translate(&words, &target).expect_err(&format!("{input} for {}", target.name)).to_string();
            assert!(e.contains(&format!("{opcode} at word offset")) && e.contains(expected), "{input} for {}: {e}", target.name);
        }
    }
}

/// A work-group of more than 2^32 invocations (32 x 134217729, whose product spirv-val takes in
/// 32 bits, as 32): scratch areas sized for the wrapped count would be far too small, so every
/// target that lowers the module's cooperative_matrix2 reduction through them refuses it by name
/// (found by fuzzing).
#[test]
fn work_groups_past_two_to_the_32_invocations_are_refused() {
    if matbridge_translator::tools::find("spirv-as").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    }
    let (_, words) = edited("lower_cooperative_matrix2/reduce_map.spvasm", &[("LocalSize 32 1 1", "LocalSize 32 134217729 1")]);
    for target in ["h100", "lavapipe", "swiftshader"] {
        let target = DeviceCaps::builtin(target).unwrap();
        let e = translate(&words, &target).expect_err(&target.name).to_string();
        assert!(e.contains("OpCooperativeMatrixReduceNV at word offset") && e.contains("bytes of workgroup memory"), "{}: {e}", target.name);
    }
}

/// `VectorAnyINTEL` vectors the translator cannot carry are refused by name: more components than
/// it reads (at decoding), and, behind buffer pointers, counts whose parts (30 floats: seven
/// vectors of 4 and one of 2; 24: six vectors of 4) do not make the power-of-two size OpenCL's
/// layout gives them.
#[test]
fn vector_any_vectors_it_cannot_split_are_refused() {
    if matbridge_translator::tools::find("spirv-as").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    }
    // spirv-val (2025.5) knows no VectorAnyINTEL and rejects every such vector: the edits are
    // assembled only.
    let path = format!("{}/tests/in/split_wide_vectors/vector_any.spvasm", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(text.matches("%8 = OpTypeVector %7 32").count(), 1);
    for (count, expected) in [
        ("300", "OpTypeVector has 300 components (VectorAnyINTEL vectors of 1 to 256"),
        ("30", "unless a multiple of 4 in a power-of-two number of parts (this one has 30)"),
        ("24", "unless a multiple of 4 in a power-of-two number of parts (this one has 24)"),
    ] {
        let edit = text.replace("%8 = OpTypeVector %7 32", &format!("%8 = OpTypeVector %7 {count}"));
        let words = matbridge_translator::tools::assemble(&edit, "spv1.4").unwrap_or_else(|e| panic!("{count}: {e}"));
        for target in ["h100", "lavapipe", "swiftshader"] {
            let target = DeviceCaps::builtin(target).unwrap();
            let e = translate(&words, &target).expect_err(&target.name).to_string();
            assert!(e.contains("word offset") && e.contains(expected), "{count} components for {}: {e}", target.name);
        }
    }
}

/// Snapshot input or test kernel `input` (a path under `tests/in`) with `edits` made to its text,
/// as text and assembled; spirv-val must accept it.
fn edited(input: &str, edits: &[(&str, &str)]) -> (String, Vec<u32>) {
    let path = format!("{}/tests/in/{input}", env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    for (from, to) in edits {
        assert_eq!(text.matches(from).count(), 1, "{input}: `{from}` must occur once");
        text = text.replace(from, to);
    }
    let env = text.lines().find_map(|l| l.strip_prefix("; assemble:")).map_or("vulkan1.3", str::trim);
    let words = matbridge_translator::tools::assemble(&text, env).unwrap_or_else(|e| panic!("{input}: {e}"));
    // Kernels assemble for (and are checked against) the core rules of their SPIR-V version.
    let rules = if env.starts_with("spv") { env } else { "vulkan1.3" };
    matbridge_translator::tools::validate(&words, rules).unwrap_or_else(|e| panic!("{input}: spirv-val rejects the edit: {e}"));
    (text, words)
}

/// What spirv-val rejects and passes would carry into their output unread (found by fuzzing):
/// an id no instruction defines and an enumerant or mask bit the grammar does not know, in a
/// real module. Every target refuses them by name, without SPIRV-Tools.
#[test]
fn undefined_ids_and_unknown_enumerants_are_refused_by_name() {
    use matbridge_translator::ir::Operand;
    use spirv::Op;
    let words = module(0);
    let bound = words[3];
    type Edit = fn(&mut matbridge_translator::Module, u32) -> bool;
    let entries: [(Edit, &str, String); 3] = [
        // A decoration number past every one the grammar has.
        (
            |m, _| m.annotations.iter_mut().find(|a| a.is(Op::Decorate)).map(|d| d.operands[1] = Operand::Enum(rspirv::grammar::OperandKind::Decoration, 59274)).is_some(),
            "OpDecorate",
            "Decoration operand 59274 is not one the SPIR-V grammar knows".into(),
        ),
        // A load through an id below the bound that nothing defines.
        (
            |m, free| {
                let load = m.functions.iter_mut().flat_map(|f| f.blocks.iter_mut()).flat_map(|b| b.insts.iter_mut()).find(|i| i.is(Op::Load));
                load.map(|l| l.operands[0] = Operand::Id(free)).is_some()
            },
            "OpLoad",
            "which the module does not define".into(),
        ),
        // A memory-access bit no revision defines.
        (
            |m, _| {
                let load = m.functions.iter_mut().flat_map(|f| f.blocks.iter_mut()).flat_map(|b| b.insts.iter_mut()).find(|i| i.is(Op::Load) && i.operands.len() == 1);
                load.map(|l| l.operands.push(Operand::Enum(rspirv::grammar::OperandKind::MemoryAccess, 1 << 30))).is_some()
            },
            "OpLoad",
            format!("MemoryAccess operand {} is not one the SPIR-V grammar knows", 1u32 << 30),
        ),
    ];
    for (edit, opcode, expected) in entries {
        let mut m = matbridge_translator::Module::from_words(&words).unwrap();
        let defined: std::collections::HashSet<u32> = m.all_insts().filter_map(|i| i.result_id).collect();
        let free = (1..bound).find(|id| !defined.contains(id)).unwrap_or(bound);
        m.header.bound = m.header.bound.max(free + 1);
        assert!(edit(&mut m, free), "{opcode}: nothing to edit");
        let edited = m.to_words();
        for target in targets() {
            let e = translate(&edited, &target).expect_err(&target.name).to_string();
            assert!(e.contains(&format!("{opcode} at word offset")) && e.contains(&expected), "{}: {e}", target.name);
        }
    }
}

/// Valid kernels that Vulkan cannot express (found by damaging the OpenCL kernels): every target
/// refuses them by name rather than guess. Each entry is an edit of a snapshot input, the
/// refused instruction's opcode and what the error says.
/// - An integer reinterpreted as a pointer into local memory, which has no address in Vulkan,
///   and a pointer reinterpreted as one of another storage class.
/// - A struct passed by value through a pointer into other than function memory.
/// - A load through an `OpUndef` pointer, or one copied from it.
#[test]
fn kernels_vulkan_cannot_express_are_refused_by_name() {
    if matbridge_translator::tools::find("spirv-as").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    }
    const ENTRIES: &[(&str, &str, &str, &str)] = &[
        ("%32 = OpBitcast %31 %17", "%32 = OpBitcast %31 %26", "OpBitcast", "pointer into local, private or function memory"),
        // A global pointer parameter decorated as passed by value (a copy is private memory).
        ("OpDecorate %15 FuncParamAttr NoWrite", "OpDecorate %15 FuncParamAttr ByVal", "OpFunctionParameter", "passed by value through a pointer"),
        // A built-in variable's pointer reinterpreted as a global one.
        ("%58 = OpBitcast %9 %16", "%58 = OpBitcast %9 %5", "OpBitcast", "pointer as one of another storage class"),
        // A load through an undefined pointer (llvm-spirv's constant address into local memory).
        ("%42 = OpLoad %8 %41 Aligned 4", "%undefined = OpUndef %9\n%42 = OpLoad %8 %undefined Aligned 4", "OpLoad", "an undefined pointer (OpUndef)"),
        // ... and through a pointer cast from one (llvm-spirv's joint-matrix loads cast it).
        ("%42 = OpLoad %8 %41 Aligned 4", "%undefined = OpUndef %9\n%cast = OpCopyObject %9 %undefined\n%42 = OpLoad %8 %cast Aligned 4", "OpLoad", "an undefined pointer (OpUndef)"),
    ];
    for &(from, to, opcode, expected) in ENTRIES {
        let (_, words) = edited("lower_kernel_pointers/generic_local.spvasm", &[(from, to)]);
        for target in ["h100", "lavapipe", "swiftshader"] {
            let target = DeviceCaps::builtin(target).unwrap();
            let e = translate(&words, &target).expect_err(&target.name).to_string();
            assert!(e.contains(&format!("{opcode} at word offset")) && e.contains(expected), "{}: {e}", target.name);
        }
    }
}

/// Arbitrary-precision integers (SPV_INTEL_arbitrary_precision_integers) where widening them
/// would change what the kernel computes or its memory layout: edits of the `_BitInt` snapshot
/// input (which spirv-val rejects, as it rejects every such module), refused by name on every
/// target, as are integers wider than 64 bits.
#[test]
fn arbitrary_precision_integers_that_cannot_be_widened_are_refused_by_name() {
    if matbridge_translator::tools::find("spirv-as").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    }
    const ENTRIES: &[(&str, &str, &str, &str)] = &[
        // In buffer memory, whose layout is the host's.
        (
            "%_ptr_CrossWorkgroup_uint = OpTypePointer CrossWorkgroup %uint",
            "%_ptr_CrossWorkgroup_uint = OpTypePointer CrossWorkgroup %uint\n%_ptr_CrossWorkgroup_u12 = OpTypePointer CrossWorkgroup %u12",
            "OpTypePointer",
            "12-bit integers (SPV_INTEL_arbitrary_precision_integers) in CrossWorkgroup memory",
        ),
        // A saturating conversion (not widened).
        ("%26 = OpUConvert %u12 %24", "%26 = OpSatConvertSToU %u12 %24", "OpSatConvertSToU", "as operands or results of OpSatConvertSToU"),
        // A spec-constant operation.
        (
            "%u40_3 = OpConstant %u40 3",
            "%u40_1 = OpConstant %u40 1\n%u40_3 = OpSpecConstantOp %u40 IAdd %u40_1 %u40_1",
            "OpSpecConstantOp",
            "40-bit integers (SPV_INTEL_arbitrary_precision_integers) in a spec-constant operation",
        ),
    ];
    let path = format!("{}/tests/in/widen_arbitrary_integers/bit_ints.spvasm", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    for &(from, to, opcode, expected) in ENTRIES {
        assert_eq!(text.matches(from).count(), 1, "`{from}` must occur once");
        let words = matbridge_translator::tools::assemble(&text.replace(from, to), "spv1.4").unwrap_or_else(|e| panic!("{to}: {e}"));
        for target in targets() {
            let e = translate(&words, &target).expect_err(&target.name).to_string();
            assert!(e.contains(&format!("{opcode} at word offset")) && e.contains(expected), "{}: {e}", target.name);
        }
    }
    // The assembler takes no 128-bit literals: the width is patched in the binary.
    let mut words = matbridge_translator::tools::assemble(&text, "spv1.4").unwrap();
    let at = words.windows(4).position(|w| w[0] == (4 << 16 | spirv::Op::TypeInt as u32) && w[2] == 12).expect("OpTypeInt 12");
    words[at + 2] = 128;
    let e = translate(&words, &DeviceCaps::lavapipe()).unwrap_err().to_string();
    assert!(e.contains("OpTypeInt is 128 bits wide (1 to 64 are supported)") && e.contains("word offset"), "{e}");
}

/// Control barriers of other execution scopes than a sub-group or workgroup (valid for kernels,
/// not for Vulkan): one of a single invocation becomes a memory barrier, or nothing where its
/// memory scope is the invocation too; one across the device is refused by name. (Found by
/// damaging the ping-pong kernels.)
#[test]
fn kernel_barriers_of_other_scopes() {
    if matbridge_translator::tools::find("spirv-as").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    }
    let scopes = |execution: &str, memory: &str| {
        edited(
            "lower_kernel_pointers/generic_local.spvasm",
            &[
                ("%38 = OpConstant %25 272\n", "%38 = OpConstant %25 272\n%device = OpConstant %25 1\n%invocation = OpConstant %25 4\n"),
                ("%20 = OpLabel\n               OpControlBarrier %37 %37 %38", &format!("%20 = OpLabel\n               OpControlBarrier {execution} {memory} %38")),
            ],
        )
        .1
    };
    for target in ["h100", "lavapipe", "swiftshader"] {
        let target = DeviceCaps::builtin(target).unwrap();
        for (memory, barriers) in [("%37", 1), ("%invocation", 0)] {
            let (out, _) = translate(&scopes("%invocation", memory), &target).unwrap_or_else(|e| panic!("{}: {e}", target.name));
            matbridge_translator::tools::validate(&out, "vulkan1.3").unwrap_or_else(|e| panic!("{}: {e}", target.name));
            let dis = matbridge_translator::tools::disassemble(&out).unwrap();
            assert_eq!(dis.matches("OpMemoryBarrier").count(), barriers, "{}: memory scope {memory}:\n{dis}", target.name);
        }
        let e = translate(&scopes("%device", "%37"), &target).expect_err(&target.name).to_string();
        assert!(e.contains("OpControlBarrier at word offset") && e.contains("scope Device"), "{}: {e}", target.name);
    }
}

/// A work-group broadcast whose local id is a pointer (spirv-val lets it through for kernels)
/// is refused by name rather than converted as an integer. (Found by damaging the half
/// collectives kernel.)
#[test]
fn work_group_broadcast_ids_that_are_not_integers_are_refused() {
    if matbridge_translator::tools::find("spirv-as").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    }
    let path = format!("{}/tests/in/lower_work_group_collectives/scan_broadcast.spvasm", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap().replace("OpGroupBroadcast %uint %uint_2 %23 %ulong_3", "OpGroupBroadcast %uint %uint_2 %23 %19");
    let words = matbridge_translator::tools::assemble(&text, "spv1.4").unwrap();
    matbridge_translator::tools::validate(&words, "spv1.4").expect("spirv-val accepts the input");
    for target in ["h100", "lavapipe", "swiftshader"] {
        let target = DeviceCaps::builtin(target).unwrap();
        let e = translate(&words, &target).expect_err(&target.name).to_string();
        assert!(e.contains("OpGroupBroadcast at word offset") && e.contains("local id is not an integer"), "{}: {e}", target.name);
    }
}

/// A non-uniform group operation at Workgroup scope (which kernels may use) is refused by name:
/// Vulkan runs them per sub-group only. (Found by damaging the `cl_khr_subgroup_*` kernels.)
#[test]
fn kernel_non_uniform_operations_at_workgroup_scope_are_refused() {
    if matbridge_translator::tools::find("spirv-as").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    }
    let kernel = |scope: u32| {
        format!(
            r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpCapability GroupNonUniformBallot
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
       %uint = OpTypeInt 32 0
     %v4uint = OpTypeVector %uint 4
       %bool = OpTypeBool
       %void = OpTypeVoid
      %scope = OpConstant %uint {scope}
       %true = OpConstantTrue %bool
%_ptr_CrossWorkgroup_v4uint = OpTypePointer CrossWorkgroup %v4uint
         %fn = OpTypeFunction %void %_ptr_CrossWorkgroup_v4uint
          %k = OpFunction %void None %fn
        %out = OpFunctionParameter %_ptr_CrossWorkgroup_v4uint
      %entry = OpLabel
     %ballot = OpGroupNonUniformBallot %v4uint %scope %true
               OpStore %out %ballot Aligned 16
               OpReturn
               OpFunctionEnd
"#
        )
    };
    for target in ["h100", "lavapipe", "swiftshader"] {
        let target = DeviceCaps::builtin(target).unwrap();
        let words = matbridge_translator::tools::assemble(&kernel(3), "spv1.4").unwrap();
        let (out, _) = translate(&words, &target).unwrap_or_else(|e| panic!("{}: {e}", target.name));
        matbridge_translator::tools::validate(&out, "vulkan1.3").unwrap();
        let words = matbridge_translator::tools::assemble(&kernel(2), "spv1.4").unwrap();
        matbridge_translator::tools::validate(&words, "spv1.4").expect("spirv-val accepts the input");
        let e = translate(&words, &target).expect_err(&target.name).to_string();
        assert!(e.contains("OpGroupNonUniformBallot at word offset") && e.contains("scope other than Subgroup"), "{}: {e}", target.name);
    }
}

/// An asynchronous work-group copy whose element count is not an integer (a built-in
/// variable's pointer; spirv-val lets it through for kernels) is refused by name. (Found by
/// damaging the async-copy kernel.)
#[test]
fn async_copies_of_non_integer_counts_are_refused() {
    if matbridge_translator::tools::find("spirv-as").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    }
    let kernel = |count: &str| {
        r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k" %size %tile
               OpDecorate %size BuiltIn WorkgroupSize
               OpDecorate %size Constant
      %ulong = OpTypeInt 64 0
       %uint = OpTypeInt 32 0
    %v3ulong = OpTypeVector %ulong 3
     %ptr_in = OpTypePointer Input %v3ulong
       %void = OpTypeVoid
      %event = OpTypeEvent
  %ptr_event = OpTypePointer Function %event
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
    %uint_16 = OpConstant %uint 16
    %ulong_1 = OpConstant %ulong 1
   %ulong_16 = OpConstant %ulong 16
        %arr = OpTypeArray %uint %uint_16
  %ptr_tile = OpTypePointer Workgroup %arr
  %ptr_local = OpTypePointer Workgroup %uint
 %ptr_global = OpTypePointer CrossWorkgroup %uint
       %size = OpVariable %ptr_in Input
       %tile = OpVariable %ptr_tile Workgroup
 %null_event = OpConstantNull %event
         %fn = OpTypeFunction %void %ptr_global
          %k = OpFunction %void None %fn
        %src = OpFunctionParameter %ptr_global
          %l = OpLabel
         %ev = OpVariable %ptr_event Function
        %dst = OpInBoundsAccessChain %ptr_local %tile %uint_0
          %e = OpGroupAsyncCopy %event %uint_2 %dst %src COUNT %ulong_1 %null_event
               OpStore %ev %e
               OpGroupWaitEvents %uint_2 %uint_1 %ev
          %v = OpLoad %uint %dst
               OpStore %src %v
               OpReturn
               OpFunctionEnd
"#
        .replace("COUNT", count)
    };
    for target in ["h100", "lavapipe", "swiftshader"] {
        let target = DeviceCaps::builtin(target).unwrap();
        let words = matbridge_translator::tools::assemble(&kernel("%ulong_16"), "spv1.4").unwrap();
        let (out, _) = translate(&words, &target).unwrap_or_else(|e| panic!("{}: {e}", target.name));
        matbridge_translator::tools::validate(&out, "vulkan1.3").unwrap();
        let words = matbridge_translator::tools::assemble(&kernel("%size"), "spv1.4").unwrap();
        matbridge_translator::tools::validate(&words, "spv1.4").expect("spirv-val accepts the input");
        let e = translate(&words, &target).expect_err(&target.name).to_string();
        assert!(e.contains("OpGroupAsyncCopy at word offset") && e.contains("not an integer scalar"), "{}: {e}", target.name);
    }
}

/// Valid inputs that damage found translated into invalid modules, kept as edits of snapshot
/// inputs: each translates into a module spirv-val accepts for every listed target.
#[test]
fn edited_inputs_translate_to_valid_modules() {
    if matbridge_translator::tools::find("spirv-as").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    }
    type Entry = (&'static str, &'static [(&'static str, &'static str)], &'static [&'static str]);
    const ENTRIES: &[Entry] = &[
        // A constant NV matrix as B beside loaded A and C: its type is needed as MatrixB too.
        ("nv_to_khr/nv_square_f16.spvasm", &[("OpCooperativeMatrixMulAddNV %12 %32 %33 %34", "OpCooperativeMatrixMulAddNV %12 %32 %31 %34")], &["h100", "lavapipe", "swiftshader"]),
        // An OpenCL 2.0-style ordering that names no storage, on an atomic and a barrier
        // (Vulkan requires a storage bit beside an ordering).
        (
            "lower_kernel_synchronization/atomics.spvasm",
            &[
                ("%37 = OpConstant %9 0\n", "%37 = OpConstant %9 0\n%seq_cst = OpConstant %9 16\n%acquire = OpConstant %9 2\n"),
                ("%38 = OpAtomicIIncrement %9 %36 %28 %37", "%38 = OpAtomicIIncrement %9 %36 %28 %seq_cst"),
                ("OpControlBarrier %28 %28 %29\n               OpBranchConditional %27", "OpControlBarrier %28 %28 %acquire\n               OpBranchConditional %27"),
            ],
            &["h100", "lavapipe", "swiftshader"],
        ),
        // A barrier ordering only sub-group memory, which Vulkan's storage bits do not include.
        (
            "lower_kernel_synchronization/atomics.spvasm",
            &[
                ("%37 = OpConstant %9 0\n", "%37 = OpConstant %9 0\n%subgroup_release = OpConstant %9 132\n"),
                ("OpControlBarrier %28 %28 %29\n               OpBranchConditional %27", "OpControlBarrier %28 %28 %subgroup_release\n               OpBranchConditional %27"),
            ],
            &["h100", "lavapipe", "swiftshader"],
        ),
        // A barrier whose memory scope is one invocation, with acquire-release semantics (valid
        // for kernels; Vulkan requires relaxed semantics there).
        (
            "lower_kernel_synchronization/atomics.spvasm",
            &[
                ("%37 = OpConstant %9 0\n", "%37 = OpConstant %9 0\n%invocation = OpConstant %9 4\n"),
                ("OpControlBarrier %28 %28 %29\n               OpBranchConditional %27", "OpControlBarrier %28 %invocation %29\n               OpBranchConditional %27"),
            ],
            &["h100", "lavapipe", "swiftshader"],
        ),
        // A sub-group shuffle naming its lane in 64 bits, emulated on another sub-group size.
        (
            "virtualize_subgroup_size/divergent_moves.spvasm",
            &[
                ("OpCapability Shader\n", "OpCapability Shader\nOpCapability Int64\n"),
                ("%u48 = OpConstant %uint 48\n", "%u48 = OpConstant %uint 48\n%ulong = OpTypeInt 64 0\n%lane64 = OpConstant %ulong 5\n"),
                ("%moved = OpGroupNonUniformShuffle %uint %u3 %i %peer", "%moved = OpGroupNonUniformShuffle %uint %u3 %i %lane64"),
            ],
            &["lavapipe"],
        ),
        // A wrap hint on a 16-bit add, which 32-bit code on SwiftShader computes with a mask.
        ("lower_byte_pointers/narrow_buffers.spvasm", &[("OpDecorate %53 NoSignedWrap", "OpDecorate %39 NoSignedWrap")], &["lavapipe", "swiftshader"]),
        // A decorated `OpTypeVoid`: the passes that ask for void must get it, not a second one.
        (
            "lower_kernel_pointers/generic_local.spvasm",
            &[("OpDecorate %15 FuncParamAttr NoWrite\n", "OpDecorate %15 FuncParamAttr NoWrite\nOpDecorate %7 FuncParamAttr NoCapture\n")],
            &["h100", "lavapipe", "swiftshader"],
        ),
        // A buffer access aligned below its scalars (a packed struct's member): split into
        // aligned pieces, as Vulkan needs buffer-address accesses aligned to their scalars.
        ("lower_kernel_pointers/generic_local.spvasm", &[("%42 = OpLoad %8 %41 Aligned 4", "%42 = OpLoad %8 %41 Aligned 1")], &["h100", "lavapipe", "swiftshader"]),
        // `native_` and `half_` forms of doubles (found by damage): GLSL.std.450 has no 64-bit
        // `Log` or `Pow` for them to become; they are the plain functions' double helpers.
        (
            "lower_opencl_std/special.spvasm",
            &[
                ("OpCapability Int8\n", "OpCapability Int8\nOpCapability Float64\n"),
                ("%half = OpTypeFloat 16\n", "%half = OpTypeFloat 16\n%double = OpTypeFloat 64\n"),
                (
                    "%53 = OpExtInst %float %1 erf %31\n",
                    "%53 = OpExtInst %float %1 erf %31\n%wide = OpFConvert %double %31\n%native = OpExtInst %double %1 native_log %wide\n%powered = OpExtInst %double %1 half_powr %wide %native\n",
                ),
            ],
            &["h100", "lavapipe"],
        ),
    ];
    for &(input, edits, targets) in ENTRIES {
        let (_, words) = edited(input, edits);
        for &target in targets {
            let target = DeviceCaps::builtin(target).unwrap();
            let (out, _) = translate(&words, &target).unwrap_or_else(|e| panic!("{input} for {}: {e}", target.name));
            matbridge_translator::tools::validate(&out, "vulkan1.3").unwrap_or_else(|e| panic!("{input} for {}: {e}", target.name));
        }
    }
}

/// Block member offsets that no Vulkan layout allows, which spirv-val accepts in the universal
/// environment and rejects for Vulkan (found by fuzzing): a member off its scalar alignment,
/// and a member reaching into the next. The host lays the data out, so no translation can mend
/// them: every target refuses them by name, and translates the block laid out right.
#[test]
fn block_member_offsets_no_vulkan_layout_allows_are_refused_by_name() {
    if matbridge_translator::tools::find("spirv-as").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    }
    let shader = |offsets: [u32; 3]| {
        format!(
            "OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main \"main\" %pc %out
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %P Block
               OpMemberDecorate %P 0 Offset {}
               OpMemberDecorate %P 1 Offset {}
               OpMemberDecorate %P 2 Offset {}
               OpDecorate %O Block
               OpMemberDecorate %O 0 Offset 0
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %v2int = OpTypeVector %uint 2
          %P = OpTypeStruct %uint %v2int %uint
          %O = OpTypeStruct %uint
     %ptr_pc = OpTypePointer PushConstant %P
    %ptr_out = OpTypePointer StorageBuffer %O
   %ptr_uint = OpTypePointer PushConstant %uint
  %ptr_ouint = OpTypePointer StorageBuffer %uint
     %uint_0 = OpConstant %uint 0
     %uint_2 = OpConstant %uint 2
         %pc = OpVariable %ptr_pc PushConstant
        %out = OpVariable %ptr_out StorageBuffer
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %p = OpAccessChain %ptr_uint %pc %uint_2
          %x = OpLoad %uint %p
          %o = OpAccessChain %ptr_ouint %out %uint_0
               OpStore %o %x
               OpReturn
               OpFunctionEnd
",
            offsets[0], offsets[1], offsets[2]
        )
    };
    // Offsets, and what the refusal says before and after the struct's id.
    type Refusal = Option<(&'static str, &'static str)>;
    let cases: [([u32; 3], Refusal); 3] = [
        ([0, 8, 16], None),
        ([0, 8, 18], Some(("member 2 of struct %", "is at byte offset 18, not a multiple of its 4-byte scalar alignment"))),
        ([0, 8, 12], Some(("member 1 of struct %", "(bytes 8 to 16) overlaps member 2 at byte offset 12"))),
    ];
    for (offsets, refusal) in cases {
        let words = matbridge_translator::tools::assemble(&shader(offsets), "vulkan1.3").unwrap();
        matbridge_translator::tools::validate(&words, "spv1.6").unwrap_or_else(|e| panic!("{offsets:?}: spirv-val rejects the module: {e}"));
        for target in targets() {
            match (refusal, translate(&words, &target)) {
                (None, Ok((out, _))) => matbridge_translator::tools::validate(&out, "vulkan1.3").unwrap_or_else(|e| panic!("{offsets:?}, {}: {e}", target.name)),
                (None, Err(e)) => panic!("{offsets:?}, {}: {e}", target.name),
                (Some((member, why)), Err(e)) => {
                    let e = e.to_string();
                    assert!(e.contains("OpMemberDecorate at word offset") && e.contains(member) && e.contains(why), "{offsets:?}, {}: {e}", target.name);
                }
                (Some(_), Ok(_)) => panic!("{offsets:?}, {}: translated", target.name),
            }
        }
    }
}

/// A kernel's constant table too large for one constant (found by fuzzing: a local array of
/// 1.4 billion elements, whose flattened initializer took gigabytes): every target refuses it by
/// name instead of building it, and translates the table as the kernel has it.
#[test]
fn initializers_past_one_constant_are_refused_by_name() {
    if matbridge_translator::tools::find("spirv-as").is_none() {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    }
    // llvm-spirv's text, which spirv-val rejects as it is (`Aligned 0`, which the translator
    // repairs): assembled without the check `edited` makes.
    let text = std::fs::read_to_string(format!("{}/tests/in/lower_kernel_pointers/classics.spvasm", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let large = text.replace("%276 = OpConstant %3 64\n", "%276 = OpConstant %3 64\n%big = OpConstant %3 100000\n").replace("%277 = OpTypeArray %272 %276", "%277 = OpTypeArray %272 %big");
    assert_ne!(large, text);
    for (text, refused) in [(&text, false), (&large, true)] {
        let words = matbridge_translator::tools::assemble(text, "spv1.4").unwrap();
        for target in ["h100", "lavapipe", "swiftshader"] {
            let target = DeviceCaps::builtin(target).unwrap();
            match (translate(&words, &target), refused) {
                (Err(e), true) => {
                    let e = e.to_string();
                    assert!(e.contains("OpVariable at word offset") && e.contains("spans 100000 elements, more than the 65532 one constant can hold"), "{}: {e}", target.name);
                }
                (Ok(_), false) => {}
                (result, _) => panic!("{}: {:?}", target.name, result.map(|_| "translated")),
            }
        }
    }
}
