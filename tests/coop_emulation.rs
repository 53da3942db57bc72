//! The project's own KHR cooperative-matrix kernels, translated for each test device and run
//! there against a CPU computation: emulated with subgroup code where the device has no
//! cooperative matrices (lavapipe, SwiftShader) or lacks a shape the kernel uses (f32 and mixed
//! s8*u8 on the H100), native where it lists them, and emulated on the H100 too by translating
//! for its profile without cooperative matrices. Each kernel eprints which way it ran.

mod common;

use matbridge_runtime::{Context, Dispatch, PipelineDesc};
use matbridge_translator::profile::ComponentType;
use matbridge_translator::{tools, translate, DeviceCaps};
use rand::{Rng, SeedableRng};

const GEMM: &str = include_str!("kernels/coop_gemm_staged.wgsl");

/// lavapipe compiles a pipeline at its first dispatch, and its LLVM takes up to a minute over
/// an emulated GEMM with an empty shader cache (each lane-dependent access becomes per-lane
/// branches): the GEMM dispatches get longer than the runtime's default timeout.
const FIRST_DISPATCH: std::time::Duration = std::time::Duration::from_secs(600);

const TILED: &str = include_str!("kernels/coop_gemm_tiled.wgsl");

/// The register-tiled GEMM's WGSL: `elem` operands, `frag`-sized fragments, `tm` x `tn` of them
/// per sub-group, four sub-groups of `subgroup` invocations.
fn tiled_source(elem: &str, frag: u32, (tm, tn): (u32, u32), subgroup: u32) -> String {
    gemm_source(&TILED.replace("TM", &tm.to_string()).replace("TN", &tn.to_string()).replace("THREADS", &(4 * subgroup).to_string()), frag).replace("ELEM", elem)
}

/// The staged GEMM's WGSL for operand type `elem` and `frag` x `frag` fragments.
fn gemm_source(template: &str, frag: u32) -> String {
    template.replace("FRAG", &frag.to_string()).replace("MAT", &format!("coop_mat{frag}x{frag}"))
}

/// The targets to translate for on `ctx`, with whether the translation must emulate: the device
/// itself (emulated where it has no cooperative matrices; on a device with them, emulated only
/// where it lacks a shape the kernel uses, which `None` leaves open), and where it has
/// cooperative matrices, the same device without them (the emulation at its subgroup size).
fn targets(ctx: &Context) -> Vec<(DeviceCaps, Option<bool>)> {
    let caps = ctx.caps().clone();
    let mut out = vec![(caps.clone(), (!caps.has_cooperative_matrix()).then_some(true))];
    if caps.has_cooperative_matrix() {
        let mut plain = caps;
        plain.cooperative_matrix.clear();
        out.push((plain, Some(true)));
    }
    out
}

/// "emulated" or "native", checked against the expectation where there is one.
fn mode(report: &matbridge_translator::Report, expect_emulated: Option<bool>) -> &'static str {
    let emulated = report.passes.iter().any(|p| p.name == "emulate-cooperative-matrix" && p.changed);
    if let Some(e) = expect_emulated {
        assert_eq!(emulated, e, "{report:?}");
    }
    if emulated {
        "emulated"
    } else {
        "native"
    }
}

/// Runs the staged GEMM (`elem` = "f32" or "f16") at m x n x k on `ctx` translated for `target`
/// and compares it with an f64 computation from the same rounded operands.
fn run_gemm(ctx: &Context, target: &DeviceCaps, expect_emulated: Option<bool>, (elem, frag): (&str, u32), (m, n, k): (usize, usize, usize), seed: u64) {
    let input = common::wgsl("coop_gemm_staged", &gemm_source(&GEMM.replace("ELEM", elem), frag));
    let (words, report) = translate(&input, target).unwrap_or_else(|e| panic!("{} {elem}: {e}", target.name));
    let what = format!("{} ({}) {elem} {frag}x{frag} fragments, {m}x{n}x{k}", ctx.caps().name, mode(&report, expect_emulated));
    eprintln!("{what}");
    tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{what}: {e}"));
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut value = || (rng.random_range(-64i32..64) as f32) / 32.0;
    let a: Vec<f32> = (0..m * k).map(|_| value()).collect();
    let b: Vec<f32> = (0..k * n).map(|_| value()).collect();
    let c0: Vec<f32> = (0..m * n).map(|_| value()).collect();
    let (alpha, beta) = (0.75f32, -0.5f32);
    let bytes = |v: &[f32]| -> Vec<u8> {
        match elem {
            "f16" => v.iter().flat_map(|x| half::f16::from_f32(*x).to_bits().to_le_bytes()).collect(),
            _ => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    };
    let started = std::time::Instant::now();
    let pipeline =
        ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 3, push_constant_bytes: 20, label: "coop_gemm_staged", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
    eprintln!("  pipeline created in {:.2} s", started.elapsed().as_secs_f64());
    let ba = ctx.buffer_from_slice(&bytes(&a), "a").unwrap();
    let bb = ctx.buffer_from_slice(&bytes(&b), "b").unwrap();
    let mut bc = ctx.buffer_from_slice(&c0, "c").unwrap();
    let mut push: Vec<u8> = [m as u32, n as u32, k as u32].iter().flat_map(|v| v.to_le_bytes()).collect();
    push.extend(alpha.to_le_bytes());
    push.extend(beta.to_le_bytes());
    let tile = 2 * frag as usize;
    let groups = [n.div_ceil(tile) as u32, m.div_ceil(tile) as u32, 1];
    ctx.run_with_timeout(&[Dispatch { pipeline: &pipeline, buffers: &[&ba, &bb, &bc], images: &[], push_constants: &push, groups }], 1, FIRST_DISPATCH).unwrap_or_else(|e| panic!("{what}: {e}"));
    eprintln!("  ran in {:.2} s", started.elapsed().as_secs_f64());
    let got: Vec<f32> = ctx.read_buffer(&mut bc).unwrap();
    for i in 0..m {
        for j in 0..n {
            let dot: f64 = (0..k).map(|p| a[i * k + p] as f64 * b[p * n + j] as f64).sum();
            let want = alpha as f64 * dot + beta as f64 * c0[i * n + j] as f64;
            let g = got[i * n + j] as f64;
            // Operands are multiples of 1/32 below 2: products and sums are exact in f32.
            assert!((g - want).abs() <= 1e-4 * (1.0 + want.abs()), "{what}: c[{i}][{j}] = {g}, expected {want}");
        }
    }
    ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
}

#[test]
fn staged_gemm_matches_the_reference_emulated_and_native() {
    for ctx in common::contexts() {
        for (target, expect_emulated) in targets(&ctx) {
            run_gemm(&ctx, &target, expect_emulated, ("f32", 16), (96, 64, 80), 1);
            // f16 data in 32-bit words and f32 arithmetic rounded to f16 where the device has
            // no 16-bit types (SwiftShader).
            run_gemm(&ctx, &target, expect_emulated, ("f16", 8), (48, 32, 40), 4);
            // The fragment shape GPUs list (native on the H100).
            if target.has_cooperative_matrix() {
                run_gemm(&ctx, &target, expect_emulated, ("f16", 16), (64, 96, 48), 3);
            }
        }
    }
}

/// Translates the spvasm test kernel `name` for `target`; returns the words and "emulated" or
/// "native".
fn kernel_for(name: &str, target: &DeviceCaps, expect_emulated: Option<bool>) -> (Vec<u32>, &'static str) {
    let input = common::assembled(name);
    let (words, report) = translate(&input, target).unwrap_or_else(|e| panic!("{name} for {}: {e}", target.name));
    tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{name} for {}: {e}", target.name));
    (words, mode(&report, expect_emulated))
}

/// `input` specialized with `spec` and translated for `target`, checked with spirv-val; returns
/// the words and "emulated" or "native".
fn specialized_for(input: &[u32], target: &DeviceCaps, spec: &[(u32, u32)], expect_emulated: Option<bool>) -> (Vec<u32>, &'static str) {
    let (words, report) = matbridge_translator::translate_specialized(input, target, spec).unwrap_or_else(|e| panic!("{} {spec:?}: {e}", target.name));
    tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{} {spec:?}: {e}", target.name));
    (words, mode(&report, expect_emulated))
}

/// A pipeline of `words` created with the specialization `spec` (`what` names it in a failure).
fn specialized_pipeline(ctx: &Context, words: &[u32], spec: &[(u32, u32)], (bindings, push_constant_bytes): (u32, u32), what: &str) -> matbridge_runtime::Pipeline {
    let spec: Vec<_> = spec.iter().map(|&(id, v)| matbridge_runtime::SpecConstant::u32(id, v)).collect();
    ctx.create_pipeline(&PipelineDesc { spirv: words, bindings, push_constant_bytes, spec_constants: &spec, label: what, ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn pipeline(ctx: &Context, words: &[u32], bindings: u32, push_constant_bytes: u32) -> matbridge_runtime::Pipeline {
    let spec = [matbridge_runtime::SpecConstant::u32(0, ctx.caps().subgroup_size)];
    ctx.create_pipeline(&PipelineDesc { spirv: words, bindings, push_constant_bytes, spec_constants: &spec, ..Default::default() }).unwrap()
}

#[test]
fn f16_epilogue_kernel_matches_the_reference() {
    for ctx in common::contexts() {
        for (target, expect_emulated) in targets(&ctx) {
            let (words, mode) = kernel_for("coop_f16_ops", &target, expect_emulated);
            let what = format!("{} ({mode})", ctx.caps().name);
            // Odd strides: A rows 3 uvec4 (24 halves) apart, B columns 19 halves, C columns 21
            // floats, G rows 17 halves.
            let (sa, sb, sc, sd) = (3usize, 19usize, 21usize, 17usize);
            let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
            let mut value = || (rng.random_range(-16i32..16) as f32) / 8.0;
            let a: Vec<f32> = (0..16 * sa * 8).map(|_| value()).collect();
            let b: Vec<f32> = (0..16 * sb).map(|_| value()).collect();
            let c: Vec<f32> = (0..16 * sc).map(|_| value()).collect();
            let h = |v: &[f32]| -> Vec<u16> { v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect() };
            let p = pipeline(&ctx, &words, 5, 16);
            let ba = ctx.buffer_from_slice(&h(&a), "a").unwrap();
            let bb = ctx.buffer_from_slice(&h(&b), "b").unwrap();
            let bc = ctx.buffer_from_slice(&c, "c").unwrap();
            let mut bg = ctx.zeroed_buffer::<u16>(16 * sd, "g").unwrap();
            let mut br = ctx.zeroed_buffer::<f32>(256, "r").unwrap();
            let push: Vec<u8> = [sa, sb, sc, sd].iter().flat_map(|v| (*v as u32).to_le_bytes()).collect();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bc, &bg, &br], images: &[], push_constants: &push, groups: [1, 1, 1] }]).unwrap();
            let g: Vec<u16> = ctx.read_buffer(&mut bg).unwrap();
            let r: Vec<f32> = ctx.read_buffer(&mut br).unwrap();
            for i in 0..16 {
                for j in 0..16 {
                    let cij = c[j * sc + i];
                    let d: f32 = (0..16).map(|k| a[i * sa * 8 + k] * b[j * sb + k]).sum::<f32>() + cij;
                    let f = 0.5 * d + cij;
                    // Operands are multiples of 1/8 below 2: f is exact in f32.
                    assert_eq!(r[i * 16 + j], f.max(0.0), "{what}: R[{i}][{j}]");
                    let want = half::f16::from_f32(f).to_f32();
                    let got = half::f16::from_bits(g[i * sd + j]).to_f32();
                    assert!((got - want).abs() <= want.abs() / 1024.0, "{what}: G[{i}][{j}] = {got}, expected {want}");
                }
            }
            ctx.check_validation().unwrap();
        }
    }
}

/// What `coop_int8_flags.spvasm` writes: three 16x16 results from one 16x32 by 32x16 product.
fn int8_reference(a: &[u8], sa: usize, b: &[u8], sb: usize, c: &[u32]) -> Vec<u32> {
    let mut out = vec![0u32; 768];
    for i in 0..16 {
        for j in 0..16 {
            let (mut su, mut ss, mut uu) = (0i64, 0i64, 0i64);
            for k in 0..32 {
                let (x, y) = (a[i * sa + k], b[j * sb + k]);
                su += x as i8 as i64 * y as i64;
                ss += x as i8 as i64 * y as i8 as i64;
                uu += x as i64 * y as i64;
            }
            let cij = c[i * 16 + j];
            out[i * 16 + j] = (cij as i32 as i64 + su) as i32 as u32;
            out[256 + i * 16 + j] = (cij as i32 as i64 + ss).clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32;
            out[512 + i * 16 + j] = (cij as i64 + uu).clamp(0, u32::MAX as i64) as u32;
        }
    }
    out
}

#[test]
fn int8_operand_flags_and_saturation_match_the_reference() {
    for ctx in common::contexts() {
        for (target, expect_emulated) in targets(&ctx) {
            let (words, mode) = kernel_for("coop_int8_flags", &target, expect_emulated);
            let what = format!("{} ({mode})", ctx.caps().name);
            // A rows 37 bytes apart, B columns 9 words (36 bytes) apart.
            let (sa, sb_words) = (37usize, 9usize);
            let sb = sb_words * 4;
            let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
            let mut a: Vec<u8> = (0..16 * sa).map(|_| rng.random()).collect();
            let b: Vec<u8> = (0..16 * sb).map(|_| rng.random()).collect();
            let mut c: Vec<u32> = (0..256).map(|_| rng.random_range(-100_000i32..100_000) as u32).collect();
            // Extremes: rows of -128/127/255 bytes, accumulators at the limits of s32 and u32.
            a[..32].fill(0x80);
            a[sa..sa + 32].fill(0x7f);
            a[2 * sa..2 * sa + 32].fill(0xff);
            for (j, v) in [i32::MAX as u32 - 50, i32::MIN as u32 + 50, u32::MAX - 50, i32::MAX as u32, 0, u32::MAX].iter().enumerate() {
                c[j] = *v;
                c[16 + j] = *v;
                c[32 + j] = *v;
            }
            let p = pipeline(&ctx, &words, 4, 8);
            let ba = ctx.buffer_from_slice(&a, "a").unwrap();
            let bb = ctx.buffer_from_slice(&b, "b").unwrap();
            let bc = ctx.buffer_from_slice(&c, "c").unwrap();
            let mut bo = ctx.zeroed_buffer::<u32>(768, "out").unwrap();
            let push: Vec<u8> = [sa as u32, sb_words as u32].iter().flat_map(|v| v.to_le_bytes()).collect();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bc, &bo], images: &[], push_constants: &push, groups: [1, 1, 1] }]).unwrap();
            let got: Vec<u32> = ctx.read_buffer(&mut bo).unwrap();
            let want = int8_reference(&a, sa, &b, sb, &c);
            for (n, (g, w)) in got.iter().zip(&want).enumerate() {
                let form = ["s8*u8+s32", "s8*s8+s32 saturating", "u8*u8+u32 saturating"][n / 256];
                assert_eq!(g, w, "{what}: {form} [{}][{}] (C = {:#x})", n % 256 / 16, n % 16, c[n % 256]);
            }
            ctx.check_validation().unwrap();
        }
    }
}

