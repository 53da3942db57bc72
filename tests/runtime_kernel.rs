//! The runtime end to end: a naga-compiled kernel with push constants and a subgroup reduction,
//! dispatched on every test device with validation on, compared with a CPU computation.

mod common;

use matbridge_runtime::{Dispatch, Error, MemoryKind, PipelineDesc, SpecConstant};

#[test]
fn axpy_with_subgroup_reduction_matches_cpu() {
    let spirv = common::wgsl("axpy_reduce", include_str!("kernels/axpy_reduce.wgsl"));
    for ctx in common::contexts() {
        let name = ctx.caps().name.clone();
        let n: u32 = 1000;
        let alpha = 1.5f32;
        let x: Vec<f32> = (0..n).map(|i| (i % 17) as f32 - 8.0).collect();
        let y0: Vec<f32> = (0..n).map(|i| (i % 5) as f32 * 0.25).collect();
        let xb = ctx.buffer_from_slice(&x, "x").unwrap();
        let mut yb = ctx.buffer_from_slice(&y0, "y").unwrap();
        let mut sums = ctx.zeroed_buffer::<f32>(n as usize, "sums").unwrap();
        let mut info = ctx.zeroed_buffer::<u32>(1, "info").unwrap();
        let pipeline = ctx.create_pipeline(&PipelineDesc { spirv: &spirv, bindings: 4, push_constant_bytes: 8, label: "axpy", ..Default::default() }).unwrap();
        let mut push = Vec::new();
        push.extend_from_slice(&n.to_le_bytes());
        push.extend_from_slice(&alpha.to_le_bytes());
        let stats = ctx.run(&[Dispatch { pipeline: &pipeline, buffers: &[&xb, &yb, &sums, &info], images: &[], push_constants: &push, groups: [n.div_ceil(64), 1, 1] }]).unwrap();
        assert!(stats.wall_time.as_nanos() > 0);
        let y: Vec<f32> = ctx.read_buffer(&mut yb).unwrap();
        let expected: Vec<f32> = x.iter().zip(&y0).map(|(x, y)| alpha * x + y).collect();
        assert_eq!(y, expected, "{name}: axpy");
        let sg = ctx.read_buffer::<u32>(&mut info).unwrap()[0];
        assert_eq!(sg, ctx.caps().subgroup_size, "{name}: subgroup size seen by the kernel");
        let got_sums: Vec<f32> = ctx.read_buffer(&mut sums).unwrap();
        for (i, s) in got_sums.iter().enumerate() {
            let start = i / sg as usize * sg as usize;
            let want: f32 = expected[start..(start + sg as usize).min(n as usize)].iter().sum();
            assert!((s - want).abs() <= 1e-4 * want.abs().max(1.0), "{name}: subgroup sum at {i}: {s} vs {want}");
        }
        ctx.check_validation().unwrap();
    }
}

