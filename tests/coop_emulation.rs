//! The project's own KHR cooperative-matrix kernels, translated for each test device and run
//! there against a CPU computation: emulated with subgroup code where the device has no
//! cooperative matrices (lavapipe, SwiftShader), native where it lists the shapes (the H100),
//! and emulated on the H100 too by translating for its profile without cooperative matrices.

mod common;

use matbridge_runtime::{Context, Dispatch, PipelineDesc};
use matbridge_translator::{tools, translate, DeviceCaps};
use rand::{Rng, SeedableRng};

const GEMM: &str = include_str!("kernels/coop_gemm_staged.wgsl");

/// The targets to translate for on `ctx`: the device itself, and where it has cooperative
/// matrices, the same device without them (the emulation at its subgroup size).
fn targets(ctx: &Context) -> Vec<(DeviceCaps, bool)> {
    let caps = ctx.caps().clone();
    let mut out = vec![(caps.clone(), !caps.has_cooperative_matrix())];
    if caps.has_cooperative_matrix() {
        let mut plain = caps;
        plain.cooperative_matrix.clear();
        out.push((plain, true));
    }
    out
}

/// How many instructions a translation rewrote in the emulation pass.
fn emulated(report: &matbridge_translator::Report) -> usize {
    report.passes.iter().filter(|p| p.name == "emulate-cooperative-matrix").map(|p| p.rewritten.values().sum::<usize>()).sum()
}

/// Runs the staged GEMM (`elem` = "f32" or "f16") at m x n x k on `ctx` translated for `target`
/// and compares it with an f64 computation from the same rounded operands.
fn run_gemm(ctx: &Context, target: &DeviceCaps, expect_emulated: bool, elem: &str, (m, n, k): (usize, usize, usize), seed: u64) {
    let what = format!("{} ({}) {elem} {m}x{n}x{k}", ctx.caps().name, if expect_emulated { "emulated" } else { "native" });
    eprintln!("{what}");
    let input = common::wgsl("coop_gemm_staged", &GEMM.replace("ELEM", elem));
    let (words, report) = translate(&input, target).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(emulated(&report) > 0, expect_emulated, "{what}: {report:?}");
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
    let groups = [n.div_ceil(32) as u32, m.div_ceil(32) as u32, 1];
    ctx.run(&[Dispatch { pipeline: &pipeline, buffers: &[&ba, &bb, &bc], push_constants: &push, groups }]).unwrap_or_else(|e| panic!("{what}: {e}"));
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
            run_gemm(&ctx, &target, expect_emulated, "f32", (96, 64, 80), 1);
            if target.shader_float16 && target.storage_buffer_16bit {
                run_gemm(&ctx, &target, expect_emulated, "f16", (64, 96, 48), 2);
            }
        }
    }
}