/// Saturating MulAdds on 32-bit operands (`khr_int32_saturating`): s32 and u32 16x16x16
/// products whose sums fit in 32 bits, added to accumulators at and near the limits of their
/// types, so that some results saturate (both ways for s32) and most do not.
#[test]
fn int32_saturating_mul_add_matches_the_reference() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(17);
    let mut sa: Vec<i32> = (0..256).map(|_| rng.random_range(-4096..=4096)).collect();
    let mut sb: Vec<i32> = (0..256).map(|_| rng.random_range(-4096..=4096)).collect();
    let mut sc: Vec<i32> = (0..256).map(|_| rng.random_range(-1 << 28..1 << 28)).collect();
    let mut ua: Vec<u32> = (0..256).map(|_| rng.random_range(0..8192)).collect();
    let ub: Vec<u32> = (0..256).map(|_| rng.random_range(0..8192)).collect();
    let mut uc: Vec<u32> = (0..256).map(|_| rng.random()).collect();
    // Row 0 of A and column 0 of B at their largest: a sum of 2^28 against C near the top.
    sa[..16].fill(4096);
    ua[..16].fill(8191);
    for r in 0..16 {
        sb[r * 16] = 4096;
        sb[r * 16 + 1] = -4096;
    }
    (sc[0], sc[1], sc[16], sc[17]) = (i32::MAX - 5, i32::MIN + 5, i32::MAX, i32::MIN);
    (uc[0], uc[1], uc[2]) = (u32::MAX - 5, u32::MAX, 0);
    let mut want_s = vec![0i32; 256];
    let mut want_u = vec![0u32; 256];
    for i in 0..16 {
        for j in 0..16 {
            let s: i64 = (0..16).map(|k| sa[i * 16 + k] as i64 * sb[k * 16 + j] as i64).sum();
            let u: u64 = (0..16).map(|k| ua[i * 16 + k] as u64 * ub[k * 16 + j] as u64).sum();
            want_s[i * 16 + j] = (s + sc[i * 16 + j] as i64).clamp(i32::MIN as i64, i32::MAX as i64) as i32;
            want_u[i * 16 + j] = (u + uc[i * 16 + j] as u64).min(u32::MAX as u64) as u32;
        }
    }
    assert!(want_s.contains(&i32::MAX) && want_s.contains(&i32::MIN) && want_u.contains(&u32::MAX), "the data saturate nothing");
    for ctx in common::contexts() {
        for (target, expect_emulated) in targets(&ctx) {
            let (words, mode) = kernel_for("khr_int32_saturating", &target, expect_emulated);
            let what = format!("{} ({mode})", ctx.caps().name);
            let p = pipeline(&ctx, &words, 8, 0);
            let inputs = [ctx.buffer_from_slice(&sa, "sa").unwrap(), ctx.buffer_from_slice(&sb, "sb").unwrap(), ctx.buffer_from_slice(&sc, "sc").unwrap()];
            let unsigned = [ctx.buffer_from_slice(&ua, "ua").unwrap(), ctx.buffer_from_slice(&ub, "ub").unwrap(), ctx.buffer_from_slice(&uc, "uc").unwrap()];
            let mut sd = ctx.zeroed_buffer::<i32>(256, "sd").unwrap();
            let mut ud = ctx.zeroed_buffer::<u32>(256, "ud").unwrap();
            let buffers = [&inputs[0], &inputs[1], &inputs[2], &unsigned[0], &unsigned[1], &unsigned[2], &sd, &ud];
            ctx.run(&[Dispatch { pipeline: &p, buffers: &buffers, images: &[], push_constants: &[], groups: [1, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got_s: Vec<i32> = ctx.read_buffer(&mut sd).unwrap();
            let got_u: Vec<u32> = ctx.read_buffer(&mut ud).unwrap();
            for n in 0..256 {
                assert_eq!(got_s[n], want_s[n], "{what}: s32 D[{}][{}] (C = {})", n / 16, n % 16, sc[n]);
                assert_eq!(got_u[n], want_u[n], "{what}: u32 D[{}][{}] (C = {})", n / 16, n % 16, uc[n]);
            }
            ctx.check_validation().unwrap();
        }
    }
}

/// Runs `kernel` (16x16 f16 A row-major, B column-major, C = A * B + C in f32 over bindings 0-2)
/// translated for `target` on `ctx` and checks C exactly.
fn check_staged_f16_gemm(ctx: &Context, words: &[u32], what: &str) {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(31);
    let mut value = || (rng.random_range(-8i32..8) as f32) / 8.0;
    let a: Vec<f32> = (0..256).map(|_| value()).collect();
    let b: Vec<f32> = (0..256).map(|_| value()).collect();
    let c: Vec<f32> = (0..256).map(|_| value()).collect();
    let h = |v: &[f32]| -> Vec<u16> { v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect() };
    let p = pipeline(ctx, words, 3, 0);
    let ba = ctx.buffer_from_slice(&h(&a), "a").unwrap();
    let bb = ctx.buffer_from_slice(&h(&b), "b").unwrap();
    let mut bc = ctx.buffer_from_slice(&c, "c").unwrap();
    ctx.run(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bc], images: &[], push_constants: &[], groups: [1, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
    let got: Vec<f32> = ctx.read_buffer(&mut bc).unwrap();
    for i in 0..16 {
        for j in 0..16 {
            // B column-major: element (k, j) at j * 16 + k. Multiples of 1/64: exact.
            let want = (0..16).map(|k| a[i * 16 + k] * b[j * 16 + k]).sum::<f32>() + c[i * 16 + j];
            assert_eq!(got[i * 16 + j], want, "{what}: C[{i}][{j}]");
        }
    }
    ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
}

/// A kernel that declares VariablePointers without needing it (`khr_variable_pointers`, as
/// glslang writes `#pragma use_variable_pointers`, as the Vulkan CTS's `*_varptr` cases do):
/// translation drops the capability, so the kernel runs on every device, SwiftShader (which has
/// no variable pointers) included, and the result is right.
#[test]
fn kernels_declaring_unused_variable_pointers_run_everywhere() {
    for ctx in common::contexts() {
        for (target, expect_emulated) in targets(&ctx) {
            let (words, mode) = kernel_for("khr_variable_pointers", &target, expect_emulated);
            let what = format!("{} ({mode})", ctx.caps().name);
            let module = matbridge_translator::Module::from_words(&words).unwrap();
            for cap in [spirv::Capability::VariablePointers, spirv::Capability::VariablePointersStorageBuffer] {
                assert!(!module.has_capability(cap), "{what}: {cap:?} stayed though nothing needs it");
            }
            check_staged_f16_gemm(&ctx, &words, &what);
        }
    }
}

/// A kernel that needs variable pointers (`khr_selected_pointers`: a workgroup array and a
/// storage-buffer element chosen by OpSelect): translation keeps `VariablePointers`, the
/// runtime enables the device's variable-pointer features (validation checks it) and the
/// result is right; a device without them refuses the pipeline naming the capability.
#[test]
fn kernels_selecting_pointers_keep_variable_pointers() {
    for ctx in common::contexts() {
        for (target, expect_emulated) in targets(&ctx) {
            let input = common::assembled("khr_selected_pointers");
            if !ctx.caps().variable_pointers {
                let err = translate(&input, &target).expect_err("translated for a device without variable pointers").to_string();
                assert!(err.contains("VariablePointers") && err.contains("OpSelect"), "{}: {err}", ctx.caps().name);
                continue;
            }
            let (words, mode) = kernel_for("khr_selected_pointers", &target, expect_emulated);
            let what = format!("{} ({mode})", ctx.caps().name);
            let module = matbridge_translator::Module::from_words(&words).unwrap();
            assert!(module.has_capability(spirv::Capability::VariablePointers), "{what}: the capability was dropped");
            check_staged_f16_gemm(&ctx, &words, &what);
        }
    }
}

/// Element-wise arithmetic on Use-A matrices (`khr_use_a_elementwise`): f32 A matrices added and
/// negated, an f16 one doubled; exact.
#[test]
fn use_a_matrices_in_element_wise_arithmetic_match_the_reference() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(37);
    let x: Vec<f32> = (0..512).map(|_| rng.random_range(-64i32..64) as f32 / 4.0).collect();
    let hv: Vec<f32> = (0..256).map(|_| rng.random_range(-64i32..64) as f32 / 4.0).collect();
    let h: Vec<u16> = hv.iter().map(|v| half::f16::from_f32(*v).to_bits()).collect();
    for ctx in common::contexts() {
        for (target, expect_emulated) in targets(&ctx) {
            let (words, mode) = kernel_for("khr_use_a_elementwise", &target, expect_emulated);
            let what = format!("{} ({mode})", ctx.caps().name);
            let p = pipeline(&ctx, &words, 4, 0);
            let bx = ctx.buffer_from_slice(&x, "x").unwrap();
            let mut by = ctx.zeroed_buffer::<f32>(512, "y").unwrap();
            let bh = ctx.buffer_from_slice(&h, "h").unwrap();
            let mut bg = ctx.zeroed_buffer::<u16>(256, "g").unwrap();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&bx, &by, &bh, &bg], images: &[], push_constants: &[], groups: [1, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let y: Vec<f32> = ctx.read_buffer(&mut by).unwrap();
            let g: Vec<u16> = ctx.read_buffer(&mut bg).unwrap();
            for i in 0..16 {
                for j in 0..16 {
                    // The second matrix is read column-major: its (i, j) is at 256 + j * 16 + i.
                    assert_eq!(y[i * 16 + j], x[i * 16 + j] + x[256 + j * 16 + i], "{what}: sum[{i}][{j}]");
                    assert_eq!(y[256 + i * 16 + j], -x[i * 16 + j], "{what}: negation[{i}][{j}]");
                    assert_eq!(half::f16::from_bits(g[i * 16 + j]).to_f32(), 2.0 * hv[i * 16 + j], "{what}: doubled[{i}][{j}]");
                }
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
        }
    }
}

/// An int8 MulAdd whose A, C and D go through buffers of other types of their width
/// (`khr_int8_reinterpreted`: s8 from unsigned bytes, s32 from uint words, stored to float
/// words); on the H100 its 16x16x16 shape is padded, the staged copies bit-casting each element.
#[test]
fn operands_through_buffers_of_other_types_match_the_reference() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(41);
    let a: Vec<u8> = (0..256).map(|_| rng.random()).collect();
    let b: Vec<i8> = (0..256).map(|_| rng.random()).collect();
    let c: Vec<u32> = (0..256).map(|_| rng.random_range(-100_000i32..100_000) as u32).collect();
    for ctx in common::contexts() {
        for (target, expect_emulated) in targets(&ctx) {
            let (words, mode) = kernel_for("khr_int8_reinterpreted", &target, expect_emulated);
            let what = format!("{} ({mode})", ctx.caps().name);
            let p = pipeline(&ctx, &words, 4, 0);
            let ba = ctx.buffer_from_slice(&a, "a").unwrap();
            let bb = ctx.buffer_from_slice(&b, "b").unwrap();
            let bc = ctx.buffer_from_slice(&c, "c").unwrap();
            let mut bd = ctx.zeroed_buffer::<u32>(256, "d").unwrap();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bc, &bd], images: &[], push_constants: &[], groups: [1, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let d: Vec<u32> = ctx.read_buffer(&mut bd).unwrap();
            for i in 0..16 {
                for j in 0..16 {
                    let want = (0..16).map(|k| a[i * 16 + k] as i8 as i32 * b[k * 16 + j] as i32).sum::<i32>().wrapping_add(c[i * 16 + j] as i32);
                    assert_eq!(d[i * 16 + j] as i32, want, "{what}: D[{i}][{j}]");
                }
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
        }
    }
}

/// Runs the NV square kernel (`nv_square_f16.spvasm`, translated as `words`) on the 16x16
/// 16-bit matrix `a`; returns C's 16-bit elements.
fn run_square(ctx: &Context, words: &[u32], a: &[u16]) -> Vec<u16> {
    let p = pipeline(ctx, words, 2, 0);
    let ba = ctx.buffer_from_slice(a, "a").unwrap();
    let mut bc = ctx.zeroed_buffer::<u16>(256, "c").unwrap();
    ctx.run(&[Dispatch { pipeline: &p, buffers: &[&ba, &bc], images: &[], push_constants: &[], groups: [1, 1, 1] }]).unwrap();
    ctx.read_buffer(&mut bc).unwrap()
}

/// The NV square kernel as glslang writes it (Vulkan memory model) and in the GLSL450 memory
/// model, which SPV_NV_cooperative_matrix allows and the KHR matrices it becomes do not.
#[test]
fn nv_kernel_runs_through_khr_native_and_emulated() {
    let vulkan = common::assembled("nv_square_f16");
    let text = std::fs::read_to_string(format!("{}/tests/kernels/nv_square_f16.spvasm", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let glsl450 = text.replace("OpCapability VulkanMemoryModel\n", "").replace("OpMemoryModel Logical Vulkan", "OpMemoryModel Logical GLSL450");
    let glsl450 = tools::assemble(&glsl450, "vulkan1.3").unwrap();
    for ctx in common::contexts() {
        for ((target, expect_emulated), (model, input)) in targets(&ctx).into_iter().flat_map(|t| [(t.clone(), ("Vulkan", &vulkan)), (t, ("GLSL450", &glsl450))]) {
            let (words, report) = translate(input, &target).unwrap_or_else(|e| panic!("{model} for {}: {e}", target.name));
            tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{model} for {}: {e}", target.name));
            let what = format!("{} ({}, {model} memory model)", ctx.caps().name, mode(&report, expect_emulated));
            let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
            let a: Vec<f32> = (0..256).map(|_| (rng.random_range(-8i32..8) as f32) / 4.0).collect();
            let bits: Vec<u16> = a.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect();
            let got = run_square(&ctx, &words, &bits);
            for i in 0..16 {
                for j in 0..16 {
                    // Multiples of 1/16 below 64: exact in f16.
                    let want: f32 = (0..16).map(|k| a[i * 16 + k] * a[k * 16 + j]).sum::<f32>() + 1.0;
                    assert_eq!(half::f16::from_bits(got[i * 16 + j]).to_f32(), want, "{what}: C[{i}][{j}]");
                }
            }
            ctx.check_validation().unwrap();
        }
    }
}

/// NV matrices through functions (`nv_functions`): loaders returning A and B fragments, a
/// multiply-accumulate helper taking the accumulator `inout`, an epilogue returning one; NV ->
/// KHR gives each function the KHR types of the Uses its values take.
#[test]
fn nv_matrices_through_functions_match_the_reference() {
    let k = 48usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(29);
    let mut value = || (rng.random_range(-8i32..8) as f32) / 8.0;
    let a: Vec<f32> = (0..16 * k).map(|_| value()).collect();
    let b: Vec<f32> = (0..k * 16).map(|_| value()).collect();
    let c: Vec<f32> = (0..256).map(|_| value()).collect();
    let h = |v: &[f32]| -> Vec<u16> { v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect() };
    for ctx in common::contexts() {
        for (target, expect_emulated) in targets(&ctx) {
            let (words, mode) = kernel_for("nv_functions", &target, expect_emulated);
            let what = format!("{} ({mode})", ctx.caps().name);
            let p = pipeline(&ctx, &words, 3, 4);
            let ba = ctx.buffer_from_slice(&h(&a), "a").unwrap();
            let bb = ctx.buffer_from_slice(&h(&b), "b").unwrap();
            let mut bc = ctx.buffer_from_slice(&c, "c").unwrap();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bc], images: &[], push_constants: &(k as u32).to_le_bytes(), groups: [1, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bc).unwrap();
            for i in 0..16 {
                for j in 0..16 {
                    // Multiples of 1/64 below 64, halved: exact in f32.
                    let want = 0.5 * (0..k).map(|p| a[i * k + p] * b[p * 16 + j]).sum::<f32>() + c[i * 16 + j];
                    assert_eq!(got[i * 16 + j], want, "{what}: C[{i}][{j}]");
                }
            }
            ctx.check_validation().unwrap();
        }
    }
}

/// A GEMM tile loop whose operands are all behind buffer references: on SwiftShader the emulated
/// loads and stores go through PhysicalStorageBuffer pointers to f16 data held in words.
#[test]
fn buffer_reference_gemm_runs_native_and_emulated() {
    let (m, n, k) = (32usize, 48usize, 64usize);
    // Strides in elements, each a multiple of 16 bytes as native loads want.
    let (lda, ldb, ldc, ldh) = (k + 8, k + 16, n + 4, m + 8);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(21);
    let mut value = || (rng.random_range(-8i32..8) as f32) / 8.0;
    let a: Vec<f32> = (0..m * lda).map(|_| value()).collect();
    let b: Vec<f32> = (0..n * ldb).map(|_| value()).collect();
    let c: Vec<f32> = (0..m * ldc).map(|_| value()).collect();
    let h = |v: &[f32]| -> Vec<u16> { v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect() };
    for ctx in common::contexts() {
        if !ctx.caps().buffer_device_address {
            eprintln!("{}: no bufferDeviceAddress, skipped", ctx.caps().name);
            continue;
        }
        for (target, expect_emulated) in targets(&ctx) {
            let (words, mode) = kernel_for("nv_psb_f16", &target, expect_emulated);
            let what = format!("{} ({mode})", ctx.caps().name);
            let p = pipeline(&ctx, &words, 0, 52);
            let ba = ctx.buffer_from_slice(&h(&a), "a").unwrap();
            let bb = ctx.buffer_from_slice(&h(&b), "b").unwrap();
            let mut bc = ctx.buffer_from_slice(&c, "c").unwrap();
            let mut bh = ctx.buffer_from_slice(&vec![0x7e00u16; n * ldh], "h").unwrap();
            let mut push: Vec<u8> = [&ba, &bb, &bc, &bh].iter().flat_map(|b| b.device_address().unwrap().to_le_bytes()).collect();
            push.extend([lda, ldb, ldc, ldh, k].iter().flat_map(|v| (*v as u32).to_le_bytes()));
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[], images: &[], push_constants: &push, groups: [(n / 16) as u32, (m / 16) as u32, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got_c: Vec<f32> = ctx.read_buffer(&mut bc).unwrap();
            let got_h: Vec<u16> = ctx.read_buffer(&mut bh).unwrap();
            for i in 0..m {
                for j in 0..ldc {
                    let want = if j < n { (0..k).map(|p| a[i * lda + p] * b[j * ldb + p]).sum::<f32>() + c[i * ldc + j] } else { c[i * ldc + j] };
                    // Multiples of 1/64 below 64: exact in f32.
                    assert_eq!(got_c[i * ldc + j], want, "{what}: C[{i}][{j}]");
                }
            }
            for j in 0..n {
                for i in 0..ldh {
                    // Column j of H is C's column j rounded to f16; the padding rows stay NaN.
                    let want = if i < m { half::f16::from_f32(got_c[i * ldc + j]).to_bits() } else { 0x7e00 };
                    assert_eq!(got_h[j * ldh + i], want, "{what}: H[{i}][{j}]");
                }
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: {m}x{n}x{k} through buffer references matches");
        }
    }
}

/// The NV square kernel retyped to bf16 (as the matmul API retypes its f16 GEMM): on devices
/// without VK_KHR_shader_bfloat16 the emulated matrices hold bf16 in f32, rounded after each
/// operation. Operands in {-1, -1/2, 0, 1/2, 1}: every partial sum of the product is exact in
/// bf16.
#[test]
fn bf16_matrices_run_emulated_and_widened() {
    let input = common::assembled("nv_square_f16");
    for ctx in common::contexts() {
        let mut target = ctx.caps().clone();
        target.cooperative_matrix.clear();
        target.shader_bfloat16 = false;
        let (words, report) = matbridge_translator::translate_with(&input, &target, &[matbridge_translator::Request::RetypeFloat16ToBFloat16]).unwrap_or_else(|e| panic!("{}: {e}", target.name));
        assert!(report.passes.iter().any(|p| p.name == "legalize-narrow-types" && p.changed), "{report:?}");
        tools::validate(&words, "vulkan1.3").unwrap();
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let a: Vec<f32> = (0..256).map(|_| (rng.random_range(-2i32..=2) as f32) / 2.0).collect();
        let bits: Vec<u16> = a.iter().map(|x| half::bf16::from_f32(*x).to_bits()).collect();
        let got = run_square(&ctx, &words, &bits);
        for i in 0..16 {
            for j in 0..16 {
                // The kernel's f16 constant 1.0 keeps its bits (0x3c00, 2^-7 in bf16); the
                // product is exact, the addition rounds.
                let sum: f32 = (0..16).map(|k| a[i * 16 + k] * a[k * 16 + j]).sum();
                let want = half::bf16::from_f32(sum + half::bf16::from_bits(0x3c00).to_f32());
                assert_eq!(got[i * 16 + j], want.to_bits(), "{}: C[{i}][{j}] = {}, expected {want}", ctx.caps().name, half::bf16::from_bits(got[i * 16 + j]));
            }
        }
        ctx.check_validation().unwrap();
    }
}

/// Shapes no device lists: tiled onto listed shapes where the device has cooperative matrices
/// (grids of 16x16x16 or 16x8x16 tiles on the H100, with chains of MulAdds over k), padded with
/// zeros up to shapes listed ones divide where none does (8x8x8 onto 16x8x8; 24x40x24 and
/// 20x12x20 onto grids of 16x8x8), emulated where the device has none (48x48x48 emulated is
/// long enough to loop over K); exact against the CPU. The shifted kernel adds one to A and B
/// before the product, so that padded operands hold ones in their padding until they are masked,
/// and gives its strides as 8-, 16- and 32-bit integers of either signedness.
#[test]
fn unlisted_shapes_are_tiled_padded_or_emulated() {
    for (kernel, shift) in [("coop_tiles", 0.0f32), ("coop_shifted", 1.0)] {
        let input = common::assembled(kernel);
        unlisted_shapes(&input, kernel, shift);
    }
}

fn unlisted_shapes(input: &[u32], kernel: &str, shift: f32) {
    for ctx in common::contexts() {
        for (target, _) in targets(&ctx) {
            let shapes: &[(usize, usize, usize)] =
                if shift == 0.0 { &[(32, 32, 16), (32, 16, 32), (16, 24, 16), (48, 48, 48), (8, 8, 8), (24, 40, 24), (20, 12, 20)] } else { &[(32, 16, 32), (8, 8, 8), (20, 12, 20)] };
            for &(m, n, k) in shapes {
                let values = [(0, ctx.caps().subgroup_size), (1, m as u32), (2, n as u32), (3, k as u32)];
                let (words, report) = matbridge_translator::translate_specialized(input, &target, &values).unwrap_or_else(|e| panic!("{kernel} for {} {m}x{n}x{k}: {e}", target.name));
                let changed = |name: &str| report.passes.iter().any(|p| p.name == name && p.changed);
                let (padded, tiled, emulated) = (changed("pad-cooperative-matrix"), changed("tile-cooperative-matrix"), changed("emulate-cooperative-matrix"));
                if target.has_cooperative_matrix() {
                    // Shapes the listed f16*f16+f32->f32 ones divide (the H100's 16x16x16, 16x8x16
                    // and 16x8x8; Mesa 26's 8x8x8) tile, the others are padded (and tiled where the
                    // padded shape is a grid).
                    use matbridge_translator::profile::{ComponentType as T, MatrixScope};
                    let divides = target
                        .cooperative_matrix
                        .iter()
                        .filter(|r| r.scope == MatrixScope::Subgroup && (r.a, r.b, r.c, r.result) == (T::F16, T::F16, T::F32, T::F32) && !r.saturating)
                        .any(|r| m % r.m as usize == 0 && n % r.n as usize == 0 && k % r.k as usize == 0);
                    assert_eq!(padded, !divides, "{kernel} for {} {m}x{n}x{k}: {report:?}", target.name);
                    assert!(!emulated, "{kernel} for {} {m}x{n}x{k}: {report:?}", target.name);
                } else {
                    assert!(emulated && !tiled && !padded, "{kernel} for {} {m}x{n}x{k}: {report:?}", target.name);
                }
                let how = match (padded, tiled) {
                    (true, true) => "padded, tiled",
                    (true, false) => "padded",
                    (false, true) => "tiled",
                    _ if emulated => "emulated",
                    _ => "native",
                };
                let what = format!("{kernel}: {} ({how}) {m}x{n}x{k}", ctx.caps().name);
                tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{what}: {e}"));
                let mut rng = rand::rngs::SmallRng::seed_from_u64((m * n * k) as u64);
                let mut value = || (rng.random_range(-16i32..16) as f32) / 8.0;
                let a: Vec<f32> = (0..m * k).map(|_| value()).collect();
                // B column-major: column j at j * k.
                let b: Vec<f32> = (0..k * n).map(|_| value()).collect();
                let c: Vec<f32> = (0..m * n).map(|_| value()).collect();
                let h = |v: &[f32]| -> Vec<u16> { v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect() };
                let spec: Vec<matbridge_runtime::SpecConstant> = values.iter().map(|(id, v)| matbridge_runtime::SpecConstant::u32(*id, *v)).collect();
                let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 4, spec_constants: &spec, label: kernel, ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
                let ba = ctx.buffer_from_slice(&h(&a), "a").unwrap();
                let bb = ctx.buffer_from_slice(&h(&b), "b").unwrap();
                let bc = ctx.buffer_from_slice(&c, "c").unwrap();
                // Guard elements after E: a padded store must write the matrix only.
                let mut be = ctx.buffer_from_slice(&vec![-7.0f32; m * n + 64], "e").unwrap();
                // Mesa 26 lavapipe compiles 216 native 8x8x8 MulAdds (48x48x48 tiled) for minutes.
                ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bc, &be], images: &[], push_constants: &[], groups: [1, 1, 1] }], 1, FIRST_DISPATCH)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let got: Vec<f32> = ctx.read_buffer(&mut be).unwrap();
                assert!(got[m * n..].iter().all(|g| *g == -7.0), "{what}: a store went past E");
                for i in 0..m {
                    for j in 0..n {
                        // Multiples of 1/64 below 256: exact in f32.
                        let want = 0.5 * ((0..k).map(|p| (a[i * k + p] + shift) * (b[j * k + p] + shift)).sum::<f32>() + c[i * n + j]);
                        assert_eq!(got[i * n + j], want, "{what}: E[{i}][{j}]");
                    }
                }
                ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
                eprintln!("{what}: matches");
            }
        }
    }
}

/// The runtime translates a module the device cannot run as it is, at pipeline creation, with
/// the pipeline's specialization constants: one untranslated kernel, three shapes.
#[test]
fn pipelines_translate_untranslated_modules_with_their_specialization() {
    for ctx in common::contexts() {
        let input = common::assembled("coop_spec_shape");
        for n in [8usize, 24, 32] {
            let spec = [matbridge_runtime::SpecConstant::u32(0, ctx.caps().subgroup_size), matbridge_runtime::SpecConstant::u32(1, n as u32)];
            let p = ctx.create_pipeline(&PipelineDesc { spirv: &input, bindings: 1, spec_constants: &spec, label: "coop_spec_shape", ..Default::default() }).unwrap();
            let mut rng = rand::rngs::SmallRng::seed_from_u64(n as u64);
            // A, B, then room for C.
            let mut data: Vec<f32> = (0..64 + 8 * n).map(|_| (rng.random_range(-8i32..8) as f32) / 4.0).collect();
            data.resize(64 + 16 * n, 0.0);
            let mut buf = ctx.buffer_from_slice(&data, "buf").unwrap();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&buf], images: &[], push_constants: &[], groups: [1, 1, 1] }]).unwrap();
            let got: Vec<f32> = ctx.read_buffer(&mut buf).unwrap();
            for i in 0..8 {
                for j in 0..n {
                    let want: f32 = (0..8).map(|k| data[i * 8 + k] * data[64 + k * n + j]).sum();
                    assert_eq!(got[64 + 8 * n + i * n + j], want, "{} N={n}: C[{i}][{j}]", ctx.caps().name);
                }
            }
        }
        ctx.check_validation().unwrap();
    }
}

