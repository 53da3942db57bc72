//! The matmul API on every test device against the CPU reference: all dtypes, output types,
//! layouts, transposes, batches and odd sizes.

mod common;

use matbridge::cli_matmul::random_host;
use matbridge::matmul::api::Matbridge;
use matbridge::matmul::check::check;
use matbridge::matmul::{AccType, DType, Layout, MatmulDesc, Operand};

/// Runs `desc` on `mb` and checks it; returns the path taken.
fn run_and_check(mb: &Matbridge, desc: &MatmulDesc, seed: u64) -> String {
    let r = desc.resolve().unwrap();
    let a = random_host(desc.dtype, r.a.len, 3 * seed);
    let b = random_host(desc.dtype, r.b.len, 3 * seed + 1);
    let c0 = random_host(desc.out, r.c.len, 3 * seed + 2);
    let ta = mb.dyn_tensor(&a).unwrap();
    let tb = mb.dyn_tensor(&b).unwrap();
    let mut tc = mb.dyn_tensor(&c0).unwrap();
    let run = mb.matmul_dyn(desc, &ta, &tb, &mut tc).unwrap();
    let got = tc.read_host().unwrap();
    let report = check(desc, &a, &b, &c0, &got, seed).unwrap();
    assert!(report.pass, "{} {desc:?}: {report:?}", mb.device_name());
    // Padding between rows/columns (leading-dimension gaps) is left untouched.
    let mut touched = vec![false; r.c.len];
    for bt in 0..desc.batch {
        for i in 0..desc.m {
            for j in 0..desc.n {
                touched[bt * r.c.batch + i * r.c.row + j * r.c.col] = true;
            }
        }
    }
    for (e, t) in touched.iter().enumerate() {
        if !t {
            assert_eq!(got.get(e).to_bits(), c0.get(e).to_bits(), "{} padding element {e} changed", mb.device_name());
        }
    }
    run.path.to_string()
}

fn layouts() -> Vec<(Operand, Operand, Operand)> {
    let rm = Operand::row_major();
    let cm = Operand::column_major();
    vec![(rm, rm, rm), (rm.transposed(), cm, cm), (cm, rm.transposed(), rm), (cm.transposed(), cm.transposed(), Operand { ld: Some(300), ..cm })]
}

#[test]
fn every_dtype_layout_and_odd_size_matches_the_cpu_reference() {
    let contexts = common::contexts();
    for ctx in contexts {
        let mb = Matbridge::with_context(ctx);
        let mut seed = 0;
        for (dtype, acc, out) in [
            (DType::F32, AccType::F32, DType::F32),
            (DType::F16, AccType::F32, DType::F32),
            (DType::F16, AccType::F16, DType::F16),
            (DType::Bf16, AccType::F32, DType::Bf16),
            (DType::S8, AccType::S32, DType::S32),
            (DType::U8, AccType::S32, DType::S32),
        ] {
            for (m, n, k) in [(1, 1, 1), (17, 33, 65), (129, 257, 31)] {
                for (a, b, c) in layouts() {
                    seed += 1;
                    let mut desc = MatmulDesc::new(m, n, k, dtype);
                    desc.acc = acc;
                    desc.out = out;
                    desc.a = a;
                    desc.b = b;
                    desc.c = c;
                    desc.alpha = if dtype.is_integer() { 2.0 } else { 0.5 };
                    desc.beta = if seed % 2 == 0 { 0.0 } else { -1.0 };
                    run_and_check(&mb, &desc, seed);
                }
            }
        }
    }
}

#[test]
fn batched_and_strided_operands() {
    for ctx in common::contexts() {
        let mb = Matbridge::with_context(ctx);
        for dtype in [DType::F32, DType::F16, DType::S8] {
            let mut desc = MatmulDesc::new(19, 23, 37, dtype);
            desc.batch = 3;
            desc.a = Operand { ld: Some(40), batch_stride: Some(19 * 40 + 7), ..Operand::row_major() };
            // B shared by every batch (batch stride 0).
            desc.b = Operand { layout: Layout::ColumnMajor, batch_stride: Some(0), ..Default::default() };
            desc.c = Operand { ld: Some(24), batch_stride: Some(19 * 24 + 5), ..Operand::row_major() };
            desc.beta = 1.0;
            run_and_check(&mb, &desc, 99);
        }
    }
}

