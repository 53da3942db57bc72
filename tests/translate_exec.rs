//! Translated modules executed on the test devices and compared with the CPU reference model.

mod common;

use matbridge_runtime::{Dispatch, PipelineDesc};
use matbridge_translator::reference::integer_dot::{dot, dot_acc_sat, unpack4x8, DotKind};
use matbridge_translator::{tools, translate};
use rand::{Rng, SeedableRng};

fn int_dot_input() -> Vec<u32> {
    let text = include_str!("../translator/tests/in/lower_integer_dot/int_dot.spvasm");
    tools::assemble(text, "vulkan1.1").expect("SPIRV-Tools assemble the test input (bash .ci/install-deps.sh)")
}

/// What `int_dot.spvasm` writes for one input triple, from the reference model.
fn int_dot_expected(a: u32, b: u32, c: i32) -> [u32; 8] {
    let (pa, pb) = (unpack4x8(a), unpack4x8(b));
    let c = c as u32 as u64;
    // The vector operands: a's bytes sign-extended, b's bytes zero-extended, as 32-bit ints.
    let va: Vec<u64> = pa.iter().map(|x| *x as u8 as i8 as i64 as u64).collect();
    let vb: Vec<u64> = pb.to_vec();
    [
        dot(DotKind::S, &pa, &pb, 8, 32) as u32,
        dot(DotKind::U, &pa, &pb, 8, 32) as u32,
        dot(DotKind::Su, &pa, &pb, 8, 32) as u32,
        dot_acc_sat(DotKind::S, &pa, &pb, c, 8, 32) as u32,
        dot_acc_sat(DotKind::U, &pa, &pb, c, 8, 32) as u32,
        dot_acc_sat(DotKind::Su, &pa, &pb, c, 8, 32) as u32,
        dot(DotKind::S, &va, &vb, 32, 32) as u32,
        dot_acc_sat(DotKind::Su, &va, &vb, c, 32, 32) as u32,
    ]
}

#[test]
fn integer_dot_products_kept_and_lowered_match_the_reference() {
    let contexts = common::contexts();
    if contexts.is_empty() {
        return;
    }
    let input = int_dot_input();
    let n = 4096usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    let mut x: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let mut y: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let mut acc: Vec<i32> = (0..n).map(|_| rng.random_range(-1000..1000)).collect();
    // Saturation edges: accumulators at the limits, extreme bytes.
    for (i, v) in [i32::MAX, i32::MIN, i32::MAX - 3, i32::MIN + 3, -1, 0].iter().enumerate() {
        acc[i] = *v;
        x[i] = [0x7f7f_7f7f, 0x8080_8080, 0xffff_ffff, 0x0101_0101, 0x80ff_7f01, 0][i];
        y[i] = [0x7f7f_7f7f, 0x7f7f_7f7f, 0xffff_ffff, 0xffff_ffff, 0xff80_017f, 0][i];
    }
    let expected: Vec<u32> = (0..n).flat_map(|i| int_dot_expected(x[i], y[i], acc[i])).collect();
    for ctx in contexts {
        for lowered in [false, true] {
            let mut target = ctx.caps().clone();
            target.integer_dot_product &= !lowered;
            let (words, report) = translate(&input, &target).unwrap();
            let lowered_count: usize = report.passes.iter().filter(|p| p.name == "lower-integer-dot").map(|p| p.rewritten.values().sum::<usize>()).sum();
            assert_eq!(lowered_count, if lowered { 8 } else { 0 }, "{report:?}");
            tools::validate(&words, "vulkan1.3").unwrap();
            let pipeline = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 4, push_constant_bytes: 4, label: "int_dot", ..Default::default() }).unwrap();
            let bx = ctx.buffer_from_slice(&x, "x").unwrap();
            let by = ctx.buffer_from_slice(&y, "y").unwrap();
            let bacc = ctx.buffer_from_slice(&acc, "acc").unwrap();
            let mut bout = ctx.zeroed_buffer::<u32>(n * 8, "out").unwrap();
            let push = (n as u32).to_le_bytes();
            ctx.run(&[Dispatch { pipeline: &pipeline, buffers: &[&bx, &by, &bacc, &bout], images: &[], push_constants: &push, groups: [(n as u32).div_ceil(64), 1, 1] }]).unwrap();
            let got: Vec<u32> = ctx.read_buffer(&mut bout).unwrap();
            for i in 0..n * 8 {
                assert_eq!(got[i], expected[i], "{} lowered={lowered}: pair {} form {}: x={:#x} y={:#x} acc={}", ctx.caps().name, i / 8, i % 8, x[i / 8], y[i / 8], acc[i / 8]);
            }
        }
    }
}