/// Runs the register-tiled GEMM at m x n x k (multiples of the tile) and checks it exactly
/// (operands are multiples of 1/8 below 2: every product and sum is exact in f32).
fn run_tiled(ctx: &Context, target: &DeviceCaps, expect_emulated: Option<bool>, elem: &str, frag: u32, per_subgroup: (u32, u32), (m, n, k): (usize, usize, usize)) {
    let sg = ctx.caps().subgroup_size;
    let input = common::wgsl("coop_gemm_tiled", &tiled_source(elem, frag, per_subgroup, sg));
    let (words, report) = translate(&input, target).unwrap_or_else(|e| panic!("{} {elem}: {e}", target.name));
    tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{} {elem}: {e}", target.name));
    let what = format!("{} ({}) tiled {elem} {frag}x{frag} fragments {per_subgroup:?} per sub-group, {m}x{n}x{k}", ctx.caps().name, mode(&report, expect_emulated));
    eprintln!("{what}");
    let mut rng = rand::rngs::SmallRng::seed_from_u64(m as u64);
    let mut value = || (rng.random_range(-16i32..16) as f32) / 8.0;
    let a: Vec<f32> = (0..m * k).map(|_| value()).collect();
    let b: Vec<f32> = (0..k * n).map(|_| value()).collect();
    let bytes = |v: &[f32]| -> Vec<u8> {
        match elem {
            "f16" => v.iter().flat_map(|x| half::f16::from_f32(*x).to_bits().to_le_bytes()).collect(),
            _ => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    };
    let started = std::time::Instant::now();
    let pipeline = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 3, push_constant_bytes: 12, label: "coop_gemm_tiled", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
    eprintln!("  pipeline created in {:.2} s", started.elapsed().as_secs_f64());
    let ba = ctx.buffer_from_slice(&bytes(&a), "a").unwrap();
    let bb = ctx.buffer_from_slice(&bytes(&b), "b").unwrap();
    let mut bc = ctx.zeroed_buffer::<f32>(m * n, "c").unwrap();
    let push: Vec<u8> = [m as u32, n as u32, k as u32].iter().flat_map(|v| v.to_le_bytes()).collect();
    let (bm, bn) = (2 * per_subgroup.0 * frag, 2 * per_subgroup.1 * frag);
    let groups = [n as u32 / bn, m as u32 / bm, 1];
    ctx.run_with_timeout(&[Dispatch { pipeline: &pipeline, buffers: &[&ba, &bb, &bc], images: &[], push_constants: &push, groups }], 1, FIRST_DISPATCH).unwrap_or_else(|e| panic!("{what}: {e}"));
    eprintln!("  ran in {:.2} s", started.elapsed().as_secs_f64());
    let got: Vec<f32> = ctx.read_buffer(&mut bc).unwrap();
    for i in 0..m {
        for j in 0..n {
            let want: f32 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
            assert_eq!(got[i * n + j], want, "{what}: c[{i}][{j}]");
        }
    }
    ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
}

#[test]
fn register_tiled_gemm_matches_the_reference() {
    for ctx in common::contexts() {
        for (target, expect_emulated) in targets(&ctx) {
            // (lavapipe's LLVM takes over ten minutes, with a cold shader cache, to compile the
            // emulated 8x8 kernel with 4x4 fragments per sub-group; the benchmark times it.)
            run_tiled(&ctx, &target, expect_emulated, "f32", 16, (2, 1), (128, 64, 96));
        }
    }
}

/// Every test GEMM translates for every built-in profile into a module `spirv-val` accepts
/// (native on the H100 where it lists the fragment shape; f16 legalized on SwiftShader).
#[test]
fn test_gemms_translate_and_validate_for_every_profile() {
    if tools::find("spirv-val").is_none() {
        assert!(!common::in_ci(), "CI: SPIRV-Tools are not installed");
        return;
    }
    for profile in matbridge_translator::profile::BUILTIN_PROFILES {
        let caps = DeviceCaps::builtin(profile).unwrap();
        for (elem, frag) in [("f16", 16), ("f16", 8), ("f32", 16)] {
            let staged = common::wgsl("coop_gemm_staged", &gemm_source(&GEMM.replace("ELEM", elem), frag));
            let tiled = common::wgsl("coop_gemm_tiled", &tiled_source(elem, frag, (2, 2), caps.subgroup_size));
            for input in [staged, tiled] {
                let (words, _) = translate(&input, &caps).unwrap_or_else(|e| panic!("{profile} {elem} {frag}: {e}"));
                tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{profile} {elem} {frag}: {e}"));
            }
        }
        // Fragments through buffer references: padded or tiled where the shape is not listed.
        for f in [16, 8, 4].into_iter().filter(|_| caps.buffer_device_address) {
            let spec = [(0, f), (1, f), (2, f), (3, caps.subgroup_size), (4, 2 * f), (5, 2 * f)];
            let (words, _) = matbridge_translator::translate_specialized(&common::assembled("khr_tiled_refs"), &caps, &spec).unwrap_or_else(|e| panic!("{profile} khr_tiled_refs {f}: {e}"));
            tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{profile} khr_tiled_refs {f}: {e}"));
        }
    }
}

/// llama.cpp's cooperative-matrix `mul_mm` as glslang writes it (`khr_mul_mm`), specialized the
/// way llama.cpp does it for a device (fragment shape, warp size, tile sizes as specialization
/// constants), translated for each target and run on odd sizes that take all three store paths:
/// the direct store, the staged one (odd stride of D) and the guarded edges.
#[test]
fn llama_style_mul_mm_matches_the_reference() {
    let input = common::assembled("khr_mul_mm");
    for ctx in common::contexts() {
        let sg = ctx.caps().subgroup_size;
        for (target, expect_emulated) in targets(&ctx) {
            // 16x16x16 and 8x8x8 fragments: native, padded (8x8x8 on the H100) or emulated.
            // Four warps of 2x2 fragments each in a 64x64 (32x32 for 8x8 fragments) block, and
            // of 4x4 in llama.cpp's large 128x128 block with BK = 32, whose 20 KiB of f16
            // staging fits SwiftShader's 32 KiB only packed.
            for (frag, wm, bk) in [(16, 32, 16), (8, 16, 16), (16, 64, 32)] {
                let spec: Vec<(u32, u32)> = vec![(0, 4 * sg), (1, 2 * wm), (2, 2 * wm), (3, bk), (4, wm), (5, wm), (6, frag), (7, frag), (8, frag), (9, sg)];
                let (words, report) = matbridge_translator::translate_specialized(&input, &target, &spec).unwrap_or_else(|e| panic!("{} {frag}: {e}", target.name));
                tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{} {frag}: {e}", target.name));
                let runtime_spec: Vec<_> = spec.iter().map(|&(id, v)| matbridge_runtime::SpecConstant::u32(id, v)).collect();
                let p = ctx
                    .create_pipeline(&PipelineDesc { spirv: &words, bindings: 3, push_constant_bytes: 28, spec_constants: &runtime_spec, label: "khr_mul_mm", ..Default::default() })
                    .unwrap_or_else(|e| panic!("{} {frag}: {e}", target.name));
                for (m, n, k, pad_d) in [(2 * 2 * wm as usize, 2 * wm as usize, 48usize, 4usize), (2 * wm as usize + 5, 2 * wm as usize - 3, 37, 1)] {
                    let what = format!("{} ({}) {frag}x{frag}x{frag} fragments, {}x{} blocks, {m}x{n}x{k}, D stride {}", ctx.caps().name, mode(&report, expect_emulated), 2 * wm, 2 * wm, m + pad_d);
                    let (sa, sb, sd) = (k + 3, k + 1, m + pad_d);
                    let mut rng = rand::rngs::SmallRng::seed_from_u64((m * n * k) as u64);
                    let a: Vec<f32> = (0..m * sa).map(|_| (rng.random_range(-16i32..16) as f32) / 8.0).collect();
                    let b: Vec<f32> = (0..n * sb).map(|_| (rng.random_range(-16i32..16) as f32) / 8.0).collect();
                    let alpha = 0.5f32;
                    let a16: Vec<u16> = a.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect();
                    let ba = ctx.buffer_from_slice(&a16, "a").unwrap();
                    let bb = ctx.buffer_from_slice(&b, "b").unwrap();
                    let mut bd = ctx.buffer_from_slice(&vec![f32::NAN; n * sd], "d").unwrap();
                    let mut push: Vec<u8> = [m, n, k, sa, sb, sd].iter().flat_map(|v| (*v as u32).to_le_bytes()).collect();
                    push.extend(alpha.to_le_bytes());
                    let block = 2 * wm as usize;
                    let groups = [(m.div_ceil(block) * n.div_ceil(block)) as u32, 1, 1];
                    ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bd], images: &[], push_constants: &push, groups }], 1, FIRST_DISPATCH)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let got: Vec<f32> = ctx.read_buffer(&mut bd).unwrap();
                    for j in 0..n {
                        for i in 0..sd {
                            let g = got[j * sd + i];
                            if i >= m {
                                assert!(g.is_nan(), "{what}: D[{j}][{i}] (padding) = {g}");
                                continue;
                            }
                            // Multiples of 1/64 below 2^10: exact in f32.
                            let want = alpha * (0..k).map(|p| a[i * sa + p] * b[j * sb + p]).sum::<f32>();
                            assert_eq!(g, want, "{what}: D[{j}][{i}]");
                        }
                    }
                    eprintln!("{what}: matches");
                }
                ctx.check_validation().unwrap_or_else(|e| panic!("{} {frag}: {e}", target.name));
            }
        }
    }
}