/// f32 with K, N and the leading dimensions multiples of 4: CPU drivers take the 16-byte-load
/// kernel where A is k-contiguous and B n-contiguous (M edges, batch, padded rows, alpha/beta),
/// and the other layouts still match.
#[test]
fn vector_aligned_f32_matches_the_reference() {
    for ctx in common::contexts() {
        let cpu = ctx.caps().device_type == matbridge_translator::profile::DeviceType::Cpu;
        let mb = Matbridge::with_context(ctx);
        for (seed, (m, n, k)) in [(37, 44, 20), (1, 4, 4), (66, 8, 132)].into_iter().enumerate() {
            for (i, (a, b, c)) in layouts().into_iter().enumerate() {
                let mut desc = MatmulDesc::new(m, n, k, DType::F32);
                (desc.a, desc.b, desc.c) = (a, b, c);
                desc.alpha = 0.5;
                desc.beta = -1.0;
                if i == 0 {
                    desc.batch = 2;
                    desc.a = Operand { ld: Some(k + 4), batch_stride: Some(m * (k + 4) + 8), ..a };
                    desc.c = Operand { ld: Some(n + 3), ..c };
                }
                let path = run_and_check(&mb, &desc, 300 + 10 * seed as u64 + i as u64);
                if cpu && i == 0 {
                    assert!(path.contains("16-byte loads"), "{} {m}x{n}x{k}: {path}", mb.device_name());
                }
            }
        }
    }
}

#[test]
fn bad_shapes_and_dtypes_are_errors() {
    for ctx in common::contexts() {
        let mb = Matbridge::with_context(ctx);
        let desc = MatmulDesc::new(8, 8, 8, DType::F32);
        let a = mb.tensor(&vec![0f32; 63]).unwrap();
        let b = mb.tensor(&vec![0f32; 64]).unwrap();
        let mut c = mb.zeros::<f32>(&[8, 8]).unwrap();
        let err = mb.matmul(&desc, &a, &b, &mut c).unwrap_err().to_string();
        assert_eq!(err, "operand A: expected 64 elements, given 63");
        let a16 = mb.zeros::<half::f16>(&[64]).unwrap();
        let err = mb.matmul(&desc, &a16, &a16, &mut c).unwrap_err().to_string();
        assert_eq!(err, "operand A: expected dtype f32, given f16");
        // Run-time typed tensors: the same checks, and C may not be an input.
        let (da, mut dc) = (mb.dyn_zeros(DType::F32, &[64]).unwrap(), mb.dyn_zeros(DType::F32, &[64]).unwrap());
        mb.matmul_dyn(&desc, &da, &da, &mut dc).unwrap();
        let mut batch = mb.batch();
        assert!(matches!(batch.matmul_dyn(&desc, &da, &dc, &dc), Err(matbridge::Error::AliasedOutput)));
        assert!(batch.is_empty(), "a refused item is not recorded");
        assert!(matches!(dc.typed::<half::f16>(), Err(matbridge::Error::DTypeMismatch { expected: DType::F16, given: DType::F32, .. })));
        // Typed fields: a leading dimension below the row, a tensor of another context.
        let mut short_ld = desc.clone();
        short_ld.b.ld = Some(4);
        match mb.matmul(&short_ld, &b, &b, &mut c) {
            Err(matbridge::Error::LeadingDimension { operand, given, min }) => assert_eq!((operand, given, min), ("B", 4, 8)),
            other => panic!("expected a leading-dimension error, got {other:?}"),
        }
        let mut scaled = MatmulDesc::new(8, 8, 8, DType::S8);
        scaled.alpha = 0.5;
        assert!(matches!(scaled.resolve(), Err(matbridge::Error::NonIntegralScale { alpha, .. }) if alpha == 0.5));
        let mut f16_acc = MatmulDesc::new(8, 8, 8, DType::F32);
        f16_acc.acc = matbridge::AccType::F16;
        assert!(matches!(f16_acc.resolve(), Err(matbridge::Error::Accumulator { dtype: DType::F32, acc: matbridge::AccType::F16 })));
        let host = Matbridge::cpu().tensor(&vec![0f32; 64]).unwrap();
        assert!(matches!(mb.matmul(&desc, &host, &b, &mut c), Err(matbridge::Error::WrongBackend { .. })));
    }
}

