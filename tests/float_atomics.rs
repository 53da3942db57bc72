//! f32 atomic add, min and max on devices without them (VK_EXT_shader_atomic_float and _float2):
//! a kernel using them in workgroup arrays, a storage buffer and through a buffer reference runs
//! with them emulated by compare-and-swap loops on every test device, and natively where the
//! device has them, against a CPU computation. The weights are multiples of 1/8, so every sum
//! is exact in any order.

mod common;

use matbridge_runtime::{Dispatch, PipelineDesc};
use matbridge_translator::{tools, translate};
use rand::{Rng, SeedableRng};

#[test]
fn float_atomics_run_emulated_and_native() {
    let input = common::assembled("float_atomics");
    let n = 1000usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(61);
    let w: Vec<f32> = (0..n).map(|_| rng.random_range(-128i32..128) as f32 / 8.0).collect();
    let bin: Vec<u32> = (0..n).map(|_| rng.random_range(0..100)).collect();
    let (init_lo, init_hi) = (100.0f32, -100.0f32);
    let mut sums = [0.0f32; 16];
    let mut lo = [init_lo; 16];
    let mut hi = [init_hi; 16];
    let mut count = [0u32; 16];
    for (v, b) in w.iter().zip(&bin) {
        let b = (*b % 16) as usize;
        sums[b] += v;
        lo[b] = lo[b].min(*v);
        hi[b] = hi[b].max(*v);
        count[b] += 2;
    }
    let total: f32 = w.iter().sum();
    let peak = w.iter().cloned().fold(init_hi, f32::max);
    // Bins: sums[16], then 16 x { lo, hi, count }.
    let mut bins0 = vec![0u32; 16];
    for _ in 0..16 {
        bins0.extend([init_lo.to_bits(), init_hi.to_bits(), 0]);
    }
    for ctx in common::contexts() {
        let caps = ctx.caps().clone();
        let mut without = caps.clone();
        without.atomic_float32_add = false;
        without.atomic_float32_min_max = false;
        let mut targets = vec![(without, true)];
        if caps.atomic_float32_add || caps.atomic_float32_min_max {
            targets.push((caps.clone(), !(caps.atomic_float32_add && caps.atomic_float32_min_max)));
        }
        for (target, emulated) in targets {
            let (words, report) = translate(&input, &target).unwrap_or_else(|e| panic!("{}: {e}", target.name));
            let changed = report.passes.iter().any(|p| p.name == "emulate-float-atomics" && p.changed);
            assert_eq!(changed, emulated, "{report:?}");
            let what = format!(
                "{} ({})",
                caps.name,
                if !emulated {
                    "native"
                } else if target.atomic_float32_add || target.atomic_float32_min_max {
                    "partly emulated"
                } else {
                    "emulated"
                }
            );
            tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{what}: {e}"));
            let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 3, push_constant_bytes: 16, label: "float_atomics", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
            let bw = ctx.buffer_from_slice(&w, "w").unwrap();
            let bi = ctx.buffer_from_slice(&bin, "bin").unwrap();
            let mut bb = ctx.buffer_from_slice(&bins0, "bins").unwrap();
            let mut bt = ctx.buffer_from_slice(&[0.0f32, init_hi], "total").unwrap();
            let mut push = bt.device_address().unwrap().to_le_bytes().to_vec();
            push.extend((n as u32).to_le_bytes());
            push.extend(0u32.to_le_bytes());
            let groups = [n.div_ceil(64) as u32, 1, 1];
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&bw, &bb, &bi], images: &[], push_constants: &push, groups }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got: Vec<u32> = ctx.read_buffer(&mut bb).unwrap();
            let f = |i: usize| f32::from_bits(got[i]);
            for b in 0..16 {
                assert_eq!(f(b), sums[b], "{what}: sum of bin {b}");
                assert_eq!((f(16 + 3 * b), f(17 + 3 * b), got[18 + 3 * b]), (lo[b], hi[b], count[b]), "{what}: min, max and count of bin {b}");
            }
            let t: Vec<f32> = ctx.read_buffer(&mut bt).unwrap();
            assert_eq!((t[0], t[1]), (total, peak), "{what}: total and peak");
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: float atomics match");
        }
    }
}