/// `khr_packed_io`: f16 matrices loaded through `uvec4` and `uint`, and f16 and int8 results
/// stored through `uint` and `uvec2` words in both layouts (several lanes' components in one
/// word), checked bit for bit, with the words' padding around the matrices left as it was.
#[test]
fn packed_loads_and_stores_match_the_reference() {
    let input = common::assembled("khr_packed_io");
    for ctx in common::contexts() {
        let sg = ctx.caps().subgroup_size;
        for (target, expect_emulated) in targets(&ctx) {
            let frags: Vec<u32> = if target.has_cooperative_matrix() { vec![16] } else { vec![16, 8] };
            for t in frags {
                let spec = [(0, sg), (1, t)];
                let (words, report) = matbridge_translator::translate_specialized(&input, &target, &spec).unwrap_or_else(|e| panic!("{} {t}: {e}", target.name));
                tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{} {t}: {e}", target.name));
                let what = format!("{} ({}) {t}x{t}", ctx.caps().name, mode(&report, expect_emulated));
                let runtime_spec: Vec<_> = spec.iter().map(|&(id, v)| matbridge_runtime::SpecConstant::u32(id, v)).collect();
                let p = ctx
                    .create_pipeline(&PipelineDesc { spirv: &words, bindings: 6, push_constant_bytes: 24, spec_constants: &runtime_spec, label: "khr_packed_io", ..Default::default() })
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let t = t as usize;
                // Strides in words: A in uvec4 (8 halves), B in uint (2 halves), H rows in uint,
                // H columns in uvec2 (4 halves), Q in uint (4 bytes); each with padding.
                let (lda, ldb, ldhr, ldhc, ldqr, ldqc) = (t / 8 + 1, t / 2 + 1, t / 2 + 2, t / 4 + 1, t / 4 + 1, t / 4 + 2);
                let mut rng = rand::rngs::SmallRng::seed_from_u64(t as u64);
                let a: Vec<f32> = (0..t * lda * 8).map(|_| rng.random_range(-2i32..=2) as f32).collect();
                let b: Vec<f32> = (0..t * ldb * 2).map(|_| rng.random_range(-2i32..=2) as f32).collect();
                let h = |v: &[f32]| -> Vec<u16> { v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect() };
                let ba = ctx.buffer_from_slice(&h(&a), "a").unwrap();
                let bb = ctx.buffer_from_slice(&h(&b), "b").unwrap();
                let sizes = [t * ldhr * 4, t * ldhc * 8, t * ldqr * 4, t * ldqc * 4];
                let mut outs: Vec<_> = sizes.iter().map(|n| ctx.buffer_from_slice(&vec![0xabu8; *n], "out").unwrap()).collect();
                let push: Vec<u8> = [lda, ldb, ldhr, ldhc, ldqr, ldqc].iter().flat_map(|v| (*v as u32).to_le_bytes()).collect();
                let buffers = [&ba, &bb, &outs[0], &outs[1], &outs[2], &outs[3]];
                ctx.run(&[Dispatch { pipeline: &p, buffers: &buffers, images: &[], push_constants: &push, groups: [1, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
                // D[i][j] = sum_k A[i][k] B[k][j]; A row-major, B column-major (strides in halves).
                let d = |i: usize, j: usize| (0..t).map(|k| a[i * lda * 8 + k] * b[j * ldb * 2 + k]).sum::<f32>();
                let got: Vec<Vec<u8>> = outs.iter_mut().map(|o| ctx.read_buffer::<u8>(o).unwrap()).collect();
                let half_at = |bytes: &[u8], i: usize| u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]);
                // (buffer, bytes per element, stride in elements, column-major)
                for (k, (size, stride, column_major)) in [(2, ldhr * 2, false), (2, ldhc * 4, true), (1, ldqr * 4, false), (1, ldqc * 4, true)].into_iter().enumerate() {
                    for major in 0..t {
                        for minor in 0..stride {
                            let at = major * stride + minor;
                            let (i, j) = if column_major { (minor, major) } else { (major, minor) };
                            let g = if size == 2 { half_at(&got[k], at) as u32 } else { got[k][at] as u32 };
                            let want = if minor >= t {
                                if size == 2 {
                                    0xabab
                                } else {
                                    0xab
                                }
                            } else if size == 2 {
                                half::f16::from_f32(d(i, j)).to_bits() as u32
                            } else {
                                d(i, j) as i8 as u8 as u32
                            };
                            assert_eq!(g, want, "{what}: output {k}, element {at} (row {i}, column {j})");
                        }
                    }
                }
                ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
                eprintln!("{what}: packed loads and stores match");
            }
        }
    }
}

/// vk_cooperative_matrix_perf's shared-memory GEMM as glslang writes it (`khr_shmem_gemm`):
/// operand addresses in a uniform buffer, f16 tiles staged as `uvec4`, fragments loaded through
/// the `uvec4` arrays, B's layout a specialization constant (both values run), and
/// D = alpha * A * B + beta * C with alpha and beta specialization constants.
#[test]
fn shared_memory_gemm_with_references_matches_the_reference() {
    let input = common::assembled("khr_shmem_gemm");
    for ctx in common::contexts() {
        if !ctx.caps().buffer_device_address {
            eprintln!("{}: no bufferDeviceAddress, skipped", ctx.caps().name);
            continue;
        }
        let sg = ctx.caps().subgroup_size;
        for (target, expect_emulated) in targets(&ctx) {
            let f = if target.has_cooperative_matrix() { 16 } else { 8 };
            for b_col_major in [false, true] {
                let spec = ShmemGemm { f, subgroup: sg, b_col_major, in_place: false }.spec();
                let (words, report) = matbridge_translator::translate_specialized(&input, &target, &spec).unwrap_or_else(|e| panic!("{} {f}: {e}", target.name));
                tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{} {f}: {e}", target.name));
                let what = format!("{} ({}) {f}x{f}x{f} fragments, B {}", ctx.caps().name, mode(&report, expect_emulated), if b_col_major { "column-major" } else { "row-major" });
                ShmemGemm { f, subgroup: sg, b_col_major, in_place: false }.run(&ctx, &words, None, &what);
            }
        }
    }
}

/// The same GEMM written for sub-groups of 32 (four of them, its tiles picked by `SubgroupId`)
/// and created with that required size, untranslated: on lavapipe (8) and SwiftShader (4) the
/// runtime virtualizes the size (joined sub-groups, each physical one computing its logical
/// one's matrices, the first storing them) and emulates the matrices; on the H100 it runs as it
/// is. With D in place of C, at 32 and at 64 (joined on the H100 too): each tile of C is
/// loaded, scaled into the product and stored back where it was, which a physical sub-group
/// storing after another had would read back.
#[test]
fn shared_memory_gemm_at_a_required_subgroup_size_matches_the_reference() {
    let input = common::assembled("khr_shmem_gemm");
    for ctx in common::contexts() {
        if !ctx.caps().buffer_device_address {
            eprintln!("{}: no bufferDeviceAddress, skipped", ctx.caps().name);
            continue;
        }
        let f = if ctx.caps().has_cooperative_matrix() { 16 } else { 8 };
        for (subgroup, b_col_major, in_place) in [(32, false, false), (32, true, false), (32, false, true), (64, false, true)] {
            let place = if in_place { ", D in place of C" } else { "" };
            let what = format!("{} at sub-groups of {subgroup}, {f}x{f}x{f} fragments, B {}{place}", ctx.caps().name, if b_col_major { "column-major" } else { "row-major" });
            ShmemGemm { f, subgroup, b_col_major, in_place }.run(&ctx, &input, Some(subgroup), &what);
        }
    }
}

/// `khr_lane_staging`: a block-quantized linear layer written for sub-groups of 64 (staging loops
/// stepping by 64 from the sub-group invocation id, helper functions that read the weights, read
/// the sub-group id and size, and reduce a checksum over the sub-group), at a required size of
/// 64 on every device: joined from 8 on lavapipe, 4 on SwiftShader and 32 on the H100, its
/// matrices native or emulated, the helpers computing the logical values themselves and sharing
/// the entry point's exchanges. Translated for each profile at that size and checked with
/// spirv-val (the weight buffer and the sub-group id stay in the entry point's interface through
/// the rewrites); through the runtime, every output and checksum matches the CPU.
#[test]
fn lane_strided_staging_at_a_required_subgroup_size_matches_the_reference() {
    let input = common::assembled("khr_lane_staging");
    for target in [DeviceCaps::lavapipe(), DeviceCaps::swiftshader(), DeviceCaps::h100()] {
        let mut module = matbridge_translator::ir::Module::from_words(&input).unwrap();
        matbridge_translator::kernel::require_shader_subgroup_size(&mut module, "main", 64).unwrap();
        let (words, _) = translate(&module.to_words(), &target).unwrap_or_else(|e| panic!("{}: {e}", target.name));
        tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{}: {e}", target.name));
    }
    let (m, k, n) = (40usize, 96usize, 24usize);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(67);
    let x: Vec<f32> = (0..m * k).map(|_| rng.random_range(-8i32..=8) as f32 / 8.0).collect();
    // Per row of W, k / 32 blocks: an f16 power-of-two scale, then 32 int8 weights in byte pairs.
    let mut w: Vec<u16> = Vec::new();
    let mut weight = vec![0f32; n * k];
    for row in 0..n {
        for blk in 0..k / 32 {
            let scale = [0.125f32, 0.25, 0.0625][rng.random_range(0..3)];
            w.push(half::f16::from_f32(scale).to_bits());
            let q: Vec<i8> = (0..32).map(|_| rng.random()).collect();
            w.extend(q.chunks(2).map(|p| p[0] as u8 as u16 | (p[1] as u8 as u16) << 8));
            for (c, v) in q.iter().enumerate() {
                weight[row * k + blk * 32 + c] = *v as f32 * scale;
            }
        }
    }
    for ctx in common::contexts() {
        let what = format!("{} at sub-groups of 64", ctx.caps().name);
        let p = ctx
            .create_pipeline(&PipelineDesc { spirv: &input, bindings: 4, push_constant_bytes: 12, required_subgroup_size: Some(64), label: "khr_lane_staging", ..Default::default() })
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (tiles_m, tiles_n) = (m.div_ceil(16), n.div_ceil(16));
        let bx = ctx.buffer_from_slice(&x, "x").unwrap();
        let bw = ctx.buffer_from_slice(&w, "w").unwrap();
        let mut by = ctx.buffer_from_slice(&vec![f32::NAN; m * n], "y").unwrap();
        let mut bt = ctx.buffer_from_slice(&vec![u32::MAX; tiles_m * tiles_n], "tile sums").unwrap();
        let push: Vec<u8> = [m, k, n].iter().flat_map(|v| (*v as u32).to_le_bytes()).collect();
        let groups = [tiles_m as u32, tiles_n as u32, 1];
        ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&bx, &bw, &by, &bt], images: &[], push_constants: &push, groups }], 1, FIRST_DISPATCH).unwrap_or_else(|e| panic!("{what}: {e}"));
        let got: Vec<f32> = ctx.read_buffer(&mut by).unwrap();
        let mut sums = vec![0u32; tiles_m * tiles_n];
        for i in 0..m {
            for j in 0..n {
                // Multiples of 1/128 below 2^12 (the weights exact in f16): exact in f32 sums.
                let want: f32 = (0..k).map(|c| x[i * k + c] * weight[j * k + c]).sum();
                assert_eq!(got[i * n + j], want, "{what}: y[{i}][{j}]");
                sums[(j / 16) * tiles_m + i / 16] += (want.abs() * 128.0) as u32;
            }
        }
        let got_sums: Vec<u32> = ctx.read_buffer(&mut bt).unwrap();
        assert_eq!(got_sums, sums, "{what}: tile checksums");
        ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
        eprintln!("{what}: matches");
    }
}

/// One `khr_shmem_gemm` launch: f x f x f fragments, four sub-groups of `subgroup`; D in C's
/// buffer (and stride) when `in_place`.
struct ShmemGemm {
    f: u32,
    subgroup: u32,
    b_col_major: bool,
    in_place: bool,
}

impl ShmemGemm {
    const ALPHA: f32 = 0.5;
    const BETA: f32 = -1.0;

    /// (m, n, k) and the strides of A, B, C and D (padded).
    #[allow(clippy::type_complexity)] // (m, n, k) and four strides, as the callers destructure them
    fn sizes(&self) -> ((usize, usize, usize), (usize, usize, usize, usize)) {
        let (tile, fu) = (4 * self.f as usize, self.f as usize);
        let (m, n, k) = (2 * tile, 2 * tile, 4 * fu);
        ((m, n, k), (k + 8, if self.b_col_major { k + 8 } else { n + 8 }, n + 4, if self.in_place { n + 4 } else { n + 2 }))
    }

    fn spec(&self) -> Vec<(u32, u32)> {
        let f = self.f;
        let ((_, _, k), (lda, ldb, ldc, ldd)) = self.sizes();
        vec![
            (0, f),
            (1, f),
            (2, f),
            (3, 4 * f),
            (4, 4 * f),
            (5, 2 * f),
            (6, k as u32),
            (7, lda as u32),
            (8, ldb as u32),
            (9, ldc as u32),
            (10, ldd as u32),
            (11, Self::ALPHA.to_bits()),
            (12, Self::BETA.to_bits()),
            (13, self.b_col_major as u32),
            (14, 4 * self.subgroup),
        ]
    }

    /// Creates the pipeline from `words` (at `required` sub-groups), runs it and checks D.
    fn run(&self, ctx: &Context, words: &[u32], required: Option<u32>, what: &str) {
        let ((m, n, k), (lda, ldb, ldc, ldd)) = self.sizes();
        let b_col_major = self.b_col_major;
        let tile = 4 * self.f as usize;
        let runtime_spec: Vec<_> = self.spec().iter().map(|&(id, v)| matbridge_runtime::SpecConstant::u32(id, v)).collect();
        let p = ctx
            .create_pipeline(&PipelineDesc { spirv: words, bindings: 1, spec_constants: &runtime_spec, required_subgroup_size: required, label: "khr_shmem_gemm", ..Default::default() })
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut rng = rand::rngs::SmallRng::seed_from_u64(k as u64 + b_col_major as u64);
        let mut value = || (rng.random_range(-8i32..8) as f32) / 4.0;
        let a: Vec<f32> = (0..m * lda).map(|_| value()).collect();
        let b: Vec<f32> = (0..if b_col_major { n } else { k } * ldb).map(|_| value()).collect();
        let c: Vec<f32> = (0..m * ldc).map(|_| value()).collect();
        let h = |v: &[f32]| -> Vec<u16> { v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect() };
        let ba = ctx.buffer_from_slice(&h(&a), "a").unwrap();
        let bb = ctx.buffer_from_slice(&h(&b), "b").unwrap();
        let bc = ctx.buffer_from_slice(&c, "c").unwrap();
        let mut bd = ctx.buffer_from_slice(&if self.in_place { c.clone() } else { vec![f32::NAN; m * ldd] }, "d").unwrap();
        let params: Vec<u64> = [&ba, &bb, if self.in_place { &bd } else { &bc }, &bd].iter().map(|b| b.device_address().unwrap()).collect();
        let bp = ctx.buffer_from_slice(&params, "params").unwrap();
        ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&bp], images: &[], push_constants: &[], groups: [(n / tile) as u32, (m / tile) as u32, 1] }], 1, FIRST_DISPATCH)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let got: Vec<f32> = ctx.read_buffer(&mut bd).unwrap();
        for i in 0..m {
            for j in 0..ldd {
                let g = got[i * ldd + j];
                if j >= n {
                    let kept = if self.in_place { g == c[i * ldc + j] } else { g.is_nan() };
                    assert!(kept, "{what}: D[{i}][{j}] (padding) = {g}");
                    continue;
                }
                let bkj = |p: usize| if b_col_major { b[j * ldb + p] } else { b[p * ldb + j] };
                // Multiples of 1/16 below 2^9: exact in f32.
                let want = Self::ALPHA * (0..k).map(|p| a[i * lda + p] * bkj(p)).sum::<f32>() + Self::BETA * c[i * ldc + j];
                assert_eq!(g, want, "{what}: D[{i}][{j}]");
            }
        }
        ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
        eprintln!("{what}: matches");
    }
}

/// `khr_packed_pad`: f16 matrices of shapes the H100 does not list (8x8x8, 12x8x8, 16x8x12,
/// 24x24x24), read through `uvec4`, `uint` and `uvec2` words and stored through `uint` and
/// `uvec2` (both layouts) and, widened to f32, through `uvec4`: padded on the H100 (and tiled
/// where the padded shape is a grid), their staging copies unpacking and packing whole words;
/// emulated elsewhere. Checked bit for bit, with the words around the matrices left as they were.
#[test]
fn packed_words_through_padding_match_the_reference() {
    let input = common::assembled("khr_packed_pad");
    for ctx in common::contexts() {
        let sg = ctx.caps().subgroup_size;
        for (target, expect_emulated) in targets(&ctx) {
            for (m, n, k) in [(8usize, 8usize, 8usize), (12, 8, 8), (16, 8, 12), (24, 24, 24)] {
                let spec = [(0, sg), (1, m as u32), (2, n as u32), (3, k as u32)];
                let (words, report) = matbridge_translator::translate_specialized(&input, &target, &spec).unwrap_or_else(|e| panic!("{} {m}x{n}x{k}: {e}", target.name));
                tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{} {m}x{n}x{k}: {e}", target.name));
                let what = format!("{} ({}) {m}x{n}x{k}", ctx.caps().name, mode(&report, expect_emulated.or(Some(false))));
                let listed = target
                    .cooperative_matrix
                    .iter()
                    .any(|s| s.a == ComponentType::F16 && s.c == ComponentType::F16 && (m as u32).is_multiple_of(s.m) && (n as u32).is_multiple_of(s.n) && (k as u32).is_multiple_of(s.k));
                if target.has_cooperative_matrix() && !listed {
                    assert!(report.passes.iter().any(|p| p.name == "pad-cooperative-matrix" && p.changed), "{what}: {report:?}");
                }
                let p = specialized_pipeline(&ctx, &words, &spec, (6, 28), "khr_packed_pad");
                // Strides in words, each with room after the matrix: A in uvec4 (8 halves) from
                // word 1, B columns in uint (2 halves), C rows in uvec2 (4 halves); D rows in
                // uint, D columns in uvec2, F rows in uvec4 (4 floats).
                let offset_a = 1;
                let (lda, ldb, ldc) = (k.div_ceil(8) + 1, k.div_ceil(2) + 1, n.div_ceil(4) + 1);
                let (lddr, lddc, ldf) = (n / 2 + 1, m.div_ceil(4) + 1, n.div_ceil(4) + 1);
                let mut rng = rand::rngs::SmallRng::seed_from_u64((m * 10000 + n * 100 + k) as u64);
                let mut values = |count: usize, range: i32| -> Vec<f32> { (0..count).map(|_| rng.random_range(-range..=range) as f32).collect() };
                let a = values((offset_a + m * lda) * 8, 2);
                let b = values(n * ldb * 2, 2);
                let c = values(m * ldc * 4, 4);
                let h = |v: &[f32]| -> Vec<u16> { v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect() };
                let inputs = [&a, &b, &c].map(|v| ctx.buffer_from_slice(&h(v), "in").unwrap());
                let sizes = [m * lddr * 4, n * lddc * 8, m * ldf * 16];
                let mut outs: Vec<_> = sizes.iter().map(|n| ctx.buffer_from_slice(&vec![0xabu8; *n], "out").unwrap()).collect();
                let push: Vec<u8> = [offset_a, lda, ldb, ldc, lddr, lddc, ldf].iter().flat_map(|v| (*v as u32).to_le_bytes()).collect();
                let buffers = [&inputs[0], &inputs[1], &inputs[2], &outs[0], &outs[1], &outs[2]];
                ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &buffers, images: &[], push_constants: &push, groups: [1, 1, 1] }], 1, FIRST_DISPATCH)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                // Small integers: every sum is exact in f16.
                let d = |i: usize, j: usize| (0..k).map(|p| a[offset_a * 8 + i * lda * 8 + p] * b[j * ldb * 2 + p]).sum::<f32>() + c[i * ldc * 4 + j];
                let got: Vec<Vec<u8>> = outs.iter_mut().map(|o| ctx.read_buffer::<u8>(o).unwrap()).collect();
                // (buffer, bytes per element, stride in elements, column-major)
                for (o, (size, stride, column_major)) in [(2, lddr * 2, false), (2, lddc * 4, true), (4, ldf * 4, false)].into_iter().enumerate() {
                    let (lines, line) = if column_major { (n, m) } else { (m, n) };
                    for major in 0..lines {
                        for minor in 0..stride {
                            let at = (major * stride + minor) * size;
                            let (i, j) = if column_major { (minor, major) } else { (major, minor) };
                            let g = got[o][at..at + size].iter().rev().fold(0u32, |w, byte| w << 8 | u32::from(*byte));
                            let want = match (minor < line, size) {
                                (false, 2) => 0xabab,
                                (false, _) => 0xabab_abab,
                                (true, 2) => u32::from(half::f16::from_f32(d(i, j)).to_bits()),
                                (true, _) => d(i, j).to_bits(),
                            };
                            assert_eq!(g, want, "{what}: output {o}, element {} (row {i}, column {j})", major * stride + minor);
                        }
                    }
                }
                ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
                eprintln!("{what}: matches");
            }
        }
    }
}

/// A matrix type that no listed shape has in its Use (the s8 16x16 accumulator `khr_packed_io`
/// converts to, the H100's s8 rows being 16x32 and 32x16; the f32 A matrices of
/// `khr_use_a_elementwise`, f32 being listed for accumulators only) makes the module emulated,
/// as Vulkan does not accept it; llama.cpp's mul_mm, whose matrices the H100 lists, stays native.
#[test]
fn matrix_types_no_listed_shape_has_are_emulated() {
    if tools::find("spirv-as").is_none() {
        assert!(!common::in_ci(), "CI: SPIRV-Tools are not installed");
        return;
    }
    let h100 = DeviceCaps::builtin("h100").unwrap();
    let emulated = |name: &str, spec: &[(u32, u32)]| {
        let (words, report) = matbridge_translator::translate_specialized(&common::assembled(name), &h100, spec).unwrap();
        tools::validate(&words, "vulkan1.3").unwrap();
        report.passes.iter().find(|p| p.name == "emulate-cooperative-matrix" && p.changed).map(|p| p.notes.join("; "))
    };
    let why = emulated("khr_packed_io", &[(0, 32), (1, 16)]).expect("khr_packed_io emulated on the H100");
    assert!(why.contains("a 16x16 cooperative matrix of s8, Use accumulator (no listed shape has one)"), "{why}");
    // A listed type in another Use: the H100 lists f32 16x16 accumulators, no f32 A matrices.
    let why = emulated("khr_use_a_elementwise", &[(0, 32)]).expect("khr_use_a_elementwise emulated on the H100");
    assert!(why.contains("a 16x16 cooperative matrix of f32, Use A (no listed shape has one)"), "{why}");
    assert_eq!(emulated("khr_mul_mm", &[(0, 128), (9, 32)]), None);
    // A saturating MulAdd needs a row that saturates (the H100 lists none): not padded onto the
    // s8 16x16x32 row as the same MulAdd without saturation is.
    let text = std::fs::read_to_string(format!("{}/tests/kernels/khr_int8_reinterpreted.spvasm", env!("CARGO_MANIFEST_DIR"))).unwrap();
    for (saturating, input) in [(false, text.clone()), (true, text.replace("MatrixResultSignedComponentsKHR", "MatrixResultSignedComponentsKHR|SaturatingAccumulationKHR"))] {
        let (words, report) = translate(&tools::assemble(&input, "vulkan1.3").unwrap(), &h100).unwrap();
        tools::validate(&words, "vulkan1.3").unwrap();
        let why = report.passes.iter().find(|p| p.name == "emulate-cooperative-matrix" && p.changed).map(|p| p.notes.join("; "));
        match saturating {
            false => assert_eq!(why, None),
            true => assert!(why.as_deref().is_some_and(|w| w.contains("16x16x16 s8*s8+s32->s32 saturating")), "{why:?}"),
        }
    }
}