/// The API's verification switch: with it on, each matmul on a device is compared with the CPU
/// reference (in full for small results, on sampled rows and columns for large ones), and the
/// last of repeated runs against C as it was before that run (beta = 1 accumulates into C).
#[test]
fn verification_switch_checks_each_matmul_against_the_reference() {
    for ctx in common::contexts() {
        let mb = Matbridge::with_context(ctx);
        for (m, n, k, dtype, iters) in [(17, 33, 65, DType::F16, 1), (9, 5, 7, DType::S8, 3), (600, 520, 8, DType::F32, 2)] {
            let mut desc = MatmulDesc::new(m, n, k, dtype);
            desc.beta = 1.0;
            let a = mb.dyn_tensor(&random_host(dtype, m * k, 1)).unwrap();
            let b = mb.dyn_tensor(&random_host(dtype, k * n, 2)).unwrap();
            let mut c = mb.dyn_tensor(&random_host(desc.out, m * n, 3)).unwrap();
            assert!(mb.matmul_dyn(&desc, &a, &b, &mut c).unwrap().check.is_none());
            let verified = mb.with_verify(true);
            let run = verified.matmul_dyn_repeated(&desc, &a, &b, &mut c, iters).unwrap();
            let report = run.check.expect("a verified run has a report");
            assert!(report.pass, "{} {desc:?}: {report:?}", mb.device_name());
            if m * n <= 1 << 18 {
                assert_eq!(report.checked, m * n);
            } else {
                assert!(report.checked >= m + n && report.checked < m * n, "{report:?}");
            }
        }
    }
    // The CPU path is the reference: nothing to compare it with.
    let cpu = Matbridge::cpu().with_verify(true);
    let desc = MatmulDesc::new(3, 4, 5, DType::F32);
    let (a, b) = (cpu.tensor(&[1.0f32; 15]).unwrap(), cpu.tensor(&[1.0f32; 20]).unwrap());
    let mut c = cpu.zeros::<f32>(&[3, 4]).unwrap();
    assert!(cpu.matmul(&desc, &a, &b, &mut c).unwrap().check.is_none());
    assert_eq!(c.read().unwrap(), vec![5.0; 12]);
}

