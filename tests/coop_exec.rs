//! NV cooperative-matrix kernels translated to KHR for the device and executed, compared with the
//! CPU reference; and the matmul API's cooperative-matrix path. Runs on devices that list
//! cooperative-matrix shapes (the H100: `MATBRIDGE_TEST_DEVICES=nvidia`); devices without them
//! are covered by the translator's error tests instead.

mod common;

use matbridge::Strategy;

use matbridge::matmul::check::check;
use matbridge::matmul::{HostData, Layout, MatmulDesc, Operand};
use matbridge::DType;
use matbridge_runtime::{Dispatch, PipelineDesc, SpecConstant};
use matbridge_translator::{tools, translate};

fn nv_input(name: &str) -> Vec<u32> {
    let path = format!("{}/translator/tests/in/nv_to_khr/{name}.spvasm", env!("CARGO_MANIFEST_DIR"));
    tools::assemble(&std::fs::read_to_string(path).unwrap(), "vulkan1.3").unwrap()
}

/// Runs a translated NV GEMM test kernel (bindings A, B, C; row-major packed A and C) on random
/// operands of `desc` and checks C against the reference.
fn run_nv_gemm(ctx: &matbridge_runtime::Context, words: &[u32], spec: &[SpecConstant], desc: &MatmulDesc, push: &[u8], groups: [u32; 3], seed: u64) -> matbridge::matmul::check::CheckReport {
    let r = desc.resolve().unwrap();
    let pipeline = ctx.create_pipeline(&PipelineDesc { spirv: words, bindings: 3, push_constant_bytes: push.len() as u32, spec_constants: spec, ..Default::default() }).unwrap();
    let a = matbridge::cli_matmul::random_host(desc.dtype, r.a.len, seed);
    let b = matbridge::cli_matmul::random_host(desc.dtype, r.b.len, seed + 1);
    let c0 = matbridge::cli_matmul::random_host(desc.out, r.c.len, seed + 2);
    let ba = ctx.buffer_from_slice(&a.bytes, "a").unwrap();
    let bb = ctx.buffer_from_slice(&b.bytes, "b").unwrap();
    let mut bc = ctx.buffer_from_slice(&c0.bytes, "c").unwrap();
    ctx.run(&[Dispatch { pipeline: &pipeline, buffers: &[&ba, &bb, &bc], images: &[], push_constants: push, groups }]).unwrap();
    let got = HostData { dtype: desc.out, bytes: ctx.read_buffer(&mut bc).unwrap() };
    check(desc, &a, &b, &c0, &got, 1).unwrap()
}