#[test]
fn wrong_sizes_and_bindings_are_errors_not_panics() {
    let spirv = common::wgsl("axpy_reduce", include_str!("kernels/axpy_reduce.wgsl"));
    for ctx in common::contexts() {
        let mut b = ctx.create_buffer(16, MemoryKind::DeviceLocal, "b").unwrap();
        match ctx.write_buffer(&mut b, &[1.0f32; 3]) {
            Err(Error::SizeMismatch { expected: 16, given: 12, .. }) => {}
            other => panic!("expected a size mismatch, got {other:?}"),
        }
        assert!(matches!(ctx.read_buffer::<[u8; 3]>(&mut b), Err(Error::SizeMismatch { .. })));
        let pipeline = ctx.create_pipeline(&PipelineDesc { spirv: &spirv, bindings: 4, push_constant_bytes: 8, ..Default::default() }).unwrap();
        let err = ctx.run(&[Dispatch { pipeline: &pipeline, buffers: &[&b], images: &[], push_constants: &[0; 8], groups: [1, 1, 1] }]).unwrap_err();
        assert!(err.to_string().contains("has 4 bindings, the dispatch gives 1 (buffers: 1, images: 0)"), "{err}");
        let err = ctx.run(&[Dispatch { pipeline: &pipeline, buffers: &[&b, &b, &b, &b], images: &[], push_constants: &[0; 4], groups: [1, 1, 1] }]).unwrap_err();
        assert!(matches!(err, Error::SizeMismatch { expected: 8, given: 4, .. }), "{err}");
        let bad = ctx.create_pipeline(&PipelineDesc { spirv: &[1, 2, 3], ..Default::default() }).unwrap_err();
        assert!(matches!(bad, Error::InvalidSpirv(_)), "{bad}");
        // A real kernel cut inside its last instruction, and one whose instruction lost operands:
        // refused with the word offset before the driver sees them.
        let cut = &spirv[..spirv.len() - 1];
        let bad = ctx.create_pipeline(&PipelineDesc { spirv: cut, bindings: 4, push_constant_bytes: 8, ..Default::default() }).unwrap_err();
        assert!(matches!(bad, Error::InvalidSpirv(ref m) if m.contains("word offset")), "{bad}");
        let mut short = spirv.clone();
        let type_int = spirv::Op::TypeInt as u32;
        let at = (5..short.len()).find(|&i| short[i] & 0xffff == type_int).expect("an OpTypeInt");
        short[at] = (3 << 16) | type_int;
        short.remove(at + 3);
        let bad = ctx.create_pipeline(&PipelineDesc { spirv: &short, bindings: 4, push_constant_bytes: 8, ..Default::default() }).unwrap_err();
        assert!(matches!(bad, Error::InvalidSpirv(ref m) if m.contains("OpTypeInt")), "{bad}");
        // Valid SPIR-V whose buffer sits in descriptor set 100: crashed both drivers before the
        // runtime compared the module's interface with the pipeline layout.
        let mut far = spirv.clone();
        let decorate = (4 << 16) | spirv::Op::Decorate as u32;
        let at = (5..far.len()).find(|&i| far[i] == decorate && far[i + 2] == spirv::Decoration::DescriptorSet as u32).expect("an OpDecorate DescriptorSet");
        far[at + 3] = 100;
        let bad = ctx.create_pipeline(&PipelineDesc { spirv: &far, bindings: 4, push_constant_bytes: 8, ..Default::default() }).unwrap_err();
        assert!(matches!(bad, Error::InterfaceMismatch(ref m) if m.contains("descriptor set 100")), "{bad}");
        ctx.check_validation().unwrap();
    }
}

#[test]
fn missing_capability_is_reported_before_the_driver_sees_the_module() {
    // A module using a 64-bit integer type on a device without shaderInt64 (SwiftShader, whose
    // missing 16- and 8-bit types are widened instead). (A capability declared and not used is
    // dropped when the runtime translates the module.)
    for ctx in common::contexts() {
        if ctx.caps().shader_int64 {
            continue;
        }
        let capability = (2 << 16) | spirv::Op::Capability as u32;
        let type_int = (4 << 16) | spirv::Op::TypeInt as u32;
        let words = [spirv::MAGIC_NUMBER, 0x0001_0300, 0, 10, 0, capability, spirv::Capability::Shader as u32, capability, spirv::Capability::Int64 as u32, type_int, 1, 64, 0];
        let err = ctx.create_pipeline(&PipelineDesc { spirv: &words, ..Default::default() }).unwrap_err();
        assert!(err.to_string().contains("shaderInt64"), "{err}");
    }
}