/// Dispatches built-in GEMM `kernel` (bindings A, B, C, parameters laid out as the subgroup
/// kernels' `Params`; `tile` x `tile` outputs per workgroup) directly on `ctx` for odd sizes,
/// every operand layout, batch 2, alpha and beta, and checks each result against the reference.
fn check_kernel_directly(ctx: &matbridge_runtime::Context, kernel: &str, tile: [usize; 2], dtype: DType) {
    use matbridge::matmul::HostData;
    use matbridge_runtime::{Dispatch, PipelineDesc};
    let words = matbridge_shaders::spirv(kernel).expect("kernel");
    let pipeline = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 4, label: kernel, ..Default::default() }).unwrap();
    let alpha = if dtype.is_integer() { 2.0f32 } else { 0.5 };
    for ((m, n, k), (a_op, b_op, c_op)) in [(17, 33, 65), (70, 9, 40), (65, 66, 17), (3, 130, 31)].into_iter().zip(layouts()) {
        let mut desc = MatmulDesc::new(m, n, k, dtype);
        (desc.a, desc.b, desc.c) = (a_op, b_op, c_op);
        desc.batch = 2;
        desc.alpha = alpha;
        desc.beta = 1.0;
        let r = desc.resolve().unwrap();
        let a = random_host(dtype, r.a.len, 21);
        let b = random_host(dtype, r.b.len, 22);
        let c0 = random_host(desc.out, r.c.len, 23);
        let params: Vec<u32> =
            [m, n, k, 2, r.a.row, r.a.col, r.a.batch, r.b.row, r.b.col, r.b.batch, r.c.row, r.c.col, r.c.batch].iter().map(|&v| v as u32).chain([alpha.to_bits(), 1.0f32.to_bits()]).collect();
        // Operands are read as 32-bit words: pad to a multiple of 4 bytes.
        let words_of = |h: &HostData| {
            let mut bytes = h.bytes.clone();
            bytes.resize(bytes.len().next_multiple_of(4).max(4), 0);
            bytes
        };
        let ba = ctx.buffer_from_slice(&words_of(&a), "a").unwrap();
        let bb = ctx.buffer_from_slice(&words_of(&b), "b").unwrap();
        let mut bc = ctx.buffer_from_slice(&c0.bytes, "c").unwrap();
        let bp = ctx.buffer_from_slice(&params, "params").unwrap();
        let groups = [n.div_ceil(tile[1]) as u32, m.div_ceil(tile[0]) as u32, 2];
        ctx.run(&[Dispatch { pipeline: &pipeline, buffers: &[&ba, &bb, &bc, &bp], images: &[], push_constants: &[], groups }]).unwrap();
        let got = HostData { dtype: desc.out, bytes: ctx.read_buffer(&mut bc).unwrap() };
        let rep = check(&desc, &a, &b, &c0, &got, 1).unwrap();
        assert!(rep.pass, "{} {kernel} {m}x{n}x{k} {a_op:?} {b_op:?}: {rep:?}", ctx.caps().name);
    }
    ctx.check_validation().unwrap();
}

