//! OpenCL kernels on Vulkan, against the same algorithms written for Vulkan directly:
//!
//! - the tiled local-memory GEMM of `tests/kernels/opencl/local_gemm.cl` (`gemm_tiled`, as
//!   clang-19 and llvm-spirv compile it, translated by matbridge) against
//!   `benches/kernels/gemm_tiled.wgsl` (the same tiles and loops in WGSL, compiled by naga);
//! - the DPAS GEMMs of `tests/kernels/opencl/dpas_gemm.cl` (Intel matrix-engine code, f16 ->
//!   f32, operands gathered by plain loads) and `dpas_block_gemm.cl` (operands and results
//!   through 2D block reads and writes) in Intel's sub-group-32 form and at sub-group 16, each as
//!   matbridge runs it (on the device's cooperative matrices where it lists them) and lowered to
//!   plain sub-group code;
//! - the same GEMM as Intel's Triton backend writes it (`tests/kernels/opencl/triton_gemm.cl`:
//!   operands shuffled out of one wide vector per 2D block read, VectorAnyINTEL), with 16 x 16
//!   and 32 x 32 tiles per sub-group of 16, as run and as plain sub-group code;
//! - a sub-group-16 reduction loop (`benches/kernels/subgroup_reduce.cl`, `reduce16`) against
//!   the same loop at the device's own sub-group size (`reduce_native`): the cost of sub-group
//!   size virtualization.
//!
//! `cargo bench --bench opencl_kernels [-- DEVICE... GROUP...]` (default: every Vulkan device and
//! every group: gemm_tiled, dpas_gemm, dpas_block_gemm, triton_gemm, joint_matrix_gemm, reduction). Each row
//! is the best of three timed batches (GPU timestamps). Where `MATBRIDGE_OPENCL_SPV` names a
//! folder holding `<name>.spv`, those modules are used instead of compiling the sources (machines
//! without clang-19).

use matbridge_runtime::{Context, Dispatch, Instance, InstanceOptions, KernelArg, NdRange, PipelineDesc};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn opencl(name: &str, source: &Path) -> Vec<u32> {
    if let Some(dir) = std::env::var_os("MATBRIDGE_OPENCL_SPV") {
        if let Ok(bytes) = std::fs::read(Path::new(&dir).join(format!("{name}.spv"))) {
            return bytemuck::pod_collect_to_vec(&bytes);
        }
    }
    matbridge::cli_run::compile_opencl(source).unwrap_or_else(|e| panic!("{name}: {e:#}"))
}

fn wgsl(source: &str) -> Vec<u32> {
    let module = naga::front::wgsl::parse_str(source).unwrap_or_else(|e| panic!("{}", e.emit_to_string(source)));
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all()).validate(&module).unwrap_or_else(|e| panic!("{}", e.emit_to_string(source)));
    let options = naga::back::spv::Options { lang_version: (1, 3), ..Default::default() };
    naga::back::spv::write_vec(&module, &info, &options, None).unwrap()
}

/// Best of three batches of `reps` runs of `run`, per run.
fn best(mut run: impl FnMut() -> Duration, reps: u32) -> Duration {
    (0..3).map(|_| run()).min().unwrap_or_default() / reps
}

