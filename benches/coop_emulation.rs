//! Cooperative-matrix emulation speed on every Vulkan device that opens (or those named):
//! - the staged cooperative-matrix GEMM (`tests/kernels/coop_gemm_staged.wgsl`, f16 -> f32,
//!   widened where the device has no f16) at 512^3, emulated by matbridge, and native where the device
//!   lists its fragment shape; pipeline creation and run time;
//! - the register-tiled GEMM (`tests/kernels/coop_gemm_tiled.wgsl`) likewise, and without its
//!   fragment loads and MulAdds (the part emulated and native runs share);
//! - the matmul API's own path on the device (subgroup tiled on devices without cooperative
//!   matrices) and its CPU path, same size and types;
//! - the cost of one emulated MulAdd (with its two fragment loads from workgroup memory) per
//!   sub-group, for every lane count the emulation can spread a fragment over on the device;
//! - the GEMMs as public Vulkan cooperative-matrix code writes them (glslang output in the
//!   forms of llama.cpp's `mul_mm` and vk_cooperative_matrix_perf's shared-memory kernel, every
//!   size a specialization constant), emulated and native, f16 -> f32 at 512^3.
//!
//! `cargo bench --bench coop_emulation [-- [--public] NAME...]` (device name substrings; default:
//! all; `--public` runs the public-style kernels only)

#[path = "../tests/common/mod.rs"]
mod common;

use matbridge::matmul::api::Matbridge;
use matbridge::matmul::MatmulDesc;
use matbridge::DType;
use matbridge_runtime::{Context, DeviceSelector, Dispatch, PipelineDesc};
use matbridge_translator::{translate, DeviceCaps};
use std::time::Instant;

const GEMM: &str = include_str!("../tests/kernels/coop_gemm_staged.wgsl");
const LOOP: &str = include_str!("../tests/kernels/coop_muladd_loop.wgsl");
const TILED: &str = include_str!("../tests/kernels/coop_gemm_tiled.wgsl");
const SIZE: usize = 512;

fn source(template: &str, elem: &str, frag: u32) -> String {
    template.replace("ELEM", elem).replace("FRAG", &frag.to_string()).replace("MAT", &format!("coop_mat{frag}x{frag}"))
}

/// Translates `words` for `target`; `None` where native is asked for and the device would
/// need emulation.
fn translated(words: &[u32], target: &DeviceCaps, native: bool) -> Option<Vec<u32>> {
    let (out, report) = translate(words, target).expect("translate");
    let emulated = report.passes.iter().any(|p| p.name == "emulate-cooperative-matrix" && p.changed);
    (emulated != native).then_some(out)
}

fn without_coop(caps: &DeviceCaps) -> DeviceCaps {
    let mut c = caps.clone();
    c.cooperative_matrix.clear();
    c
}

/// Best GPU (or wall) seconds of `reps` timed runs after one warm-up.
fn time(ctx: &Context, d: &[Dispatch<'_>], reps: u32) -> f64 {
    ctx.run(d).expect("run");
    (0..reps).map(|_| ctx.run(d).expect("run")).map(|s| s.gpu_time.unwrap_or(s.wall_time).as_secs_f64()).fold(f64::INFINITY, f64::min)
}

/// One GEMM kernel at SIZE^3 (f16 or f32 operands, f32 C): translated for the device (native)
/// or for it without cooperative matrices (emulated), timed, and printed as `what`.
fn time_gemm(ctx: &Context, wgsl: &str, elem: &str, push: &[u8], groups: [u32; 3], native: bool, what: &str) {
    let input = common::wgsl(what, wgsl);
    let target = if native { ctx.caps().clone() } else { without_coop(ctx.caps()) };
    let Some(words) = translated(&input, &target, native) else { return };
    let t = Instant::now();
    let pipeline = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 3, push_constant_bytes: push.len() as u32, label: "coop GEMM", ..Default::default() }).expect("pipeline");
    let created = t.elapsed().as_secs_f64();
    let n = SIZE;
    let bytes = if elem == "f16" { 2 } else { 4 };
    let a = ctx.zeroed_buffer::<u8>(n * n * bytes, "a").expect("a");
    let b = ctx.zeroed_buffer::<u8>(n * n * bytes, "b").expect("b");
    let c = ctx.zeroed_buffer::<f32>(n * n, "c").expect("c");
    let secs = time(ctx, &[Dispatch { pipeline: &pipeline, buffers: &[&a, &b, &c], images: &[], push_constants: push, groups }], 3);
    let how = if native { "native (driver)" } else { "emulated (matbridge)" };
    println!("  {what}, {how}: pipeline {created:.2} s, {:.2} GFLOP/s ({:.1} ms)", 2.0 * (n * n * n) as f64 / secs / 1e9, secs * 1e3);
}