/// A Slang kernel (`slang_coop_bytes`, `linalg.CoopMat` on byte-address buffers, with Slang's
/// `Aligned 16` memory operands): native on the H100, emulated everywhere (f16 widened on
/// SwiftShader), checked bit for bit with the padding of the f16 columns untouched.
#[test]
fn slang_kernel_runs_native_and_emulated() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(31);
    let a: Vec<f32> = (0..16 * 32).map(|_| rng.random_range(-4i32..4) as f32 / 2.0).collect();
    let b: Vec<f32> = (0..16 * 32).map(|_| rng.random_range(-4i32..4) as f32 / 2.0).collect();
    let h = |v: &[f32]| -> Vec<u16> { v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect() };
    for ctx in common::contexts() {
        if ctx.caps().subgroup_size > 32 {
            continue;
        }
        for (target, expect_emulated) in targets(&ctx) {
            let (words, mode) = kernel_for("slang_coop_bytes", &target, expect_emulated);
            let what = format!("{} ({mode})", ctx.caps().name);
            let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 4, label: "slang_coop_bytes", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
            let ba = ctx.buffer_from_slice(&h(&a), "a").unwrap();
            let bb = ctx.buffer_from_slice(&h(&b), "b").unwrap();
            let mut bd = ctx.buffer_from_slice(&vec![0x7e00u16; 16 * 32], "d").unwrap();
            let mut bf = ctx.zeroed_buffer::<f32>(16 * 16, "f").unwrap();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bd, &bf], images: &[], push_constants: &[], groups: [1, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let f: Vec<f32> = ctx.read_buffer(&mut bf).unwrap();
            let d: Vec<u16> = ctx.read_buffer(&mut bd).unwrap();
            for i in 0..16 {
                for j in 0..16 {
                    // Multiples of 1/4 below 2^7: exact in f32 and f16.
                    let want: f32 = (0..16).map(|k| a[i * 32 + k] * b[j * 32 + k]).sum();
                    assert_eq!(f[i * 16 + j], want, "{what}: F[{i}][{j}]");
                    assert_eq!(d[j * 32 + i], half::f16::from_f32(want).to_bits(), "{what}: D[{i}][{j}]");
                    assert_eq!(d[j * 32 + 16 + i], 0x7e00, "{what}: padding of D's column {j}");
                }
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: the Slang kernel matches");
        }
    }
}

/// `khr_shmem_gemm` selects B's layout with a specialization constant: translated for a device
/// that lists only 16x8x16 f16 shapes, its 16x16 fragments tile (the layout frozen to the
/// specialized value, both ways) instead of falling back to emulation, and validate.
#[test]
fn specialization_constant_layouts_tile() {
    if tools::find("spirv-as").is_none() {
        assert!(!common::in_ci(), "CI: SPIRV-Tools are not installed");
        return;
    }
    let mut narrow = DeviceCaps::builtin("h100").unwrap();
    narrow.cooperative_matrix.retain(|r| (r.m, r.n, r.k) == (16, 8, 16));
    for b_col_major in [0, 1] {
        let spec = [(0, 16), (1, 16), (2, 16), (3, 64), (4, 64), (5, 32), (6, 64), (13, b_col_major), (14, 128)];
        let (words, report) = matbridge_translator::translate_specialized(&common::assembled("khr_shmem_gemm"), &narrow, &spec).unwrap();
        tools::validate(&words, "vulkan1.3").unwrap();
        let changed = |name: &str| report.passes.iter().any(|p| p.name == name && p.changed);
        assert!(changed("tile-cooperative-matrix") && !changed("emulate-cooperative-matrix"), "B column-major {b_col_major}: {report:?}");
    }
}

/// `khr_attention` (llama.cpp's coopmat1 flash-attention forms: fragments loaded from f16vec4
/// workgroup arrays in both layouts, an f32 accumulator stored for scalar softmax code, f16
/// accumulators converted to f32): native on the H100, emulated everywhere, against an f64
/// softmax attention over 100 keys (not a multiple of the 64-key block).
#[test]
fn attention_kernel_matches_the_reference() {
    let input = common::assembled("khr_attention");
    let (d, kv, rows, scale) = (32usize, 100usize, 32usize, 0.125f32);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(47);
    let r16 = |x: f32| half::f16::from_f32(x).to_f32();
    let q: Vec<f32> = (0..rows * d).map(|_| rng.random_range(-8i32..8) as f32 / 8.0).collect();
    let k: Vec<f32> = (0..kv * d).map(|_| rng.random_range(-8i32..8) as f32 / 8.0).collect();
    let mut v: Vec<f32> = (0..kv * d).map(|_| rng.random_range(-8i32..8) as f32 / 8.0).collect();
    v.resize(kv.next_multiple_of(64) * d, 0.0);
    let h = |v: &[f32]| -> Vec<u16> { v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect() };
    let want: Vec<f64> = (0..rows)
        .flat_map(|r| {
            let s: Vec<f64> = (0..kv).map(|c| (0..d).map(|e| r16(q[r * d + e] * scale) as f64 * k[c * d + e] as f64).sum()).collect();
            let mx = s.iter().cloned().fold(f64::MIN, f64::max);
            let p: Vec<f64> = s.iter().map(|x| (x - mx).exp()).collect();
            let l: f64 = p.iter().sum();
            let v = &v;
            (0..d).map(move |e| (0..kv).map(|c| p[c] * v[c * d + e] as f64).sum::<f64>() / l)
        })
        .collect();
    let mut push: Vec<u8> = (kv as u32).to_le_bytes().to_vec();
    push.extend(scale.to_le_bytes());
    for ctx in common::contexts() {
        let sg = ctx.caps().subgroup_size;
        for (target, expect_emulated) in targets(&ctx) {
            let spec = [(0, 4 * sg), (1, d as u32)];
            let (words, report) = matbridge_translator::translate_specialized(&input, &target, &spec).unwrap_or_else(|e| panic!("{}: {e}", target.name));
            tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{}: {e}", target.name));
            let what = format!("{} ({})", ctx.caps().name, mode(&report, expect_emulated));
            let runtime_spec: Vec<_> = spec.iter().map(|&(id, v)| matbridge_runtime::SpecConstant::u32(id, v)).collect();
            let p = ctx
                .create_pipeline(&PipelineDesc { spirv: &words, bindings: 4, push_constant_bytes: 8, spec_constants: &runtime_spec, label: "khr_attention", ..Default::default() })
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let bq = ctx.buffer_from_slice(&q, "q").unwrap();
            let bk = ctx.buffer_from_slice(&h(&k), "k").unwrap();
            let bv = ctx.buffer_from_slice(&h(&v), "v").unwrap();
            let mut bo = ctx.buffer_from_slice(&vec![f32::NAN; rows * d], "o").unwrap();
            let groups = [(rows / 16) as u32, 1, 1];
            ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&bq, &bk, &bv, &bo], images: &[], push_constants: &push, groups }], 1, FIRST_DISPATCH).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                // f16 rounding of Q, P and the P V accumulators: outputs lie in [-1, 1].
                assert!((*g as f64 - w).abs() <= 1e-2, "{what}: O[{}][{}] = {g}, expected {w}", i / d, i % d);
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: attention matches");
        }
    }
}

/// `khr_q4_blocks`: A in llama.cpp's q4_0 blocks (an f16 scale beside 16 bytes of quants, an
/// 18-byte stride, so blocks straddle 32-bit words where SwiftShader reads them as words), read
/// whole, dequantized into workgroup memory and multiplied through cooperative matrices; checked
/// bit for bit (scales and quants are chosen so that every product and sum is exact).
#[test]
fn quantized_blocks_feed_cooperative_matrices() {
    let input = common::assembled("khr_q4_blocks");
    let k = 96usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(53);
    // Per block: f16 scale, then 16 bytes whose low nibbles are quants 0..15 and high nibbles 16..31.
    let blocks = 16 * k / 32;
    let scales: Vec<f32> = (0..blocks).map(|_| [0.25f32, 0.5, -0.125, 1.0][rng.random_range(0..4)]).collect();
    let quants: Vec<u8> = (0..blocks * 16).map(|_| rng.random()).collect();
    let mut a_bytes = Vec::with_capacity(blocks * 18);
    for (blk, s) in scales.iter().enumerate() {
        a_bytes.extend(half::f16::from_f32(*s).to_bits().to_le_bytes());
        a_bytes.extend(&quants[blk * 16..blk * 16 + 16]);
    }
    a_bytes.resize(a_bytes.len().next_multiple_of(4), 0);
    let a = |r: usize, c: usize| {
        let blk = r * (k / 32) + c / 32;
        let q = quants[blk * 16 + c % 16];
        let nib = if c % 32 < 16 { q & 0xf } else { q >> 4 };
        (nib as f32 - 8.0) * scales[blk]
    };
    let b: Vec<f32> = (0..k * 16).map(|_| rng.random_range(-4i32..4) as f32 / 4.0).collect();
    let b16: Vec<u16> = b.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect();
    for ctx in common::contexts() {
        let sg = ctx.caps().subgroup_size;
        for (target, expect_emulated) in targets(&ctx) {
            let spec = [(0, 2 * sg)];
            let (words, report) = matbridge_translator::translate_specialized(&input, &target, &spec).unwrap_or_else(|e| panic!("{}: {e}", target.name));
            tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{}: {e}", target.name));
            let what = format!("{} ({})", ctx.caps().name, mode(&report, expect_emulated));
            let runtime_spec = [matbridge_runtime::SpecConstant::u32(0, 2 * sg)];
            let p = ctx
                .create_pipeline(&PipelineDesc { spirv: &words, bindings: 3, push_constant_bytes: 4, spec_constants: &runtime_spec, label: "khr_q4_blocks", ..Default::default() })
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let ba = ctx.buffer_from_slice(&a_bytes, "a").unwrap();
            let bb = ctx.buffer_from_slice(&b16, "b").unwrap();
            let mut bd = ctx.buffer_from_slice(&vec![f32::NAN; 256], "d").unwrap();
            ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bd], images: &[], push_constants: &(k as u32).to_le_bytes(), groups: [1, 1, 1] }], 1, FIRST_DISPATCH)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bd).unwrap();
            for i in 0..16 {
                for j in 0..16 {
                    // Multiples of 1/32 below 2^10: exact in f16 products and f32 sums.
                    let want: f32 = (0..k).map(|c| a(i, c) * b[c * 16 + j]).sum();
                    assert_eq!(got[i * 16 + j], want, "{what}: D[{i}][{j}]");
                }
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: q4_0 blocks match");
        }
    }
}

/// Matrix loads, MulAdds and stores in loop header blocks (`coop_loop_headers`, the forms
/// spirv-opt leaves for do-while loops): every partial sum of a 16x64 by 64x16 product, stored
/// from a single-block loop as f16 row-major through words and f32 column-major, and the final
/// sum stored from a breaking loop header. Also translated for sub-groups from 4 lanes up, so
/// that wider sub-groups hold replicas and only the first stores.
#[test]
fn matrices_in_loop_headers_match_the_reference() {
    let input = common::assembled("coop_loop_headers");
    let mut rng = rand::rngs::SmallRng::seed_from_u64(61);
    let mut value = || rng.random_range(-16i32..16) as f32 / 8.0;
    // A row-major (64 halves a row), B column-major (64 halves a column).
    let a: Vec<f32> = (0..16 * 64).map(|_| value()).collect();
    let b: Vec<f32> = (0..16 * 64).map(|_| value()).collect();
    let h = |v: &[f32]| -> Vec<u16> { v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect() };
    // Partial sums after each K-tile: multiples of 1/64 below 2^9, exact in f32.
    let partial = |t: usize, i: usize, j: usize| -> f32 { (0..16 * (t + 1)).map(|k| a[i * 64 + k] * b[j * 64 + k]).sum() };
    for ctx in common::contexts() {
        let sg = ctx.caps().subgroup_size;
        let mut all = targets(&ctx);
        let mut narrow = ctx.caps().clone();
        narrow.cooperative_matrix.clear();
        narrow.min_subgroup_size = 4;
        all.push((narrow, Some(true)));
        for (target, expect_emulated) in all {
            let (words, report) = matbridge_translator::translate_specialized(&input, &target, &[(0, sg)]).unwrap_or_else(|e| panic!("{}: {e}", target.name));
            tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{}: {e}", target.name));
            let what = format!("{} ({}, sub-groups from {})", ctx.caps().name, mode(&report, expect_emulated), target.min_subgroup_size);
            let p = pipeline(&ctx, &words, 5, 0);
            let ba = ctx.buffer_from_slice(&h(&a), "a").unwrap();
            let bb = ctx.buffer_from_slice(&h(&b), "b").unwrap();
            let mut bh = ctx.buffer_from_slice(&vec![0xffffu16; 4 * 256], "h").unwrap();
            let mut bf = ctx.buffer_from_slice(&vec![f32::NAN; 4 * 256], "f").unwrap();
            let mut bd = ctx.buffer_from_slice(&vec![f32::NAN; 256], "d").unwrap();
            ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bh, &bf, &bd], images: &[], push_constants: &[], groups: [1, 1, 1] }], 1, FIRST_DISPATCH)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let (hs, fs, ds): (Vec<u16>, Vec<f32>, Vec<f32>) = (ctx.read_buffer(&mut bh).unwrap(), ctx.read_buffer(&mut bf).unwrap(), ctx.read_buffer(&mut bd).unwrap());
            for t in 0..4 {
                for i in 0..16 {
                    for j in 0..16 {
                        let want = partial(t, i, j);
                        assert_eq!(fs[t * 256 + j * 16 + i], want, "{what}: partial sum {t}, column-major D[{i}][{j}]");
                        let got = half::f16::from_bits(hs[t * 256 + i * 16 + j]).to_f32();
                        assert_eq!(got, half::f16::from_f32(want).to_f32(), "{what}: partial sum {t}, f16 D[{i}][{j}]");
                    }
                }
            }
            for i in 0..16 {
                for j in 0..16 {
                    assert_eq!(ds[i * 16 + j], partial(3, i, j), "{what}: final D[{i}][{j}]");
                }
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
        }
    }
}

/// Slang's `linalg.CoopMat` on structured buffers and a groupshared array
/// (`tests/kernels/slang/coop_mixed.slang`, compiled for each sub-group size): f16 with an f32
/// accumulator scaled element-wise, and int8 with an int32 accumulator stored column-major.
#[test]
fn slang_structured_and_groupshared_matrices_match_the_reference() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(73);
    let a: Vec<f32> = (0..256).map(|_| rng.random_range(-8i32..8) as f32 / 4.0).collect();
    let b: Vec<f32> = (0..256).map(|_| rng.random_range(-8i32..8) as f32 / 4.0).collect();
    let qa: Vec<i8> = (0..256).map(|_| rng.random()).collect();
    let qb: Vec<i8> = (0..256).map(|_| rng.random()).collect();
    let h = |v: &[f32]| -> Vec<u16> { v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect() };
    for ctx in common::contexts() {
        let sg = ctx.caps().subgroup_size;
        if ![4, 8, 32].contains(&sg) {
            eprintln!("{}: no Slang kernel for sub-groups of {sg}", ctx.caps().name);
            continue;
        }
        let kernel = format!("slang_coop_mixed_sg{sg}");
        for (target, expect_emulated) in targets(&ctx) {
            let (words, mode) = kernel_for(&kernel, &target, expect_emulated);
            let what = format!("{} ({mode})", ctx.caps().name);
            let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 6, label: "slang_coop_mixed", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
            let ba = ctx.buffer_from_slice(&h(&a), "A").unwrap();
            let bb = ctx.buffer_from_slice(&h(&b), "B").unwrap();
            let mut bd = ctx.buffer_from_slice(&[f32::NAN; 256], "D").unwrap();
            let bqa = ctx.buffer_from_slice(&qa, "QA").unwrap();
            let bqb = ctx.buffer_from_slice(&qb, "QB").unwrap();
            let mut bqd = ctx.zeroed_buffer::<i32>(256, "QD").unwrap();
            ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bd, &bqa, &bqb, &bqd], images: &[], push_constants: &[], groups: [1, 1, 1] }], 1, FIRST_DISPATCH)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let d: Vec<f32> = ctx.read_buffer(&mut bd).unwrap();
            let qd: Vec<i32> = ctx.read_buffer(&mut bqd).unwrap();
            for i in 0..16 {
                for j in 0..16 {
                    // Multiples of 1/16 below 2^8: exact in f32.
                    let want = 2.0 * ((0..16).map(|k| a[i * 16 + k] * b[j * 16 + k]).sum::<f32>() + 1.0);
                    assert_eq!(d[i * 16 + j], want, "{what}: D[{i}][{j}]");
                    let want: i32 = (0..16).map(|k| qa[i * 16 + k] as i32 * qb[k * 16 + j] as i32).sum::<i32>() - 5;
                    assert_eq!(qd[j * 16 + i], want, "{what}: QD[{i}][{j}]");
                }
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
        }
    }
}

fn f16_bits(v: &[f32]) -> Vec<u16> {
    v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect()
}

/// Runs a Slang MLP layer kernel (`desc`, buffers passed by device address) on 32-wide vectors
/// `x` with `params` (W row-major, then the biases) in `groups` work-groups, and checks
/// `y = ReLU(W x + b)` exactly: multiples of 1/32 below 2^6 are exact in f16 however the sum is
/// ordered.
fn check_mlp_layer(ctx: &Context, desc: &PipelineDesc<'_>, params: &[f32], x: &[f32], groups: u32, what: &str) {
    let vectors = x.len() / 32;
    let p = ctx.create_pipeline(desc).unwrap_or_else(|e| panic!("{what}: {e}"));
    let bw = ctx.buffer_from_slice(&f16_bits(params), "weights").unwrap();
    let bx = ctx.buffer_from_slice(&f16_bits(x), "inputs").unwrap();
    let mut by = ctx.buffer_from_slice(&vec![0x7e00u16; vectors * 32], "outputs").unwrap();
    let push: Vec<u8> = [&bw, &bx, &by].iter().flat_map(|b| b.device_address().unwrap().to_le_bytes()).collect();
    ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[], images: &[], push_constants: &push, groups: [groups, 1, 1] }], 1, FIRST_DISPATCH).unwrap_or_else(|e| panic!("{what}: {e}"));
    let y: Vec<u16> = ctx.read_buffer(&mut by).unwrap();
    for t in 0..vectors {
        for o in 0..32 {
            let want: f32 = (0..32).map(|i| params[o * 32 + i] * x[t * 32 + i]).sum::<f32>() + params[32 * 32 + o];
            assert_eq!(half::f16::from_bits(y[t * 32 + o]).to_f32(), want.max(0.0), "{what}: y[{t}][{o}]");
        }
    }
    ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
}

/// Runs a Slang MLP layer's backward kernel on inputs `x` and output gradients `dy` in `groups`
/// work-groups and checks `dx = W^T dy` exactly (multiples of 1/32 below 2^4).
fn check_mlp_layer_backward(ctx: &Context, desc: &PipelineDesc<'_>, params: &[f32], x: &[f32], dy: &[f32], groups: u32, what: &str) {
    let vectors = x.len() / 32;
    let p = ctx.create_pipeline(desc).unwrap_or_else(|e| panic!("{what}: {e}"));
    let bw = ctx.buffer_from_slice(&f16_bits(params), "weights").unwrap();
    let bg = ctx.zeroed_buffer::<u16>(params.len(), "grads").unwrap();
    let bx = ctx.buffer_from_slice(&f16_bits(x), "inputs").unwrap();
    let bdy = ctx.buffer_from_slice(&f16_bits(dy), "dOutputs").unwrap();
    let mut bdx = ctx.buffer_from_slice(&vec![0x7e00u16; vectors * 32], "dInputs").unwrap();
    let push: Vec<u8> = [&bw, &bg, &bx, &bdy, &bdx].iter().flat_map(|b| b.device_address().unwrap().to_le_bytes()).collect();
    ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[], images: &[], push_constants: &push, groups: [groups, 1, 1] }], 1, FIRST_DISPATCH).unwrap_or_else(|e| panic!("{what}: {e}"));
    let dx: Vec<u16> = ctx.read_buffer(&mut bdx).unwrap();
    for t in 0..vectors {
        for i in 0..32 {
            let want: f32 = (0..32).map(|o| params[o * 32 + i] * dy[t * 32 + o]).sum();
            assert_eq!(half::f16::from_bits(dx[t * 32 + i]).to_f32(), want, "{what}: dx[{t}][{i}]");
        }
    }
    ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
}