#[test]
fn translated_nv_kernels_match_the_reference() {
    for ctx in common::contexts().into_iter().filter(|c| c.caps().has_cooperative_matrix()) {
        let caps = ctx.caps().clone();
        let (m, n, k) = (64usize, 48usize, 80usize);
        // f16 x f16 + f32, B row- and column-major (spec constant 0).
        let (words, _) = translate(&nv_input("nv_matmul_f16"), &caps).unwrap();
        tools::validate(&words, "vulkan1.3").unwrap();
        for b_col in [false, true] {
            eprintln!("{}: nv_matmul_f16 b_col={b_col}", caps.name);
            let mut desc = MatmulDesc::new(m, n, k, DType::F16);
            // The kernel computes alpha * (A*B + C) with alpha = 0.5: alpha' = beta' = 0.5.
            desc.alpha = 0.5;
            desc.beta = 0.5;
            if b_col {
                desc.b = Operand { layout: Layout::ColumnMajor, ..Default::default() };
            }
            let mut push: Vec<u8> = [m as u32, n as u32, k as u32].iter().flat_map(|v| v.to_le_bytes()).collect();
            push.extend_from_slice(&0.5f32.to_le_bytes());
            let spec = [SpecConstant::u32(0, b_col as u32)];
            let rep = run_nv_gemm(&ctx, &words, &spec, &desc, &push, [(n / 16) as u32, (m / 16) as u32, 1], 1);
            assert!(rep.pass, "{} f16 b_col={b_col}: {rep:?}", caps.name);
        }
        // s8 x s8 + s32 with 16x16x32 tiles.
        eprintln!("{}: nv_matmul_s8", caps.name);
        let (words, _) = translate(&nv_input("nv_matmul_s8"), &caps).unwrap();
        let mut desc = MatmulDesc::new(m, n, 96, DType::S8);
        desc.beta = 1.0;
        desc.b = Operand { layout: Layout::ColumnMajor, ..Default::default() };
        let push: Vec<u8> = [m as u32, n as u32, 96].iter().flat_map(|v| v.to_le_bytes()).collect();
        let rep = run_nv_gemm(&ctx, &words, &[], &desc, &push, [(n / 16) as u32, (m / 16) as u32, 1], 4);
        assert!(rep.pass, "{} s8: {rep:?}", caps.name);
        // Arrays of matrices indexed dynamically (accumulators and B fragments).
        eprintln!("{}: nv_array_f16", caps.name);
        let (words, _) = translate(&nv_input("nv_array_f16"), &caps).unwrap();
        tools::validate(&words, "vulkan1.3").unwrap();
        let (m, n, k) = (32usize, 64usize, 48usize);
        let mut desc = MatmulDesc::new(m, n, k, DType::F16);
        desc.beta = 1.0;
        let push: Vec<u8> = [m as u32, n as u32, k as u32].iter().flat_map(|v| v.to_le_bytes()).collect();
        let rep = run_nv_gemm(&ctx, &words, &[], &desc, &push, [(n / 32) as u32, (m / 16) as u32, 1], 8);
        assert!(rep.pass, "{} matrix arrays: {rep:?}", caps.name);
        // One loaded matrix used as A and B, constant accumulator, per-element loop.
        eprintln!("{}: nv_square_f16", caps.name);
        let (words, _) = translate(&nv_input("nv_square_f16"), &caps).unwrap();
        let pipeline = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 2, ..Default::default() }).unwrap();
        let a = matbridge::cli_matmul::random_host(DType::F16, 256, 7);
        let ba = ctx.buffer_from_slice(&a.bytes, "a").unwrap();
        let mut bc = ctx.zeroed_buffer::<u16>(256, "c").unwrap();
        ctx.run(&[Dispatch { pipeline: &pipeline, buffers: &[&ba, &bc], images: &[], push_constants: &[], groups: [1, 1, 1] }]).unwrap();
        let got: Vec<u16> = ctx.read_buffer(&mut bc).unwrap();
        let av: Vec<f32> = a.to_f32();
        for i in 0..16 {
            for j in 0..16 {
                let want: f32 = (0..16).map(|p| av[i * 16 + p] * av[p * 16 + j]).sum::<f32>() + 1.0;
                let g = half::f16::from_bits(got[i * 16 + j]).to_f32();
                assert!((g - want).abs() <= 0.02 + 0.01 * want.abs(), "{} square ({i},{j}): {g} vs {want}", caps.name);
            }
        }
        ctx.check_validation().unwrap();
    }
}

/// Runs `desc` through the matmul API on operands drawn from seeds `seed`, `seed + 1`,
/// `seed + 2`, asserts that it took the cooperative-matrix path, checks it against the
/// reference, and returns the run.
fn run_coop_and_check(mb: &matbridge::matmul::api::Matbridge, desc: &MatmulDesc, seed: u64, what: &str) -> matbridge::matmul::api::MatmulRun {
    let r = desc.resolve().unwrap();
    let a = matbridge::cli_matmul::random_host(desc.dtype, r.a.len, seed);
    let b = matbridge::cli_matmul::random_host(desc.dtype, r.b.len, seed + 1);
    let c0 = matbridge::cli_matmul::random_host(desc.out, r.c.len, seed + 2);
    let (ta, tb) = (mb.dyn_tensor(&a).unwrap(), mb.dyn_tensor(&b).unwrap());
    let mut tc = mb.dyn_tensor(&c0).unwrap();
    let run = mb.matmul_dyn(desc, &ta, &tb, &mut tc).unwrap();
    assert!(matches!(run.path, matbridge::matmul::MatmulPath::CooperativeMatrix { .. }), "{what} {desc:?}: {}", run.path);
    let got = tc.read_host().unwrap();
    let rep = check(desc, &a, &b, &c0, &got, 1).unwrap();
    assert!(rep.pass, "{what}: {rep:?}");
    run
}