/// A kernel that stores past its workgroup arrays (undefined in SPIR-V) runs as it is on lavapipe
/// and SwiftShader in every other respect, but their workgroup memory is the process's heap:
/// the runtime bounds the indices by itself (`bound-workgroup-indices`), the process survives,
/// and what the kernel computed before the stray stores is exact.
#[test]
fn stores_past_workgroup_arrays_stay_inside_them() {
    let text = include_str!("../translator/tests/in/bound_workgroup_indices/past_the_array.spvasm");
    let input = tools::assemble(text, "vulkan1.3").expect("SPIRV-Tools assemble the test input (bash .ci/install-deps.sh)");
    for ctx in common::contexts() {
        let what = ctx.caps().name.clone();
        if !ctx.caps().workarounds.workgroup_memory_on_host {
            // A GPU may fault on the stray stores (they are the kernel's bug, left as written).
            eprintln!("{what}: workgroup memory is the device's own; not run");
            continue;
        }
        let p = ctx.create_pipeline(&PipelineDesc { spirv: &input, bindings: 1, label: "past_the_array", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
        for _ in 0..3 {
            let mut out = ctx.buffer_from_slice(&[u32::MAX; 64], "out").unwrap();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&out], images: &[], push_constants: &[], groups: [4, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got: Vec<u32> = ctx.read_buffer(&mut out).unwrap();
            let want: Vec<u32> = (0..64).map(|id| (id + 1) % 64 * 3).collect();
            assert_eq!(got, want, "{what}");
        }
        ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
    }
}

/// An f32 accumulator loaded from one f16 buffer and stored to another (each component two f16
/// words), multiplied into from f16 operands, in a module that declares 16-bit storage and f16
/// arithmetic but no 16-bit integers, as glslang writes public GEMMs with f16 buffers: created
/// as it is on every device (emulated on lavapipe and SwiftShader, native on the H100), D = A B
/// + C is exact for small integers.
#[test]
fn f32_accumulators_through_f16_words_match_the_reference() {
    let text = include_str!("../translator/tests/in/emulate_cooperative_matrix/f16_storage_only.spvasm");
    let input = tools::assemble(text, "vulkan1.3").expect("SPIRV-Tools assemble the test input (bash .ci/install-deps.sh)");
    let mut rng = rand::rngs::SmallRng::seed_from_u64(97);
    // A row-major at 0, B column-major at 256, both 16x16 with a stride of 16.
    let a: Vec<f32> = (0..512).map(|_| rng.random_range(-8i32..8) as f32).collect();
    let c: Vec<f32> = (0..256).map(|_| rng.random_range(-64i32..64) as f32).collect();
    let want: Vec<f32> = (0..256).map(|e| (0..16).map(|k| a[e / 16 * 16 + k] * a[256 + e % 16 * 16 + k]).sum::<f32>() + c[e]).collect();
    let halves: Vec<u16> = a.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect();
    for ctx in common::contexts() {
        let what = ctx.caps().name.clone();
        let p = ctx.create_pipeline(&PipelineDesc { spirv: &input, bindings: 3, label: "f16_storage_only", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
        let ba = ctx.buffer_from_slice(&halves, "a").unwrap();
        let bc = ctx.buffer_from_slice(&c, "c").unwrap();
        let mut bd = ctx.buffer_from_slice(&[f32::NAN; 256], "d").unwrap();
        ctx.run(&[Dispatch { pipeline: &p, buffers: &[&ba, &bc, &bd], images: &[], push_constants: &[], groups: [1, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
        let got: Vec<f32> = ctx.read_buffer(&mut bd).unwrap();
        assert_eq!(got, want, "{what}");
        ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
    }
}

/// A shader's `roundEven`, `round`, `trunc` and remainder (`OpFRem`) of doubles
/// (`double_rounding_from_floor`'s snapshot input) on every device with doubles, as it is:
/// where the driver gets them wrong (lavapipe before Mesa 26: values past 2^23 unchanged, ties
/// toward zero, remainders of them) the runtime has them computed from `Floor` by itself. Each
/// element `(x, y)` becomes `trunc((x, y)) (rint x + round x + floor x + x rem 10^6)`, exactly.
#[test]
fn double_rounding_is_exact_on_every_driver() {
    let text = include_str!("../translator/tests/in/double_rounding_from_floor/round_trunc.spvasm");
    let input = tools::assemble(text, "vulkan1.3").expect("SPIRV-Tools assemble the test input (bash .ci/install-deps.sh)");
    let x: Vec<f64> = [0.5, 1.5, 2.5, -2.5, -0.3, 24_229_960.553_024_84, -843_314_856.532_626_2, 1e15 + 0.5, 4_503_599_627_370_497.0, 7.3, -7.7, 3.5]
        .into_iter()
        .cycle()
        .take(64)
        .enumerate()
        .map(|(i, v)| v * if i < 12 { 1.0 } else { (i % 7) as f64 - 3.0 })
        .collect();
    let pairs: Vec<f64> = x.iter().flat_map(|v| [*v, v * 0.75 - 1.0]).collect();
    for ctx in common::contexts().into_iter().filter(|c| c.caps().shader_float64) {
        let what = ctx.caps().name.clone();
        let p = ctx.create_pipeline(&PipelineDesc { spirv: &input, bindings: 1, label: "round_trunc", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut buf = ctx.buffer_from_slice(&pairs, "pairs").unwrap();
        ctx.run(&[Dispatch { pipeline: &p, buffers: &[&buf], images: &[], push_constants: &[], groups: [1, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
        let got: Vec<f64> = ctx.read_buffer(&mut buf).unwrap();
        for (i, v) in x.iter().enumerate() {
            // `Round` may take ties either way.
            let want = |round: f64| {
                let sum = v.round_ties_even() + round + v.floor() + v % 1e6;
                [v.trunc() * sum, (v * 0.75 - 1.0).trunc() * sum]
            };
            let got = &got[2 * i..2 * i + 2];
            assert!(got == want(v.round()) || got == want(v.round_ties_even()), "{what}: element {i}, x = {v}: {got:?}, want {:?}", want(v.round()));
        }
        ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
    }
}

/// A shader that keeps signed zeros selects between `1.0` and `-0.0`, `-1.0` and `+0.0` (floats,
/// a vector component, and `-1.0`'s bits against zero as integers): every result has the sign
/// the select picks on every device (bookworm's lavapipe folds such selects to conversions of
/// the condition, giving both zeros one sign, until the runtime translates such shaders with
/// `split-signed-zero-selects`).
#[test]
fn selects_of_one_and_signed_zeros_keep_the_sign() {
    let text = include_str!("../translator/tests/in/split_signed_zero_selects/one_and_zero.spvasm");
    let input = tools::assemble(text, "spv1.4").expect("SPIRV-Tools assemble the test input (bash .ci/install-deps.sh)");
    let data: Vec<u32> = (0..64 * 8).map(|i| if i % 8 == 0 { (i as u32 / 8) % 3 } else { 0xdead_beef }).collect();
    for ctx in common::contexts() {
        let what = ctx.caps().name.clone();
        if !ctx.caps().float_controls.signed_zero_inf_nan_preserve.f32 {
            continue;
        }
        let p = ctx.create_pipeline(&PipelineDesc { spirv: &input, bindings: 1, label: "one_and_zero", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut buf = ctx.buffer_from_slice(&data, "v").unwrap();
        ctx.run(&[Dispatch { pipeline: &p, buffers: &[&buf], images: &[], push_constants: &[], groups: [1, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
        let got: Vec<u32> = ctx.read_buffer(&mut buf).unwrap();
        for i in 0..64 {
            let c = data[8 * i] & 1 != 0;
            let pick = |a: f32, b: f32| if c { a } else { b }.to_bits();
            let want = [pick(1.0, -0.0), pick(-1.0, 0.0), pick(1.0, 0.0), pick(-1.0, 0.0), pick(2.0, 0.5), pick(1.0, -0.0), 0xdead_beef, 0xdead_beef];
            assert_eq!(got[8 * i..8 * i + 8], want, "{what}: invocation {i}, condition {c}");
        }
        ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
    }
}

/// A shader that keeps signed zeros adds `+0.0` to zeros, numbers, infinities and NaNs and
/// subtracts them from it: every result is IEEE's on every device (bookworm's lavapipe gave
/// `-0.0 + 0.0` and `0.0 - 0.0` as `-0.0` until the runtime translated such shaders with
/// `zero-sums-from-select`). A denormal mode the device
/// does not honour (`DenormPreserve 32`) is dropped and the shader runs; a rounding mode it does
/// not honour (`RoundingModeRTZ 32`) is refused naming the property, before the driver sees
/// it.
#[test]
fn signed_zero_sums_are_exact_and_unhonoured_float_controls_legalized() {
    let text = include_str!("../translator/tests/in/zero_sums_from_select/signed_zero.spvasm");
    let input = tools::assemble(text, "spv1.4").expect("SPIRV-Tools assemble the test input (bash .ci/install-deps.sh)");
    let values = [0.0f32, -0.0, 1.5, -2.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -1e-30];
    let data: Vec<f32> = (0..64 * 4).map(|i| values[(i / 4 + i % 4) % values.len()]).collect();
    let with_mode = |capability: &str, mode: &str| {
        let text = text
            .replace("OpCapability SignedZeroInfNanPreserve", &format!("OpCapability SignedZeroInfNanPreserve\nOpCapability {capability}"))
            .replace("OpExecutionMode %main SignedZeroInfNanPreserve 32", &format!("OpExecutionMode %main SignedZeroInfNanPreserve 32\nOpExecutionMode %main {mode}"));
        tools::assemble(&text, "spv1.4").unwrap()
    };
    let denorms = with_mode("DenormPreserve", "DenormPreserve 32");
    let toward_zero = with_mode("RoundingModeRTZ", "RoundingModeRTZ 32");
    for ctx in common::contexts() {
        let what = ctx.caps().name.clone();
        if !ctx.caps().float_controls.signed_zero_inf_nan_preserve.f32 {
            continue;
        }
        for (label, module) in [("signed_zero", &input), ("denorms", &denorms)] {
            let p = ctx.create_pipeline(&PipelineDesc { spirv: module, bindings: 1, label, ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {label}: {e}"));
            let mut buf = ctx.buffer_from_slice(&data, "v").unwrap();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&buf], images: &[], push_constants: &[], groups: [1, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut buf).unwrap();
            for i in 0..64 {
                let v = &data[4 * i..4 * i + 4];
                // x + 0, 0 + x, x + -0 and 0 - x.
                let want = [v[0] + 0.0, 0.0 + v[0], v[0] + -0.0, 0.0 - v[0]];
                for k in 0..4 {
                    let (g, w) = (got[4 * i + k], want[k]);
                    assert!(g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()), "{what}: {label}: sum {k} of {:?}: {g:e}, want {w:e}", v);
                }
            }
        }
        ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
        let result = ctx.create_pipeline(&PipelineDesc { spirv: &toward_zero, bindings: 1, label: "toward_zero", ..Default::default() });
        if ctx.caps().float_controls.rounding_mode_rtz.f32 {
            result.unwrap_or_else(|e| panic!("{what}: {e}"));
        } else {
            let err = result.err().unwrap_or_else(|| panic!("{what}: RoundingModeRTZ 32 was not refused")).to_string();
            assert!(err.contains("shaderRoundingModeRTZFloat32") && err.contains("RoundingModeRTZ 32"), "{what}: {err}");
        }
    }
}