/// Slang's `neural` module as slangpy ships it (`tests/kernels/slang/mlp.slang`): one
/// fully-connected layer, `y = ReLU(W x + b)` for 32-wide half vectors, evaluated with
/// `WaveTangledVector`, which gathers a sub-group's vectors into cooperative matrices through
/// `uint4` workgroup memory. Slang fixes the sub-group size at compile time: the kernel compiled
/// for the device's size runs native on the H100 and emulated everywhere, and the one compiled
/// for 32 runs at a required size of 32 everywhere (joined on lavapipe and SwiftShader, where
/// its sub-group barriers after loops that break out of Slang's inlining switches become
/// work-group barriers).
#[test]
fn slang_neural_layer_matches_the_reference() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(67);
    // W is 32x32 row-major, then the 32 biases.
    let params: Vec<f32> = (0..32 * 32 + 32).map(|_| rng.random_range(-4i32..4) as f32 / 8.0).collect();
    for ctx in common::contexts() {
        let sg = ctx.caps().subgroup_size as usize;
        if ![4, 8, 32].contains(&sg) {
            eprintln!("{}: no Slang MLP kernel for sub-groups of {sg}", ctx.caps().name);
            continue;
        }
        if !ctx.caps().buffer_device_address {
            continue;
        }
        let kernel = format!("slang_mlp_sg{sg}");
        let groups = 4;
        let x: Vec<f32> = (0..groups * sg * 32).map(|_| rng.random_range(-4i32..4) as f32 / 4.0).collect();
        for (target, expect_emulated) in targets(&ctx) {
            let (words, mode) = kernel_for(&kernel, &target, expect_emulated);
            let desc = PipelineDesc { spirv: &words, push_constant_bytes: 24, label: "slang_mlp", ..Default::default() };
            check_mlp_layer(&ctx, &desc, &params, &x, groups as u32, &format!("{} ({mode})", ctx.caps().name));
        }
        // The kernel written for sub-groups of 32, at that required size.
        let what = format!("{} at sub-groups of 32", ctx.caps().name);
        let x: Vec<f32> = (0..4 * 32 * 32).map(|_| rng.random_range(-4i32..4) as f32 / 4.0).collect();
        let input = common::assembled("slang_mlp_sg32");
        let desc = PipelineDesc { spirv: &input, push_constant_bytes: 24, required_subgroup_size: Some(32), label: "slang_mlp_sg32", ..Default::default() };
        check_mlp_layer(&ctx, &desc, &params, &x, 4, &what);
        eprintln!("{what}: matches");
    }
}

/// The backward pass of the same layer (`tests/kernels/slang/mlp_backward.slang`, identity
/// activation), whose translation needs f16 atomic adds on buffer references (no test device
/// has them: lavapipe and the H100 build them on the word's address, SwiftShader on its widened
/// words) and buffer references derived and kept in variables: `dx = W^T dy` per invocation, a
/// cooperative-matrix product with transposed loads, checked on every device. The gradients
/// of W and b are not: Slang 2026.12 reduces them over the sub-group's vectors in K-tiles of
/// 16, which adds nothing below 16 lanes, and at 32 the H100's own driver returns weight
/// gradients unlike `dy x^T`. (`narrow_types` checks both rewrites exactly.) The kernel
/// compiled for 32 also runs at a required size of 32 everywhere: one work-group is one logical
/// sub-group, so the sub-group barrier Slang puts under `if (subgroupId == 0)` is reached by
/// all of it once joined. That kernel stores a tile past its 128-entry workgroup pool (Slang
/// sizes the pool too small for training at 32), which corrupted lavapipe's heap before
/// `bound-workgroup-indices`; the process now survives it and `dx` is still exact.
#[test]
fn slang_neural_layer_backward_matches_the_reference() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(71);
    let params: Vec<f32> = (0..32 * 32 + 32).map(|_| rng.random_range(-4i32..4) as f32 / 8.0).collect();
    for profile in matbridge_translator::profile::BUILTIN_PROFILES.iter().filter(|p| **p != "generic-subgroup") {
        let caps = DeviceCaps::builtin(profile).unwrap();
        let input = common::assembled(&format!("slang_mlp_backward_sg{}", caps.subgroup_size));
        let (words, _) = translate(&input, &caps).unwrap_or_else(|e| panic!("{profile}: {e}"));
        tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{profile}: {e}"));
    }
    let vectors = 64;
    for ctx in common::contexts() {
        let sg = ctx.caps().subgroup_size as usize;
        if ![4, 8, 32].contains(&sg) || !ctx.caps().buffer_device_address {
            eprintln!("{}: no Slang MLP kernel for sub-groups of {sg}", ctx.caps().name);
            continue;
        }
        let kernel = format!("slang_mlp_backward_sg{sg}");
        let mut vector = || -> Vec<f32> { (0..vectors * 32).map(|_| rng.random_range(-4i32..4) as f32 / 4.0).collect() };
        let (x, dy) = (vector(), vector());
        for (target, expect_emulated) in targets(&ctx) {
            let (words, mode) = kernel_for(&kernel, &target, expect_emulated);
            let desc = PipelineDesc { spirv: &words, push_constant_bytes: 40, label: "slang_mlp_backward", ..Default::default() };
            check_mlp_layer_backward(&ctx, &desc, &params, &x, &dy, (vectors / sg) as u32, &format!("{} ({mode})", ctx.caps().name));
        }
        let what = format!("{} at sub-groups of 32", ctx.caps().name);
        let (x, dy) = (vector(), vector());
        let input = common::assembled("slang_mlp_backward_sg32");
        let desc = PipelineDesc { spirv: &input, push_constant_bytes: 40, required_subgroup_size: Some(32), label: "slang_mlp_backward_sg32", ..Default::default() };
        check_mlp_layer_backward(&ctx, &desc, &params, &x, &dy, (vectors / 32) as u32, &what);
        eprintln!("{what}: matches");
    }
}

/// An int8 GEMM holding sixteen 16x16x16 s8 accumulators per sub-group in hinted-unroll loops
/// (`khr_int8_tiles`, shaped like llama.cpp's tensor-wise int8 kernel), with operands loaded
/// straight from int8 buffers and a scaled f32 epilogue staged through workgroup memory. On
/// drivers that unroll every hinted loop the emulation drops the hint from the multiply-add
/// loop (SwiftShader's compiler crashes on the sixteen-fold unrolled MulAdds).
#[test]
fn int8_tiles_in_unrolled_loops_match_the_reference() {
    let input = common::assembled("khr_int8_tiles");
    let (n, rows, k) = (128usize, 64usize, 96usize);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(71);
    let w: Vec<i8> = (0..n * k).map(|i| if i < 4 { [-128, 127, -1, 0][i] } else { rng.random() }).collect();
    let a: Vec<i8> = (0..rows * k).map(|i| if i < 4 { [-128, -128, 127, 1][i] } else { rng.random() }).collect();
    // Powers of two: the epilogue's products are exact, whatever the driver fuses.
    let ws: Vec<f32> = (0..n).map(|_| [0.5f32, 0.25, 1.0, 2.0][rng.random_range(0..4)]).collect();
    let as_: Vec<f32> = (0..rows).map(|_| [0.125f32, 0.5, 1.0][rng.random_range(0..3)]).collect();
    let bias: Vec<f32> = (0..n).map(|_| rng.random_range(-8i32..8) as f32).collect();
    for ctx in common::contexts() {
        let sg = ctx.caps().subgroup_size;
        for (target, expect_emulated) in targets(&ctx) {
            let (words, report) = matbridge_translator::translate_specialized(&input, &target, &[(0, sg)]).unwrap_or_else(|e| panic!("{}: {e}", target.name));
            tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{}: {e}", target.name));
            let what = format!("{} ({})", ctx.caps().name, mode(&report, expect_emulated));
            if target.workarounds.unrolls_hinted_loops && !target.has_cooperative_matrix() {
                let notes: Vec<&String> = report.passes.iter().flat_map(|p| &p.notes).collect();
                assert!(notes.iter().any(|n| n.contains("lose their Unroll hint")), "{what}: {notes:?}");
            }
            let spec = [matbridge_runtime::SpecConstant::u32(0, sg)];
            let p = ctx
                .create_pipeline(&PipelineDesc { spirv: &words, bindings: 6, push_constant_bytes: 8, spec_constants: &spec, label: "khr_int8_tiles", ..Default::default() })
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let bw = ctx.buffer_from_slice(&w, "w").unwrap();
            let ba = ctx.buffer_from_slice(&a, "a").unwrap();
            let bws = ctx.buffer_from_slice(&ws, "ws").unwrap();
            let bas = ctx.buffer_from_slice(&as_, "as").unwrap();
            let bb = ctx.buffer_from_slice(&bias, "bias").unwrap();
            let mut bd = ctx.buffer_from_slice(&vec![f32::NAN; rows * n], "d").unwrap();
            let push: Vec<u8> = [n as u32, k as u32].iter().flat_map(|v| v.to_le_bytes()).collect();
            let groups = [(n / 64) as u32, (rows / 64) as u32, 1];
            ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&bw, &ba, &bws, &bas, &bb, &bd], images: &[], push_constants: &push, groups }], 1, FIRST_DISPATCH)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bd).unwrap();
            for r in 0..rows {
                for o in 0..n {
                    let dot: i32 = (0..k).map(|i| a[r * k + i] as i32 * w[o * k + i] as i32).sum();
                    let want = dot as f32 * as_[r] * ws[o] + bias[o];
                    assert_eq!(got[r * n + o], want, "{what}: D[{r}][{o}] (dot {dot})");
                }
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: int8 tiles match");
        }
    }
}

/// vk_cooperative_matrix_perf's register-tiled kernel as glslang writes it (`khr_tiled_refs`):
/// every fragment loaded through buffer references that a uniform block holds, unused
/// storage-buffer instance variables at binding 0, f16 results, and alpha and beta converted to
/// f16 by `OpSpecConstantOp` (SwiftShader: moved into code and widened). 16x16x16 and 8x8x8
/// fragments (the H100 lists no 8x8x8 shape: padded), both layouts of B; exact results.
#[test]
fn tiled_gemm_through_references_with_f16_results_matches_the_reference() {
    let input = common::assembled("khr_tiled_refs");
    for ctx in common::contexts() {
        if !ctx.caps().buffer_device_address {
            eprintln!("{}: no bufferDeviceAddress, skipped", ctx.caps().name);
            continue;
        }
        let sg = ctx.caps().subgroup_size;
        for (target, expect_emulated) in targets(&ctx) {
            for f in [16u32, 8] {
                let expect = if target.has_cooperative_matrix() { None } else { expect_emulated };
                let (tile, fu) = (2 * f as usize, f as usize);
                let (m, n, k) = (2 * tile, 2 * tile, 4 * fu);
                for b_col_major in [false, true] {
                    let (lda, ldb, ldc, ldd) = (k + 8, if b_col_major { k + 8 } else { n + 8 }, n + 4, n + 2);
                    let (alpha, beta) = (2.0f32, -0.5f32);
                    let spec: Vec<(u32, u32)> = vec![
                        (0, f),
                        (1, f),
                        (2, f),
                        (3, sg),
                        (4, tile as u32),
                        (5, tile as u32),
                        (6, k as u32),
                        (7, lda as u32),
                        (8, ldb as u32),
                        (9, ldc as u32),
                        (10, ldd as u32),
                        (11, alpha.to_bits()),
                        (12, beta.to_bits()),
                        (13, b_col_major as u32),
                    ];
                    let (words, mode) = specialized_for(&input, &target, &spec, expect);
                    let what = format!("{} ({mode}) {f}x{f}x{f}, B {}", ctx.caps().name, if b_col_major { "column-major" } else { "row-major" });
                    let p = specialized_pipeline(&ctx, &words, &spec, (1, 0), &what);
                    let mut rng = rand::rngs::SmallRng::seed_from_u64(k as u64 + b_col_major as u64);
                    // Halves in [-1, 1]: every product, sum and result below is exact in f16.
                    let mut value = || rng.random_range(-2i32..=2) as f32 / 2.0;
                    let a: Vec<f32> = (0..m * lda).map(|_| value()).collect();
                    let b: Vec<f32> = (0..if b_col_major { n } else { k } * ldb).map(|_| value()).collect();
                    let c: Vec<f32> = (0..m * ldc).map(|_| value()).collect();
                    let h = |v: &[f32]| -> Vec<u16> { v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect() };
                    let ba = ctx.buffer_from_slice(&h(&a), "a").unwrap();
                    let bb = ctx.buffer_from_slice(&h(&b), "b").unwrap();
                    let bc = ctx.buffer_from_slice(&h(&c), "c").unwrap();
                    let mut bd = ctx.buffer_from_slice(&vec![0x7e00u16; m * ldd], "d").unwrap();
                    let params: Vec<u64> = [&ba, &bb, &bc, &bd].iter().map(|b| b.device_address().unwrap()).collect();
                    let bp = ctx.buffer_from_slice(&params, "params").unwrap();
                    ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&bp], images: &[], push_constants: &[], groups: [(n / tile) as u32, (m / tile) as u32, 1] }], 1, FIRST_DISPATCH)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let got: Vec<u16> = ctx.read_buffer(&mut bd).unwrap();
                    for i in 0..m {
                        for j in 0..ldd {
                            let g = got[i * ldd + j];
                            if j >= n {
                                assert_eq!(g, 0x7e00, "{what}: D[{i}][{j}] (padding)");
                                continue;
                            }
                            let bkj = |p: usize| if b_col_major { b[j * ldb + p] } else { b[p * ldb + j] };
                            let want = alpha * (0..k).map(|p| a[i * lda + p] * bkj(p)).sum::<f32>() + beta * c[i * ldc + j];
                            assert_eq!(g, half::f16::from_f32(want).to_bits(), "{what}: D[{i}][{j}] = {}, want {want}", half::f16::from_bits(g));
                        }
                    }
                    ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
                    eprintln!("{what}: matches");
                }
            }
        }
    }
}

/// `khr_small_workgroup`: a workgroup of four invocations, fewer than the sub-group (lavapipe's
/// 8, the H100's 32): the emulation spreads the matrices over the lanes that hold invocations.
/// Two workgroups, each D = A * B + C on its own 8x8 f32 matrices; exact results.
#[test]
fn workgroups_smaller_than_a_subgroup_match_the_reference() {
    let input = common::assembled("khr_small_workgroup");
    for ctx in common::contexts() {
        for (target, expect_emulated) in targets(&ctx) {
            let (words, mode) = specialized_for(&input, &target, &[], expect_emulated);
            let what = format!("{} ({mode})", ctx.caps().name);
            let p = specialized_pipeline(&ctx, &words, &[], (3, 0), &what);
            let mut rng = rand::rngs::SmallRng::seed_from_u64(4);
            let mut values = |n: usize| -> Vec<f32> { (0..n).map(|_| rng.random_range(-8i32..=8) as f32).collect() };
            let (a, b, c) = (values(128), values(128), values(128));
            let ba = ctx.buffer_from_slice(&a, "a").unwrap();
            let bb = ctx.buffer_from_slice(&b, "b").unwrap();
            let mut bc = ctx.buffer_from_slice(&c, "c").unwrap();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bc], images: &[], push_constants: &[], groups: [2, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bc).unwrap();
            for g in 0..2 {
                for i in 0..8 {
                    for j in 0..8 {
                        // A row-major, B column-major: B[k][j] at j * 8 + k.
                        let want = (0..8).map(|k| a[g * 64 + i * 8 + k] * b[g * 64 + j * 8 + k]).sum::<f32>() + c[g * 64 + i * 8 + j];
                        assert_eq!(got[g * 64 + i * 8 + j], want, "{what}: workgroup {g}, D[{i}][{j}]");
                    }
                }
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: matches");
        }
    }
}

/// `khr_narrow_words`: matrices through arrays of words narrower than their components (as the
/// validation layers' GPU-AV tests write them): a u32 matrix through `uint8_t` (column-major,
/// offset and stride in bytes, stride not a multiple of 4 components' worth of padding) and an
/// f32 one through `uint16_t` (row-major, in halves), each doubled and stored further on. Every
/// byte of both buffers is checked: the padding between columns and rows stays as it was.
#[test]
fn matrices_through_narrower_words_match_the_reference() {
    let input = common::assembled("khr_narrow_words");
    for ctx in common::contexts() {
        let sg = ctx.caps().subgroup_size;
        for (target, expect_emulated) in targets(&ctx) {
            let (words, mode) = specialized_for(&input, &target, &[(0, sg)], expect_emulated);
            let what = format!("{} ({mode})", ctx.caps().name);
            let p = specialized_pipeline(&ctx, &words, &[(0, sg)], (2, 0), &what);
            let mut rng = rand::rngs::SmallRng::seed_from_u64(9);
            let bytes: Vec<u8> = (0..4 + 32 * 68 + 8).map(|_| rng.random()).collect();
            let floats: Vec<f32> = (0..2 + 16 * 18 + 8).map(|_| rng.random_range(-64i32..64) as f32 / 8.0).collect();
            // The halves buffer holds f32 bit patterns at the matrix positions, random halves elsewhere.
            let mut halves: Vec<u16> = (0..2 + 16 * 18 + 8).map(|_| rng.random()).collect();
            for r in 0..8 {
                for c in 0..8 {
                    let at = 2 + r * 18 + c * 2;
                    let bits = floats[at].to_bits();
                    (halves[at], halves[at + 1]) = (bits as u16, (bits >> 16) as u16);
                }
            }
            let mut bb = ctx.buffer_from_slice(&bytes, "bytes").unwrap();
            let mut bh = ctx.buffer_from_slice(&halves, "halves").unwrap();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&bb, &bh], images: &[], push_constants: &[], groups: [1, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let mut want_bytes = bytes.clone();
            for c in 0..16 {
                for r in 0..16 {
                    let at = 4 + c * 68 + r * 4;
                    let v = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()).wrapping_mul(2);
                    want_bytes[at + 16 * 68..at + 16 * 68 + 4].copy_from_slice(&v.to_le_bytes());
                }
            }
            let mut want_halves = halves.clone();
            for r in 0..8 {
                for c in 0..8 {
                    let at = 2 + r * 18 + c * 2;
                    let f = f32::from_bits(halves[at] as u32 | (halves[at + 1] as u32) << 16) * 2.0;
                    let (lo, hi) = (f.to_bits() as u16, (f.to_bits() >> 16) as u16);
                    (want_halves[at + 8 * 18], want_halves[at + 8 * 18 + 1]) = (lo, hi);
                }
            }
            let got_bytes: Vec<u8> = ctx.read_buffer(&mut bb).unwrap();
            let got_halves: Vec<u16> = ctx.read_buffer(&mut bh).unwrap();
            for (i, (g, w)) in got_bytes.iter().zip(&want_bytes).enumerate() {
                assert_eq!(g, w, "{what}: byte {i}");
            }
            for (i, (g, w)) in got_halves.iter().zip(&want_halves).enumerate() {
                assert_eq!(g, w, "{what}: half {i}");
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: matches");
        }
    }
}