/// (input, accumulator, output) types with cooperative-matrix kernels on `mb`'s device (bf16 only
/// where it has shaderBFloat16).
fn coop_families(mb: &matbridge::matmul::api::Matbridge) -> Vec<(DType, matbridge::AccType, DType)> {
    let bf16 = mb.context().is_some_and(|c| c.caps().shader_bfloat16);
    [
        (DType::F16, matbridge::AccType::F32, DType::F32),
        (DType::F16, matbridge::AccType::F16, DType::F16),
        (DType::S8, matbridge::AccType::S32, DType::S32),
        (DType::U8, matbridge::AccType::S32, DType::S32),
        (DType::Bf16, matbridge::AccType::F32, DType::Bf16),
    ]
    .into_iter()
    .filter(|f| f.0 != DType::Bf16 || bf16)
    .collect()
}

#[test]
fn matmul_api_takes_the_cooperative_matrix_path_where_listed() {
    use matbridge::matmul::api::Matbridge;
    for ctx in common::contexts().into_iter().filter(|c| c.caps().has_cooperative_matrix()) {
        let mb = Matbridge::with_context(ctx);
        for (dtype, acc, out) in coop_families(&mb) {
            for (m, n, k) in [(256, 256, 256), (208, 144, 96), (32, 48, 64)] {
                for (a_op, b_op) in
                    [(Operand::row_major(), Operand::row_major()), (Operand::column_major(), Operand::column_major()), (Operand::row_major().transposed(), Operand::row_major().transposed())]
                {
                    let mut desc = MatmulDesc::new(m, n, k, dtype);
                    desc.acc = acc;
                    desc.out = out;
                    desc.a = a_op;
                    desc.b = b_op;
                    desc.batch = 2;
                    desc.beta = 1.0;
                    run_coop_and_check(&mb, &desc, 1, &format!("{dtype} {m}x{n}x{k} {a_op:?} {b_op:?}"));
                }
            }
        }
    }
}

/// Operands without a 16-byte-aligned contiguous dimension (odd K or N, odd leading dimensions,
/// strided elements) are copied into aligned, zero-padded scratch lines and still take the
/// cooperative-matrix path; B shared by every batch is copied once; large problems are copied
/// padded to whole tiles.
#[test]
fn unaligned_operands_are_copied_for_the_cooperative_matrix_path() {
    use matbridge::matmul::api::Matbridge;
    for ctx in common::contexts().into_iter().filter(|c| c.caps().has_cooperative_matrix()) {
        let mb = Matbridge::with_context(ctx);
        for (dtype, acc, out) in coop_families(&mb) {
            let problems = [
                // Odd K and N, packed.
                (65, 47, 37, Operand::row_major(), Operand::row_major(), 1),
                // K = 1000 (not a multiple of 16 bytes of 8-bit elements), column-major A.
                (96, 80, 1000, Operand::column_major(), Operand::row_major(), 1),
                // Odd leading dimensions, transposes, batch 2 with B shared (batch stride 0).
                (33, 70, 130, Operand { ld: Some(135), ..Operand::row_major() }, Operand { ld: Some(131), batch_stride: Some(0), ..Operand::column_major() }, 2),
                (40, 24, 48, Operand { ld: Some(41), ..Operand::row_major().transposed() }, Operand { ld: Some(51), ..Operand::row_major().transposed() }, 2),
            ];
            // Large enough to be padded to whole tiles (run without bounds checks); checked on a
            // seeded sample.
            let padded = [(1030, 1100, 999, Operand { ld: Some(1003), ..Operand::row_major() }, Operand::row_major().transposed(), 1)];
            for (m, n, k, a_op, b_op, batch) in problems.into_iter().chain(padded) {
                let mut desc = MatmulDesc::new(m, n, k, dtype);
                (desc.acc, desc.out, desc.a, desc.b, desc.batch) = (acc, out, a_op, b_op, batch);
                desc.alpha = if dtype.is_integer() { 2.0 } else { 0.5 };
                desc.beta = 1.0;
                run_coop_and_check(&mb, &desc, 5, &format!("{dtype}->{out} {m}x{n}x{k} {a_op:?} {b_op:?}"));
            }
        }
        mb.context().unwrap().check_validation().unwrap();
    }
}