/// The staged GEMM (2x2 fragments per workgroup) at SIZE^3.
fn gemm(ctx: &Context, elem: &str, frag: u32, native: bool) {
    let n = SIZE as u32;
    let mut push: Vec<u8> = [n; 3].iter().flat_map(|v| v.to_le_bytes()).collect();
    push.extend(1f32.to_le_bytes());
    push.extend(0f32.to_le_bytes());
    let tile = 2 * frag;
    let what = format!("staged coop GEMM {elem}->f32 {frag}x{frag}x{frag} fragments");
    time_gemm(ctx, &source(GEMM, elem, frag), elem, &push, [n / tile, n / tile, 1], native, &what);
}

/// The register-tiled GEMM (`tm` x `tn` fragments per sub-group, 2x2 sub-groups) at SIZE^3.
fn tiled(ctx: &Context, elem: &str, frag: u32, (tm, tn): (u32, u32), native: bool) {
    let sg = ctx.caps().subgroup_size;
    let text = TILED.replace("TM", &tm.to_string()).replace("TN", &tn.to_string()).replace("THREADS", &(4 * sg).to_string());
    let n = SIZE as u32;
    let push: Vec<u8> = [n; 3].iter().flat_map(|v| v.to_le_bytes()).collect();
    let (bm, bn) = (2 * tm * frag, 2 * tn * frag);
    let what = format!("tiled coop GEMM {elem}->f32 {frag}x{frag}x{frag} fragments, {tm}x{tn} per sub-group");
    time_gemm(ctx, &source(&text, elem, frag), elem, &push, [n / bn, n / bm, 1], native, &what);
}

/// The register-tiled GEMM without its fragment loads and MulAdds: the staging copies, barriers
/// and stores that the driver's cooperative matrices and matbridge's emulation both run, which
/// bound how much faster one can make the whole kernel than the other.
fn tiled_shared_part(ctx: &Context, elem: &str, frag: u32, per: (u32, u32)) {
    let start = TILED.find("        for (var kk = 0u;").expect("the MulAdd loop");
    let end = start + TILED[start..].find("        workgroupBarrier();").expect("the barrier after it");
    let text = format!("{}{}", &TILED[..start], &TILED[end..]);
    let sg = ctx.caps().subgroup_size;
    let text = text.replace("TM", &per.0.to_string()).replace("TN", &per.1.to_string()).replace("THREADS", &(4 * sg).to_string());
    let n = SIZE as u32;
    let push: Vec<u8> = [n; 3].iter().flat_map(|v| v.to_le_bytes()).collect();
    let (bm, bn) = (2 * per.0 * frag, 2 * per.1 * frag);
    let what = format!("tiled coop GEMM {elem}->f32 {frag}x{frag}x{frag} fragments, {}x{} per sub-group, without its MulAdds (shared part)", per.0, per.1);
    time_gemm(ctx, &source(&text, elem, frag), elem, &push, [n / bn, n / bm, 1], false, &what);
}

/// A specialized public-style kernel translated for the device (native) or for it without
/// cooperative matrices (emulated): its pipeline and how long creating it took; `None` where
/// native is asked for and the device would need emulation.
fn public_pipeline(ctx: &Context, name: &str, spec: &[(u32, u32)], bindings: u32, push: u32, native: bool) -> Option<(matbridge_runtime::Pipeline, f64)> {
    let target = if native { ctx.caps().clone() } else { without_coop(ctx.caps()) };
    let (words, report) = matbridge_translator::translate_specialized(&common::assembled(name), &target, spec).expect("translate");
    let emulated = report.passes.iter().any(|p| p.name == "emulate-cooperative-matrix" && p.changed);
    if emulated == native {
        return None;
    }
    let spec: Vec<_> = spec.iter().map(|&(id, v)| matbridge_runtime::SpecConstant::u32(id, v)).collect();
    let t = Instant::now();
    let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings, push_constant_bytes: push, spec_constants: &spec, label: name, ..Default::default() }).expect("pipeline");
    Some((p, t.elapsed().as_secs_f64()))
}