/// `khr_struct_tiles`: fragments loaded from and stored to member arrays of workgroup structs
/// that lead with a `uvec4` (as TensorFlow Lite's GPU delegate writes its GEMMs), A's tile held
/// as `f16vec4`; four sub-groups of 2 x 2 fragments, 64^3, exact results.
#[test]
fn fragments_in_workgroup_struct_members_match_the_reference() {
    let input = common::assembled("khr_struct_tiles");
    for ctx in common::contexts() {
        let sg = ctx.caps().subgroup_size;
        for (target, expect_emulated) in targets(&ctx) {
            let frags: &[u32] = if target.has_cooperative_matrix() { &[16] } else { &[16, 8] };
            for &f in frags {
                let spec = [(0, 4 * sg), (1, f)];
                let (words, mode) = specialized_for(&input, &target, &spec, expect_emulated);
                let what = format!("{} ({mode}) {f}x{f}x{f}", ctx.caps().name);
                let p = specialized_pipeline(&ctx, &words, &spec, (3, 12), &what);
                let (m, n, k) = (64usize, 64usize, 64usize);
                let mut rng = rand::rngs::SmallRng::seed_from_u64(u64::from(f));
                let mut value = || rng.random_range(-4i32..=4) as f32 / 4.0;
                let a: Vec<f32> = (0..m * k).map(|_| value()).collect();
                let b: Vec<f32> = (0..k * n).map(|_| value()).collect();
                let h = |v: &[f32]| -> Vec<u16> { v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect() };
                let ba = ctx.buffer_from_slice(&h(&a), "a").unwrap();
                let bb = ctx.buffer_from_slice(&h(&b), "b").unwrap();
                let mut bc = ctx.buffer_from_slice(&vec![f32::NAN; m * n], "c").unwrap();
                let push: Vec<u8> = [m, n, k].iter().flat_map(|v| (*v as i32).to_le_bytes()).collect();
                ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bc], images: &[], push_constants: &push, groups: [(n / 32) as u32, (m / 32) as u32, 1] }], 1, FIRST_DISPATCH)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let got: Vec<f32> = ctx.read_buffer(&mut bc).unwrap();
                for i in 0..m {
                    for j in 0..n {
                        let want = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum::<f32>();
                        assert_eq!(got[i * n + j], want, "{what}: C[{i}][{j}]");
                    }
                }
                ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
                eprintln!("{what}: matches");
            }
        }
    }
}

/// IREE's matmuls (`tests/kernels/iree/`, compiled by iree-compile for NVIDIA and AMD RDNA3),
/// created from IREE's output at the sub-group size it was compiled for (32, joined on lavapipe
/// and SwiftShader), as the runtime translates it for the device: 32x128x128 in two workgroups,
/// checked element for element. The f16 kernel widens its fragments to f32 A and B matrices,
/// a shape no device lists: on a device that lists f16 x f16 + f32 the MulAdds take the f16
/// fragments and run natively. The int8 kernel's 16x16x16 MulAdds, chained over K on fragments
/// read from `uvec4` staging arrays, fuse in pairs into the H100's 16x16x32 and run natively too.
#[test]
fn iree_matmuls_match_the_reference() {
    for ctx in common::contexts() {
        for (target, expect_emulated) in targets(&ctx) {
            IreeMatmul::F16.run(&ctx, &target, expect_emulated.or(Some(false)));
            // Native where a listed s8 shape takes the 16x16x16 MulAdds whole or fused over K
            // (the H100's 16x16x32); Mesa 26's 8x8x8 would split the `uvec4` rows: emulated.
            let pads = target.cooperative_matrix.iter().any(|s| s.a == ComponentType::S8 && 16 % s.m == 0 && 16 % s.n == 0 && s.k >= 16);
            IreeMatmul::I8.run(&ctx, &target, if pads { Some(false) } else { expect_emulated });
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum IreeMatmul {
    F16,
    I8,
}

impl IreeMatmul {
    const M: usize = 32;
    const N: usize = 128;
    const K: usize = 128;

    fn kernel(self) -> (&'static str, &'static str) {
        match self {
            IreeMatmul::F16 => ("iree_matmul_f16", "matmul_dispatch_0_matmul_32x128x128_f16xf16xf32"),
            IreeMatmul::I8 => ("iree_matmul_i8", "matmul_dispatch_0_matmul_32x128x128_i8xi8xi32"),
        }
    }

    /// Runs the kernel translated for `target`: the untranslated module where `target` is the
    /// device's own profile (the runtime translates it, sub-group size included), the
    /// translation otherwise.
    fn run(self, ctx: &Context, target: &DeviceCaps, expect_emulated: Option<bool>) {
        let (name, entry_point) = self.kernel();
        let (m, n, k) = (Self::M, Self::N, Self::K);
        let input = common::assembled(name);
        let (words, mode) = kernel_for(name, target, expect_emulated);
        let what = format!("{} ({mode}) {name}", ctx.caps().name);
        let own = target.has_cooperative_matrix() == ctx.caps().has_cooperative_matrix();
        let spirv = if own { &input[..] } else { &words[..] };
        let desc = PipelineDesc { spirv, entry_point, bindings: 3, required_subgroup_size: Some(32), label: name, ..Default::default() };
        let p = ctx.create_pipeline(&desc).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut rng = rand::rngs::SmallRng::seed_from_u64(m as u64);
        // f16: multiples of 1/8 below 2, whose products and sums of 128 are exact in f32.
        let (a, b): (Vec<i32>, Vec<i32>) = match self {
            IreeMatmul::F16 => ((0..m * k).map(|_| rng.random_range(-16..16)).collect(), (0..k * n).map(|_| rng.random_range(-16..16)).collect()),
            IreeMatmul::I8 => ((0..m * k).map(|_| rng.random_range(-128..128)).collect(), (0..k * n).map(|_| rng.random_range(-128..128)).collect()),
        };
        let bytes = |v: &[i32]| -> Vec<u8> {
            match self {
                IreeMatmul::F16 => v.iter().flat_map(|x| half::f16::from_f32(*x as f32 / 8.0).to_bits().to_le_bytes()).collect(),
                IreeMatmul::I8 => v.iter().map(|x| *x as i8 as u8).collect(),
            }
        };
        let ba = ctx.buffer_from_slice(&bytes(&a), "a").unwrap();
        let bb = ctx.buffer_from_slice(&bytes(&b), "b").unwrap();
        let mut bc = ctx.buffer_from_slice(&vec![u32::MAX; m * n], "c").unwrap();
        ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bc], images: &[], push_constants: &[], groups: [2, 1, 1] }], 1, FIRST_DISPATCH).unwrap_or_else(|e| panic!("{what}: {e}"));
        let got: Vec<u32> = ctx.read_buffer(&mut bc).unwrap();
        for i in 0..m {
            for j in 0..n {
                let dot: i32 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
                let g = got[i * n + j];
                match self {
                    IreeMatmul::F16 => assert_eq!(f32::from_bits(g), dot as f32 / 64.0, "{what}: C[{i}][{j}]"),
                    IreeMatmul::I8 => assert_eq!(g as i32, dot, "{what}: C[{i}][{j}]"),
                }
            }
        }
        ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
        eprintln!("{what}: matches");
    }
}

/// `khr_shared_blocks`: a fragment written into workgroup memory as `uvec4` words through one
/// block and loaded as f16 halves through another that views the same bytes
/// (GL_EXT_shared_memory_block), at M = 8 and 16, and C = A * B + C matches the CPU exactly.
/// Where the device has `workgroupMemoryExplicitLayout` (the H100, Mesa 26 lavapipe) the blocks
/// stay (on the H100 at M = 8 padded to 16x16x16, the staging arrays placed past the module's
/// blocks); elsewhere (bookworm lavapipe, SwiftShader) they become one array of words, the
/// matrix emulated from it.
#[test]
fn aliased_workgroup_blocks_match_the_reference() {
    let input = common::assembled("khr_shared_blocks");
    for ctx in common::contexts() {
        let caps = ctx.caps().clone();
        for m in [8usize, 16] {
            let spec = [matbridge_runtime::SpecConstant::u32(0, caps.subgroup_size), matbridge_runtime::SpecConstant::u32(1, m as u32)];
            let desc = PipelineDesc { spirv: &input, bindings: 3, spec_constants: &spec, label: "khr_shared_blocks", ..Default::default() };
            let what = format!("{} M = {m}", caps.name);
            let pipeline = ctx.create_pipeline(&desc).unwrap_or_else(|e| panic!("{what}: {e}"));
            // Multiples of 1/4 below 2 in magnitude: products and sums are exact in f32.
            let a: Vec<f32> = (0..m * 16).map(|i| ((i * 7 % 16) as f32 - 8.0) / 4.0).collect();
            let b: Vec<f32> = (0..256).map(|i| ((i * 5 % 16) as f32 - 8.0) / 4.0).collect();
            let c: Vec<f32> = (0..m * 16).map(|i| (i % 9) as f32 - 4.0).collect();
            let h = |v: &[f32]| -> Vec<u16> { v.iter().map(|x| half::f16::from_f32(*x).to_bits()).collect() };
            let ba = ctx.buffer_from_slice(&h(&a), "a").unwrap();
            let bb = ctx.buffer_from_slice(&h(&b), "b").unwrap();
            let mut bc = ctx.buffer_from_slice(&c, "c").unwrap();
            ctx.run_with_timeout(&[Dispatch { pipeline: &pipeline, buffers: &[&ba, &bb, &bc], images: &[], push_constants: &[], groups: [1, 1, 1] }], 1, FIRST_DISPATCH)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bc).unwrap();
            for r in 0..m {
                for j in 0..16 {
                    let want = c[r * 16 + j] + (0..16).map(|k| a[r * 16 + k] * b[k * 16 + j]).sum::<f32>();
                    assert_eq!(got[r * 16 + j], want, "{what}: C[{r}][{j}]");
                }
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: matches");
        }
    }
}

/// The targets for a module with SPV_NV_cooperative_matrix2 operations: those of [`targets`],
/// and on a device with the extension, the device without it (the operations lowered onto its
/// KHR matrices). The flag says whether the operations must be lowered.
fn coopmat2_targets(ctx: &Context) -> Vec<(DeviceCaps, Option<bool>, Option<bool>)> {
    let mut out: Vec<(DeviceCaps, Option<bool>, Option<bool>)> = targets(ctx)
        .into_iter()
        .map(|(t, e)| {
            let lowered = (!t.cooperative_matrix2 || e == Some(true)).then_some(true);
            (t, e, lowered)
        })
        .collect();
    if ctx.caps().cooperative_matrix2 {
        let mut without = ctx.caps().clone();
        without.cooperative_matrix2 = false;
        out.push((without, None, Some(true)));
    }
    out
}

/// `input` translated for `target` and checked with spirv-val, and how it ran (emulated or native,
/// coopmat2 lowered or native), checked against the expectations where there are some.
fn coopmat2_kernel_for(input: &[u32], kernel: &str, target: &DeviceCaps, (expect_emulated, expect_lowered): (Option<bool>, Option<bool>)) -> (Vec<u32>, String) {
    specialized_coopmat2_kernel_for(input, kernel, target, &[], (expect_emulated, expect_lowered))
}

/// [`coopmat2_kernel_for`] after the specialization `spec`, as a pipeline gives it.
fn specialized_coopmat2_kernel_for(input: &[u32], kernel: &str, target: &DeviceCaps, spec: &[(u32, u32)], (expect_emulated, expect_lowered): (Option<bool>, Option<bool>)) -> (Vec<u32>, String) {
    let (words, report) = matbridge_translator::translate_specialized(input, target, spec).unwrap_or_else(|e| panic!("{kernel} for {}: {e}", target.name));
    tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{kernel} for {}: {e}", target.name));
    let lowered = report.passes.iter().any(|p| p.name == "lower-cooperative-matrix2" && p.changed);
    if let Some(l) = expect_lowered {
        assert_eq!(lowered, l, "{kernel} for {}: {report:?}", target.name);
    }
    let what = format!("{} ({}, {})", target.name, mode(&report, expect_emulated), if lowered { "coopmat2 lowered" } else { "coopmat2 native" });
    (words, what)
}

/// Runs a Slang kernel of `invocations` over 16x16 tiles of `x` (f32) and `h` (f16) for every
/// coopmat2 target of `ctx`; calls `check(out, tile, what)` for each sub-group's tile.
fn run_coopmat2_kernel(ctx: &Context, (kernel, invocations): (&str, u32), x: &[f32], h: Option<&[f32]>, check: impl Fn(&[f32], usize, &str)) {
    let subgroups = invocations.div_ceil(ctx.caps().subgroup_size.max(1)) as usize;
    for (target, expect_emulated, expect_lowered) in coopmat2_targets(ctx) {
        let input = common::assembled(kernel);
        let (words, what) = coopmat2_kernel_for(&input, kernel, &target, (expect_emulated, expect_lowered));
        let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: if h.is_some() { 3 } else { 2 }, label: kernel, ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
        let bx = ctx.buffer_from_slice(x, "X").unwrap();
        let bh = h.map(|h| ctx.buffer_from_slice(&f16_bits(h), "H").unwrap());
        let mut bo = ctx.buffer_from_slice(&vec![f32::NAN; 16 * 1024], "Out").unwrap();
        let buffers: Vec<&matbridge_runtime::Buffer> = match &bh {
            Some(bh) => vec![&bx, bh, &bo],
            None => vec![&bx, &bo],
        };
        ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &buffers, images: &[], push_constants: &[], groups: [1, 1, 1] }], 1, FIRST_DISPATCH).unwrap_or_else(|e| panic!("{what}: {e}"));
        let out: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
        for tile in 0..subgroups {
            check(&out[tile * 1024..(tile + 1) * 1024], tile, &what);
        }
        ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
        eprintln!("{what}: {kernel} matches in {subgroups} sub-groups");
    }
}

/// Multiples of 1/4 in [-2, 2): sums of up to 256 of them, and products of two, are exact in f32
/// in any order.
fn quarters(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    (0..n).map(|_| rng.random_range(-8i32..8) as f32 / 4.0).collect()
}

/// Slang's `ReduceRow`, `ReduceColumn`, `ReduceRowAndColumn` and `Reduce2x2`
/// (OpCooperativeMatrixReduceNV): lowered to KHR loads and stores through workgroup memory and
/// calls of the combine functions where the target has no VK_NV_cooperative_matrix2 (then
/// emulated on lavapipe and SwiftShader), native where it has (the H100, where it lists the
/// result shapes); every result exact.
#[test]
fn slang_reductions_match_the_reference() {
    let x = quarters(16 * 256, 83);
    for ctx in common::contexts() {
        run_coopmat2_kernel(&ctx, ("slang_coop_reduce", 64), &x, None, |out, tile, what| check_reductions(&x, out, tile, what));
        // Untranslated, at a required sub-group size of 32: the runtime translates it itself
        // (joining sub-groups of 8 and 4 on lavapipe and SwiftShader).
        let what = format!("{} at sub-groups of 32, translated by the runtime", ctx.caps().name);
        let input = common::assembled("slang_coop_reduce");
        let p = ctx
            .create_pipeline(&PipelineDesc { spirv: &input, bindings: 2, required_subgroup_size: Some(32), label: "slang_coop_reduce", ..Default::default() })
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let bx = ctx.buffer_from_slice(&x, "X").unwrap();
        let mut bo = ctx.buffer_from_slice(&vec![f32::NAN; 16 * 1024], "Out").unwrap();
        ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&bx, &bo], images: &[], push_constants: &[], groups: [1, 1, 1] }], 1, FIRST_DISPATCH).unwrap_or_else(|e| panic!("{what}: {e}"));
        let out: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
        for tile in 0..2 {
            check_reductions(&x, &out[tile * 1024..(tile + 1) * 1024], tile, &what);
        }
        ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
        eprintln!("{what}: slang_coop_reduce matches");
    }
}

/// `slang_coop_reduce`'s outputs for `tile` of `x`: row sums, column maxima, the minimum and the
/// 2x2 sums.
fn check_reductions(x: &[f32], out: &[f32], tile: usize, what: &str) {
    let m = |r: usize, c: usize| x[tile * 256 + r * 16 + c];
    let min = (0..256).map(|i| x[tile * 256 + i]).fold(f32::INFINITY, f32::min);
    for r in 0..16 {
        let sum: f32 = (0..16).map(|c| m(r, c)).sum();
        for c in 0..16 {
            assert_eq!(out[r * 16 + c], sum, "{what}: tile {tile}: row sum [{r}][{c}]");
        }
    }
    for c in 0..16 {
        let max = (0..16).map(|r| m(r, c)).fold(f32::NEG_INFINITY, f32::max);
        for r in 0..8 {
            assert_eq!(out[256 + r * 16 + c], max, "{what}: tile {tile}: column maximum [{r}][{c}]");
        }
    }
    for i in 0..32 {
        assert_eq!(out[512 + i], min, "{what}: tile {tile}: minimum element {i}");
    }
    for r in 0..8 {
        for c in 0..8 {
            let want = m(2 * r, 2 * c) + m(2 * r, 2 * c + 1) + m(2 * r + 1, 2 * c) + m(2 * r + 1, 2 * c + 1);
            assert_eq!(out[768 + r * 8 + c], want, "{what}: tile {tile}: 2x2 sum [{r}][{c}]");
        }
    }
}

/// Slang's `MapElement` (with a captured value, and over two matrices), `convertUse`,
/// `Transpose` and casts that change the component type and the Use
/// (OpCooperativeMatrixPerElementOpNV, _ConvertNV, _TransposeNV, OpFConvert between Uses), feeding
/// MulAdds: lowered where the target has no VK_NV_cooperative_matrix2, native where it has;
/// every result exact.
#[test]
fn slang_per_element_operations_and_use_conversions_match_the_reference() {
    let x = quarters(16 * 256, 89);
    let h = quarters(16 * 256, 97);
    for ctx in common::contexts() {
        run_coopmat2_kernel(&ctx, ("slang_coop_map", 32), &x, Some(&h), |out, tile, what| {
            let m = |r: usize, c: usize| x[tile * 256 + r * 16 + c];
            let hm = |r: usize, c: usize| h[tile * 256 + r * 16 + c];
            let s = m(0, 0);
            // Multiples of 1/64 below 8: exact in f16.
            let mapped = |r: usize, c: usize| m(r, c) * s + (r * 16 + c) as f32 / 64.0;
            for r in 0..16 {
                for c in 0..16 {
                    assert_eq!(out[r * 16 + c], mapped(r, c), "{what}: tile {tile}: mapped [{r}][{c}]");
                    let gram: f32 = (0..16).map(|k| hm(r, k) * hm(c, k)).sum();
                    assert_eq!(out[256 + r * 16 + c], gram, "{what}: tile {tile}: H H^T [{r}][{c}]");
                    let mixed: f32 = (0..16).map(|k| mapped(r, k) * m(k, c)).sum::<f32>() + 1.0;
                    assert_eq!(out[512 + r * 16 + c], mixed, "{what}: tile {tile}: f16(mapped) f16(X) + 1 [{r}][{c}]");
                    assert_eq!(out[768 + r * 16 + c], mapped(r, c) - m(r, c), "{what}: tile {tile}: mapped - X [{r}][{c}]");
                }
            }
        });
    }
}