fn gemm(ctx: &Context, size: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spirv = opencl("local_gemm", &root.join("tests/kernels/opencl/local_gemm.cl"));
    let kernel = ctx.load_kernel(&spirv, "gemm_tiled").unwrap();
    let native_spirv = wgsl(&std::fs::read_to_string(root.join("benches/kernels/gemm_tiled.wgsl")).unwrap());
    let native = ctx.create_pipeline(&PipelineDesc { spirv: &native_spirv, entry_point: "main", bindings: 4, label: "gemm_tiled.wgsl", trusted: true, ..Default::default() }).unwrap();
    let a: Vec<f32> = (0..size * size).map(|i| ((i * 7) % 13) as f32 * 0.25 - 1.5).collect();
    let b: Vec<f32> = (0..size * size).map(|i| ((i * 5) % 11) as f32 * 0.25 - 1.25).collect();
    let ba = ctx.buffer_from_slice(&a, "A").unwrap();
    let bb = ctx.buffer_from_slice(&b, "B").unwrap();
    let mut c1 = ctx.zeroed_buffer::<f32>(size * size, "C").unwrap();
    let mut c2 = ctx.zeroed_buffer::<f32>(size * size, "C").unwrap();
    let n = size as i32;
    let dims = ctx.buffer_from_slice(&[n, n, n, 0], "dims").unwrap();
    let nb = n.to_le_bytes();
    let range = NdRange { dims: 2, global: [size as u32, size as u32, 1], local: None, offset: [0; 3] };
    let args = [KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&c1), KernelArg::Bytes(&nb), KernelArg::Bytes(&nb), KernelArg::Bytes(&nb)];
    let reps = if ctx.caps().device_type == matbridge::translator::profile::DeviceType::Cpu { 2 } else { 20 };
    ctx.launch(&kernel, &range, &args).unwrap();
    let t_cl = best(|| ctx.launch_specialized(&kernel, &range, &args, &[], reps).unwrap().gpu_time.unwrap_or_default(), reps);
    let groups = [(size / 16) as u32, (size / 16) as u32, 1];
    let bufs = [&ba, &bb, &c2, &dims];
    let d = [Dispatch { pipeline: &native, buffers: &bufs, images: &[], push_constants: &[], groups }];
    ctx.run(&d).unwrap();
    let t_vk = best(|| ctx.run_repeated(&d, reps).unwrap().gpu_time.unwrap_or_default(), reps);
    let r1: Vec<f32> = ctx.read_buffer(&mut c1).unwrap();
    let r2: Vec<f32> = ctx.read_buffer(&mut c2).unwrap();
    assert_eq!(r1, r2, "the translated and the native GEMM disagree");
    let flops = 2.0 * (size as f64).powi(3);
    let gf = |t: Duration| flops / t.as_secs_f64() / 1e9;
    println!(
        "{:<34} gemm_tiled {size}^3: OpenCL translated {:>9.3} ms {:>8.1} GFLOP/s | WGSL native {:>9.3} ms {:>8.1} GFLOP/s | translated/native time {:.2}x",
        ctx.caps().name,
        t_cl.as_secs_f64() * 1e3,
        gf(t_cl),
        t_vk.as_secs_f64() * 1e3,
        gf(t_vk),
        t_cl.as_secs_f64() / t_vk.as_secs_f64()
    );
}

/// The GEMM of `tests/kernels/opencl/<name>.cl` through each of its `kernels` (entry point,
/// edge of the square tile of D one sub-group computes, required sub-group size).
fn dpas_gemm(ctx: &Context, name: &str, size: usize, kernels: &[(&str, usize, u32)]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spirv = opencl(name, &root.join(format!("tests/kernels/opencl/{name}.cl")));
    let a: Vec<half::f16> = (0..size * size).map(|i| half::f16::from_f32(((i * 7) % 13) as f32 * 0.25 - 1.5)).collect();
    let b: Vec<half::f16> = (0..size * size).map(|i| half::f16::from_f32(((i * 5) % 11) as f32 * 0.25 - 1.25)).collect();
    let (ba, bb) = (ctx.buffer_from_slice(&a, "A").unwrap(), ctx.buffer_from_slice(&b, "B").unwrap());
    let n = (size as i32).to_le_bytes();
    let reps = if ctx.caps().device_type == matbridge::translator::profile::DeviceType::Cpu { 1 } else { 20 };
    // Each kernel translated for the device as it is, and without its cooperative matrices
    // (plain sub-group code).
    let mut plain_caps = ctx.caps().clone();
    plain_caps.cooperative_matrix.clear();
    let plain = |entry: &str| {
        let mut module = matbridge::translator::Module::from_words(&spirv).unwrap();
        matbridge::translator::kernel::keep_entry_point(&mut module, entry).unwrap();
        let (words, _) = matbridge::translator::translate(&module.to_words(), &plain_caps).unwrap();
        ctx.load_kernel(&words, entry).unwrap()
    };
    let flops = 2.0 * (size as f64).powi(3);
    let mut results: Vec<Vec<f32>> = Vec::new();
    let mut line = format!("{:<34} {name} {size}^3:", ctx.caps().name);
    for &(entry, tile, sg) in kernels {
        for (form, kernel) in [("as run", ctx.load_kernel(&spirv, entry).unwrap()), ("plain", plain(entry))] {
            let mut d = ctx.zeroed_buffer::<f32>(size * size, "D").unwrap();
            let tiles = (size / tile * (size / tile)) as u32;
            let range = NdRange::linear(tiles * sg, Some(4 * sg));
            let args = [KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&d), KernelArg::Bytes(&n), KernelArg::Bytes(&n), KernelArg::Bytes(&n)];
            ctx.launch(&kernel, &range, &args).unwrap();
            let t = best(|| ctx.launch_specialized(&kernel, &range, &args, &[], reps).unwrap().gpu_time.unwrap_or_default(), reps);
            results.push(ctx.read_buffer(&mut d).unwrap());
            line += &format!(" | {entry} {form} {:>8.3} ms {:>7.2} TFLOP/s", t.as_secs_f64() * 1e3, flops / t.as_secs_f64() / 1e12);
        }
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]), "the {name} variants disagree");
    println!("{line}");
}