/// Times the first run of `d` (where lavapipe compiles the pipeline), then the best of three.
fn report(ctx: &Context, d: &[Dispatch<'_>], what: &str, native: bool, created: f64) {
    let t = Instant::now();
    ctx.run_with_timeout(d, 1, std::time::Duration::from_secs(1800)).expect("first run");
    let first = t.elapsed().as_secs_f64();
    let secs = time(ctx, d, 3);
    let n = SIZE as f64;
    let how = if native { "native (driver)" } else { "emulated (matbridge)" };
    println!("  {what}, {how}: pipeline {created:.2} s, first run {first:.2} s, {:.2} GFLOP/s ({:.1} ms)", 2.0 * n * n * n / secs / 1e9, secs * 1e3);
}

/// llama.cpp's `mul_mm` as glslang writes it (`khr_mul_mm`): four warps of 2x2 `frag` fragments,
/// f16 A and f32 B staged as f16, D = A * B^T.
fn llama_mul_mm(ctx: &Context, frag: u32, native: bool) {
    let sg = ctx.caps().subgroup_size;
    let wm = 2 * frag;
    let spec = [(0, 4 * sg), (1, 2 * wm), (2, 2 * wm), (3, 16), (4, wm), (5, wm), (6, frag), (7, frag), (8, frag), (9, sg)];
    let Some((p, created)) = public_pipeline(ctx, "khr_mul_mm", &spec, 3, 28, native) else { return };
    let n = SIZE;
    let a = ctx.zeroed_buffer::<u16>(n * n, "a").expect("a");
    let b = ctx.zeroed_buffer::<f32>(n * n, "b").expect("b");
    let d = ctx.zeroed_buffer::<f32>(n * n, "d").expect("d");
    let mut push: Vec<u8> = [n; 6].iter().flat_map(|v| (*v as u32).to_le_bytes()).collect();
    push.extend(1f32.to_le_bytes());
    let blocks = (n / (2 * wm as usize)) as u32;
    let run = [Dispatch { pipeline: &p, buffers: &[&a, &b, &d], images: &[], push_constants: &push, groups: [blocks * blocks, 1, 1] }];
    report(ctx, &run, &format!("llama.cpp-style mul_mm f16->f32 {frag}x{frag}x{frag} fragments"), native, created);
}

/// vk_cooperative_matrix_perf's shared-memory kernel as glslang writes it (`khr_shmem_gemm`):
/// operands behind buffer references, 2x2 `frag` fragments per sub-group.
fn perf_shmem(ctx: &Context, frag: u32, native: bool) {
    if !ctx.caps().buffer_device_address {
        return;
    }
    let n = SIZE as u32;
    let spec = [
        (0, frag),
        (1, frag),
        (2, frag),
        (3, 4 * frag),
        (4, 4 * frag),
        (5, 2 * frag),
        (6, n),
        (7, n),
        (8, n),
        (9, n),
        (10, n),
        (11, 1f32.to_bits()),
        (12, 0f32.to_bits()),
        (13, 0),
        (14, 4 * ctx.caps().subgroup_size),
    ];
    let Some((p, created)) = public_pipeline(ctx, "khr_shmem_gemm", &spec, 1, 0, native) else { return };
    let size = SIZE * SIZE;
    let a = ctx.zeroed_buffer::<u16>(size, "a").expect("a");
    let b = ctx.zeroed_buffer::<u16>(size, "b").expect("b");
    let c = ctx.zeroed_buffer::<f32>(size, "c").expect("c");
    let d = ctx.zeroed_buffer::<f32>(size, "d").expect("d");
    let params: Vec<u64> = [&a, &b, &c, &d].iter().map(|x| x.device_address().expect("address")).collect();
    let params = ctx.buffer_from_slice(&params, "params").expect("params");
    let tiles = n / (4 * frag);
    let run = [Dispatch { pipeline: &p, buffers: &[&params], images: &[], push_constants: &[], groups: [tiles, tiles, 1] }];
    report(ctx, &run, &format!("vk_cooperative_matrix_perf-style shmem f16->f32 {frag}x{frag}x{frag} fragments"), native, created);
}

fn api(mb: &Matbridge, dtype: DType, what: &str) {
    let desc = MatmulDesc::new(SIZE, SIZE, SIZE, dtype);
    let r = desc.resolve().expect("desc");
    let a = mb.dyn_zeros(dtype, &[r.a.len]).expect("a");
    let b = mb.dyn_zeros(dtype, &[r.b.len]).expect("b");
    let mut c = mb.dyn_zeros(desc.out, &[r.c.len]).expect("c");
    mb.matmul_dyn(&desc, &a, &b, &mut c).expect("warm-up");
    let run = mb.matmul_dyn_repeated(&desc, &a, &b, &mut c, 3).expect("matmul");
    println!("  matmul API {what} ({}): {:.2} GFLOP/s ({:.1} ms)", run.path, 2.0 * (SIZE * SIZE * SIZE) as f64 / run.time.as_secs_f64() / 1e9, run.time.as_secs_f64() * 1e3);
}

fn muladd_cost(ctx: &Context, elem: &str, frag: u32) {
    let reps = 256u32;
    let input = common::wgsl("coop_muladd_loop", &source(LOOP, elem, frag).replace("REPS", &reps.to_string()));
    let sg = ctx.caps().subgroup_size;
    // (label, target): every lane count the emulation can use here, then the driver's own.
    let mut runs: Vec<(String, DeviceCaps, bool)> = Vec::new();
    let mut lanes = 4;
    while lanes <= sg.min(frag) {
        let mut target = without_coop(ctx.caps());
        target.min_subgroup_size = lanes;
        runs.push((format!("emulated over {lanes} of {sg} lanes"), target, false));
        lanes *= 2;
    }
    runs.push(("native (driver)".into(), ctx.caps().clone(), true));
    for (label, target, native) in runs {
        let Some(words) = translated(&input, &target, native) else { continue };
        let t = Instant::now();
        let pipeline = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 1, label: "coop_muladd_loop", ..Default::default() }).expect("pipeline");
        let created = t.elapsed().as_secs_f64();
        let groups = 64u32;
        let subgroups = groups * (64 / sg);
        let out = ctx.zeroed_buffer::<f32>((subgroups * frag * frag) as usize, "out").expect("out");
        let secs = time(ctx, &[Dispatch { pipeline: &pipeline, buffers: &[&out], images: &[], push_constants: &[], groups: [groups, 1, 1] }], 3);
        let per = secs / (subgroups * reps) as f64;
        let flops = 2.0 * (frag * frag * frag) as f64 / per / 1e9;
        println!("  one {frag}x{frag}x{frag} {elem} MulAdd + 2 fragment loads, {label}: {:.3} us per sub-group ({flops:.2} GFLOP/s per sub-group; pipeline {created:.2} s)", per * 1e6);
    }
}