/// GL_NV_cooperative_matrix2 flash attention as glslang writes it (`nv2_attention`): two key/value
/// tiles per block in a loop with an online softmax (S = Q K^T with K transposed from an
/// accumulator, row maxima and sums, exp(S - max) and exp(M - max) per element, f16(P) V), and
/// Q K0 with K0 converted to a B matrix as it is. Lowered and emulated on lavapipe and
/// SwiftShader, native (the driver's own cooperative_matrix2) and lowered onto KHR matrices on
/// the H100.
#[test]
fn glslang_coopmat2_attention_matches_the_reference() {
    // Values in [-1, 1): S's products and sums stay exact in f32.
    let half_of = |x: Vec<f32>| -> Vec<f32> { x.iter().map(|v| v / 2.0).collect() };
    let (q, k, v) = (half_of(quarters(16 * 256, 101)), half_of(quarters(32 * 256, 103)), half_of(quarters(32 * 256, 107)));
    let input = common::assembled("nv2_attention");
    for ctx in common::contexts() {
        let per_group = (32 / ctx.caps().subgroup_size.max(1)).max(1) as usize;
        let groups = (16 / per_group).clamp(1, 2);
        for (target, expect_emulated, expect_lowered) in coopmat2_targets(&ctx) {
            let (words, what) = coopmat2_kernel_for(&input, "nv2_attention", &target, (expect_emulated, expect_lowered));
            let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 4, label: "nv2_attention", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
            let (bq, bk, bv) = (ctx.buffer_from_slice(&f16_bits(&q), "Q").unwrap(), ctx.buffer_from_slice(&f16_bits(&k), "K").unwrap(), ctx.buffer_from_slice(&f16_bits(&v), "V").unwrap());
            let mut bo = ctx.buffer_from_slice(&vec![f32::NAN; 16 * 512], "O").unwrap();
            ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&bq, &bk, &bv, &bo], images: &[], push_constants: &[], groups: [groups as u32, 1, 1] }], 1, FIRST_DISPATCH)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let o: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
            let blocks = groups * per_group;
            for blk in 0..blocks {
                let at = |x: &[f32], tile: usize, r: usize, c: usize| x[tile * 256 + r * 16 + c];
                for r in 0..16 {
                    // The kernel's online softmax, in f64 but for f16(P).
                    let (mut m, mut l, mut out) = (-65504.0f64, 0.0f64, [0.0f64; 16]);
                    for t in 0..2 {
                        let tile = 2 * blk + t;
                        let s: Vec<f64> = (0..16).map(|c| f64::from((0..16).map(|j| at(&q, blk, r, j) * at(&k, tile, c, j)).sum::<f32>())).collect();
                        let m_new = s.iter().copied().fold(m, f64::max);
                        let p: Vec<f64> = s.iter().map(|x| (x - m_new).exp()).collect();
                        let scale = (m - m_new).exp();
                        l = l * scale + p.iter().sum::<f64>();
                        for (c, o) in out.iter_mut().enumerate() {
                            *o = *o * scale + (0..16).map(|j| f64::from(half::f16::from_f64(p[j]).to_f32()) * f64::from(at(&v, tile, j, c))).sum::<f64>();
                        }
                        m = m_new;
                    }
                    for c in 0..16 {
                        let (got, want) = (o[blk * 512 + r * 16 + c], out[c] / l);
                        // f16(P) may round the other way where the driver's exp differs by an ulp.
                        assert!((f64::from(got) - want).abs() < 4e-3, "{what}: block {blk}: O[{r}][{c}] = {got}, want {want}");
                        let qk: f32 = (0..16).map(|j| at(&q, blk, r, j) * at(&k, 2 * blk, j, c)).sum();
                        assert_eq!(o[blk * 512 + 256 + r * 16 + c], qk, "{what}: block {blk}: (Q K0)[{r}][{c}]");
                    }
                }
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: {blocks} attention blocks match");
        }
    }
}

/// The CPU definition of `nv2_tensor`'s outputs (SPV_NV_cooperative_matrix2's addressing): the
/// 16x16 tile of the `rows` x `cols` tensor `a` at (`r0`, `c0`) under each clamp mode, stored as
/// the kernel stores it into 2,048 floats that start as -1.
fn nv2_tensor_reference(a: &[f32], (rows, cols): (usize, usize), (r0, c0): (usize, usize)) -> Vec<f32> {
    let clamp = |c: usize, dim: usize, mode: u32| -> Option<usize> {
        if c < dim {
            return Some(c);
        }
        match mode {
            1 => None,
            2 => Some(dim - 1),
            3 => Some(c % dim),
            _ => {
                let period = 2 * dim - 2;
                let m = c % period;
                Some(if m >= dim { period - m } else { m })
            }
        }
    };
    let tile = |mode: u32| -> Vec<f32> {
        (0..256)
            .map(|i| {
                let (r, c) = (r0 + i / 16, c0 + i % 16);
                match (clamp(r, rows, mode), clamp(c, cols, mode)) {
                    (Some(r), Some(c)) => a[r * cols + c],
                    _ => 0.5,
                }
            })
            .collect()
    };
    let mut o = vec![-1.0f32; 2048];
    let constant = tile(1);
    for (k, mode) in [1u32, 2, 3, 4].into_iter().enumerate() {
        o[k * 256..(k + 1) * 256].copy_from_slice(&tile(mode));
    }
    for r in 0..16 {
        for c in 0..16 {
            o[1024 + c * 16 + r] = constant[r * 16 + c];
            if (2..10).contains(&r) && (4..12).contains(&c) {
                o[1280 + (r - 2) * 8 + (c - 4)] = constant[r * 16 + c];
            }
            if c < 8 {
                o[1536 + 160 + r * 10 + c] = constant[r * 16 + c];
            }
        }
    }
    o
}

/// GL_NV_cooperative_matrix2 tensor addressing at sub-group scope (`nv2_tensor`): loads under
/// every clamp mode at a slice crossing the tensor's edges, stores through 2- and 3-dimensional
/// layouts (out-of-bounds elements discarded), a permuting view and a clipping one. Lowered to
/// per-element accesses and emulated on lavapipe and SwiftShader, native and lowered on the
/// H100; every element exact.
#[test]
fn glslang_coopmat2_tensor_addressing_matches_the_reference() {
    let (rows, cols, r0, c0) = (20usize, 30usize, 12usize, 20usize);
    let a: Vec<f32> = (0..rows * cols).map(|i| (i % 97) as f32 / 4.0).collect();
    let want = nv2_tensor_reference(&a, (rows, cols), (r0, c0));
    let input = common::assembled("nv2_tensor");
    let push: Vec<u8> = [rows, cols, r0, c0].iter().flat_map(|v| (*v as u32).to_le_bytes()).collect();
    for ctx in common::contexts() {
        for (target, expect_emulated, expect_lowered) in coopmat2_targets(&ctx) {
            let (words, what) = coopmat2_kernel_for(&input, "nv2_tensor", &target, (expect_emulated, expect_lowered));
            let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 2, push_constant_bytes: 16, label: "nv2_tensor", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
            let ba = ctx.buffer_from_slice(&f16_bits(&a), "A").unwrap();
            let mut bo = ctx.buffer_from_slice(&vec![-1.0f32; 2048], "O").unwrap();
            ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&ba, &bo], images: &[], push_constants: &push, groups: [1, 1, 1] }], 1, FIRST_DISPATCH)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let o: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
            let names = ["Constant", "ClampToEdge", "Repeat", "RepeatMirrored", "transposed view", "clipped view", "3-dimensional layout", "3-dimensional layout"];
            for (i, (got, want)) in o.iter().zip(&want).enumerate() {
                assert_eq!(got, want, "{what}: O[{i}] ({})", names[i / 256]);
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: tensor addressing matches");
        }
    }
}

/// llama.cpp's coopmat2 matmul at workgroup scope (`nv2_workgroup_gemm`): tiles of A and of a
/// k-contiguous B through clamped, sliced tensor layouts and a transposing view, C through a
/// column-major KHR load, the sums clamped element by element (`length()`), D = f16(sum) stored
/// transposed through a tensor layout, the f32 sums through row- and column-major KHR stores.
/// Lowered onto sub-group-scope bands everywhere (A and accumulator rows spread over the
/// sub-groups, B replicated), then emulated on lavapipe and SwiftShader and native on the
/// H100; a 100 x 72 x 48 problem leaves partial tiles at both edges. Every result exact.
#[test]
fn glslang_workgroup_scope_gemm_matches_the_reference() {
    let (m, n, k) = (100usize, 72usize, 48usize);
    let (a, b, c) = (quarters(m * k, 211), quarters(n * k, 223), quarters(m * n, 227));
    let input = common::assembled("nv2_workgroup_gemm");
    let push: Vec<u8> = [m, n, k].iter().flat_map(|v| (*v as u32).to_le_bytes()).collect();
    let (tiles_m, tiles_n) = (m.div_ceil(64), n.div_ceil(32));
    for ctx in common::contexts() {
        for (target, expect_emulated, _) in coopmat2_targets(&ctx) {
            // The workgroup size and BLOCK_SIZE share specialization constant 0, as llama.cpp's.
            let (words, what) = specialized_coopmat2_kernel_for(&input, "nv2_workgroup_gemm", &target, &[(0, 128)], (expect_emulated, Some(true)));
            let p = specialized_pipeline(&ctx, &words, &[(0, 128)], (5, 12), &what);
            let (ba, bb, bc) = (ctx.buffer_from_slice(&f16_bits(&a), "A").unwrap(), ctx.buffer_from_slice(&f16_bits(&b), "B").unwrap(), ctx.buffer_from_slice(&c, "C").unwrap());
            let mut bd = ctx.buffer_from_slice(&vec![0x7e00u16; m * n], "D").unwrap();
            let mut bs = ctx.buffer_from_slice(&vec![f32::NAN; 2 * m * n], "S").unwrap();
            let dispatch = Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bc, &bd, &bs], images: &[], push_constants: &push, groups: [tiles_m as u32, tiles_n as u32, 1] };
            ctx.run_with_timeout(&[dispatch], 1, FIRST_DISPATCH).unwrap_or_else(|e| panic!("{what}: {e}"));
            let d: Vec<u16> = ctx.read_buffer(&mut bd).unwrap();
            let s: Vec<f32> = ctx.read_buffer(&mut bs).unwrap();
            for i in 0..m {
                for j in 0..n {
                    let whole = (i / 64 + 1) * 64 <= m && (j / 32 + 1) * 32 <= n;
                    let start = if whole { c[j * m + i] } else { 0.0 };
                    let want = (start + (0..k).map(|x| a[i * k + x] * b[j * k + x]).sum::<f32>()).clamp(-8.0, 8.0);
                    assert_eq!(half::f16::from_bits(d[j * m + i]).to_f32(), want, "{what}: D[{j}][{i}]");
                    if whole {
                        assert_eq!(s[i * n + j], want, "{what}: row-major S[{i}][{j}]");
                        assert_eq!(s[m * n + j * m + i], want, "{what}: column-major S[{i}][{j}]");
                    }
                }
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: workgroup-scope GEMM matches");
        }
    }
}

/// llama.cpp's coopmat2 matmul on quantized weights (`nv2_block_loads`): D = A B at workgroup
/// scope with A decoded from 4-bit blocks in a storage buffer and B from 8-bit blocks behind a
/// buffer reference (through a transposing view, its odd rows negated through the block
/// coordinates), 80x40x96 with partial tiles. Where the target has no coopmat2 the decode
/// functions are called per element: the storage-buffer one cloned to read the buffer's words
/// by byte offset, the buffer-reference one at the block's address.
#[test]
fn glslang_block_loads_match_the_reference() {
    let (m, n, k) = (80usize, 40usize, 96usize);
    let per_row = k / 32;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(409);
    // A: per block an f16 scale in {1/8, 1/4, 1/2} and 16 bytes of two 4-bit quants each.
    let mut a_bytes = Vec::new();
    let mut a = vec![0f32; m * k];
    for row in 0..m {
        for blk in 0..per_row {
            let d = [0.125f32, 0.25, 0.5][rng.random_range(0..3)];
            a_bytes.extend(half::f16::from_f32(d).to_bits().to_le_bytes());
            let qs: Vec<u8> = (0..16).map(|_| rng.random::<u8>()).collect();
            a_bytes.extend(&qs);
            for j in 0..32 {
                let q = if j < 16 { qs[j] & 15 } else { qs[j - 16] >> 4 };
                a[row * k + blk * 32 + j] = (f32::from(q) - 8.0) * d;
            }
        }
    }
    // B (N x K): per block an f16 scale in {1/128, 1/64} and 32 signed bytes; rows n odd negated.
    let mut b_bytes = Vec::new();
    let mut b = vec![0f32; n * k];
    for col in 0..n {
        for blk in 0..per_row {
            let d = [1.0f32 / 128.0, 1.0 / 64.0][rng.random_range(0..2)];
            b_bytes.extend(half::f16::from_f32(d).to_bits().to_le_bytes());
            let qs: Vec<i8> = (0..32).map(|_| rng.random::<i8>()).collect();
            b_bytes.extend(qs.iter().map(|q| *q as u8));
            for (j, q) in qs.iter().enumerate() {
                let v = f32::from(*q) * d;
                b[col * k + blk * 32 + j] = if col % 2 == 1 { -v } else { v };
            }
        }
    }
    assert_eq!((a_bytes.len(), b_bytes.len()), (m * per_row * 18, n * per_row * 34));
    let input = common::assembled("nv2_block_loads");
    for ctx in common::contexts() {
        if !ctx.caps().buffer_device_address {
            eprintln!("{}: no bufferDeviceAddress, skipped", ctx.caps().name);
            continue;
        }
        for (target, expect_emulated, _) in coopmat2_targets(&ctx) {
            let (words, what) = specialized_coopmat2_kernel_for(&input, "nv2_block_loads", &target, &[(0, 128)], (expect_emulated, Some(true)));
            let p = specialized_pipeline(&ctx, &words, &[(0, 128)], (2, 20), &what);
            let ba = ctx.buffer_from_slice(&a_bytes, "A").unwrap();
            let bb = ctx.buffer_from_slice(&b_bytes, "B").unwrap();
            let mut bd = ctx.buffer_from_slice(&vec![f32::NAN; m * n], "D").unwrap();
            let mut push: Vec<u8> = bb.device_address().unwrap().to_le_bytes().to_vec();
            push.extend([m, n, k].iter().flat_map(|v| (*v as u32).to_le_bytes()));
            let dispatch = Dispatch { pipeline: &p, buffers: &[&ba, &bd], images: &[], push_constants: &push, groups: [m.div_ceil(64) as u32, n.div_ceil(16) as u32, 1] };
            ctx.run_with_timeout(&[dispatch], 1, FIRST_DISPATCH).unwrap_or_else(|e| panic!("{what}: {e}"));
            let d: Vec<f32> = ctx.read_buffer(&mut bd).unwrap();
            for i in 0..m {
                for j in 0..n {
                    // Multiples of 2^-10 below 2^9: exact in f32.
                    let want: f32 = (0..k).map(|x| a[i * k + x] * b[j * k + x]).sum();
                    assert_eq!(d[i * n + j], want, "{what}: D[{i}][{j}]");
                }
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: block loads match");
        }
    }
}

/// llama.cpp's coopmat2 flash attention at workgroup scope (`nv2_workgroup_attention`): 32
/// query rows over two tiles of 32 keys with an online softmax, padding replaced per element
/// by the row and column in the whole matrix, row reductions into matrices of other widths,
/// Use conversions band to band and to a replicated B matrix, a transpose, column and
/// whole-matrix reductions across the bands, and the output stored through a tensor layout and
/// by a per-element function. Lowered onto sub-group-scope bands everywhere, then emulated on
/// lavapipe and SwiftShader and native on the H100.
#[test]
fn glslang_workgroup_scope_attention_matches_the_reference() {
    let half_of = |x: Vec<f32>| -> Vec<f32> { x.iter().map(|v| v / 2.0).collect() };
    let groups = 2usize;
    let (q, k, v) = (half_of(quarters(groups * 512, 301)), half_of(quarters(groups * 1024, 303)), half_of(quarters(groups * 1024, 307)));
    let (rows, cols) = (30usize, 28usize);
    let push: Vec<u8> = [rows, cols].iter().flat_map(|v| (*v as u32).to_le_bytes()).collect();
    let input = common::assembled("nv2_workgroup_attention");
    for ctx in common::contexts() {
        for (target, expect_emulated, _) in coopmat2_targets(&ctx) {
            let (words, what) = coopmat2_kernel_for(&input, "nv2_workgroup_attention", &target, (expect_emulated, Some(true)));
            let p = ctx
                .create_pipeline(&PipelineDesc { spirv: &words, bindings: 4, push_constant_bytes: 8, label: "nv2_workgroup_attention", ..Default::default() })
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let (bq, bk, bv) = (ctx.buffer_from_slice(&q, "Q").unwrap(), ctx.buffer_from_slice(&f16_bits(&k), "K").unwrap(), ctx.buffer_from_slice(&f16_bits(&v), "V").unwrap());
            let mut bo = ctx.buffer_from_slice(&vec![f32::NAN; groups * 4096], "O").unwrap();
            ctx.run_with_timeout(&[Dispatch { pipeline: &p, buffers: &[&bq, &bk, &bv, &bo], images: &[], push_constants: &push, groups: [groups as u32, 1, 1] }], 1, FIRST_DISPATCH)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let o: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
            let f16 = |x: f32| half::f16::from_f32(x).to_f32();
            for w in 0..groups {
                let out = &o[w * 4096..(w + 1) * 4096];
                let qr = |r: usize, j: usize| f16(q[w * 512 + r * 16 + j]);
                let kt = |t: usize, c: usize, j: usize| k[(2 * w + t) * 512 + c * 16 + j];
                let vt = |t: usize, j: usize, c: usize| v[(2 * w + t) * 512 + j * 16 + c];
                let s = |t: usize, r: usize, c: usize| -> f32 {
                    match r >= rows || c >= cols {
                        true => -65504.0,
                        false => (0..16).map(|j| qr(r, j) * kt(t, c, j)).sum(),
                    }
                };
                let mut all = f32::MIN;
                for r in 0..32 {
                    // The kernel's online softmax, in f64 but for f16(P).
                    let (mut m, mut l, mut acc, mut p0) = (-65504.0f64, 0.0f64, [0.0f64; 16], Vec::new());
                    for t in 0..2 {
                        let st: Vec<f64> = (0..32).map(|c| f64::from(s(t, r, c))).collect();
                        let m_new = st.iter().copied().fold(m, f64::max);
                        let p: Vec<f64> = st.iter().map(|x| (x - m_new).exp()).collect();
                        let scale = (m - m_new).exp();
                        l = l * scale + p.iter().sum::<f64>();
                        for (c, o) in acc.iter_mut().enumerate() {
                            *o = *o * scale + (0..32).map(|j| f64::from(f16(p[j] as f32)) * f64::from(vt(t, j, c))).sum::<f64>();
                        }
                        if t == 0 {
                            p0 = p.iter().map(|x| f64::from(f16(*x as f32))).collect();
                        }
                        m = m_new;
                    }
                    for c in 0..16 {
                        let want = acc[c] / l;
                        for (at, how) in [(0, "tensor store"), (512, "per-element store")] {
                            let got = out[at + r * 16 + c];
                            assert!((f64::from(got) - want).abs() < 4e-3, "{what}: group {w}: O[{r}][{c}] ({how}) = {got}, want {want}");
                        }
                        let pk: f64 = (0..32).map(|j| p0[j] * f64::from(kt(0, j, c))).sum();
                        let got = out[1024 + r * 16 + c];
                        assert!((f64::from(got) - pk).abs() < 4e-3, "{what}: group {w}: (P K0)[{r}][{c}] = {got}, want {pk}");
                    }
                    for c in 0..32 {
                        let qk: f32 = (0..16).map(|j| qr(r, j) * kt(0, c, j)).sum();
                        assert_eq!(out[1536 + r * 32 + c], qk, "{what}: group {w}: (Q K0^T)[{r}][{c}]");
                        let colmax = (0..32).map(|i| s(0, i, c)).fold(f32::MIN, f32::max);
                        assert_eq!(out[2560 + r * 32 + c], colmax, "{what}: group {w}: column maxima [{r}][{c}]");
                        all = all.max(s(0, r, c));
                    }
                }
                assert_eq!(out[3584], all, "{what}: group {w}: maximum of S");
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: {groups} workgroup-scope attention blocks match");
        }
    }
}