/// The joint-matrix GEMMs of `tests/kernels/opencl/joint_matrix_gemm.ll` (DPC++'s KHR form; each
/// sub-group a 32 x 32 tile of D): the plain and checked kernels at `size`^3, where every tile is
/// whole, and the checked ones at `size - 6`, where the tiles at the edges of M, N and K go
/// element by element.
fn joint_matrix_gemm(ctx: &Context, size: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spirv = opencl("joint_matrix_gemm", &root.join("tests/kernels/opencl/joint_matrix_gemm.ll"));
    let reps = if ctx.caps().device_type == matbridge::translator::profile::DeviceType::Cpu { 1 } else { 10 };
    let kernels: [(&str, u32, &[usize]); 6] = [
        ("jm_gemm_16x16_sg32", 32, &[size]),
        ("jm_gemm_16x16_sg32_checked", 32, &[size, size - 6]),
        ("jm_gemm_8x16_sg32", 32, &[size]),
        ("jm_gemm_8x16_sg32_checked", 32, &[size, size - 6]),
        ("jm_gemm_8x16_sg16_checked", 16, &[size, size - 6]),
        ("jm_gemm_8x16_sg8_checked", 8, &[size, size - 6]),
    ];
    let native = |words: &[u32]| matbridge::translator::Module::from_words(words).is_ok_and(|m| m.functions.iter().flat_map(|f| f.insts()).any(|i| i.is(spirv::Op::CooperativeMatrixMulAddKHR)));
    for (entry, sg, sizes) in kernels {
        let kernel = match ctx.load_kernel(&spirv, entry) {
            Ok(k) => k,
            Err(e) => {
                println!("{:<34} joint_matrix_gemm {entry}: not run: {e}", ctx.caps().name);
                continue;
            }
        };
        let mut line = format!("{:<34} joint_matrix_gemm {entry} ({}):", ctx.caps().name, if native(kernel.spirv()) { "cooperative matrices" } else { "emulated" });
        for &s in sizes {
            let a: Vec<half::f16> = (0..s * s).map(|i| half::f16::from_f32(((i * 7) % 13) as f32 * 0.25 - 1.5)).collect();
            let b: Vec<half::f16> = (0..s * s).map(|i| half::f16::from_f32(((i * 5) % 11) as f32 * 0.25 - 1.25)).collect();
            let (ba, bb) = (ctx.buffer_from_slice(&a, "A").unwrap(), ctx.buffer_from_slice(&b, "B").unwrap());
            let d = ctx.zeroed_buffer::<f32>(s * s, "D").unwrap();
            let n = (s as i32).to_le_bytes();
            let tiles = (s.div_ceil(32) * s.div_ceil(32)).div_ceil(4) as u32 * 4;
            let range = NdRange::linear(tiles * sg, Some(4 * sg));
            let args = [KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&d), KernelArg::Bytes(&n), KernelArg::Bytes(&n), KernelArg::Bytes(&n)];
            let first = ctx.launch_specialized(&kernel, &range, &args, &[], 1).unwrap().gpu_time.unwrap_or_default();
            // Emulated kernels run for seconds: fewer repetitions.
            let reps = if first > Duration::from_millis(200) { 1 } else { reps };
            let t = best(|| ctx.launch_specialized(&kernel, &range, &args, &[], reps).unwrap().gpu_time.unwrap_or_default(), reps);
            line += &format!(" | {s}^3 {:>9.3} ms {:>7.2} TFLOP/s", t.as_secs_f64() * 1e3, 2.0 * (s as f64).powi(3) / t.as_secs_f64() / 1e12);
        }
        println!("{line}");
    }
}