/// The operand copies that feed the cooperative-matrix GEMM (`repack_8` / `repack_16`, and
/// `transpose_8` / `copy_rows_*` for the transposing / contiguous copies they apply to), on every test device against a
/// copy made on the host: strided source elements, odd line lengths zero-padded to the
/// destination leading dimension, zero lines after the copied ones, transposing copies, partial
/// tiles, batches.
#[test]
fn repack_kernels_copy_strided_operands_into_padded_lines() {
    use matbridge::matmul::repack::{copies_rows, transpose_groups, Repack};
    use matbridge_runtime::{Dispatch, PipelineDesc};
    // (lines, destination lines, len, ld, batches, src_line, src_elem, src_batch)
    // (one workgroup of 256 invocations loops over the larger element-wise copies)
    let cases: [[usize; 8]; 13] = [
        [5, 5, 13, 16, 2, 17, 1, 90],
        [7, 10, 9, 32, 1, 1, 11, 0],
        [3, 8, 1, 16, 3, 2, 5, 7],
        [40, 44, 61, 64, 2, 61, 1, 2500],
        [45, 48, 30, 32, 2, 1, 50, 1500],
        // Transposing 8-bit copies with word-aligned rows (transpose_8): partial 64 x 64 tiles,
        // fewer than four bytes in the last word of a row, batches.
        [70, 80, 67, 80, 2, 1, 72, 4828],
        [130, 192, 129, 144, 1, 1, 132, 0],
        [3, 16, 5, 16, 3, 1, 4, 24],
        [128, 128, 128, 128, 1, 1, 128, 0],
        [300, 320, 260, 272, 1, 1, 300, 0],
        // Contiguous source lines at odd offsets (copy_rows): partial last vectors, batches.
        [9, 12, 37, 48, 2, 41, 1, 413],
        [33, 33, 16, 16, 1, 17, 1, 0],
        [4, 8, 3, 64, 3, 5, 1, 23],
    ];
    for ctx in common::contexts() {
        for bits in [8u32, 16] {
            let per_word = (32 / bits) as usize;
            let mut kernels = vec![format!("repack_{bits}"), format!("copy_rows_{bits}")];
            if bits == 8 {
                kernels.push("transpose_8".into());
            }
            for name in &kernels {
                let words = matbridge_shaders::spirv(name).expect("kernel");
                let pipeline = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 3, label: name, ..Default::default() }).unwrap();
                let mut ran = 0;
                for [lines, dst_lines, len, ld, batches, src_line, src_elem, src_batch] in cases {
                    let repack = Repack { lines, dst_lines, len, ld, batches, src_line, src_elem, src_batch };
                    let groups = if name.starts_with("transpose") {
                        match transpose_groups(bits, &repack, ctx.caps().limits.max_workgroup_count) {
                            Some(g) => g,
                            None => continue,
                        }
                    } else if name.starts_with("copy_rows") && !copies_rows(bits, &repack) {
                        continue;
                    } else {
                        [1, 1, 1]
                    };
                    ran += 1;
                    let src_len = (batches - 1) * src_batch + (lines - 1) * src_line + (len - 1) * src_elem + 1;
                    let src: Vec<u32> = (0..src_len).map(|i| (i as u32).wrapping_mul(2654435761) >> (32 - bits)).collect();
                    let mut src_words = vec![0u32; src_len.div_ceil(per_word)];
                    for (i, v) in src.iter().enumerate() {
                        src_words[i / per_word] |= v << ((i % per_word) as u32 * bits);
                    }
                    let dst_len = batches * dst_lines * ld;
                    let mut want = vec![0u32; dst_len.div_ceil(per_word)];
                    for b in 0..batches {
                        for l in 0..lines {
                            for e in 0..len {
                                let d = b * dst_lines * ld + l * ld + e;
                                want[d / per_word] |= src[b * src_batch + l * src_line + e * src_elem] << ((d % per_word) as u32 * bits);
                            }
                        }
                    }
                    // Transposing copies (adjacent source lines) walk the lines fastest.
                    let lines_fastest = usize::from(src_line == 1 && src_elem != 1);
                    let params: Vec<u32> = [lines, len, ld, batches, src_line, src_elem, src_batch, dst_lines * ld, want.len(), lines_fastest].iter().map(|&v| v as u32).collect();
                    let bs = ctx.buffer_from_slice(&src_words, "src").unwrap();
                    // Filled with ones: every destination word must be written.
                    let mut bd = ctx.buffer_from_slice(&vec![u32::MAX; want.len()], "dst").unwrap();
                    let bp = ctx.buffer_from_slice(&params, "params").unwrap();
                    ctx.run(&[Dispatch { pipeline: &pipeline, buffers: &[&bs, &bd, &bp], images: &[], push_constants: &[], groups }]).unwrap();
                    let got: Vec<u32> = ctx.read_buffer(&mut bd).unwrap();
                    assert_eq!(got, want, "{} {name} lines {lines} len {len} ld {ld}", ctx.caps().name);
                }
                assert!(ran >= 4, "{name}: only {ran} cases apply");
            }
        }
        ctx.check_validation().unwrap();
    }
}

/// Every tile configuration of the register-blocked f32 GEMM that GPUs take (`sgemm.comp`),
/// dispatched directly on every test device whose workgroup memory holds it (CPU drivers would
/// otherwise never run them).
#[test]
fn register_blocked_f32_kernels_match_the_reference() {
    for ctx in common::contexts() {
        let limits = &ctx.caps().limits;
        for config in matbridge_shaders::SGEMM_CONFIGS.iter().filter(|c| c.fits(limits.max_shared_memory_size, limits.max_workgroup_invocations)) {
            check_kernel_directly(&ctx, &config.kernel(), [config.bm as usize, config.bn as usize], DType::F32);
        }
    }
}