fn main() {
    common::setup();
    let public_only = std::env::args().any(|a| a == "--public");
    let names: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let names = if names.is_empty() { vec!["llvmpipe".to_string(), "SwiftShader".to_string(), "NVIDIA".to_string()] } else { names };
    for name in names {
        let ctx = match Context::new(&DeviceSelector::Name(name.clone())) {
            Ok(c) => c,
            Err(e) => {
                println!("{name}: {e}");
                continue;
            }
        };
        let caps = ctx.caps().clone();
        println!("{} (sub-group {}, {} cooperative-matrix shapes listed)", caps.name, caps.subgroup_size, caps.cooperative_matrix.len());
        let elem = "f16";
        if !public_only {
            // f16 everywhere: devices without 16-bit types (SwiftShader) run it widened.
            for frag in [16, 8] {
                gemm(&ctx, elem, frag, false);
                gemm(&ctx, elem, frag, true);
            }
            for (frag, per) in [(16, (2, 2)), (8, (4, 4))] {
                tiled(&ctx, elem, frag, per, false);
                tiled(&ctx, elem, frag, per, true);
                tiled_shared_part(&ctx, elem, frag, per);
            }
        }
        for frag in [16, 8] {
            for native in [false, true] {
                llama_mul_mm(&ctx, frag, native);
                perf_shmem(&ctx, frag, native);
            }
        }
        if public_only {
            continue;
        }
        let dtype = if elem == "f16" { DType::F16 } else { DType::F32 };
        api(&Matbridge::with_context(ctx.clone()), dtype, "on the device");
        for frag in [16, 8] {
            muladd_cost(&ctx, elem, frag);
        }
    }
    if !public_only {
        api(&Matbridge::cpu(), DType::F16, "on the CPU");
    }
}