/// `workgroup_reverse`, whose workgroup array and local size are specialization constants: an
/// array of exactly the device's `maxComputeSharedMemorySize` runs (and reverses the buffer);
/// four bytes more is refused, naming the array and both sizes, before the driver sees the
/// module; so is a workgroup wider than `maxComputeWorkGroupSize`.
#[test]
fn workgroups_past_the_device_limits_are_refused_by_name() {
    let spirv = common::assembled("workgroup_reverse");
    for ctx in common::contexts() {
        let name = ctx.caps().name.clone();
        let limits = ctx.caps().limits;
        let len = limits.max_shared_memory_size / 4;
        let spec = |len: u32, wg: u32| [SpecConstant::u32(0, len), SpecConstant::u32(1, wg)];
        let desc = |spec_constants| PipelineDesc { spirv: &spirv, bindings: 1, spec_constants, label: "workgroup_reverse", ..Default::default() };
        let fits = spec(len, 64);
        let pipeline = ctx.create_pipeline(&desc(&fits)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let data: Vec<f32> = (0..len).map(|i| i as f32).collect();
        let mut b = ctx.buffer_from_slice(&data, "data").unwrap();
        ctx.run(&[Dispatch { pipeline: &pipeline, buffers: &[&b], images: &[], push_constants: &[], groups: [1, 1, 1] }]).unwrap();
        let got: Vec<f32> = ctx.read_buffer(&mut b).unwrap();
        let want: Vec<f32> = data.iter().rev().copied().collect();
        assert!(got == want, "{name}: the buffer reversed through {} bytes of workgroup memory", 4 * len);

        let over = spec(len + 1, 64);
        let err = ctx.create_pipeline(&desc(&over)).map(|_| ()).unwrap_err();
        let text = err.to_string();
        let named = text.contains(&format!("at least {} bytes of workgroup memory (tile {})", 4 * (len + 1), 4 * (len + 1)));
        assert!(matches!(err, Error::OverLimit { .. }) && named && text.contains(&format!("maxComputeSharedMemorySize {}", limits.max_shared_memory_size)), "{name}: {text}");

        let wide = spec(64, limits.max_workgroup_size[0] + 1);
        let err = ctx.create_pipeline(&desc(&wide)).map(|_| ()).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, Error::OverLimit { .. }) && text.contains(&format!("a workgroup of [{}, 1, 1]", limits.max_workgroup_size[0] + 1)) && text.contains("maxComputeWorkGroupSize"),
            "{name}: {text}"
        );
        ctx.check_validation().unwrap();
    }
}

/// `subgroup_first_reduces`, written for sub-groups of 32: a work-group reduction whose second
/// level (a reduction, a scan and a shuffle) only the last sub-group runs, a shuffle and a
/// maximum only the other odd ones run, and the sum every invocation reads after a barrier. At
/// 32 it runs natively on the GPU. SwiftShader (4) joins physical sub-groups, whose exchanges
/// then sit under selections that are uniform in each logical sub-group but not across the
/// work-group: it runs them, because every sub-group runs every selection's blocks (masked) and
/// so reaches the same barriers. lavapipe (8) does not (its invocations that reach more barriers
/// than others never finish), so there the module is refused by name.
#[test]
fn reductions_only_some_subgroups_run_match_cpu() {
    let spirv = common::assembled("subgroup_first_reduces");
    let groups = 3u32;
    let n = 128 * groups as usize;
    let values: Vec<u32> = (0..n as u32).map(|g| g.wrapping_mul(2_654_435_761) >> 7).collect();
    let sum = |s: &[u32]| s.iter().fold(0u32, |a, &v| a.wrapping_add(v));
    let mut want = vec![0u32; 4 * n];
    for (g, out) in want.chunks_mut(4).enumerate() {
        let (local, lane) = (g % 128, g % 32);
        let (wg, sg, base) = (g / 128, local / 32, g - lane);
        let sub = &values[base..base + 32];
        let partial: Vec<u32> = (0..4).map(|k| sum(&values[wg * 128 + 32 * k..wg * 128 + 32 * k + 32])).collect();
        out[0] = sum(sub);
        if sg == 3 {
            out[1] = sum(&partial[..(lane + 1).min(4)]);
            out[2] = sub[31 - lane];
        } else if sg % 2 == 1 {
            out[1] = sub[(lane + 1) % 32];
            out[2] = *sub.iter().max().unwrap();
        }
        out[3] = sum(&partial);
    }
    for ctx in common::contexts() {
        let name = ctx.caps().name.clone();
        let desc = PipelineDesc { spirv: &spirv, bindings: 2, required_subgroup_size: Some(32), label: "subgroup_first_reduces", ..Default::default() };
        let caps = ctx.caps();
        let runs_32 = caps.subgroup_size == 32 || (caps.min_subgroup_size..=caps.max_subgroup_size).contains(&32);
        if !runs_32 && !caps.workarounds.selections_run_masked {
            let err = ctx.create_pipeline(&desc).map(|_| ()).unwrap_err().to_string();
            assert!(err.contains("OpGroupNonUniform") && err.contains("under a branch that depends on the invocation"), "{name}: {err}");
            continue;
        }
        let pipeline = ctx.create_pipeline(&desc).unwrap_or_else(|e| panic!("{name}: {e}"));
        let input = ctx.buffer_from_slice(&values, "values").unwrap();
        let mut result = ctx.zeroed_buffer::<u32>(4 * n, "result").unwrap();
        ctx.run(&[Dispatch { pipeline: &pipeline, buffers: &[&input, &result], images: &[], push_constants: &[], groups: [groups, 1, 1] }]).unwrap();
        let got: Vec<u32> = ctx.read_buffer(&mut result).unwrap();
        for (g, (got, want)) in got.chunks(4).zip(want.chunks(4)).enumerate() {
            assert_eq!(got, want, "{name}: invocation {g} (sum, scan or right neighbour, reversed or maximum, work-group sum)");
        }
        ctx.check_validation().unwrap();
    }
}