fn reduction(ctx: &Context, items: usize, loops: i32) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spirv = opencl("subgroup_reduce", &root.join("benches/kernels/subgroup_reduce.cl"));
    let input: Vec<u32> = (0..items as u32).map(|i| i % 251).collect();
    let bi = ctx.buffer_from_slice(&input, "in").unwrap();
    let bo = ctx.zeroed_buffer::<u32>(items, "out").unwrap();
    let lb = loops.to_le_bytes();
    let reps = if ctx.caps().device_type == matbridge::translator::profile::DeviceType::Cpu { 2 } else { 20 };
    let mut times = Vec::new();
    for entry in ["reduce16", "reduce_native"] {
        let k = ctx.load_kernel(&spirv, entry).unwrap();
        let range = NdRange::linear(items as u32, Some(64));
        let args = [KernelArg::Buffer(&bi), KernelArg::Buffer(&bo), KernelArg::Bytes(&lb)];
        ctx.launch(&k, &range, &args).unwrap();
        times.push((best(|| ctx.launch_specialized(&k, &range, &args, &[], reps).unwrap().gpu_time.unwrap_or_default(), reps), k.abi().subgroup_size_virtualized));
    }
    // Reductions per second, counting one per invocation and loop trip.
    let per = |t: Duration| (items as f64 * loops as f64) / t.as_secs_f64() / 1e9;
    println!(
        "{:<34} sub_group_reduce_add x{loops} over {items}: size 16 ({}) {:>8.3} G/s | native size {} {:>8.3} G/s | time {:.2}x",
        ctx.caps().name,
        if times[0].1 { "virtualized" } else { "native" },
        per(times[0].0),
        ctx.caps().subgroup_size,
        per(times[1].0),
        times[0].0.as_secs_f64() / times[1].0.as_secs_f64()
    );
}

fn main() {
    matbridge_runtime::loader_env::configure();
    const GROUPS: [&str; 6] = ["gemm_tiled", "dpas_gemm", "dpas_block_gemm", "triton_gemm", "joint_matrix_gemm", "reduction"];
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let (groups, wanted): (Vec<String>, Vec<String>) = args.into_iter().partition(|a| GROUPS.contains(&a.as_str()));
    let runs = |group: &str| groups.is_empty() || groups.iter().any(|g| g == group);
    let instance = Arc::new(Instance::new(&InstanceOptions::from_env()).expect("Vulkan instance"));
    let devices = matbridge_runtime::enumerate_devices(&instance).expect("devices");
    for d in &devices {
        if !wanted.is_empty() && !wanted.iter().any(|w| d.name.to_lowercase().contains(&w.to_lowercase())) {
            continue;
        }
        let ctx = Context::with_instance(instance.clone(), &matbridge_runtime::DeviceSelector::Index(d.index)).expect("device");
        let cpu = ctx.caps().device_type == matbridge::translator::profile::DeviceType::Cpu;
        if runs("gemm_tiled") {
            gemm(&ctx, if cpu { 256 } else { 2048 });
        }
        let dpas_size = if cpu { 128 } else { 4096 };
        for name in ["dpas_gemm", "dpas_block_gemm"].into_iter().filter(|n| runs(n)) {
            let (sg32, sg16) = (format!("{name}_sg32"), format!("{name}_sg16"));
            dpas_gemm(&ctx, name, dpas_size, &[(&sg32, 32, 32), (&sg16, 32, 16)]);
        }
        if runs("triton_gemm") {
            dpas_gemm(&ctx, "triton_gemm", dpas_size, &[("triton_gemm", 16, 16), ("triton_gemm_wide", 32, 16)]);
        }
        if runs("joint_matrix_gemm") {
            joint_matrix_gemm(&ctx, if cpu { 128 } else { 4096 });
        }
        if runs("reduction") {
            reduction(&ctx, if cpu { 1 << 14 } else { 1 << 22 }, if cpu { 64 } else { 256 });
        }
    }
}