#[test]
fn every_gemm_kernel_translates_for_the_h100_and_validates() {
    if tools::find("spirv-val").is_none() {
        assert!(!common::in_ci(), "CI: SPIRV-Tools are not installed");
        return;
    }
    let mut checked = 0;
    // (kernel, retyped to bf16 too): the f16 -> f32 kernels are, except the wide kernel's
    // f16-output variants (`_h`).
    let general = matbridge_shaders::COOP_CONFIGS.iter().flat_map(|c| c.families.iter().map(|f| (c.kernel(f), *f == "f16_f32")));
    let wide = matbridge_shaders::WIDE_CONFIGS.iter().flat_map(|c| c.families.iter().map(|f| (c.kernel(f), *f == "f16_f32")));
    let rounded = matbridge_shaders::WIDE_CONFIGS.iter().filter(|c| c.families.contains(&"f16_f32")).map(|c| (format!("{}_h", c.kernel("f16_f32")), false));
    for (name, bf16_too) in general.chain(wide).chain(rounded) {
        let words = matbridge_shaders::spirv(&name).unwrap_or_else(|| panic!("kernel {name} missing"));
        let (khr, _) = translate(&words, &matbridge_translator::DeviceCaps::h100()).unwrap_or_else(|e| panic!("{name}: {e}"));
        tools::validate(&khr, "vulkan1.3").unwrap_or_else(|e| panic!("{name}: {e}"));
        let dis = tools::disassemble(&khr).unwrap();
        assert!(dis.contains("OpCooperativeMatrixMulAddKHR") && !dis.contains("MatrixNV") && !dis.contains("\"SPV_NV_cooperative_matrix\""), "{name}: not fully translated");
        if bf16_too {
            let request = [matbridge_translator::Request::RetypeFloat16ToBFloat16];
            let (bf16, _) = matbridge_translator::translate_with(&words, &matbridge_translator::DeviceCaps::h100(), &request).unwrap_or_else(|e| panic!("{name} as bf16: {e}"));
            tools::validate(&bf16, "vulkan1.3").unwrap_or_else(|e| panic!("{name} as bf16: {e}"));
            let dis = tools::disassemble(&bf16).unwrap();
            assert!(dis.contains("OpTypeFloat 16 BFloat16KHR") && dis.contains("OpCapability BFloat16CooperativeMatrixKHR"), "{name}: {dis}");
        }
        checked += 1;
    }
    for family in ["f16_f32", "f16_f16", "s8_s32"] {
        let name = format!("coop_peak_{family}");
        let words = matbridge_shaders::spirv(&name).unwrap_or_else(|| panic!("kernel {name} missing"));
        let (khr, _) = translate(&words, &matbridge_translator::DeviceCaps::h100()).unwrap_or_else(|e| panic!("{name}: {e}"));
        tools::validate(&khr, "vulkan1.3").unwrap_or_else(|e| panic!("{name}: {e}"));
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} kernels");
}

#[test]
fn every_tile_configuration_matches_the_reference() {
    use matbridge::matmul::api::Matbridge;
    for ctx in common::contexts().into_iter().filter(|c| c.caps().has_cooperative_matrix()) {
        let mb = Matbridge::with_context(ctx);
        for (dtype, acc, out) in coop_families(&mb) {
            let mut base = MatmulDesc::new(16, 16, 16, dtype);
            base.acc = acc;
            base.out = out;
            let labels = mb.coop_configs(&base);
            assert!(!labels.is_empty(), "{dtype}: no configurations");
            // (The wide-tile kernel's configurations take only whole tiles: see the test below.)
            for label in labels.iter().filter(|l| !l.starts_with("wide_")) {
                let pinned = mb.with_strategy(Strategy::CooperativeMatrix { tile: Some(label.clone()) }).unwrap();
                // Edges in M, N and K, several K steps, batch strides, beta; the odd-N problem
                // writes 16-bit outputs through the packing epilogue instead of packed pairs.
                let problems = [(200, 144, 96, Operand::row_major(), Operand::row_major()), (48, 37, 64, Operand::column_major(), Operand::row_major().transposed())];
                for (m, n, k, a_op, b_op) in problems {
                    let mut desc = base.clone();
                    (desc.m, desc.n, desc.k, desc.a, desc.b) = (m, n, k, a_op, b_op);
                    desc.batch = 2;
                    desc.alpha = if dtype.is_integer() { 2.0 } else { 0.5 };
                    desc.beta = 1.0;
                    run_coop_and_check(&pinned, &desc, 11, &format!("{dtype}->{out} {label} {m}x{n}x{k}"));
                }
                eprintln!("{dtype}->{out} {label}: ok");
            }
        }
        mb.context().unwrap().check_validation().unwrap();
    }
}