/// Threads that each open the test devices, run a kernel and close them again, all at once,
/// finish with right results: the runtime keeps device creation and destruction apart from
/// other threads' Vulkan calls (NVIDIA's driver 580 deadlocked in `vkDestroyDevice` otherwise,
/// in about one run of three of the OpenCL kernel tests). The deadline only catches a stall.
#[test]
fn contexts_opened_and_closed_on_several_threads_finish() {
    const THREADS: usize = 4;
    const ROUNDS: usize = 3;
    let spirv = std::sync::Arc::new(common::wgsl("axpy_reduce", include_str!("kernels/axpy_reduce.wgsl")));
    let (done, finished) = std::sync::mpsc::channel();
    for t in 0..THREADS {
        let (spirv, done) = (spirv.clone(), done.clone());
        std::thread::spawn(move || {
            let result = std::panic::catch_unwind(|| {
                for round in 0..ROUNDS {
                    for ctx in common::contexts() {
                        let n = 256u32 + 64 * (t * ROUNDS + round) as u32;
                        let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
                        let xb = ctx.buffer_from_slice(&x, "x").unwrap();
                        let mut yb = ctx.buffer_from_slice(&vec![1.0f32; n as usize], "y").unwrap();
                        let sums = ctx.zeroed_buffer::<f32>(n as usize, "sums").unwrap();
                        let info = ctx.zeroed_buffer::<u32>(1, "info").unwrap();
                        let pipeline = ctx.create_pipeline(&PipelineDesc { spirv: &spirv, bindings: 4, push_constant_bytes: 8, label: "axpy", ..Default::default() }).unwrap();
                        let push = [n.to_le_bytes(), 2.0f32.to_le_bytes()].concat();
                        ctx.run(&[Dispatch { pipeline: &pipeline, buffers: &[&xb, &yb, &sums, &info], images: &[], push_constants: &push, groups: [n.div_ceil(64), 1, 1] }]).unwrap();
                        let y: Vec<f32> = ctx.read_buffer(&mut yb).unwrap();
                        let want: Vec<f32> = x.iter().map(|x| 2.0 * x + 1.0).collect();
                        assert_eq!(y, want, "{}: thread {t}, round {round}", ctx.caps().name);
                    }
                }
            });
            let _ = done.send((t, result.is_ok()));
        });
    }
    drop(done);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    let mut left: Vec<usize> = (0..THREADS).collect();
    while !left.is_empty() {
        let wait = deadline.saturating_duration_since(std::time::Instant::now());
        match finished.recv_timeout(wait) {
            Ok((t, ok)) => {
                assert!(ok, "thread {t} failed (its panic message is above)");
                left.retain(|&u| u != t);
            }
            Err(_) => panic!("threads {left:?} stopped: none finished within 600 s"),
        }
    }
}