/// The packed-dot-product 8-bit kernels, dispatched directly on every test device that has
/// VK_KHR_shader_integer_dot_product (the API takes them only where the device accelerates the
/// packed form).
#[test]
fn packed_dot_product_int8_kernels_match_the_reference() {
    for ctx in common::contexts().into_iter().filter(|c| c.caps().integer_dot_product) {
        check_kernel_directly(&ctx, "matmul_dot_s8", [32, 32], DType::S8);
        check_kernel_directly(&ctx, "matmul_dot_u8", [32, 32], DType::U8);
    }
}

/// One random problem: sizes, batch, types, layouts, transposes, padded leading dimensions and
/// batch strides (B sometimes shared), alpha and beta.
fn random_desc(r: &mut impl FnMut(u64) -> u64, max_dim: u64) -> MatmulDesc {
    let types = [
        (DType::F32, AccType::F32, DType::F32),
        (DType::F16, AccType::F32, DType::F32),
        (DType::F16, AccType::F32, DType::F16),
        (DType::F16, AccType::F16, DType::F16),
        (DType::Bf16, AccType::F32, DType::F32),
        (DType::Bf16, AccType::F32, DType::Bf16),
        (DType::S8, AccType::S32, DType::S32),
        (DType::U8, AccType::S32, DType::S32),
    ];
    let (dtype, acc, out) = types[r(types.len() as u64) as usize];
    let (m, n, k) = (1 + r(max_dim) as usize, 1 + r(max_dim) as usize, 1 + r(max_dim + max_dim / 4) as usize);
    let mut desc = MatmulDesc::new(m, n, k, dtype);
    (desc.acc, desc.out) = (acc, out);
    desc.batch = 1 + r(3) as usize;
    let operand = |rows: usize, cols: usize, may_transpose: bool, r: &mut dyn FnMut(u64) -> u64| {
        let layout = if r(2) == 0 { Layout::RowMajor } else { Layout::ColumnMajor };
        let transpose = may_transpose && r(2) == 0;
        // op(X) is rows x cols; the stored matrix is its transpose when `transpose`.
        let (sr, sc) = if transpose { (cols, rows) } else { (rows, cols) };
        let line = if layout == Layout::RowMajor { sc } else { sr };
        let ld = line + r(4) as usize;
        let lines = if layout == Layout::RowMajor { sr } else { sc };
        let batch_stride = match r(3) {
            0 => None,
            1 => Some(ld * lines + r(9) as usize),
            _ => Some(0),
        };
        Operand { layout, transpose, ld: Some(ld), batch_stride }
    };
    desc.a = operand(m, k, true, r);
    desc.b = operand(k, n, true, r);
    desc.c = operand(m, n, false, r);
    if desc.c.batch_stride == Some(0) {
        desc.c.batch_stride = None;
    }
    // Integer problems take integral alpha and beta.
    let int = dtype.is_integer();
    desc.alpha = if int { [1.0, 3.0, -2.0] } else { [1.0, 0.5, -2.0] }[r(3) as usize];
    desc.beta = if int { [0.0, 1.0, -1.0] } else { [0.0, 1.0, -0.25] }[r(3) as usize];
    desc
}

#[test]
fn random_problems_match_the_cpu_reference() {
    // More cases, or larger problems, on request.
    let env = |name: &str, default: u64| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let (cases, max_dim) = (env("MATBRIDGE_RANDOM_CASES", 24), env("MATBRIDGE_RANDOM_MAX_DIM", 70).max(1));
    for ctx in common::contexts() {
        let mb = Matbridge::with_context(ctx);
        for case in 0..cases {
            let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::seed_from_u64(case);
            let mut r = |n: u64| rand::Rng::random_range(&mut rng, 0..n);
            let desc = random_desc(&mut r, max_dim);
            run_and_check(&mb, &desc, 1000 + case);
        }
    }
}