/// The wide-tile kernel (16-bit inputs, whole tiles, C = A * B, operands read as stored) in every
/// configuration and output type, with packed and padded leading dimensions and batches; a
/// problem it does not fit is refused for a pinned wide configuration by name.
#[test]
fn wide_tile_kernels_match_the_reference() {
    use matbridge::matmul::api::Matbridge;
    for ctx in common::contexts().into_iter().filter(|c| c.caps().has_cooperative_matrix()) {
        let mb = Matbridge::with_context(ctx);
        let mut checked = 0;
        let bf16 = mb.context().is_some_and(|c| c.caps().shader_bfloat16);
        let (f16, f32) = (matbridge::AccType::F16, matbridge::AccType::F32);
        let s32 = matbridge::AccType::S32;
        let mut types = vec![(DType::F16, f16, DType::F16), (DType::F16, f32, DType::F32), (DType::F16, f32, DType::F16), (DType::S8, s32, DType::S32), (DType::U8, s32, DType::S32)];
        if bf16 {
            types.push((DType::Bf16, f32, DType::F32));
        }
        for (dtype, acc, wide_out) in types {
            // K: whole K steps of every configuration (8-bit ones go to 128).
            let eight = dtype.size() == 1;
            let mut base = MatmulDesc::new(512, 512, if eight { 128 } else { 96 }, dtype);
            (base.acc, base.out) = (acc, wide_out);
            for label in mb.coop_configs(&base).iter().filter(|l| l.starts_with("wide_")) {
                let pinned = mb.with_strategy(Strategy::CooperativeMatrix { tile: Some(label.clone()) }).unwrap();
                let padded = |ld| Operand { ld: Some(ld), ..Operand::row_major() };
                // 16-bit B n-contiguous, 8-bit B k-contiguous (leading dimensions in whole vectors).
                let b_plain = if eight { Operand::row_major().transposed() } else { Operand::row_major() };
                let b_padded = Operand { ld: Some(if eight { 144 } else { 520 }), ..b_plain };
                let (m, n, k) = (base.m, base.n, base.k);
                let mut problems = vec![
                    (1, (m, n, k), Operand::row_major(), b_plain, Operand::row_major()),
                    (2, (m, n, k), padded(if eight { 144 } else { 104 }), b_padded, padded(528)),
                    (3, (m, n, k), Operand::row_major(), Operand { batch_stride: Some(0), ..b_plain }, Operand::row_major()),
                ];
                if eight {
                    // Large enough for row-major 8-bit B to be copied K-contiguous first, which the
                    // wide kernel then reads.
                    problems.push((1, (1024, 1024, 1024), Operand::row_major(), Operand::row_major(), Operand::row_major()));
                }
                for (batch, (m, n, k), a, b, c) in problems {
                    let mut desc = base.clone();
                    (desc.batch, desc.m, desc.n, desc.k, desc.a, desc.b, desc.c) = (batch, m, n, k, a, b, c);
                    let run = run_coop_and_check(&pinned, &desc, 21, &format!("{dtype}->{} {label} batch {batch}", desc.out));
                    assert!(run.path.to_string().contains("wide"), "{label}: {}", run.path);
                    checked += 1;
                }
                // beta = 1 needs the general kernel's epilogue: the wide configuration is refused.
                let mut desc = base.clone();
                desc.beta = 1.0;
                let r = desc.resolve().unwrap();
                let ta = pinned.dyn_tensor(&matbridge::cli_matmul::random_host(desc.dtype, r.a.len, 1)).unwrap();
                let mut tc = pinned.dyn_zeros(desc.out, &[r.c.len]).unwrap();
                let err = pinned.matmul_dyn(&desc, &ta, &ta, &mut tc).unwrap_err();
                assert!(matches!(&err, matbridge::Error::UnknownConfiguration { label: l, .. } if l == label), "{err}");
            }
        }
        assert!(checked >= 19, "only {checked} wide-kernel runs");
        mb.context().unwrap().check_validation().unwrap();
    }
}

#[test]
fn cooperative_matrix_ceiling_is_measured_for_every_listed_shape() {
    use matbridge::matmul::api::Matbridge;
    for ctx in common::contexts().into_iter().filter(|c| c.caps().has_cooperative_matrix()) {
        let mb = Matbridge::with_context(ctx);
        let peaks = mb.coop_peak().unwrap();
        assert!(!peaks.is_empty(), "no shape measured");
        for p in &peaks {
            // A positive, finite rate below 10 POP/s: the kernel ran and was timed.
            assert!(p.tops.is_finite() && p.tops > 1.0 && p.tops < 10_000.0, "{p:?}");
        }
        mb.context().unwrap().check_validation().unwrap();
    }
}
