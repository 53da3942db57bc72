//! OpenCL C kernels (tests/kernels/opencl), compiled by clang-19 and llvm-spirv, translated by
//! matbridge and launched through the kernel API on every test device, against CPU results.

mod common;

use matbridge_runtime::{AddressMode, ChannelOrder, ChannelType, Context, Image, ImageDesc, ImageFormat, ImageKind, KernelArg, NdRange, Sampler};
use rand::{Rng, SeedableRng};

fn kernels_and_devices(name: &str) -> Option<(Vec<u32>, Vec<Context>)> {
    let spirv = common::opencl(name)?;
    Some((spirv, common::contexts()))
}

fn f32_bytes(v: f32) -> [u8; 4] {
    v.to_le_bytes()
}

#[test]
fn vector_add_with_early_return() {
    let Some((spirv, contexts)) = kernels_and_devices("vector_add") else { return };
    for ctx in &contexts {
        let kernel = ctx.load_kernel(&spirv, "vector_add").unwrap();
        let n = 1000usize;
        let a: Vec<f32> = (0..1024).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..1024).map(|i| 100.0 - i as f32).collect();
        let ba = ctx.buffer_from_slice(&a, "a").unwrap();
        let bb = ctx.buffer_from_slice(&b, "b").unwrap();
        let mut bc = ctx.buffer_from_slice(&vec![-7.0f32; 1024], "c").unwrap();
        let s = f32_bytes(3.0);
        let nb = (n as u32).to_le_bytes();
        ctx.launch(&kernel, &NdRange::linear(1024, None), &[KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&bc), KernelArg::Bytes(&s), KernelArg::Bytes(&nb)]).unwrap();
        let c: Vec<f32> = ctx.read_buffer(&mut bc).unwrap();
        for i in 0..1024 {
            let want = if i < n { a[i] * 3.0 + b[i] } else { -7.0 };
            assert_eq!(c[i], want, "{}: c[{i}]", ctx.caps().name);
        }
        // The global offset shifts get_global_id.
        let mut range = NdRange::linear(512, Some(64));
        range.offset = [512, 0, 0];
        let mut bc2 = ctx.buffer_from_slice(&vec![-7.0f32; 1024], "c2").unwrap();
        ctx.launch(&kernel, &range, &[KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&bc2), KernelArg::Bytes(&s), KernelArg::Bytes(&nb)]).unwrap();
        let c2: Vec<f32> = ctx.read_buffer(&mut bc2).unwrap();
        for i in 0..1024 {
            let want = if (512..n).contains(&i) { a[i] * 3.0 + b[i] } else { -7.0 };
            assert_eq!(c2[i], want, "{}: offset launch, c[{i}]", ctx.caps().name);
        }
        // Launch errors name what is wrong.
        let short = ctx.launch(&kernel, &NdRange::linear(1024, None), &[KernelArg::Buffer(&ba)]).unwrap_err().to_string();
        assert!(short.contains("takes 5 arguments") && short.contains("gives 1"), "{short}");
        let wrong = ctx
            .launch(&kernel, &NdRange::linear(1024, None), &[KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Bytes(&s), KernelArg::Bytes(&s), KernelArg::Bytes(&nb)])
            .unwrap_err()
            .to_string();
        assert!(wrong.contains("argument 2") && wrong.contains("buffer"), "{wrong}");
        let uneven = ctx
            .launch(&kernel, &NdRange::linear(1000, Some(64)), &[KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&bc), KernelArg::Bytes(&s), KernelArg::Bytes(&nb)])
            .unwrap_err()
            .to_string();
        assert!(uneven.contains("not a multiple of the local size"), "{uneven}");
        let size = ctx
            .launch(&kernel, &NdRange::linear(1024, None), &[KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&bc), KernelArg::Bytes(&[1, 2]), KernelArg::Bytes(&nb)])
            .unwrap_err()
            .to_string();
        assert!(size.contains("argument 3") && size.contains("expected 4 bytes, given 2"), "{size}");
    }
}

#[test]
fn pointer_arithmetic() {
    let Some((spirv, contexts)) = kernels_and_devices("pointers") else { return };
    for ctx in &contexts {
        let name = &ctx.caps().name;
        // walk: every other element of each row.
        let row = 10u32;
        let src: Vec<i32> = (0..64 * row as i32).map(|i| i * 3 - 50).collect();
        let bs = ctx.buffer_from_slice(&src, "src").unwrap();
        let mut bd = ctx.zeroed_buffer::<i32>(64, "dst").unwrap();
        let k = ctx.load_kernel(&spirv, "walk").unwrap();
        ctx.launch(&k, &NdRange::linear(64, None), &[KernelArg::Buffer(&bs), KernelArg::Buffer(&bd), KernelArg::Bytes(&row.to_le_bytes())]).unwrap();
        let got: Vec<i32> = ctx.read_buffer(&mut bd).unwrap();
        for g in 0..64usize {
            let want: i32 = (0..row as usize).step_by(2).map(|j| src[g * row as usize + j]).sum();
            assert_eq!(got[g], want, "{name}: walk[{g}]");
        }
        // bytes: a float read through a char pointer at a byte offset.
        let floats: Vec<f32> = (0..65).map(|i| i as f32 * 1.25).collect();
        let bf = ctx.buffer_from_slice(&floats, "floats").unwrap();
        let mut bo = ctx.zeroed_buffer::<f32>(64, "out").unwrap();
        let k = ctx.load_kernel(&spirv, "bytes").unwrap();
        ctx.launch(&k, &NdRange::linear(64, None), &[KernelArg::Buffer(&bf), KernelArg::Buffer(&bo)]).unwrap();
        let got: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
        for g in 0..64 {
            assert_eq!(got[g], floats[g + 1] * 2.0, "{name}: bytes[{g}]");
        }
        // vectors: vload4/vstore4, a struct read, a pointer chosen at run time.
        let src: Vec<f32> = (0..256).map(|i| i as f32 - 100.0).collect();
        let pairs: Vec<[u32; 2]> = (0..64u32).map(|g| [(0.5 + g as f32).to_bits(), g]).collect();
        let bs = ctx.buffer_from_slice(&src, "src").unwrap();
        let bp = ctx.buffer_from_slice(&pairs, "pairs").unwrap();
        let mut bd = ctx.zeroed_buffer::<f32>(4 * 192, "dst").unwrap();
        let k = ctx.load_kernel(&spirv, "vectors").unwrap();
        ctx.launch(&k, &NdRange::linear(64, None), &[KernelArg::Buffer(&bs), KernelArg::Buffer(&bd), KernelArg::Buffer(&bp)]).unwrap();
        let got: Vec<f32> = ctx.read_buffer(&mut bd).unwrap();
        let mut want = vec![0.0f32; 4 * 192];
        for g in 0..64 {
            let v = &src[4 * g..4 * g + 4];
            let scale = 0.5 + g as f32;
            let at = if g & 1 == 1 { g } else { g + 64 };
            for c in 0..4 {
                want[4 * at + c] = v[c] * scale;
                want[4 * (128 + g) + c] = v[c] + 1.0;
            }
        }
        assert_eq!(got, want, "{name}: vectors");
    }
}

fn math_reference(x: f32, y: i32) -> ([f32; 16], [i32; 16], [u32; 8]) {
    let a = x;
    let b = y;
    let c = (b as u32).wrapping_mul(2654435761);
    let f = [
        a.mul_add(2.0, 1.0),
        a.abs().sqrt(),
        a.max(0.5),
        a.min(0.25),
        a.clamp(-1.0, 1.0),
        (a * 0.01).exp(),
        1.0 / (a.abs() + 1.0).sqrt(),
        a.round(),
        a.floor(),
        a * a - a,
        (a.abs() + 1.0).ln(),
        a.sin(),
        (a.abs() + 1.0).powf(1.5),
        2.0f32.copysign(a),
        a % 0.75,
        (a * 3.0).trunc(),
    ];
    let i = [
        b.wrapping_abs(),
        b.max(3),
        b.min(-3),
        b.clamp(-100, 100),
        b.count_ones() as i32,
        b.leading_zeros() as i32,
        b.rotate_left(5),
        if b > 0 { 2 } else { 1 },
        (a * 1e10) as i32,
        (((b as i64) * (b as i64)) >> 32) as i32 + 1,
        (b & 0x7fffff) * 3,
        b.saturating_add(0x7ffffff0),
        b.saturating_sub(-0x7ffffff0),
        ((b as i64 + 1000) >> 1) as i32,
        (a * 2.5).round_ties_even() as i32,
        (a * 1e9).floor() as i32,
    ];
    let u = [c.max(7), c.min(9), c.saturating_add(0xfffffff0), c.saturating_sub(5), ((c as u64 + c.wrapping_add(3) as u64) >> 1) as u32, c.leading_zeros(), (a * 1e9) as u32, c.abs_diff(100)];
    (f, i, u)
}

#[test]
fn math_builtins() {
    let Some((spirv, contexts)) = kernels_and_devices("math") else { return };
    let n = 128usize;
    let x: Vec<f32> = (0..n).map(|g| (g as f32 - 64.0) * 0.37 + if g % 7 == 0 { 0.13 } else { 0.0 }).collect();
    let mut y: Vec<i32> = (0..n as i64).map(|g| ((g * 7919 - 300_000) * (g % 5 - 2)) as i32).collect();
    y[1] = i32::MIN;
    y[2] = i32::MAX;
    y[3] = 0;
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let k = ctx.load_kernel(&spirv, "math").unwrap();
        let bx = ctx.buffer_from_slice(&x, "x").unwrap();
        let by = ctx.buffer_from_slice(&y, "y").unwrap();
        let mut bf = ctx.zeroed_buffer::<f32>(16 * n, "f").unwrap();
        let mut bi = ctx.zeroed_buffer::<i32>(16 * n, "i").unwrap();
        let mut bu = ctx.zeroed_buffer::<u32>(8 * n, "u").unwrap();
        ctx.launch(&k, &NdRange::linear(n as u32, None), &[KernelArg::Buffer(&bx), KernelArg::Buffer(&by), KernelArg::Buffer(&bf), KernelArg::Buffer(&bi), KernelArg::Buffer(&bu)]).unwrap();
        let f: Vec<f32> = ctx.read_buffer(&mut bf).unwrap();
        let i: Vec<i32> = ctx.read_buffer(&mut bi).unwrap();
        let u: Vec<u32> = ctx.read_buffer(&mut bu).unwrap();
        for g in 0..n {
            let (wf, wi, wu) = math_reference(x[g], y[g]);
            for k in 0..16 {
                let (got, want) = (f[16 * g + k], wf[k]);
                // Vulkan's precision: transcendental functions (exp, rsqrt, log, sin, pow) are
                // looser than correctly rounded.
                let tol = if [5, 6, 10, 11, 12].contains(&k) { 2e-3 } else { 2e-5 } * want.abs().max(1.0);
                assert!((got - want).abs() <= tol, "{name}: float built-in {k} of x = {}: got {got}, want {want}", x[g]);
                assert_eq!(i[16 * g + k], wi[k], "{name}: int built-in {k} of y = {}, x = {}", y[g], x[g]);
            }
            for k in 0..8 {
                assert_eq!(u[8 * g + k], wu[k], "{name}: uint built-in {k} of y = {}", y[g]);
            }
        }
    }
}

/// What `math_special.cl` computes for input `g`: 24 floats (`None` where the value is left to
/// the device: transcendental functions of infinities and NaNs) and 8 ints.
fn math_special_reference(x: &[f32], y: &[i32], g: usize) -> ([Option<f32>; 24], [i32; 8]) {
    let n = x.len();
    let (a, b, k) = (x[g], x[(g * 7 + 3) % n], y[g]);
    let finite = a.is_finite() && a.abs() < 1e4;
    let when = |ok: bool, v: f32| ok.then_some(v);
    // OpenCL's ilogb: FP_ILOGB0 = INT_MIN, FP_ILOGBNAN (and infinities) = INT_MAX.
    let ilogb = if a == 0.0 {
        i32::MIN
    } else if !a.is_finite() {
        i32::MAX
    } else {
        libm::frexpf(a).1 - 1
    };
    let (fm, fe) = if a.is_finite() { libm::frexpf(a) } else { (a, 0) };
    let pown_k = k % 7 - 3;
    let pown = if pown_k == 0 { 1.0 } else { (a as f64).powi(pown_k) as f32 };
    let root_k = k % 5 - 2;
    let rootn = if root_k == 0 || (a < 0.0 && root_k % 2 == 0) {
        f32::NAN
    } else if a == 0.0 && root_k < 0 {
        if root_k % 2 != 0 {
            f32::INFINITY.copysign(a)
        } else {
            f32::INFINITY
        }
    } else {
        let r = (a.abs() as f64).powf(1.0 / root_k as f64) as f32;
        if root_k % 2 != 0 {
            r.copysign(a)
        } else {
            r
        }
    };
    let maxmag = if a.abs() > b.abs() {
        a
    } else if b.abs() > a.abs() {
        b
    } else {
        a.max(b)
    };
    let minmag = if a.abs() < b.abs() {
        a
    } else if b.abs() < a.abs() {
        b
    } else {
        a.min(b)
    };
    let (rq, q) = libm::remquof(a, b);
    let q7 = if q < 0 { -((-q) & 127) } else { q & 127 };
    let pi = std::f64::consts::PI;
    let fract = if a.is_nan() {
        a
    } else if a.is_infinite() {
        0.0f32.copysign(a)
    } else {
        (a - a.floor()).min(1.0 - f32::EPSILON / 2.0)
    };
    let modf = if a.is_infinite() { 0.0f32.copysign(a) } else { (a - a.trunc()).copysign(a) };
    let f = [
        Some(fract),
        Some(a.floor()),
        Some(modf),
        Some(a.trunc()),
        when(finite, a.sin()),
        when(finite, a.cos()),
        Some(fm),
        Some(if a == 0.0 {
            f32::NEG_INFINITY
        } else if a.is_nan() {
            a
        } else if a.is_infinite() {
            f32::INFINITY
        } else {
            ilogb as f32
        }),
        when(a.is_finite(), pown),
        when(a.is_finite(), rootn),
        Some(maxmag),
        Some(minmag),
        Some(libm::remainderf(a, b)),
        Some(rq),
        Some(libm::nextafterf(a, b)),
        when(finite, (a as f64 * pi).sin() as f32),
        when(finite, (a as f64 * pi).cos() as f32),
        when(finite, ((a * 0.37) as f64 * pi).tan() as f32),
        when(finite, ((a * 0.1).clamp(-1.0, 1.0) as f64).asin() as f32 / std::f32::consts::PI),
        when(finite, ((a * 0.1).clamp(-1.0, 1.0) as f64).acos() as f32 / std::f32::consts::PI),
        when(finite, ((a as f64).atan() / pi) as f32),
        when(finite && b.is_finite(), ((a as f64).atan2(b as f64) / pi) as f32),
        Some(libm::erff(a * 0.25)),
        Some(libm::erfcf(a * 0.25)),
    ];
    let mad_sat = |p: i64| p.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
    let i = [
        if a.is_finite() { fe } else { 0 },
        ilogb,
        if rq.is_nan() { 0 } else { q7 },
        mad_sat(k as i64 * k as i64 + k as i64),
        ((k as u32 as u64) * 3 + 7).min(u32::MAX as u64) as u32 as i32,
        mad_sat(k as i64 * -3 + k as i64),
        ((k as i16 as i32) << 16) | ((k >> 16) as u16 as i32),
        (((k as u8 as u16) << 8) | ((k >> 8) as u8 as u16)) as i32,
    ];
    (f, i)
}

/// The float4 results of `math_special.cl` for input `g`: dynamic and constant shuffles and
/// half vectors loaded from `hin`.
fn math_special_vectors(x: &[f32], y: &[i32], hin: &[half::f16], g: usize) -> [[f32; 4]; 4] {
    let n = x.len();
    let (a, b, k) = (x[g], x[(g * 7 + 3) % n], y[g]);
    let v4 = [a, b, a * 2.0, b - 1.0];
    let both: Vec<f32> = v4.iter().copied().chain(v4.iter().map(|v| v * 10.0)).collect();
    let m = [k as u32, (k >> 3) as u32, (k >> 6) as u32, (k >> 9) as u32];
    let h = |k: usize| hin[8 * g + k].to_f32();
    [m.map(|i| v4[(i % 4) as usize]), m.map(|i| both[(i % 8) as usize]), [v4[3], v4[2], v4[1], v4[0]], [h(0) * 2.0 + h(4), h(1) * 2.0 + h(5), h(2) * 2.0 + h(6), h(3) * 2.0 + h(4)]]
}

/// The halves `math_special.cl` stores for input `g` (rounded to nearest even), `None` where it
/// stores nothing.
fn math_special_halves(x: &[f32], g: usize) -> [Option<half::f16>; 8] {
    let n = x.len();
    let (a, b) = (x[g], x[(g * 7 + 3) % n]);
    // OpenCL's clamp is fmin(fmax(x, lo), hi): NaN gives lo.
    let hv = [a, b, a * 2.0, b - 1.0].map(|v| half::f16::from_f32(if v.is_nan() { -1000.0 } else { v.clamp(-1000.0, 1000.0) } + 0.5));
    [Some(hv[0]), Some(hv[1]), Some(hv[2]), Some(hv[3]), Some(hv[2]), Some(hv[1]), Some(hv[0]), None]
}

/// `math_special.cl` as clang optimizes it and at -O0, where the results through pointers go
/// through private variables cast to generic pointers.
#[test]
fn math_special_builtins() {
    let (Some(optimized), Some(unoptimized)) = (common::opencl("math_special"), common::opencl_with("math_special", &["-O0"])) else { return };
    let contexts = common::contexts();
    let n = 128usize;
    let mut x: Vec<f32> = (0..n).map(|g| (g as f32 - 64.0) * 0.37 + if g % 7 == 0 { 0.13 } else { 0.0 }).collect();
    for (g, v) in [0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 0.5, -1.5, 1e20, 1e-30, 3.0, -2.0, 2.5].into_iter().enumerate() {
        x[g] = v;
    }
    let mut y: Vec<i32> = (0..n as i64).map(|g| ((g * 7919 - 300_000) * (g % 5 - 2)) as i32).collect();
    y[1] = i32::MIN;
    y[2] = i32::MAX;
    y[3] = 0;
    y[4] = 46341;
    y[5] = -46341;
    let hin: Vec<half::f16> = (0..8 * n).map(|k| half::f16::from_f32((k as f32 * 0.731).sin() * 300.0)).collect();
    for (ctx, (build, spirv)) in contexts.iter().flat_map(|c| [("-O2", &optimized), ("-O0", &unoptimized)].map(|b| (c, b))) {
        let name = &format!("{} ({build})", ctx.caps().name);
        let k = ctx.load_kernel(spirv, "math_special").unwrap();
        let bx = ctx.buffer_from_slice(&x, "x").unwrap();
        let by = ctx.buffer_from_slice(&y, "y").unwrap();
        let mut bf = ctx.zeroed_buffer::<f32>(24 * n, "f").unwrap();
        let mut bi = ctx.zeroed_buffer::<i32>(8 * n, "i").unwrap();
        let mut bv = ctx.zeroed_buffer::<f32>(16 * n, "v").unwrap();
        let bhin = ctx.buffer_from_slice(&hin, "hin").unwrap();
        let mut bhout = ctx.buffer_from_slice(&vec![half::f16::from_f32(-7.0); 8 * n], "hout").unwrap();
        let args = [KernelArg::Buffer(&bx), KernelArg::Buffer(&by), KernelArg::Buffer(&bf), KernelArg::Buffer(&bi), KernelArg::Buffer(&bv), KernelArg::Buffer(&bhin), KernelArg::Buffer(&bhout)];
        ctx.launch(&k, &NdRange::linear(n as u32, Some(32)), &args).unwrap();
        let f: Vec<f32> = ctx.read_buffer(&mut bf).unwrap();
        let i: Vec<i32> = ctx.read_buffer(&mut bi).unwrap();
        let v: Vec<f32> = ctx.read_buffer(&mut bv).unwrap();
        let hout: Vec<half::f16> = ctx.read_buffer(&mut bhout).unwrap();
        for g in 0..n {
            let (wf, wi) = math_special_reference(&x, &y, g);
            let b = x[(g * 7 + 3) % n];
            for (kk, want) in wf.iter().enumerate() {
                let Some(want) = *want else { continue };
                let got = f[24 * g + kk];
                let tol = match kk {
                    // Exact: floor/trunc splits, frexp, logb, magnitudes, remainders, nextafter.
                    0..=3 | 6 | 7 | 10..=14 => 0.0,
                    8 | 9 => 1e-4 * want.abs(),
                    22 | 23 => 1e-4 * want.abs() + 1e-6,
                    _ => 2e-3 * want.abs().max(1.0),
                };
                let ok = if want.is_nan() {
                    got.is_nan()
                } else if want.is_infinite() {
                    got == want
                } else {
                    (got - want).abs() <= tol
                };
                assert!(ok, "{name}: float built-in {kk} of a = {:e}, b = {:e}, k = {}: got {got:e}, want {want:e}", x[g], b, y[g]);
            }
            for (kk, want) in wi.iter().enumerate() {
                assert_eq!(i[8 * g + kk], *want, "{name}: int built-in {kk} of a = {:e}, b = {:e}, k = {}", x[g], b, y[g]);
            }
            for (kk, want) in math_special_halves(&x, g).iter().enumerate() {
                let got = hout[8 * g + kk];
                let want = want.unwrap_or(half::f16::from_f32(-7.0));
                assert_eq!(got.to_bits(), want.to_bits(), "{name}: half {kk} stored for a = {:e}, b = {:e}: got {got}, want {want}", x[g], b);
            }
            for (kk, want) in math_special_vectors(&x, &y, &hin, g).iter().enumerate() {
                let got = &v[16 * g + 4 * kk..16 * g + 4 * kk + 4];
                for c in 0..4 {
                    let same = if want[c].is_nan() { got[c].is_nan() } else { got[c] == want[c] };
                    assert!(same, "{name}: vector result {kk} of a = {:e}, b = {:e}, k = {}: got {got:?}, want {want:?}", x[g], b, y[g]);
                }
            }
        }
    }
}

/// `local_structs.cl`: structs in local and private memory through pointers, as clang
/// optimizes the kernel and at -O0.
#[test]
fn structs_in_local_and_private_memory() {
    let (Some(optimized), Some(unoptimized)) = (common::opencl("local_structs"), common::opencl_with("local_structs", &["-O0"])) else { return };
    let (n, local) = (128usize, 64usize);
    let input: Vec<f32> = (0..n).map(|g| ((g * 37) % 23) as f32 * 0.25 - 2.5).collect();
    let want: Vec<f32> = (0..n)
        .flat_map(|g| {
            let (l, v) = (g % local, input[g]);
            let base = g - l;
            let o = (l + 1) % local;
            let (x, y, k) = (input[base + o], input[base + o] * 2.0, o as f32);
            let bv = input[base + (l + 3) % local];
            let local_part = x + y * k + bv * (bv + 1.0) + 3.0;
            let acc: Vec<(f32, f32)> = (0..4).map(|k| (v + k as f32, k as f32)).collect();
            let mut r = acc[0];
            for k in 1..4 {
                let b = acc[if v > 0.0 { k } else { 3 - k }];
                r = (r.0 * b.0 - r.1 * b.1, r.0 * b.1 + r.1 * b.0);
            }
            let table = [(1.0f32, 2.0f32, 3.0f32), (4.0, 5.0, 6.0), (7.0, 8.0, 9.0)];
            let t = table[g % 3];
            let id = ((l % 3) * 10 + l) as f32;
            [local_part, r.0 + r.1, v + -v * 0.5 + id + t.0 * t.1 + t.2]
        })
        .collect();
    for ctx in &common::contexts() {
        for (build, spirv) in [("-O2", &optimized), ("-O0", &unoptimized)] {
            let name = format!("{} ({build})", ctx.caps().name);
            let k = ctx.load_kernel(spirv, "local_structs").unwrap();
            let bin = ctx.buffer_from_slice(&input, "in").unwrap();
            let mut bout = ctx.buffer_from_slice(&vec![-7.0f32; 3 * n], "out").unwrap();
            ctx.launch(&k, &NdRange::linear(n as u32, Some(local as u32)), &[KernelArg::Buffer(&bin), KernelArg::Buffer(&bout), KernelArg::Local(32 * local as u64)]).unwrap();
            let got: Vec<f32> = ctx.read_buffer(&mut bout).unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!((g - w).abs() <= 1e-5 * w.abs().max(1.0), "{name}: out[{i}] = {g}, want {w}");
            }
        }
    }
}

/// `printf.cl`: a kernel with `printf` runs on every device (its output is the validation
/// layer's to print; `tests/cli.rs` checks it) and printf returns 0.
#[test]
fn printf_runs_and_returns_zero() {
    let Some((spirv, contexts)) = kernels_and_devices("printf") else { return };
    let x: Vec<f32> = (0..64).map(|i| i as f32 * 0.75 - 3.0).collect();
    for ctx in &contexts {
        let k = ctx.load_kernel(&spirv, "report").unwrap();
        let bx = ctx.buffer_from_slice(&x, "x").unwrap();
        let mut bo = ctx.buffer_from_slice(&vec![-7i32; 64], "out").unwrap();
        ctx.launch(&k, &NdRange::linear(64, None), &[KernelArg::Buffer(&bx), KernelArg::Buffer(&bo)]).unwrap();
        let out: Vec<i32> = ctx.read_buffer(&mut bo).unwrap();
        let want: Vec<i32> = x.iter().map(|v| (v * 4.0) as i32).collect();
        assert_eq!(out, want, "{}", ctx.caps().name);
    }
}

fn control_flow_reference(input: &[i32], g: usize, n: i32) -> i32 {
    let mut v = input[g];
    if v < 0 {
        if v < -50 {
            return -1;
        }
        v = -v;
    }
    let mut acc: i32 = 0;
    for k in 0..n {
        if (k + v) % 3 == 0 {
            continue;
        }
        if acc > 1000 {
            break;
        }
        acc += k * v;
    }
    match v % 5 {
        0 => acc += 1,
        1 => acc *= 2,
        3 => {
            acc -= 7;
            acc ^= 0x55;
        }
        4 => acc ^= 0x55,
        _ => acc /= 2,
    }
    let mut found = -1;
    for k in 0..64 {
        let w = input[(g + k) % 64];
        if w == v + 1 {
            found = k as i32;
            break;
        }
        if w > 90 {
            found = 100 + k as i32;
            break;
        }
    }
    let mut pairs = 0;
    'outer: for a in 0..8 {
        for b in 0..8 {
            if a * b > v {
                break 'outer;
            }
            pairs += 1;
        }
    }
    acc + 1000 * found + 100000 * pairs
}

/// Byte, short and half buffers, read and written element by element: on SwiftShader as
/// 32-bit words, with sub-word stores by atomic clear and set (neighbouring work-items write
/// neighbouring bytes), and the arithmetic held in 32 bits.
#[test]
fn narrow_buffers() {
    let Some((spirv, contexts)) = kernels_and_devices("narrow_buffers") else { return };
    let n = 1001usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(21);
    let a: Vec<i8> = (0..n).map(|_| rng.random()).collect();
    let b: Vec<u8> = (0..n).map(|_| rng.random()).collect();
    let s: Vec<i16> = (0..n).map(|_| rng.random()).collect();
    let h: Vec<half::f16> = (0..n).map(|_| half::f16::from_f32(rng.random_range(-8000i32..8000) as f32 / 8.0)).collect();
    for ctx in &contexts {
        let k = ctx.load_kernel(&spirv, "narrow_buffers").unwrap_or_else(|e| panic!("{}: {e}", ctx.caps().name));
        let bufs = [
            ctx.buffer_from_slice(&a, "a").unwrap(),
            ctx.buffer_from_slice(&b, "b").unwrap(),
            ctx.buffer_from_slice(&s, "s").unwrap(),
            ctx.buffer_from_slice(&h.iter().map(|x| x.to_bits()).collect::<Vec<u16>>(), "h").unwrap(),
        ];
        // One element more than the work-items write: it must stay zero.
        let mut o8 = ctx.zeroed_buffer::<i8>(n + 3, "out8").unwrap();
        let mut o16 = ctx.zeroed_buffer::<i16>(n + 1, "out16").unwrap();
        let mut oh = ctx.zeroed_buffer::<u16>(n + 1, "outh").unwrap();
        let mut o32 = ctx.zeroed_buffer::<i32>(n, "out32").unwrap();
        let args: Vec<KernelArg<'_>> = bufs.iter().chain([&o8, &o16, &oh, &o32]).map(KernelArg::Buffer).collect();
        ctx.launch(&k, &NdRange::linear(n as u32, None), &args).unwrap_or_else(|e| panic!("{}: {e}", ctx.caps().name));
        let (g8, g16, gh, g32): (Vec<i8>, Vec<i16>, Vec<u16>, Vec<i32>) =
            (ctx.read_buffer(&mut o8).unwrap(), ctx.read_buffer(&mut o16).unwrap(), ctx.read_buffer(&mut oh).unwrap(), ctx.read_buffer(&mut o32).unwrap());
        for g in 0..n {
            let (x, y, v) = (a[g], b[g], h[g]);
            let want_h = v * half::f16::from_f32(2.0) + half::f16::from_f32(x as f32);
            let what = format!("{}: work-item {g} (a {x}, b {y}, s {}, h {v})", ctx.caps().name, s[g]);
            assert_eq!(g8[g], x.wrapping_add(y as i8), "{what}: out8");
            assert_eq!(g16[g], (s[g] as i32 * 3 + x as i32) as i16, "{what}: out16");
            assert_eq!(gh[g], want_h.to_bits(), "{what}: outh = {}", half::f16::from_bits(gh[g]));
            assert_eq!(g32[g], s[g] as i32 + y as i32 + (v * half::f16::from_f32(4.0)).to_f32() as i32, "{what}: out32");
        }
        assert_eq!((g8[n..].to_vec(), g16[n], gh[n]), (vec![0i8; 3], 0, 0), "{}: a store spilled past its element", ctx.caps().name);
    }
}

/// Buffers of narrow vectors (uchar4, char2, short4, half4, half2) read and written a vector at a
/// time: on SwiftShader, vectors of whole aligned words move as words and char2 (half a word) as
/// bytes with atomic clear and set; a guard element after each output stays zero.
#[test]
fn narrow_vector_buffers() {
    let Some((spirv, contexts)) = kernels_and_devices("narrow_vectors") else { return };
    let n = 1001usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(22);
    let a: Vec<[u8; 4]> = (0..n).map(|_| rng.random()).collect();
    let b: Vec<[i8; 2]> = (0..n).map(|_| rng.random()).collect();
    let s: Vec<[i16; 4]> = (0..n).map(|_| rng.random()).collect();
    // Integers below 1000: every product and sum below is exact in f16.
    let h: Vec<[half::f16; 4]> = (0..n).map(|_| std::array::from_fn(|_| half::f16::from_f32(rng.random_range(-500i32..500) as f32))).collect();
    let flat = |v: &[[half::f16; 4]]| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<u16>>();
    for ctx in &contexts {
        let name = ctx.caps().name.clone();
        let k = ctx.load_kernel(&spirv, "narrow_vectors").unwrap_or_else(|e| panic!("{name}: {e}"));
        let inputs = [
            ctx.buffer_from_slice(a.as_flattened(), "a").unwrap(),
            ctx.buffer_from_slice(b.as_flattened(), "b").unwrap(),
            ctx.buffer_from_slice(s.as_flattened(), "s").unwrap(),
            ctx.buffer_from_slice(&flat(&h), "h").unwrap(),
        ];
        let mut oa = ctx.zeroed_buffer::<[u8; 4]>(n + 1, "out_a").unwrap();
        let mut ob = ctx.zeroed_buffer::<[i8; 2]>(n + 2, "out_b").unwrap();
        let mut os = ctx.zeroed_buffer::<[i16; 4]>(n + 1, "out_s").unwrap();
        let mut oh = ctx.zeroed_buffer::<[u16; 2]>(n + 1, "out_h").unwrap();
        let args: Vec<KernelArg<'_>> = inputs.iter().chain([&oa, &ob, &os, &oh]).map(KernelArg::Buffer).collect();
        ctx.launch(&k, &NdRange::linear(n as u32, None), &args).unwrap_or_else(|e| panic!("{name}: {e}"));
        let ga: Vec<[u8; 4]> = ctx.read_buffer(&mut oa).unwrap();
        let gb: Vec<[i8; 2]> = ctx.read_buffer(&mut ob).unwrap();
        let gs: Vec<[i16; 4]> = ctx.read_buffer(&mut os).unwrap();
        let gh: Vec<[u16; 2]> = ctx.read_buffer(&mut oh).unwrap();
        for g in 0..n {
            let (x, y, v) = (a[g], b[g], h[g]);
            let what = format!("{name}: work-item {g} (a {x:?}, b {y:?}, s {:?}, h {v:?})", s[g]);
            let want_a: [u8; 4] = std::array::from_fn(|i| x[i].wrapping_add(i as u8 + 1).wrapping_add(y[0] as u8));
            assert_eq!(ga[g], want_a, "{what}: out_a");
            assert_eq!(gb[g], [y[1].wrapping_sub(x[0] as i8), y[0].wrapping_sub(x[0] as i8)], "{what}: out_b");
            let want_s: [i16; 4] = std::array::from_fn(|i| s[g][i].wrapping_mul(3).wrapping_add(y[0] as i16));
            assert_eq!(gs[g], want_s, "{what}: out_s");
            let two = half::f16::from_f32(2.0);
            assert_eq!(gh[g], [(v[0] * two + v[2]).to_bits(), (v[1] * two + v[3]).to_bits()], "{what}: out_h");
        }
        assert_eq!((ga[n], gb[n], gb[n + 1], gs[n], gh[n]), ([0; 4], [0; 2], [0; 2], [0; 4], [0; 2]), "{name}: a store spilled past its element");
    }
}

/// float8, int8 and uchar16 (split into vectors of four for every Vulkan device): loads and
/// stores through vector pointers and vload8, arithmetic, fmax, reversing swizzles, conversions
/// and a vector select; a guard element after each output stays zero.
#[test]
fn wide_vectors() {
    let Some((spirv, contexts)) = kernels_and_devices("wide_vectors") else { return };
    let n = 257usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(23);
    // Small integers: every product and sum is exact, fused or not.
    let a: Vec<[f32; 8]> = (0..n).map(|_| std::array::from_fn(|_| rng.random_range(-8i32..=8) as f32)).collect();
    let b: Vec<f32> = (0..n * 8).map(|_| rng.random_range(-8i32..=8) as f32).collect();
    let c: Vec<[u8; 16]> = (0..n).map(|_| rng.random()).collect();
    for ctx in &contexts {
        let name = ctx.caps().name.clone();
        let k = ctx.load_kernel(&spirv, "wide_vectors").unwrap_or_else(|e| panic!("{name}: {e}"));
        let (ba, bb, bc) = (ctx.buffer_from_slice(a.as_flattened(), "a").unwrap(), ctx.buffer_from_slice(&b, "b").unwrap(), ctx.buffer_from_slice(c.as_flattened(), "c").unwrap());
        let mut out = ctx.zeroed_buffer::<[f32; 8]>(n + 1, "out").unwrap();
        let mut out_c = ctx.zeroed_buffer::<[u8; 16]>(n + 1, "out_c").unwrap();
        let mut out_i = ctx.zeroed_buffer::<[i32; 8]>(n + 1, "out_i").unwrap();
        let args = [&ba, &bb, &out, &bc, &out_c, &out_i].map(KernelArg::Buffer);
        ctx.launch(&k, &NdRange::linear(n as u32, None), &args).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Vec<[f32; 8]> = ctx.read_buffer(&mut out).unwrap();
        let got_c: Vec<[u8; 16]> = ctx.read_buffer(&mut out_c).unwrap();
        let got_i: Vec<[i32; 8]> = ctx.read_buffer(&mut out_i).unwrap();
        for g in 0..n {
            let z: [f32; 8] = std::array::from_fn(|j| (a[g][j] * b[8 * g + j] + 1.0).max(0.5));
            let u = c[g];
            let what = format!("{name}: work-item {g}");
            assert_eq!(got[g], std::array::from_fn::<f32, 8, _>(|j| z[7 - j]), "{what}: out");
            assert_eq!(got_c[g], std::array::from_fn::<u8, 16, _>(|j| u[j].wrapping_add(3).wrapping_add(u[15 - j])), "{what}: out_c");
            let want_i: [i32; 8] = std::array::from_fn(|j| {
                let i = z[j] as i32 + u[j] as i32;
                if i > 100 {
                    -1
                } else {
                    i
                }
            });
            assert_eq!(got_i[g], want_i, "{what}: out_i");
        }
        assert_eq!((got[n], got_c[n], got_i[n]), ([0.0; 8], [0; 16], [0; 8]), "{name}: a store spilled past its element");
    }
}

#[test]
fn narrow_saturating_conversions() {
    let Some((spirv, contexts)) = kernels_and_devices("math_narrow") else { return };
    let y: Vec<i32> = vec![-100_000, -129, -128, -1, 0, 1, 127, 128, 255, 256, 32767, 32768, 65535, 65536, i32::MIN, i32::MAX];
    for ctx in &contexts {
        let k = ctx.load_kernel(&spirv, "math_narrow").unwrap();
        let by = ctx.buffer_from_slice(&y, "y").unwrap();
        let mut bo = ctx.zeroed_buffer::<i32>(4 * y.len(), "out").unwrap();
        ctx.launch(&k, &NdRange::linear(y.len() as u32, None), &[KernelArg::Buffer(&by), KernelArg::Buffer(&bo)]).unwrap();
        let got: Vec<i32> = ctx.read_buffer(&mut bo).unwrap();
        for (g, b) in y.iter().enumerate() {
            let want = [(*b).clamp(-128, 127), (*b).clamp(0, 255), (*b).clamp(-32768, 32767), (*b).clamp(0, 65535)];
            assert_eq!(&got[4 * g..4 * g + 4], &want, "{}: y = {b}", ctx.caps().name);
        }
    }
}

#[test]
fn structured_control_flow() {
    let Some((spirv, contexts)) = kernels_and_devices("control_flow") else { return };
    check_control_flow(&spirv, &contexts);
}

/// Unoptimized producers keep locals (and pointers into local memory) in variables.
#[test]
fn unoptimized_kernels() {
    let (Some(flow), Some(gemm)) = (common::opencl_with("control_flow", &["-O0"]), common::opencl_with("local_gemm", &["-O0"])) else { return };
    let contexts = common::contexts();
    check_control_flow(&flow, &contexts);
    check_local_gemm(&gemm, &contexts);
}

fn check_control_flow(spirv: &[u32], contexts: &[Context]) {
    let input: Vec<i32> = (0..64).map(|g: i32| (g * 37 % 150) - 60).collect();
    for ctx in contexts {
        let k = ctx.load_kernel(spirv, "control_flow").unwrap();
        for n in [0i32, 5, 40] {
            let bi = ctx.buffer_from_slice(&input, "in").unwrap();
            let mut bo = ctx.zeroed_buffer::<i32>(64, "out").unwrap();
            ctx.launch(&k, &NdRange::linear(64, Some(16)), &[KernelArg::Buffer(&bi), KernelArg::Buffer(&bo), KernelArg::Bytes(&n.to_le_bytes())]).unwrap();
            let got: Vec<i32> = ctx.read_buffer(&mut bo).unwrap();
            for g in 0..64 {
                assert_eq!(got[g], control_flow_reference(&input, g, n), "{}: n = {n}, work-item {g} (input {})", ctx.caps().name, input[g]);
            }
        }
    }
}

#[test]
fn local_memory_gemm() {
    let Some((spirv, contexts)) = kernels_and_devices("local_gemm") else { return };
    check_local_gemm(&spirv, &contexts);
}

fn check_local_gemm(spirv: &[u32], contexts: &[Context]) {
    let (m, n, k) = (40usize, 56usize, 24usize);
    let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| ((i * 5) % 11) as f32 - 5.0).collect();
    let mut want = vec![0.0f32; m * n];
    for r in 0..m {
        for c in 0..n {
            want[r * n + c] = (0..k).map(|x| a[r * k + x] * b[x * n + c]).sum();
        }
    }
    for ctx in contexts {
        let name = &ctx.caps().name;
        let ba = ctx.buffer_from_slice(&a, "A").unwrap();
        let bb = ctx.buffer_from_slice(&b, "B").unwrap();
        let dims = [(m as i32).to_le_bytes(), (n as i32).to_le_bytes(), (k as i32).to_le_bytes()];
        let range = NdRange { dims: 2, global: [64, 48, 1], local: None, offset: [0; 3] };
        let tiled = ctx.load_kernel(spirv, "gemm_tiled").unwrap();
        assert_eq!(tiled.abi().required_local_size, Some([16, 16, 1]));
        let mut bc = ctx.zeroed_buffer::<f32>(m * n, "C").unwrap();
        ctx.launch(&tiled, &range, &[KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&bc), KernelArg::Bytes(&dims[0]), KernelArg::Bytes(&dims[1]), KernelArg::Bytes(&dims[2])])
            .unwrap();
        let got: Vec<f32> = ctx.read_buffer(&mut bc).unwrap();
        assert_eq!(got, want, "{name}: gemm_tiled");
        // Local memory sized at launch, at two tile sizes (8x8 and 16x16 work-groups).
        let args_kernel = ctx.load_kernel(spirv, "gemm_local_args").unwrap();
        for tile in [8u32, 16] {
            let limit = ctx.caps().limits.max_workgroup_invocations;
            if tile * tile > limit {
                continue;
            }
            let bytes = u64::from(tile * tile * 4);
            let range = NdRange { dims: 2, global: [64, 48, 1], local: Some([tile, tile, 1]), offset: [0; 3] };
            let mut bc = ctx.zeroed_buffer::<f32>(m * n, "C").unwrap();
            ctx.launch(
                &args_kernel,
                &range,
                &[
                    KernelArg::Buffer(&ba),
                    KernelArg::Buffer(&bb),
                    KernelArg::Buffer(&bc),
                    KernelArg::Bytes(&dims[0]),
                    KernelArg::Bytes(&dims[1]),
                    KernelArg::Bytes(&dims[2]),
                    KernelArg::Local(bytes),
                    KernelArg::Local(bytes),
                ],
            )
            .unwrap();
            let got: Vec<f32> = ctx.read_buffer(&mut bc).unwrap();
            assert_eq!(got, want, "{name}: gemm_local_args with {tile}x{tile} tiles");
        }
    }
}

/// What `subgroups.cl` computes for work-item `g` at sub-group size `s` (local size 64).
fn subgroups_reference(input: &[u32], g: usize, s: usize) -> [u32; 12] {
    let lid = g % s;
    let base = g - lid;
    let lane = |k: usize| input[base + k];
    let group: Vec<u32> = (0..s).map(lane).collect();
    let local = g % 64;
    [
        group.iter().fold(0u32, |a, x| a.wrapping_add(*x)),
        group[..=lid].iter().fold(0u32, |a, x| a.wrapping_add(*x)),
        group[..lid].iter().copied().max().unwrap_or(0),
        lane(1),
        u32::from(group.iter().any(|x| *x > 900)) + 2 * u32::from(group.iter().all(|x| *x > 5)),
        lane((lid + 3) % s),
        if lid + 2 < s { lane(lid + 2) } else { lane(lid + 2 - s) + 1000 },
        if lid >= 3 { lane(lid - 3) } else { lane(s + lid - 3) + 1000 },
        lane(lid ^ 1),
        (lid + 100 * s) as u32,
        (local / s + 1000 * (64 / s)) as u32,
        group.iter().map(|x| *x as i32 - 500).min().unwrap_or(0) as u32,
    ]
}

fn check_subgroups(ctx: &Context, spirv: &[u32], entry: &str, s: usize) {
    check_subgroups_with(ctx, spirv, entry, s, &matbridge_runtime::KernelOptions::default());
}

fn check_subgroups_with(ctx: &Context, spirv: &[u32], entry: &str, s: usize, options: &matbridge_runtime::KernelOptions) {
    let name = &ctx.caps().name;
    let n = 256usize;
    let input: Vec<u32> = (0..2 * n as u32).map(|i| (i * 37 + 11) % 997 + 1).collect();
    let k = ctx.load_kernel_with(spirv, entry, options).unwrap();
    let bi = ctx.buffer_from_slice(&input, "in").unwrap();
    let mut bo = ctx.zeroed_buffer::<u32>(12 * n, "out").unwrap();
    let mut bb = ctx.zeroed_buffer::<u32>(2 * n, "blocks").unwrap();
    ctx.launch(&k, &NdRange::linear(n as u32, Some(64)), &[KernelArg::Buffer(&bi), KernelArg::Buffer(&bo), KernelArg::Buffer(&bb)]).unwrap();
    let out: Vec<u32> = ctx.read_buffer(&mut bo).unwrap();
    let blocks: Vec<u32> = ctx.read_buffer(&mut bb).unwrap();
    for g in 0..n {
        let want = subgroups_reference(&input, g, s);
        assert_eq!(&out[12 * g..12 * g + 12], &want, "{name}: `{entry}`, work-item {g}, sub-group size {s} (device {})", ctx.caps().subgroup_size);
    }
    for g in 0..n {
        let lid = g % s;
        let base = (g - lid) * 2;
        assert_eq!(blocks[base + lid], input[base + lid] + 1, "{name}: `{entry}` block element {}", base + lid);
        assert_eq!(blocks[base + lid + s], input[base + lid + s] + 2, "{name}: `{entry}` block element {}", base + lid + s);
    }
}

#[test]
fn subgroup_builtins() {
    let Some((spirv, contexts)) = kernels_and_devices("subgroups") else { return };
    for ctx in &contexts {
        check_subgroups(ctx, &spirv, "subgroups", ctx.caps().subgroup_size as usize);
        // The same kernel, told to run at 16 by the launch option instead of the module.
        let options = matbridge_runtime::KernelOptions::subgroup_size(16);
        let abi = ctx.load_kernel_with(&spirv, "subgroups", &options).unwrap().abi().clone();
        assert_eq!(abi.required_subgroup_size, Some(16));
        check_subgroups_with(ctx, &spirv, "subgroups", 16, &options);
    }
}

/// Kernels that require sub-groups of 8, 16 and 32 on devices of 4 (SwiftShader), 8 (lavapipe)
/// and 32 (H100): split, native and joined sub-groups against the same CPU model.
#[test]
fn required_subgroup_sizes_are_virtualized() {
    let Some((spirv, contexts)) = kernels_and_devices("subgroups_required") else { return };
    for ctx in &contexts {
        for s in [8usize, 16, 32] {
            let entry = format!("subgroups{s}");
            let abi = ctx.load_kernel(&spirv, &entry).unwrap().abi().clone();
            assert_eq!(abi.required_subgroup_size, Some(s as u32), "{}: `{entry}`", ctx.caps().name);
            assert_eq!(abi.subgroup_size_virtualized, s as u32 != ctx.caps().subgroup_size, "{}: `{entry}`", ctx.caps().name);
            check_subgroups(ctx, &spirv, &entry, s);
        }
    }
}

#[test]
fn atomics_and_barriers() {
    let Some((spirv, contexts)) = kernels_and_devices("atomics") else { return };
    let n = 1024usize;
    let nbins = 37u32;
    let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761).wrapping_mul(7) % 1000 + i % 3).collect();
    let mut want = vec![0u32; nbins as usize + 1];
    for v in &input {
        want[(*v % nbins) as usize] += 1;
    }
    want[nbins as usize] = *input.iter().max().unwrap();
    for ctx in &contexts {
        let k = ctx.load_kernel(&spirv, "histogram").unwrap();
        let bi = ctx.buffer_from_slice(&input, "in").unwrap();
        let mut bb = ctx.zeroed_buffer::<u32>(nbins as usize + 1, "bins").unwrap();
        ctx.launch(&k, &NdRange::linear(n as u32, Some(64)), &[KernelArg::Buffer(&bi), KernelArg::Buffer(&bb), KernelArg::Local(4 * u64::from(nbins)), KernelArg::Bytes(&nbins.to_le_bytes())])
            .unwrap();
        let got: Vec<u32> = ctx.read_buffer(&mut bb).unwrap();
        assert_eq!(got, want, "{}", ctx.caps().name);
    }
}

/// Kernels in the style of the classic OpenCL samples (tests/kernels/opencl/classics.cl).
#[test]
fn classic_sample_kernels() {
    let Some((spirv, contexts)) = kernels_and_devices("classics") else { return };
    for ctx in &contexts {
        let name = &ctx.caps().name;
        // Transpose through a padded local tile, 50 x 37.
        let (w, h) = (50usize, 37usize);
        let input: Vec<f32> = (0..w * h).map(|i| i as f32).collect();
        let k = ctx.load_kernel(&spirv, "transpose").unwrap();
        let bi = ctx.buffer_from_slice(&input, "in").unwrap();
        let mut bo = ctx.zeroed_buffer::<f32>(w * h, "out").unwrap();
        let range = NdRange { dims: 2, global: [64, 48, 1], local: None, offset: [0; 3] };
        ctx.launch(&k, &range, &[KernelArg::Buffer(&bi), KernelArg::Buffer(&bo), KernelArg::Bytes(&(w as i32).to_le_bytes()), KernelArg::Bytes(&(h as i32).to_le_bytes())]).unwrap();
        let got: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
        for r in 0..h {
            for c in 0..w {
                assert_eq!(got[c * h + r], input[r * w + c], "{name}: transpose ({r}, {c})");
            }
        }
        // Tree reduction with barriers in a loop.
        let n = 1000u32;
        let values: Vec<f32> = (0..1024).map(|i| (i % 17) as f32).collect();
        let k = ctx.load_kernel(&spirv, "reduce_sum").unwrap();
        let bv = ctx.buffer_from_slice(&values, "in").unwrap();
        let mut bp = ctx.zeroed_buffer::<f32>(16, "partial").unwrap();
        ctx.launch(&k, &NdRange::linear(1024, Some(64)), &[KernelArg::Buffer(&bv), KernelArg::Buffer(&bp), KernelArg::Local(256), KernelArg::Bytes(&n.to_le_bytes())]).unwrap();
        let got: Vec<f32> = ctx.read_buffer(&mut bp).unwrap();
        for (g, sum) in got.iter().enumerate() {
            let want: f32 = (g * 64..(g + 1) * 64).filter(|i| *i < n as usize).map(|i| values[i]).sum();
            assert_eq!(*sum, want, "{name}: partial sum {g}");
        }
        // A bitonic step on uint4 registers.
        let data: Vec<[u32; 4]> = (0..64u32).map(|i| [i.wrapping_mul(2654435761) >> 20, i * 7 % 13, 1000 - i, i ^ 0x55]).collect();
        let k = ctx.load_kernel(&spirv, "bitonic_step").unwrap();
        let mut bd = ctx.buffer_from_slice(&data, "data").unwrap();
        let (stage, pass) = (2u32, 1u32);
        ctx.launch(&k, &NdRange::linear(64, None), &[KernelArg::Buffer(&bd), KernelArg::Bytes(&stage.to_le_bytes()), KernelArg::Bytes(&pass.to_le_bytes())]).unwrap();
        let got: Vec<[u32; 4]> = ctx.read_buffer(&mut bd).unwrap();
        for (i, v) in data.iter().enumerate() {
            let mut s = *v;
            s.sort_unstable();
            let partner = i ^ (1 << pass);
            let up = (i >> stage) & 1 == 0;
            let want = if (partner > i) == up { s } else { [s[3], s[2], s[1], s[0]] };
            assert_eq!(got[i], want, "{name}: bitonic element {i}");
        }
        // Mandelbrot escape counts (contracted multiply-adds may move a few borderline points).
        let (mw, mh, iters) = (40i32, 30i32, 100i32);
        let k = ctx.load_kernel(&spirv, "mandelbrot").unwrap();
        let mut bm = ctx.zeroed_buffer::<u32>((mw * mh) as usize, "counts").unwrap();
        let range = NdRange { dims: 2, global: [48, 32, 1], local: Some([8, 8, 1]), offset: [0; 3] };
        ctx.launch(&k, &range, &[KernelArg::Buffer(&bm), KernelArg::Bytes(&mw.to_le_bytes()), KernelArg::Bytes(&mh.to_le_bytes()), KernelArg::Bytes(&iters.to_le_bytes())]).unwrap();
        let got: Vec<u32> = ctx.read_buffer(&mut bm).unwrap();
        let mut off = 0;
        for py in 0..mh {
            for px in 0..mw {
                let (cx, cy) = (-2.0f32 + 3.0 * px as f32 / mw as f32, -1.25f32 + 2.5 * py as f32 / mh as f32);
                let (mut x, mut y, mut i) = (0.0f32, 0.0f32, 0);
                while i < iters {
                    let (x2, y2) = (x * x, y * y);
                    if x2 + y2 > 4.0 {
                        break;
                    }
                    y = 2.0 * x * y + cy;
                    x = x2 - y2 + cx;
                    i += 1;
                }
                if got[(py * mw + px) as usize] != i as u32 {
                    off += 1;
                }
            }
        }
        assert!(off * 50 < mw * mh, "{name}: {off} of {} Mandelbrot points differ", mw * mh);
        // An n-body step on float4 with a private array.
        let np = 64usize;
        let pos: Vec<[f32; 4]> = (0..np).map(|i| [(i % 8) as f32, (i / 8) as f32, (i % 3) as f32 * 0.5, 1.0 + (i % 4) as f32]).collect();
        let k = ctx.load_kernel(&spirv, "nbody_step").unwrap();
        let bpos = ctx.buffer_from_slice(&pos, "pos").unwrap();
        let mut bacc = ctx.zeroed_buffer::<[f32; 4]>(np, "acc").unwrap();
        ctx.launch(&k, &NdRange::linear(np as u32, None), &[KernelArg::Buffer(&bpos), KernelArg::Buffer(&bacc), KernelArg::Bytes(&(np as i32).to_le_bytes())]).unwrap();
        let got: Vec<[f32; 4]> = ctx.read_buffer(&mut bacc).unwrap();
        for i in 0..np {
            let p = pos[i];
            let mut a = [0.0f32; 3];
            for q in &pos {
                let d = [q[0] - p[0], q[1] - p[1], q[2] - p[2]];
                let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 0.01;
                let inv = 1.0 / r2.sqrt();
                let f = q[3] * inv * inv * inv;
                for c in 0..3 {
                    a[c] += f * d[c];
                }
            }
            let last = pos[np - 1][0] - p[0];
            for c in 0..3 {
                assert!((got[i][c] - a[c]).abs() <= 1e-3 * a[c].abs().max(1.0), "{name}: body {i} axis {c}: {} against {}", got[i][c], a[c]);
            }
            assert_eq!(got[i][3], last, "{name}: body {i}: the private array's last entry");
        }
    }
}

/// OpenCL 2.0 float atomics on local memory through generic pointers and on global memory: the
/// generic casts take local memory's class back, and where the device lacks float atomics
/// (SwiftShader; min and max on the H100) they become compare-and-swap loops.
#[test]
fn float_atomics_through_generic_pointers() {
    let Some((spirv, contexts)) = kernels_and_devices("float_atomics") else { return };
    let n = 1024usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(71);
    let input: Vec<f32> = (0..n).map(|_| rng.random_range(-256i32..256) as f32 / 8.0).collect();
    let want = [input.iter().sum::<f32>(), input.iter().cloned().fold(f32::INFINITY, f32::min), input.iter().cloned().fold(f32::NEG_INFINITY, f32::max)];
    for ctx in &contexts {
        let k = ctx.load_kernel(&spirv, "stats").unwrap_or_else(|e| panic!("{}: {e}", ctx.caps().name));
        let bi = ctx.buffer_from_slice(&input, "in").unwrap();
        let mut bo = ctx.buffer_from_slice(&[0.0f32, f32::INFINITY, f32::NEG_INFINITY], "out").unwrap();
        ctx.launch(&k, &NdRange::linear(n as u32, Some(64)), &[KernelArg::Buffer(&bi), KernelArg::Buffer(&bo), KernelArg::Local(8)]).unwrap();
        let got: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
        // Multiples of 1/8 below 2^15: every order of the sum is exact.
        assert_eq!(got, want, "{}", ctx.caps().name);
    }
}

/// Local memory as LLVM 19 emits it: a float4 tile sized at launch (flattened to floats, its
/// length scaled), member and float-view reads that become byte offsets, a neighbour's element,
/// and a private array.
#[test]
fn local_memory_views() {
    let Some((spirv, contexts)) = kernels_and_devices("local_views") else { return };
    let (n, groups) = (64usize, 4usize);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(83);
    let input: Vec<f32> = (0..n * groups).map(|_| rng.random_range(-32i32..32) as f32 / 4.0).collect();
    let want: Vec<f32> = (0..n * groups)
        .map(|g| {
            let (base, l) = (g - g % n, g % n);
            let x = |i: usize| input[base + i];
            let a = 2.0 * x(3) + 4.0 * x((l + 2) % n);
            let line_next = if l + 1 < n { x(l + 1) + 1.0 } else { 100.0 };
            let b = line_next + 3.0 * x(l) + (l % 8) as f32 * x(l);
            let c = 2.0 * x(1) + 3.0 * x((l + 1) % n);
            a + b * 0.5 + c
        })
        .collect();
    for ctx in &contexts {
        let k = ctx.load_kernel(&spirv, "local_views").unwrap_or_else(|e| panic!("{}: {e}", ctx.caps().name));
        let bi = ctx.buffer_from_slice(&input, "in").unwrap();
        let mut bo = ctx.zeroed_buffer::<f32>(n * groups, "out").unwrap();
        let args = [KernelArg::Buffer(&bi), KernelArg::Buffer(&bo), KernelArg::Local(16 * n as u64), KernelArg::Local(4 * (n as u64 + 1))];
        ctx.launch(&k, &NdRange::linear((n * groups) as u32, Some(n as u32)), &args).unwrap_or_else(|e| panic!("{}: {e}", ctx.caps().name));
        let got: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
        // Quarters times small integers: exact in f32.
        assert_eq!(got, want, "{}", ctx.caps().name);
    }
}

/// tests/kernels/opencl/local_overrun.cl stores past its `__local` argument (sized at launch)
/// and past a fixed local array, by shifts far out of range either way. On lavapipe and
/// SwiftShader local memory is the process's heap; the translation bounds the indices (the
/// argument's by its launch size), so the process survives and what the kernel computed before
/// the stray stores is exact, launch after launch.
#[test]
fn stores_past_local_memory_stay_inside_it() {
    let Some((spirv, contexts)) = kernels_and_devices("local_overrun") else { return };
    let (n, groups) = (64usize, 2usize);
    let input: Vec<f32> = (0..n * groups).map(|i| i as f32 - 40.0).collect();
    let want: Vec<f32> = (0..n * groups).map(|g| input[g - g % n + (g % n + 1) % n] + 2.0 * input[g - g % n + g % 16]).collect();
    for ctx in &contexts {
        let what = ctx.caps().name.clone();
        if !ctx.caps().workarounds.workgroup_memory_on_host {
            // A GPU may fault on the stray stores (they are the kernel's bug, left as written).
            eprintln!("{what}: local memory is the device's own; not run");
            continue;
        }
        let k = ctx.load_kernel(&spirv, "local_overrun").unwrap_or_else(|e| panic!("{what}: {e}"));
        for shift in [100_000i32, -100_000, 1 << 30] {
            let bi = ctx.buffer_from_slice(&input, "in").unwrap();
            let mut bo = ctx.zeroed_buffer::<f32>(n * groups, "out").unwrap();
            let args = [KernelArg::Buffer(&bi), KernelArg::Buffer(&bo), KernelArg::Local(4 * n as u64), KernelArg::Bytes(&shift.to_le_bytes())];
            ctx.launch(&k, &NdRange::linear((n * groups) as u32, Some(n as u32)), &args).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
            assert_eq!(got, want, "{what}: shift {shift}");
        }
    }
}

/// OpenCL 1.2 idioms (tests/kernels/opencl/blur.cl): a `__constant` filter, a 2D range over a
/// 2D local tile with halo columns, and a float sum built from `atomic_cmpxchg`.
#[test]
fn constant_filter_and_compare_exchange_sum() {
    let Some((spirv, contexts)) = kernels_and_devices("blur") else { return };
    let (width, height) = (48usize, 8usize);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(89);
    let input: Vec<f32> = (0..width * height).map(|_| rng.random_range(-64i32..64) as f32).collect();
    let weights = [0.0625f32, 0.25, 0.375, 0.25, 0.0625];
    let at = |x: i64, y: usize| if (0..width as i64).contains(&x) { input[y * width + x as usize] } else { 0.0 };
    let want: Vec<f32> = (0..width * height).map(|i| (0..5).map(|k| weights[k] * at((i % width) as i64 + k as i64 - 2, i / width)).sum()).collect();
    let total: f32 = want.iter().sum();
    for ctx in &contexts {
        let k = ctx.load_kernel(&spirv, "blur_rows").unwrap_or_else(|e| panic!("{}: {e}", ctx.caps().name));
        let bi = ctx.buffer_from_slice(&input, "in").unwrap();
        let mut bo = ctx.zeroed_buffer::<f32>(width * height, "out").unwrap();
        let mut bt = ctx.zeroed_buffer::<f32>(1, "total").unwrap();
        let range = NdRange { dims: 2, global: [width as u32, height as u32, 1], local: Some([16, 4, 1]), offset: [0; 3] };
        let args = [KernelArg::Buffer(&bi), KernelArg::Buffer(&bo), KernelArg::Buffer(&bt), KernelArg::Bytes(&(width as u32).to_le_bytes())];
        ctx.launch(&k, &range, &args).unwrap_or_else(|e| panic!("{}: {e}", ctx.caps().name));
        let got: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
        // Sixteenths of integers below 2^7: every sum is exact, in any order.
        assert_eq!(got, want, "{}", ctx.caps().name);
        let t: Vec<f32> = ctx.read_buffer(&mut bt).unwrap();
        assert_eq!(t[0], total, "{}: total", ctx.caps().name);
    }
}

/// tests/kernels/opencl/structs_scan.cl: a struct array with float3 members in OpenCL C's layout,
/// a kernel-scope local counter, and a work-group scan.
#[test]
fn structs_counters_and_scan() {
    let Some((spirv, contexts)) = kernels_and_devices("structs_scan") else { return };
    let n = 64usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(97);
    // Particle: pos (a float3 takes 16 bytes), mass at 16, vel (float4) at 32; 48 bytes.
    let pos: Vec<[f32; 3]> = (0..n).map(|_| [0; 3].map(|_: i32| rng.random_range(-8i32..8) as f32)).collect();
    let mass: Vec<f32> = (0..n).map(|_| rng.random_range(1i32..4) as f32).collect();
    let vel: Vec<[f32; 4]> = (0..n).map(|_| [0; 4].map(|_: i32| rng.random_range(-4i32..4) as f32)).collect();
    let particles: Vec<f32> = (0..n).flat_map(|i| [pos[i][0], pos[i][1], pos[i][2], 0.0, mass[i], 0.0, 0.0, 0.0, vel[i][0], vel[i][1], vel[i][2], vel[i][3]]).collect();
    let eps = 0.5f32;
    let acc: Vec<[f64; 3]> = (0..n)
        .map(|i| {
            let mut a = [0.0f64; 3];
            for j in 0..n {
                let d: Vec<f64> = (0..3).map(|c| (pos[j][c] - pos[i][c]) as f64).collect();
                let r2 = d.iter().map(|x| x * x).sum::<f64>() + eps as f64;
                for c in 0..3 {
                    a[c] += d[c] * mass[j] as f64 / (r2 * r2 * r2).sqrt();
                }
            }
            a
        })
        .collect();
    let ints: Vec<i32> = (0..256).map(|_| rng.random_range(-100..100)).collect();
    let positives = ints.iter().filter(|v| **v > 0).count() as i32;
    let values: Vec<u32> = (0..256).map(|_| rng.random_range(0..1000)).collect();
    let close = |g: f32, w: f64| (g as f64 - w).abs() <= 1e-4 * (1.0 + w.abs());
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let k = ctx.load_kernel(&spirv, "nbody_structs").unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut bp = ctx.buffer_from_slice(&particles, "particles").unwrap();
        let mut ba = ctx.zeroed_buffer::<f32>(4 * n, "acc").unwrap();
        let args = [KernelArg::Buffer(&bp), KernelArg::Buffer(&ba), KernelArg::Bytes(&(n as u32).to_le_bytes()), KernelArg::Bytes(&eps.to_le_bytes())];
        ctx.launch(&k, &NdRange::linear(n as u32, Some(n as u32)), &args).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got_acc: Vec<f32> = ctx.read_buffer(&mut ba).unwrap();
        let got_p: Vec<f32> = ctx.read_buffer(&mut bp).unwrap();
        for i in 0..n {
            for c in 0..3 {
                assert!(close(got_acc[4 * i + c], acc[i][c]), "{name}: acc[{i}].{c} = {}, expected {}", got_acc[4 * i + c], acc[i][c]);
                assert!(close(got_p[12 * i + 8 + c], vel[i][c] as f64 + acc[i][c]), "{name}: vel[{i}].{c}");
                assert_eq!(got_p[12 * i + c], pos[i][c], "{name}: pos[{i}].{c}");
            }
            assert_eq!((got_acc[4 * i + 3], got_p[12 * i + 4], got_p[12 * i + 11]), (mass[i], mass[i], vel[i][3]), "{name}: mass and vel.w of {i}");
        }
        let k = ctx.load_kernel(&spirv, "count_positive").unwrap();
        let bi = ctx.buffer_from_slice(&ints, "ints").unwrap();
        let mut bo = ctx.zeroed_buffer::<i32>(1, "count").unwrap();
        ctx.launch(&k, &NdRange::linear(256, Some(64)), &[KernelArg::Buffer(&bi), KernelArg::Buffer(&bo)]).unwrap();
        assert_eq!(ctx.read_buffer::<i32>(&mut bo).unwrap()[0], positives, "{name}: positives");
        let k = ctx.load_kernel(&spirv, "scan").unwrap();
        let bv = ctx.buffer_from_slice(&values, "values").unwrap();
        let mut bs = ctx.zeroed_buffer::<u32>(256, "scan").unwrap();
        ctx.launch(&k, &NdRange::linear(256, Some(64)), &[KernelArg::Buffer(&bv), KernelArg::Buffer(&bs), KernelArg::Local(4 * 64)]).unwrap();
        let want: Vec<u32> = values
            .chunks(64)
            .flat_map(|c| {
                c.iter()
                    .scan(0, |s, v| {
                        *s += v;
                        Some(*s)
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(ctx.read_buffer::<u32>(&mut bs).unwrap(), want, "{name}: scan");
    }
}

/// tests/kernels/opencl/async_copy.cl: `async_work_group_copy` and its strided form, with
/// `wait_group_events`, as work-group copies and a barrier.
#[test]
fn async_work_group_copies() {
    let Some((spirv, contexts)) = kernels_and_devices("async_copy") else { return };
    let (n, rows) = (64usize, 8usize);
    let input: Vec<f32> = (0..n * rows).map(|i| (i % 97) as f32 - 40.0).collect();
    // Row g reversed and doubled becomes column g of an n x rows output.
    let mut want = vec![0.0f32; n * rows];
    for g in 0..rows {
        for l in 0..n {
            want[l * rows + g] = 2.0 * input[g * n + n - 1 - l];
        }
    }
    for ctx in &contexts {
        let k = ctx.load_kernel(&spirv, "async_copy").unwrap_or_else(|e| panic!("{}: {e}", ctx.caps().name));
        let bi = ctx.buffer_from_slice(&input, "in").unwrap();
        let mut bo = ctx.zeroed_buffer::<f32>(n * rows, "out").unwrap();
        let args = [KernelArg::Buffer(&bi), KernelArg::Buffer(&bo), KernelArg::Local(4 * n as u64), KernelArg::Bytes(&(rows as u32).to_le_bytes())];
        ctx.launch(&k, &NdRange::linear((n * rows) as u32, Some(n as u32)), &args).unwrap_or_else(|e| panic!("{}: {e}", ctx.caps().name));
        assert_eq!(ctx.read_buffer::<f32>(&mut bo).unwrap(), want, "{}", ctx.caps().name);
    }
}

/// OpenCL 2.0 work-group collectives (`work_group_collectives.cl`): reductions, scans across
/// sub-groups in local-id order, a broadcast, any/all and float reductions, one after another
/// in 64-item work-groups, at the device's sub-group size and at a required size of 16 (split
/// or joined sub-groups underneath).
#[test]
fn work_group_collectives() {
    let Some((spirv, contexts)) = kernels_and_devices("work_group_collectives") else { return };
    let n = 256usize;
    let input: Vec<i32> = (0..n as i32).map(|i| (i * 37 + 11) % 997 - 498).collect();
    for ctx in &contexts {
        for options in [matbridge_runtime::KernelOptions::default(), matbridge_runtime::KernelOptions::subgroup_size(16)] {
            let what = format!("{} (sub-groups {:?})", ctx.caps().name, options.subgroup_size);
            let k = ctx.load_kernel_with(&spirv, "collectives", &options).unwrap_or_else(|e| panic!("{what}: {e}"));
            let bi = ctx.buffer_from_slice(&input, "in").unwrap();
            let mut bo = ctx.zeroed_buffer::<i32>(8 * n, "out").unwrap();
            let mut bf = ctx.zeroed_buffer::<f32>(2 * n, "fout").unwrap();
            ctx.launch(&k, &NdRange::linear(n as u32, Some(64)), &[KernelArg::Buffer(&bi), KernelArg::Buffer(&bo), KernelArg::Buffer(&bf)]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let out: Vec<i32> = ctx.read_buffer(&mut bo).unwrap();
            let fout: Vec<f32> = ctx.read_buffer(&mut bf).unwrap();
            for g in 0..n {
                let (base, lid) = (g - g % 64, g % 64);
                let group = &input[base..base + 64];
                let want = [
                    group.iter().sum::<i32>(),
                    *group.iter().min().unwrap(),
                    *group.iter().max().unwrap(),
                    group[..=lid].iter().sum::<i32>(),
                    group[..lid].iter().copied().max().unwrap_or(i32::MIN),
                    group[5],
                    i32::from(group.iter().any(|v| *v > 490)) + 2 * i32::from(group.iter().all(|v| *v > -1000)),
                    group[..lid].iter().map(|v| *v as u32).fold(0u32, u32::wrapping_add) as i32,
                ];
                assert_eq!(&out[8 * g..8 * g + 8], &want, "{what}: work-item {g}");
                // Quarters below 2^14: exact in f32 in any order.
                let sum: f32 = group.iter().map(|v| *v as f32 / 4.0).sum();
                let min = group[..=lid].iter().map(|v| *v as f32 / 4.0).fold(f32::INFINITY, f32::min);
                assert_eq!([fout[2 * g], fout[2 * g + 1]], [sum, min], "{what}: work-item {g} (float)");
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
        }
    }
}

/// `wide_collectives.cl`: work-group collectives of `long`, `ulong` and `double` values and
/// broadcasts from a 2-dimensional local id, in 8 x 4 work-groups of a 16 x 8 range; refused
/// naming the missing 64-bit integers on devices without them.
#[test]
fn wide_work_group_collectives() {
    let Some((spirv, contexts)) = kernels_and_devices("wide_collectives") else { return };
    let (gx, gy, lx, ly) = (16usize, 8usize, 8usize, 4usize);
    let n = gx * gy;
    let input: Vec<i64> = (0..n as i64).map(|i| ((i * 2_654_435_761) % 1_000_003 - 500_000) * 1_000_003 + i).collect();
    for ctx in &contexts {
        let name = &ctx.caps().name;
        if !ctx.caps().shader_int64 || !ctx.caps().shader_float64 {
            let e = ctx.load_kernel(&spirv, "wide_collectives").err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains("64-bit"), "{name}: {e}");
            continue;
        }
        let k = ctx.load_kernel(&spirv, "wide_collectives").unwrap();
        let bi = ctx.buffer_from_slice(&input, "in").unwrap();
        let mut bo = ctx.zeroed_buffer::<i64>(6 * n, "out").unwrap();
        let mut bd = ctx.zeroed_buffer::<f64>(2 * n, "dout").unwrap();
        let mut bn = ctx.zeroed_buffer::<i32>(n, "iout").unwrap();
        let range = NdRange { dims: 2, global: [gx as u32, gy as u32, 1], local: Some([lx as u32, ly as u32, 1]), offset: [0; 3] };
        ctx.launch(&k, &range, &[KernelArg::Buffer(&bi), KernelArg::Buffer(&bo), KernelArg::Buffer(&bd), KernelArg::Buffer(&bn)]).unwrap();
        let out: Vec<i64> = ctx.read_buffer(&mut bo).unwrap();
        let dout: Vec<f64> = ctx.read_buffer(&mut bd).unwrap();
        let iout: Vec<i32> = ctx.read_buffer(&mut bn).unwrap();
        for y in 0..gy {
            for x in 0..gx {
                let g = y * gx + x;
                // The work-group's items in linear local-id order, and this one's place.
                let (x0, y0) = (x - x % lx, y - y % ly);
                let group: Vec<i64> = (0..ly).flat_map(|j| (0..lx).map(move |i| (y0 + j) * gx + x0 + i)).map(|k| input[k]).collect();
                let lid = (y % ly) * lx + x % lx;
                let want = [
                    group.iter().fold(0i64, |a, v| a.wrapping_add(*v)),
                    *group.iter().min().unwrap(),
                    *group[..=lid].iter().max().unwrap(),
                    group[lx + 3],
                    group[..lid].iter().fold(0u64, |a, v| a.wrapping_add(*v as u64)) as i64,
                    group.iter().map(|v| *v as u64).max().unwrap() as i64,
                ];
                assert_eq!(&out[6 * g..6 * g + 6], &want, "{name}: work-item ({x}, {y})");
                // Halves of integers below 2^53: exact in f64 in any order.
                let sum: f64 = group.iter().map(|v| *v as f64 * 0.5).sum();
                let min = group[..=lid].iter().map(|v| *v as f64 * 0.5).fold(f64::INFINITY, f64::min);
                assert_eq!([dout[2 * g], dout[2 * g + 1]], [sum, min], "{name}: work-item ({x}, {y}) (double)");
                assert_eq!(iout[g], 2 + 100 * 3, "{name}: work-item ({x}, {y}) (2-dimensional broadcast)");
            }
        }
        ctx.check_validation().unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// A merge pass of a GPU merge sort (`merge_runs`, written the way OpenCL merge sorts are): a
/// loop left by `break` from nested conditions whose values the structurizer carries through
/// variables, float4 helpers, and a pointer into the output for a lone run's copy. Each pair of
/// sorted runs must come out as their sorted merge.
#[test]
fn merge_sort_pass() {
    let Some((spirv, contexts)) = kernels_and_devices("merge_runs") else { return };
    let mut rng = rand::rngs::SmallRng::seed_from_u64(81);
    // Runs of 2 float4s (8 sorted floats); divisions [0, 8), [8, 16), [16, 22) in float4s, two
    // work-items each: the last work-item's run has no partner and is copied.
    let starts = [0i32, 8, 16, 22];
    let mut input: Vec<f32> = Vec::new();
    for _ in 0..11 {
        let mut run: Vec<f32> = (0..8).map(|_| rng.random_range(-64i32..64) as f32 / 4.0).collect();
        run.sort_by(f32::total_cmp);
        input.extend(run);
    }
    // Padding the loop reads one float4 past a run's end.
    input.extend([1e9f32; 8]);
    let mut want = input[..88].to_vec();
    for pair in [0usize, 4, 8, 12, 16] {
        let mut merged = input[4 * pair..4 * pair + 16].to_vec();
        merged.sort_by(f32::total_cmp);
        want[4 * pair..4 * pair + 16].copy_from_slice(&merged);
    }
    for ctx in &contexts {
        let k = ctx.load_kernel(&spirv, "merge_runs").unwrap();
        let bi = ctx.buffer_from_slice(&input, "in").unwrap();
        let mut bo = ctx.buffer_from_slice(&vec![-1000.0f32; 88], "out").unwrap();
        let bs = ctx.buffer_from_slice(&starts, "starts").unwrap();
        let (run_len, per_div, divisions) = (4i32, 2i32, 3i32);
        let args = [
            KernelArg::Buffer(&bi),
            KernelArg::Buffer(&bo),
            KernelArg::Bytes(&run_len.to_le_bytes()),
            KernelArg::Bytes(&per_div.to_le_bytes()),
            KernelArg::Buffer(&bs),
            KernelArg::Bytes(&divisions.to_le_bytes()),
        ];
        // SwiftShader computes two of the six merges wrong when the work-items share a SIMD
        // group (the same translated module runs right on lavapipe): one work-item per
        // work-group there.
        let local = if ctx.caps().vendor_id == matbridge_translator::profile::VENDOR_GOOGLE { 1 } else { 8 };
        ctx.launch(&k, &NdRange::linear(8, Some(local)), &args).unwrap();
        let got: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
        assert_eq!(got, want, "{}", ctx.caps().name);
        eprintln!("{}: merged runs match", ctx.caps().name);
    }
}

/// Facility-location gains (`assignments`, shaped like OpenCL clustering benchmarks): a struct
/// with a 64-bit member used as an index, char flags, a local coordinate cache, a 64-bit
/// scalar argument, and a fill kernel whose short argument is truncated to char. Without 64-bit
/// integers the struct's `long` is a pair of words (its layout is the host's).
#[test]
fn clustering_gains() {
    let Some((spirv, contexts)) = kernels_and_devices("assignments") else { return };
    let (num, dim, k, x) = (100usize, 3usize, 4usize, 7i64);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(91);
    // Multiples of 1/8 below 4 and power-of-two weights: every cost is exact in f32.
    let coord: Vec<f32> = (0..dim * num).map(|_| rng.random_range(-32i32..32) as f32 / 8.0).collect();
    let weight: Vec<f32> = (0..num).map(|_| [0.5f32, 1.0, 2.0][rng.random_range(0..3)]).collect();
    let assign: Vec<i64> = (0..num).map(|_| rng.random_range(0..6)).collect();
    let current: Vec<f32> = (0..num).map(|_| rng.random_range(0i32..64) as f32 / 4.0).collect();
    let center_of: Vec<i32> = (0..6).map(|_| rng.random_range(0..=k as i32)).collect();
    let work0: Vec<f32> = (0..num * (k + 1)).map(|_| rng.random_range(-8i32..8) as f32).collect();
    // struct { float weight; long assign; float cost; }: offsets 0, 8, 16; 24 bytes.
    let mut points = Vec::with_capacity(24 * num);
    for i in 0..num {
        points.extend(weight[i].to_le_bytes());
        points.extend([0u8; 4]);
        points.extend(assign[i].to_le_bytes());
        points.extend(current[i].to_le_bytes());
        points.extend([0u8; 4]);
    }
    let mut want_work = work0.clone();
    let mut want_moved = vec![b'0'; num];
    for i in 0..num {
        let mut cost = 0.0f32;
        for d in 0..dim {
            let diff = coord[d * num + i] - coord[d * num + x as usize];
            cost += diff * diff;
        }
        cost *= weight[i];
        let base = i * (k + 1);
        if cost < current[i] {
            want_moved[i] = b'1';
            want_work[base + k] = cost - current[i];
        } else {
            want_work[base + center_of[assign[i] as usize] as usize] += current[i] - cost;
        }
    }
    for ctx in &contexts {
        let fill = ctx.load_kernel(&spirv, "fill_bytes").unwrap();
        let gains = ctx.load_kernel(&spirv, "gains").unwrap();
        let mut moved = ctx.zeroed_buffer::<u8>(num.next_multiple_of(4), "moved").unwrap();
        // 0x130 truncated to char is '0'.
        let args = [KernelArg::Buffer(&moved), KernelArg::Bytes(&0x130i16.to_le_bytes()), KernelArg::Bytes(&(num as i32).to_le_bytes())];
        ctx.launch(&fill, &NdRange::linear(128, Some(64)), &args).unwrap();
        let bp = ctx.buffer_from_slice(&points, "points").unwrap();
        let bc = ctx.buffer_from_slice(&coord, "coord").unwrap();
        let mut bw = ctx.buffer_from_slice(&work0, "work").unwrap();
        let bt = ctx.buffer_from_slice(&center_of, "center_of").unwrap();
        let args = [
            KernelArg::Buffer(&bp),
            KernelArg::Buffer(&bc),
            KernelArg::Buffer(&bw),
            KernelArg::Buffer(&bt),
            KernelArg::Buffer(&moved),
            KernelArg::Local(4 * dim as u64),
            KernelArg::Bytes(&(num as i32).to_le_bytes()),
            KernelArg::Bytes(&(dim as i32).to_le_bytes()),
            KernelArg::Bytes(&x.to_le_bytes()),
            KernelArg::Bytes(&(k as i32).to_le_bytes()),
        ];
        ctx.launch(&gains, &NdRange::linear(128, Some(64)), &args).unwrap();
        let work: Vec<f32> = ctx.read_buffer(&mut bw).unwrap();
        let flags: Vec<u8> = ctx.read_buffer(&mut moved).unwrap();
        assert_eq!(&flags[..num], &want_moved[..], "{}: moved flags", ctx.caps().name);
        assert_eq!(work, want_work, "{}: work", ctx.caps().name);
        eprintln!("{}: clustering gains match", ctx.caps().name);
    }
}

/// Indices computed in 64 bits and narrowed to int (`long_indices`): clang writes the narrowing
/// and the scaling to bytes as `(x << 32) >> 30`, which devices without 64-bit integers fold to
/// `x << 2`.
#[test]
fn indices_narrowed_from_long() {
    let Some((spirv, contexts)) = kernels_and_devices("long_indices") else { return };
    let input: Vec<f32> = (0..512).map(|i| i as f32 * 0.5).collect();
    let (stride, offset, n) = (3i64, 5i64, 100i32);
    for ctx in &contexts {
        let k = ctx.load_kernel(&spirv, "gather_long").unwrap();
        let bi = ctx.buffer_from_slice(&input, "in").unwrap();
        let mut bo = ctx.zeroed_buffer::<f32>(128, "out").unwrap();
        let args = [KernelArg::Buffer(&bi), KernelArg::Buffer(&bo), KernelArg::Bytes(&stride.to_le_bytes()), KernelArg::Bytes(&offset.to_le_bytes()), KernelArg::Bytes(&n.to_le_bytes())];
        ctx.launch(&k, &NdRange::linear(128, Some(64)), &args).unwrap();
        let got: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
        for i in 0..128 {
            let want = if i < n as usize { input[(i as i64 * stride + offset) as usize] } else { 0.0 };
            assert_eq!(got[i], want, "{}: out[{i}]", ctx.caps().name);
        }
        eprintln!("{}: narrowed indices match", ctx.caps().name);
    }
}

/// `subgroup_types.cl`'s kernels, required size `sg`, over 64 work-items in work-groups of 32:
/// the device's results against ones computed here; `long` parts where the device has 64-bit
/// integers. With `extended_types` false the module is translated as for a device without
/// `shaderSubgroupExtendedTypes` first.
fn check_subgroup_types(ctx: &Context, sg: usize, extended_types: bool) {
    let longs = ctx.caps().shader_int64;
    let flags: Vec<String> = std::iter::once(format!("-DSG={sg}")).chain((!longs).then(|| "-DNOLONG".to_string())).collect();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let Some(mut spirv) = common::opencl_with("subgroup_types", &flags) else { return };
    let mut name = ctx.caps().name.clone();
    if !extended_types {
        let mut target = ctx.caps().clone();
        target.subgroup_extended_types = false;
        let (words, report) = matbridge_translator::translate(&spirv, &target).unwrap();
        let lowered = report.passes.iter().find(|p| p.name == "lower-subgroup-extended-types").is_some_and(|p| p.changed);
        assert!(lowered, "{name}: sub-groups of {sg}: nothing lowered for a device without extended types");
        spirv = words;
        name += " without shaderSubgroupExtendedTypes";
    }
    let name = &name;
    let n = 64usize;
    let mut rng = rand::rngs::StdRng::seed_from_u64(sg as u64);
    let f: Vec<f32> = (0..4 * n).map(|_| rng.random_range(-64i32..64) as f32 / 16.0).collect();
    let us: Vec<u16> = (0..8 * n).map(|_| rng.random()).collect();
    let uc: Vec<u8> = (0..16 * n).map(|_| rng.random()).collect();
    let u: Vec<u32> = (0..8 * n).map(|_| rng.random::<u32>() >> 1).collect();
    let ul: Vec<u64> = (0..n).map(|_| rng.random()).collect();
    let h: Vec<half::f16> = (0..n).map(|_| half::f16::from_f32(rng.random_range(-800i32..800) as f32 / 8.0)).collect();
    let k = ctx.load_kernel(&spirv, "moves").unwrap();
    assert_eq!(k.abi().subgroup_size_virtualized, sg as u32 != ctx.caps().subgroup_size, "{name}: sub-groups of {sg}");
    let (n, local) = (64usize, 32u32);
    let bufs = [
        ctx.buffer_from_slice(&f, "f").unwrap(),
        ctx.buffer_from_slice(&us, "us").unwrap(),
        ctx.buffer_from_slice(&uc, "uc").unwrap(),
        ctx.buffer_from_slice(&u, "u").unwrap(),
        ctx.buffer_from_slice(&ul, "ul").unwrap(),
        ctx.buffer_from_slice(&h, "h").unwrap(),
    ];
    let mut of = ctx.zeroed_buffer::<f32>(4 * n, "of").unwrap();
    let mut ous = ctx.zeroed_buffer::<u16>(8 * n, "ous").unwrap();
    let mut ouc = ctx.zeroed_buffer::<u8>(16 * n, "ouc").unwrap();
    let mut ou = ctx.zeroed_buffer::<u32>(9 * n, "ou").unwrap();
    let mut oul = ctx.zeroed_buffer::<u64>(n, "oul").unwrap();
    let mut oh = ctx.zeroed_buffer::<half::f16>(2 * n, "oh").unwrap();
    let mut args: Vec<KernelArg> = bufs.iter().map(KernelArg::Buffer).collect();
    args.extend([&of, &ous, &ouc, &ou, &oul, &oh].map(KernelArg::Buffer));
    args.push(KernelArg::Local(4 * u64::from(local)));
    ctx.launch(&k, &NdRange::linear(n as u32, Some(local)), &args).unwrap();
    let gf: Vec<f32> = ctx.read_buffer(&mut of).unwrap();
    let gus: Vec<u16> = ctx.read_buffer(&mut ous).unwrap();
    let guc: Vec<u8> = ctx.read_buffer(&mut ouc).unwrap();
    let gu: Vec<u32> = ctx.read_buffer(&mut ou).unwrap();
    let gul: Vec<u64> = ctx.read_buffer(&mut oul).unwrap();
    let gh: Vec<half::f16> = ctx.read_buffer(&mut oh).unwrap();
    let fv = |i: usize, c: usize| f[4 * i + c];
    for g in 0..n {
        let (lid, first) = (g % sg, g - g % sg);
        for c in 0..4 {
            let s1 = fv(first + (lid + 5) % sg, c);
            let s2 = if lid + 3 < sg { fv(g + 3, c) } else { fv(first + lid + 3 - sg, c) * 2.0 };
            let s3 = if lid >= 2 { fv(g - 2, c) } else { fv(first + sg + lid - 2, c) * 3.0 };
            let s4 = fv(first + (lid ^ 3), c);
            assert_eq!(gf[4 * g + c], s1 + s2 * 10.0 + s3 * 100.0 + s4 * 1000.0, "{name}, sub-groups of {sg}: float4 shuffles, work-item {g} component {c}");
        }
        if longs {
            let want = ul[first + sg - 1 - lid].wrapping_add(ul[first + (lid ^ 2)]);
            assert_eq!(gul[g], want, "{name}, sub-groups of {sg}: ulong shuffles, work-item {g}");
        }
        assert_eq!(gh[2 * g], h[first + (lid + 1) % sg], "{name}, sub-groups of {sg}: half shuffle, work-item {g}");
        let max = h[first..first + sg].iter().copied().fold(half::f16::NEG_INFINITY, half::f16::max);
        assert_eq!(gh[2 * g + 1], max, "{name}, sub-groups of {sg}: half reduction, work-item {g}");
        let wg = g - g % local as usize;
        assert_eq!(gu[8 * n + g], 2 * 7 + u[g] + u[wg + lid], "{name}, sub-groups of {sg}: local block reads, work-item {g}");
    }
    // Block layout: work-item `lid`'s component `k` is element `lid + k * SG` of the block.
    for i in 0..8 * n {
        let k = (i % (8 * sg)) / sg;
        assert_eq!(gus[i], us[i].wrapping_add(k as u16 + 1), "{name}, sub-groups of {sg}: ushort8 block, element {i}");
        assert_eq!(gu[i], u[i] * 3, "{name}, sub-groups of {sg}: uint8 block, element {i}");
    }
    for i in 0..16 * n {
        assert_eq!(guc[i], uc[i] ^ 0x5a, "{name}, sub-groups of {sg}: uchar16 block, element {i}");
    }

    // Reductions and scans of 16- and 64-bit values.
    let s: Vec<i16> = (0..n).map(|_| rng.random()).collect();
    let l: Vec<i64> = (0..n).map(|_| rng.random::<i64>() >> 1).collect();
    let k = ctx.load_kernel(&spirv, "scans").unwrap();
    let (bs, bl, bh) = (ctx.buffer_from_slice(&s, "s").unwrap(), ctx.buffer_from_slice(&l, "l").unwrap(), ctx.buffer_from_slice(&h, "h").unwrap());
    let mut os = ctx.zeroed_buffer::<i16>(4 * n, "os").unwrap();
    let mut ol = ctx.zeroed_buffer::<i64>(4 * n, "ol").unwrap();
    let mut oh = ctx.zeroed_buffer::<half::f16>(3 * n, "oh").unwrap();
    ctx.launch(&k, &NdRange::linear(n as u32, Some(local)), &[&bs, &bl, &bh, &os, &ol, &oh].map(KernelArg::Buffer)).unwrap();
    let (gs, gl, gh): (Vec<i16>, Vec<i64>, Vec<half::f16>) = (ctx.read_buffer(&mut os).unwrap(), ctx.read_buffer(&mut ol).unwrap(), ctx.read_buffer(&mut oh).unwrap());
    for g in 0..n {
        let (lid, first) = (g % sg, g - g % sg);
        let (before, upto, all) = (first..g, first..=g, first..first + sg);
        let want = [s[upto.clone()].iter().min(), s[before.clone()].iter().max().or(Some(&i16::MIN)), s[all.clone()].iter().min()].map(|v| *v.unwrap());
        assert_eq!(gs[4 * g..4 * g + 3], want, "{name}, sub-groups of {sg}: short inclusive min, exclusive max, min at work-item {g}");
        let down = if lid + 3 < sg { s[g + 3] } else { s[first + lid + 3 - sg].wrapping_add(1) };
        assert_eq!(gs[4 * g + 3], down, "{name}, sub-groups of {sg}: short shuffle down at work-item {g}");
        if longs {
            let sum = l[all.clone()].iter().fold(0i64, |a, v| a.wrapping_add(*v));
            let want = [*l[upto.clone()].iter().min().unwrap(), *l[before.clone()].iter().max().unwrap_or(&i64::MIN), sum, *l[before.clone()].iter().min().unwrap_or(&i64::MAX)];
            assert_eq!(gl[4 * g..4 * g + 4], want, "{name}, sub-groups of {sg}: long inclusive min, exclusive max, sum, exclusive min at work-item {g}");
        }
        let hmax = |r: &[half::f16]| r.iter().copied().fold(half::f16::NEG_INFINITY, half::f16::max);
        let hmin = |r: &[half::f16]| r.iter().copied().fold(half::f16::INFINITY, half::f16::min);
        let want = [hmax(&h[before]), hmin(&h[upto]), hmax(&h[all])];
        assert_eq!(gh[3 * g..3 * g + 3], want, "{name}, sub-groups of {sg}: half exclusive max, inclusive min, max at work-item {g}");
    }
}

#[test]
fn subgroup_built_ins_on_narrow_wide_and_vector_types() {
    let contexts = common::contexts();
    for ctx in &contexts {
        for sg in [4, 8, 16, 32] {
            check_subgroup_types(ctx, sg, true);
            if ctx.caps().shader_int16 {
                check_subgroup_types(ctx, sg, false);
            }
        }
    }
}

#[test]
fn khr_subgroup_extensions_at_required_sizes() {
    let contexts = common::contexts();
    for sg in [4usize, 8, 16, 32] {
        let Some(spirv) = common::opencl_with("subgroups_khr", &[&format!("-DSG={sg}")]) else { return };
        let n = 64usize;
        // Values whose top two bits agree within the first 16 work-items (all-equal votes).
        let input: Vec<u32> = (0..n as u32).map(|i| (i.wrapping_mul(2654435761) >> 2) | if i < 16 { 0x4000_0000 } else { 0 }).collect();
        for ctx in &contexts {
            let name = &ctx.caps().name;
            let k = ctx.load_kernel(&spirv, "khr_subgroups").unwrap();
            let bi = ctx.buffer_from_slice(&input, "in").unwrap();
            let mut bo = ctx.zeroed_buffer::<u32>(20 * n, "out").unwrap();
            let mut bf = ctx.zeroed_buffer::<f32>(n, "fout").unwrap();
            ctx.launch(&k, &NdRange::linear(n as u32, Some(32)), &[KernelArg::Buffer(&bi), KernelArg::Buffer(&bo), KernelArg::Buffer(&bf)]).unwrap();
            let got: Vec<u32> = ctx.read_buffer(&mut bo).unwrap();
            let gotf: Vec<f32> = ctx.read_buffer(&mut bf).unwrap();
            for g in 0..n {
                let (lid, first) = (g % sg, g - g % sg);
                let group = &input[first..first + sg];
                let ballot = group.iter().enumerate().fold(0u32, |m, (i, v)| m | ((v & 1) << i));
                let some = ballot | 1 << (sg / 2);
                let below = (1u32 << lid) - 1;
                let all = if sg == 32 { u32::MAX } else { (1 << sg) - 1 };
                let cluster = |c: usize| &group[lid - lid % c..lid - lid % c + c];
                let want = [
                    ballot,
                    ballot.count_ones(),
                    (ballot & (below | 1 << lid)).count_ones(),
                    (ballot & below).count_ones(),
                    (ballot >> ((lid + 1) % sg)) & 1,
                    some.trailing_zeros() + 100 * (31 - some.leading_zeros()),
                    (0x5555_5555 >> lid) & 1,
                    (1 << lid) + 2 * below,
                    (all & !below) ^ ((all & !(below | 1 << lid)) << 1) ^ ((below | 1 << lid) << 2),
                    u32::from(lid == 0),
                    group[(lid * 3) % sg],
                    group[lid ^ 1],
                    if lid == sg - 1 { 7 } else { group[lid.max(1) - 1] },
                    cluster(4).iter().fold(0u32, |a, v| a.wrapping_add(*v)),
                    *group.iter().max().unwrap(),
                    u32::from(group.iter().all(|v| v >> 30 == group[0] >> 30)),
                    group[2],
                    group[0] + 5,
                    group[..lid].iter().fold(0, |a, v| a ^ v),
                    *cluster(2).iter().min().unwrap(),
                ];
                let mut got = got[20 * g..20 * g + 20].to_vec();
                if lid == 0 {
                    got[12] = want[12]; // shuffled up from below lane 0: undefined
                }
                assert_eq!(got, want, "{name}, sub-groups of {sg}: work-item {g}");
                let fmax = cluster(2).iter().map(|v| *v as f32 * 0.5).fold(f32::MIN, f32::max);
                assert_eq!(gotf[g], fmax, "{name}, sub-groups of {sg}: clustered float max, work-item {g}");
            }
        }
    }
}

/// An SGEMM in the style of Intel's samples for its GPUs (block reads of B, A broadcast by
/// shuffles, sub-groups of 8): 40 x 48 times 48 x 24, and a K that is not a multiple of 8;
/// optimized, and at -O0 (its float8 accumulator in a variable).
#[test]
fn intel_style_sgemm_with_shuffles_and_block_io() {
    let contexts = common::contexts();
    for flags in [&[][..], &["-O0"]] {
        let Some(spirv) = common::opencl_with("intel_sgemm", flags) else { return };
        check_intel_sgemm(&spirv, &contexts, flags);
    }
}

fn check_intel_sgemm(spirv: &[u32], contexts: &[Context], flags: &[&str]) {
    for ctx in contexts {
        let name = &format!("{} {flags:?}", ctx.caps().name);
        let k = ctx.load_kernel(spirv, "sgemm_nn").unwrap();
        for (m, n, kk) in [(40usize, 24usize, 48usize), (16, 32, 13)] {
            let a: Vec<f32> = (0..m * kk).map(|i| ((i * 7 % 23) as f32 - 11.0) / 8.0).collect();
            let b: Vec<f32> = (0..kk * n).map(|i| ((i * 5 % 19) as f32 - 9.0) / 4.0).collect();
            let ba = ctx.buffer_from_slice(&a, "A").unwrap();
            let bb = ctx.buffer_from_slice(&b, "B").unwrap();
            let mut bc = ctx.zeroed_buffer::<f32>(m * n, "C").unwrap();
            let range = NdRange { dims: 2, global: [n as u32, (m / 8) as u32, 1], local: Some([8, 1, 1]), offset: [0; 3] };
            let dims = [m as i32, n as i32, kk as i32].map(i32::to_le_bytes);
            ctx.launch(&k, &range, &[KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&bc), KernelArg::Bytes(&dims[0]), KernelArg::Bytes(&dims[1]), KernelArg::Bytes(&dims[2])])
                .unwrap();
            let c: Vec<f32> = ctx.read_buffer(&mut bc).unwrap();
            for i in 0..m {
                for j in 0..n {
                    // Products of multiples of 1/32 and sums of them are exact in f32.
                    let want: f32 = (0..kk).map(|p| a[i * kk + p] * b[p * n + j]).sum();
                    assert_eq!(c[i * n + j], want, "{name}: {m} x {n} x {kk}, C[{i}][{j}]");
                }
            }
        }
    }
}

/// `as_<type>n` casts of wide vectors, optimized and at -O0 (wide vectors in variables).
#[test]
fn wide_vector_bit_casts() {
    let contexts = common::contexts();
    let n = 33usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
    let c: Vec<[u8; 16]> = (0..n).map(|_| rng.random()).collect();
    for (ctx, opt) in contexts.iter().flat_map(|c| [(c, ""), (c, "-O0")]) {
        let name = &format!("{} {opt}", ctx.caps().name);
        let flags: Vec<&str> = (!opt.is_empty()).then_some(opt).into_iter().collect();
        let Some(spirv) = common::opencl_with("wide_casts", &flags) else { return };
        let k = ctx.load_kernel(&spirv, "wide_casts").unwrap_or_else(|e| panic!("{name}: {e}"));
        let bc = ctx.buffer_from_slice(c.as_flattened(), "c").unwrap();
        let mut w = ctx.zeroed_buffer::<[u32; 4]>(n, "w").unwrap();
        let mut h = ctx.zeroed_buffer::<[u16; 8]>(n, "h").unwrap();
        let mut u = ctx.zeroed_buffer::<[u32; 8]>(n, "u").unwrap();
        let mut b = ctx.zeroed_buffer::<[u8; 8]>(n, "b").unwrap();
        let mut f = ctx.zeroed_buffer::<[f32; 8]>(n, "f").unwrap();
        ctx.launch(&k, &NdRange::linear(n as u32, Some(1)), &[&bc, &w, &h, &u, &b, &f].map(KernelArg::Buffer)).unwrap();
        let w: Vec<[u32; 4]> = ctx.read_buffer(&mut w).unwrap();
        let h: Vec<[u16; 8]> = ctx.read_buffer(&mut h).unwrap();
        let u: Vec<[u32; 8]> = ctx.read_buffer(&mut u).unwrap();
        let b: Vec<[u8; 8]> = ctx.read_buffer(&mut b).unwrap();
        let f: Vec<[f32; 8]> = ctx.read_buffer(&mut f).unwrap();
        for g in 0..n {
            let words: [u32; 4] = std::array::from_fn(|i| u32::from_le_bytes(c[g][4 * i..4 * i + 4].try_into().unwrap()));
            assert_eq!(w[g], words, "{name}: as_uint4, item {g}");
            let shorts: [u16; 8] = std::array::from_fn(|i| ((words[i / 2] + 1) >> (16 * (i % 2))) as u16);
            assert_eq!(h[g], shorts, "{name}: as_ushort8, item {g}");
            let mut want_u = [0u32; 8];
            for i in 0..4 {
                want_u[i] = words[i] & 0x3fff_ffff;
            }
            want_u[4..].copy_from_slice(&[1.0f32, 2.0, -0.5, 8.0].map(f32::to_bits));
            assert_eq!(u[g], want_u, "{name}: as_uint8, item {g}");
            let lo = u64::from_le_bytes(c[g][..8].try_into().unwrap()).wrapping_add(3).to_le_bytes();
            let want_b: [u8; 8] = std::array::from_fn(|i| lo[i] ^ c[g][8 + i]);
            // Without 64-bit integers, `as_ulong` gives a pair of words.
            assert_eq!(b[g], want_b, "{name}: as_uchar8 of as_ulong, item {g}");
            let want_f: [u32; 8] = std::array::from_fn(|i| if i < 4 { words[i] | 0x3f00_0000 } else { words[i - 4] & 0x3f7f_ffff });
            assert_eq!(f[g].map(f32::to_bits), want_f, "{name}: as_float8, item {g}");
        }
    }
}

#[test]
fn bfloat16_conversions_round_to_nearest_even() {
    let Some((spirv, contexts)) = kernels_and_devices("bf16_conversions") else { return };
    let mut x: Vec<f32> = vec![0.0, -0.0, 1.0, -1.5, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN, f32::MAX, f32::MIN_POSITIVE, 1e-40, -3e-39, 65504.0, 1.2345678];
    // Ties: exactly halfway between two bf16 values, rounding to the even one both ways.
    x.extend([f32::from_bits(0x3f80_8000), f32::from_bits(0x3f81_8000), f32::from_bits(0x3f80_8001), f32::from_bits(0x7f7f_8000)]);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
    x.extend((0..110).map(|_| f32::from_bits(rng.random())));
    let n = x.len();
    let raw: Vec<u16> = (0..n).map(|i| if i % 7 == 3 { 0x7fc1 } else { rng.random() }).collect();
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let k = ctx.load_kernel(&spirv, "bf16_round_trip").unwrap();
        let (bx, braw) = (ctx.buffer_from_slice(&x, "x").unwrap(), ctx.buffer_from_slice(&raw, "raw").unwrap());
        let mut bits = ctx.zeroed_buffer::<u16>(n, "bits").unwrap();
        let mut back = ctx.zeroed_buffer::<f32>(n, "back").unwrap();
        let mut widened = ctx.zeroed_buffer::<f32>(n, "widened").unwrap();
        ctx.launch(&k, &NdRange::linear(n as u32, Some(1)), &[&bx, &bits, &back, &braw, &widened].map(KernelArg::Buffer)).unwrap();
        let (bits, back, widened): (Vec<u16>, Vec<f32>, Vec<f32>) = (ctx.read_buffer(&mut bits).unwrap(), ctx.read_buffer(&mut back).unwrap(), ctx.read_buffer(&mut widened).unwrap());
        for i in 0..n {
            let want = half::bf16::from_f32(x[i]);
            if x[i].is_nan() {
                // A quiet NaN of the same sign.
                assert!(half::bf16::from_bits(bits[i]).is_nan() && bits[i] & 0x40 != 0 && (bits[i] >> 15) == (x[i].to_bits() >> 31) as u16, "{name}: {:#x} -> {:#x}", x[i].to_bits(), bits[i]);
                assert!(back[i].is_nan(), "{name}: back from NaN");
            } else {
                assert_eq!(bits[i], want.to_bits(), "{name}: bf16 of {} ({:#x})", x[i], x[i].to_bits());
                assert_eq!(back[i].to_bits(), want.to_f32().to_bits(), "{name}: f32 of bf16 {:#x}", bits[i]);
            }
            // Arithmetic may flush subnormals to zero (Vulkan and OpenCL allow it).
            let w = half::bf16::from_bits(raw[i]).to_f32() * 2.0;
            let flushed = w.is_subnormal() && widened[i] == 0.0 && widened[i].is_sign_negative() == w.is_sign_negative();
            assert!(widened[i].to_bits() == w.to_bits() || (w.is_nan() && widened[i].is_nan()) || flushed, "{name}: widened {:#x}: {} vs {}", raw[i], widened[i], w);
        }
    }
}

/// A rounding direction as OpenCL names them.
#[derive(Clone, Copy, Debug)]
enum Rounding {
    Rtz,
    Rtp,
    Rtn,
    Rte,
}

/// The half `value` rounds to under `mode`, found from a neighbour of it: the next half up or
/// down from `candidate` (a half within one unit of `value`, infinities included) where
/// `candidate` lies on the wrong side for `mode`. `cmp` orders a half against `value` exactly.
fn directed_half(candidate: half::f16, mode: Rounding, cmp: impl Fn(half::f16) -> std::cmp::Ordering) -> half::f16 {
    use std::cmp::Ordering::*;
    let up = |h: half::f16| {
        half::f16::from_bits(if h.to_bits() & 0x7fff == 0 {
            1
        } else if h.is_sign_negative() {
            h.to_bits() - 1
        } else {
            h.to_bits() + 1
        })
    };
    let down = |h: half::f16| {
        half::f16::from_bits(if h.to_bits() & 0x7fff == 0 {
            0x8001
        } else if h.is_sign_negative() {
            h.to_bits() + 1
        } else {
            h.to_bits() - 1
        })
    };
    match (mode, cmp(candidate)) {
        (Rounding::Rtp, Less) => up(candidate),
        (Rounding::Rtn, Greater) => down(candidate),
        (Rounding::Rtz, Greater) if candidate.is_sign_positive() => down(candidate),
        (Rounding::Rtz, Less) if candidate.is_sign_negative() => up(candidate),
        _ => candidate,
    }
}

/// `x` rounded to half under `mode`.
fn half_of_float(x: f32, mode: Rounding) -> half::f16 {
    let h = half::f16::from_f32(x);
    if x.is_nan() {
        return h;
    }
    directed_half(h, mode, |h| h.to_f64().partial_cmp(&f64::from(x)).unwrap_or(std::cmp::Ordering::Equal))
}

/// Integer `v` rounded to f32 under `mode` (Rust's `as` rounds to nearest even).
fn float_of_integer(v: i128, mode: Rounding) -> f32 {
    let f = v as f32;
    let order = (f as i128).cmp(&v);
    use std::cmp::Ordering::*;
    match (mode, order) {
        (Rounding::Rtp, Less) => f.next_up(),
        (Rounding::Rtn, Greater) => f.next_down(),
        (Rounding::Rtz, Greater) if v > 0 => f.next_down(),
        (Rounding::Rtz, Less) if v < 0 => f.next_up(),
        _ => f,
    }
}

/// Integer `v` rounded to half under `mode`.
fn half_of_integer(v: i128, mode: Rounding) -> half::f16 {
    let candidate = half::f16::from_f32(v as f32);
    directed_half(candidate, mode, |h| {
        if h.is_infinite() {
            if h.is_sign_positive() {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Less
            }
        } else {
            (h.to_f64() as i128).cmp(&v)
        }
    })
}

/// Conversions with explicit rounding modes (`rounding.cl`): float to half and integers of
/// every width to float and half rounded toward zero and toward either infinity, and the
/// `vstore_half_r` stores, against the correctly rounded values. Vulkan drivers round their own
/// conversions to nearest even, so these would all be off by a unit somewhere if the mode were
/// dropped; inputs include halfway values, values just past the largest half, half
/// subnormals, infinities and NaNs, and integers around every power of two up to 2^64; as clang
/// writes the kernel optimized and unoptimized.
#[test]
fn conversions_round_as_their_mode_says() {
    let Some((spirv, contexts)) = kernels_and_devices("rounding") else { return };
    // Unoptimized, the ulong2 lives in a private variable (which SwiftShader, without 64-bit
    // integers, gets split into its elements).
    let Some(unoptimized) = common::opencl_with("rounding", &["-O0"]) else { return };
    let mut f: Vec<f32> = vec![0.0, -0.0, 1.0, -1.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 65504.0, 65519.99, 65520.0, -65520.0, 65536.0, 1e9, -1e30, f32::MAX];
    // Half subnormals, the smallest half and half of it, an f32 subnormal.
    f.extend([5.960_464_5e-8, 2.980_232_2e-8, 2.980_233e-8, -4.0e-8, 1.0e-6, -6.0e-5, 6.1e-5, 1e-40, -1e-42]);
    // Exactly halfway between halves (ties), and a hair either side.
    for base in [0x3c00u16, 0x3c01, 0x4800, 0x0001, 0x7bfe, 0x0400] {
        let mid = (half::f16::from_bits(base).to_f64() + half::f16::from_bits(base + 1).to_f64()) / 2.0;
        let m = mid as f32;
        f.extend([m, -m, m.next_up(), m.next_down()]);
    }
    let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
    while f.len() < 192 {
        let r: u32 = rng.random();
        // Half the values in the range of halves.
        f.push(if f.len().is_multiple_of(2) { f32::from_bits(r) } else { f32::from_bits((r & 0x8fff_ffff) | 0x3000_0000) });
    }
    let n = f.len();
    let powers = |bits: u32| (0..bits).flat_map(move |p| [(1i128 << p) - 1, 1i128 << p, (1i128 << p) + 1, (1i128 << p) + (1i128 << p) / 3]);
    let mut ints: Vec<i32> = powers(31).map(|v| v as i32).chain([i32::MIN, i32::MAX, -16_777_217, -33_554_435]).collect();
    let mut uints: Vec<u32> = powers(32).map(|v| v as u32).chain([u32::MAX, u32::MAX - 127, u32::MAX - 128]).collect();
    let mut longs: Vec<i64> = powers(63).map(|v| -(v as i64)).chain([i64::MIN, i64::MAX, 0]).collect();
    let mut ulongs: Vec<u64> = powers(64).map(|v| v as u64).chain([u64::MAX, u64::MAX - 1 - (1 << 39)]).collect();
    for _ in 0..n {
        ints.push(rng.random());
        uints.push(rng.random());
        longs.push(rng.random());
        ulongs.push(rng.random::<u64>() >> rng.random_range(0..40));
    }
    ints.truncate(n);
    uints.truncate(n);
    longs.truncate(n);
    ulongs.truncate(n);
    use Rounding::*;
    for (ctx, (form, module)) in contexts.iter().flat_map(|c| [(c, ("-O2", &spirv)), (c, ("-O0", &unoptimized))]) {
        let name = &format!("{} ({form})", ctx.caps().name);
        let k = ctx.load_kernel(module, "rounding").unwrap_or_else(|e| panic!("{name}: {e}"));
        let inputs = [
            ctx.buffer_from_slice(&f, "f").unwrap(),
            ctx.buffer_from_slice(&ints, "i").unwrap(),
            ctx.buffer_from_slice(&uints, "u").unwrap(),
            ctx.buffer_from_slice(&longs, "l").unwrap(),
            ctx.buffer_from_slice(&ulongs, "ul").unwrap(),
        ];
        let mut h = ctx.zeroed_buffer::<u16>(12 * n, "h").unwrap();
        let mut o = ctx.zeroed_buffer::<f32>(12 * n, "o").unwrap();
        let mut hs = ctx.zeroed_buffer::<u16>(11 * n, "hs").unwrap();
        let n_bytes = (n as u32).to_le_bytes();
        let mut args: Vec<KernelArg> = inputs.iter().map(KernelArg::Buffer).collect();
        args.extend([KernelArg::Buffer(&h), KernelArg::Buffer(&o), KernelArg::Buffer(&hs), KernelArg::Bytes(&n_bytes)]);
        ctx.launch(&k, &NdRange::linear(n as u32, Some(32)), &args).unwrap();
        let (h, o, hs): (Vec<u16>, Vec<f32>, Vec<u16>) = (ctx.read_buffer(&mut h).unwrap(), ctx.read_buffer(&mut o).unwrap(), ctx.read_buffer(&mut hs).unwrap());
        let same_half = |got: u16, want: half::f16| got == want.to_bits() || (want.is_nan() && half::f16::from_bits(got).is_nan());
        // Arithmetic in the kernel (a negation) may flush an f32 subnormal to zero first, as
        // Vulkan and OpenCL allow.
        let rounds_to = |got: u16, v: f32, mode: Rounding| same_half(got, half_of_float(v, mode)) || (v.is_subnormal() && same_half(got, half_of_float(0.0f32.copysign(v), mode)));
        for g in 0..n {
            let (x, y) = (f[g], f[(g + 1) % n]);
            let halves = [(x, Rtz), (x, Rtp), (x, Rtn), (x, Rte), (x, Rtn), (-x, Rtn), (y, Rtn), (-y, Rtn)];
            for (k, (v, mode)) in halves.into_iter().enumerate() {
                let want = half_of_float(v, mode);
                assert!(rounds_to(h[g * 12 + k], v, mode), "{name}: half {k} of {v:e} ({:#x}) {mode:?}: {:#06x}, want {:#06x}", v.to_bits(), h[g * 12 + k], want.to_bits());
            }
            let from_ints = [(i128::from(ints[g]), Rtz), (i128::from(ints[g]), Rtp), (i128::from(uints[g]), Rtn), (i128::from(longs[g]), Rtp)];
            for (k, (v, mode)) in from_ints.into_iter().enumerate() {
                let want = half_of_integer(v, mode);
                assert_eq!(h[g * 12 + 8 + k], want.to_bits(), "{name}: half {} of integer {v} {mode:?}", 8 + k);
            }
            let floats = [
                (i128::from(ints[g]), Rtz),
                (i128::from(ints[g]), Rtp),
                (i128::from(ints[g]), Rtn),
                (i128::from(uints[g]), Rtz),
                (i128::from(uints[g]), Rtp),
                (i128::from(uints[g]), Rtn),
                (i128::from(longs[g]), Rtz),
                (i128::from(longs[g]), Rtp),
                (i128::from(longs[g]), Rtn),
                (i128::from(ulongs[g]), Rtz),
                (i128::from(ulongs[g]), Rtp),
                (i128::from(ulongs[g]), Rtn),
            ];
            for (k, (v, mode)) in floats.into_iter().enumerate() {
                let want = float_of_integer(v, mode);
                assert_eq!(o[g * 12 + k].to_bits(), want.to_bits(), "{name}: float {k} of integer {v} {mode:?}: {}, want {want}", o[g * 12 + k]);
            }
            let stored = [(g, x, Rtz), (g + n, x, Rtp), (g + 2 * n, x, Rtn)];
            let quad = [x, -y, y, -x].into_iter().enumerate().map(|(k, v)| (3 * n + 4 * g + k, v, Rtz));
            let triple = [x, y, -x].into_iter().enumerate().map(|(k, v)| (7 * n + 4 * g + k, v, Rtp));
            for (at, v, mode) in stored.into_iter().chain(quad).chain(triple) {
                let want = half_of_float(v, mode);
                assert!(rounds_to(hs[at], v, mode), "{name}: vstore_half {at} of {v:e} {mode:?}: {:#06x}, want {:#06x}", hs[at], want.to_bits());
            }
        }
    }
}

/// `x` rounded to f32 under `mode` (Rust's `as` rounds to nearest even).
fn float_of_double(x: f64, mode: Rounding) -> f32 {
    let f = x as f32;
    let Some(order) = f64::from(f).partial_cmp(&x) else { return f };
    use std::cmp::Ordering::*;
    match (mode, order) {
        (Rounding::Rtp, Less) => f.next_up(),
        (Rounding::Rtn, Greater) => f.next_down(),
        (Rounding::Rtz, Greater) if x > 0.0 => f.next_down(),
        (Rounding::Rtz, Less) if x < 0.0 => f.next_up(),
        _ => f,
    }
}

/// Doubles to float and half with directed rounding (`rounding.cl`'s `rounding_doubles`), on
/// the devices with doubles: ties and near-ties of floats, values past the largest float and
/// half, subnormals of both, infinities and NaNs.
#[test]
fn doubles_round_as_their_mode_says() {
    let Some((spirv, contexts)) = kernels_and_devices("rounding") else { return };
    let mut d: Vec<f64> =
        vec![0.0, -0.0, 1.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, f64::MAX, -1e300, 3.4028235677973366e38, 3.4028236e38, 65519.9, 65520.0, 1e-45, 7e-46, -1e-300, 2.9802322387695312e-8];
    for base in [1.0f32, 3.0, 1e-38, f32::MAX.next_down(), 1e-45] {
        let mid = (f64::from(base) + f64::from(base.next_up())) / 2.0;
        d.extend([mid, -mid, mid.next_up(), mid.next_down()]);
    }
    let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
    while d.len() < 128 {
        let r: u64 = rng.random();
        d.push(if d.len().is_multiple_of(2) { f64::from_bits(r) } else { f64::from_bits((r & 0x8fff_ffff_ffff_ffff) | 0x3000_0000_0000_0000) });
    }
    let n = d.len();
    use Rounding::*;
    for ctx in contexts.iter().filter(|c| c.caps().shader_float64) {
        let name = &ctx.caps().name;
        let k = ctx.load_kernel(&spirv, "rounding_doubles").unwrap();
        let bd = ctx.buffer_from_slice(&d, "d").unwrap();
        let mut o = ctx.zeroed_buffer::<f32>(4 * n, "o").unwrap();
        let mut h = ctx.zeroed_buffer::<u16>(3 * n, "h").unwrap();
        ctx.launch(&k, &NdRange::linear(n as u32, Some(32)), &[KernelArg::Buffer(&bd), KernelArg::Buffer(&o), KernelArg::Buffer(&h)]).unwrap();
        let (o, h): (Vec<f32>, Vec<u16>) = (ctx.read_buffer(&mut o).unwrap(), ctx.read_buffer(&mut h).unwrap());
        for g in 0..n {
            let x = d[g];
            for (k, mode) in [Rtz, Rtp, Rtn, Rte].into_iter().enumerate() {
                let want = float_of_double(x, mode);
                assert!(o[g * 4 + k].to_bits() == want.to_bits() || (want.is_nan() && o[g * 4 + k].is_nan()), "{name}: float {k} of {x:e} {mode:?}: {:e}, want {want:e}", o[g * 4 + k]);
            }
            for (k, mode) in [Rtz, Rtp, Rtn].into_iter().enumerate() {
                let candidate = half::f16::from_f64(x);
                let want = if x.is_nan() { candidate } else { directed_half(candidate, mode, |c| c.to_f64().partial_cmp(&x).unwrap_or(std::cmp::Ordering::Equal)) };
                let got = h[g * 3 + k];
                assert!(got == want.to_bits() || (want.is_nan() && half::f16::from_bits(got).is_nan()), "{name}: half {k} of {x:e} {mode:?}: {got:#06x}, want {:#06x}", want.to_bits());
            }
        }
    }
}

#[test]
fn half_work_group_collectives() {
    let Some((spirv, contexts)) = kernels_and_devices("half_collectives") else { return };
    let n = 128usize;
    // Quarters up to 16: every partial sum is exact in half and float alike.
    let input: Vec<half::f16> = (0..n).map(|i| half::f16::from_f32(((i * 37 % 61) as f32 - 30.0) / 4.0)).collect();
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let k = ctx.load_kernel(&spirv, "half_collectives").unwrap();
        let bi = ctx.buffer_from_slice(&input, "in").unwrap();
        let mut bo = ctx.zeroed_buffer::<half::f16>(4 * n, "out").unwrap();
        ctx.launch(&k, &NdRange::linear(n as u32, Some(64)), &[KernelArg::Buffer(&bi), KernelArg::Buffer(&bo)]).unwrap();
        let got: Vec<half::f16> = ctx.read_buffer(&mut bo).unwrap();
        for g in 0..n {
            let group = &input[g - g % 64..g - g % 64 + 64];
            let at = g % 64;
            let max = group.iter().copied().fold(half::f16::NEG_INFINITY, half::f16::max);
            let min = group[..=at].iter().copied().fold(half::f16::INFINITY, half::f16::min);
            let sum: f32 = group[..at].iter().map(|h| h.to_f32()).sum();
            let want = [max, min, group[5], half::f16::from_f32(sum)];
            assert_eq!(got[4 * g..4 * g + 4], want, "{name}: work-item {g}");
        }
    }
}

/// `Params` of `by_value_structs.cl` in OpenCL C's layout: int n, float scale, float2 offset
/// (at 8), char bias (at 16); 24 bytes.
fn params_bytes(n: i32, scale: f32, offset: [f32; 2], bias: i8) -> Vec<u8> {
    let mut b = Vec::with_capacity(24);
    b.extend(n.to_le_bytes());
    b.extend(scale.to_le_bytes());
    b.extend(offset[0].to_le_bytes());
    b.extend(offset[1].to_le_bytes());
    b.push(bias as u8);
    b.resize(24, 0xAB);
    b
}

/// Structs passed by value (`by_value_structs.cl`): kernel arguments read in place (members of
/// mixed sizes, a nested struct, an array and a `float3`), a kernel that changes its own copy,
/// a helper function that changes its copy, which the caller must not see, and structs copied
/// whole between private memory, a buffer and the argument; optimized (LLVM copies the
/// two-float struct as one `long`: a pair of words without 64-bit integers) and at -O0; a struct
/// of the wrong size is an error naming the argument.
#[test]
fn structs_passed_by_value() {
    let (Some(optimized), Some(unoptimized)) = (common::opencl("by_value_structs"), common::opencl_with("by_value_structs", &["-O0"])) else { return };
    let n = 61usize;
    let x: Vec<f32> = (0..64).map(|i| i as f32 * 0.5 - 7.0).collect();
    let (scale, offset, bias, shift) = (1.5f32, [0.25f32, -2.0f32], -3i8, 5i32);
    let (inner_n, inner_offset, table, weights) = (4i32, [8.0f32, 0.5f32], [10i32, 20, 30], [0.0f32, 0.0, 0.75]);
    let params = params_bytes(n as i32, scale, offset, bias);
    // Outer: Params p (0..24), int table[3] (24..36), float3 weights (at 48); 64 bytes.
    let mut outer = params_bytes(inner_n, 9.0, inner_offset, 1);
    for t in table {
        outer.extend(t.to_le_bytes());
    }
    outer.resize(48, 0xCD);
    for w in weights {
        outer.extend(w.to_le_bytes());
    }
    outer.resize(64, 0xCD);
    let want: Vec<f32> =
        (0..64).map(|i| if i < n { x[i].mul_add(scale, offset[1]) + bias as f32 + shift as f32 + (table[i % 3] as f32 + inner_n as f32 * weights[2] - inner_offset[0]) } else { -7.0 }).collect();
    let (a, b, steps) = (3.5f32, 0.25f32, 4i32);
    let mut pair = Vec::new();
    pair.extend(a.to_le_bytes());
    pair.extend(b.to_le_bytes());
    let items = 16usize;
    let want_changed: Vec<f32> = (0..items)
        .flat_map(|i| {
            let b = b + i as f32;
            let drained = (0..steps).map(|k| (a - k as f32) * b).sum::<f32>() + (a - steps as f32);
            [drained, drained, 2.0 * a + b]
        })
        .collect();
    // by_value_copied: q = p; r = pairs[i]; q.a += r.b; out = q.a * q.b + r.a; pairs[i] = q.
    let pairs: Vec<f32> = (0..items).flat_map(|i| [i as f32 * 0.5 - 3.0, 1.25 + i as f32]).collect();
    let want_copied: Vec<f32> = (0..items).map(|i| (a + pairs[2 * i + 1]) * b + pairs[2 * i]).collect();
    let want_pairs: Vec<f32> = (0..items).flat_map(|i| [a + pairs[2 * i + 1], b]).collect();
    for ctx in &common::contexts() {
        for (build, spirv) in [("-O2", &optimized), ("-O0", &unoptimized)] {
            let name = format!("{} ({build})", ctx.caps().name);
            let k = ctx.load_kernel(spirv, "by_value").unwrap_or_else(|e| panic!("{name}: {e}"));
            let bx = ctx.buffer_from_slice(&x, "x").unwrap();
            let mut bout = ctx.buffer_from_slice(&vec![-7.0f32; 64], "out").unwrap();
            let args = [KernelArg::Buffer(&bx), KernelArg::Buffer(&bout), KernelArg::Bytes(&params), KernelArg::Bytes(&shift.to_le_bytes()), KernelArg::Bytes(&outer)];
            ctx.launch(&k, &NdRange::linear(64, None), &args).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bout).unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!((g - w).abs() <= 1e-5 * w.abs().max(1.0), "{name}: out[{i}] = {g}, want {w}");
            }
            // A struct of the wrong size names the argument and both sizes.
            let short = &params[..20];
            let wrong = [KernelArg::Buffer(&bx), KernelArg::Buffer(&bout), KernelArg::Bytes(short), KernelArg::Bytes(&shift.to_le_bytes()), KernelArg::Bytes(&outer)];
            let err = ctx.launch(&k, &NdRange::linear(64, None), &wrong).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(err.contains("argument 2") && err.contains("24") && err.contains("20"), "{name}: {err}");

            let k = ctx.load_kernel(spirv, "by_value_changed").unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut bout = ctx.buffer_from_slice(&vec![-7.0f32; 3 * items], "out").unwrap();
            ctx.launch(&k, &NdRange::linear(items as u32, None), &[KernelArg::Buffer(&bout), KernelArg::Bytes(&pair), KernelArg::Bytes(&steps.to_le_bytes())])
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bout).unwrap();
            assert_eq!(got, want_changed, "{name}");

            let k = ctx.load_kernel(spirv, "by_value_copied").unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut bpairs = ctx.buffer_from_slice(&pairs, "pairs").unwrap();
            let mut bout = ctx.buffer_from_slice(&vec![-7.0f32; items], "out").unwrap();
            ctx.launch(&k, &NdRange::linear(items as u32, None), &[KernelArg::Buffer(&bpairs), KernelArg::Buffer(&bout), KernelArg::Bytes(&pair)]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bout).unwrap();
            assert_eq!(got, want_copied, "{name}: out");
            let got: Vec<f32> = ctx.read_buffer(&mut bpairs).unwrap();
            assert_eq!(got, want_pairs, "{name}: pairs");
            eprintln!("{name}: structs passed by value match");
        }
    }
}

/// Members of packed structs in a buffer (`packed_structs.cl`): loads and stores aligned below
/// their scalars, at odd addresses, split into aligned pieces; optimized and at -O0.
#[test]
fn packed_struct_members() {
    let (Some(optimized), Some(unoptimized)) = (common::opencl("packed_structs"), common::opencl_with("packed_structs", &["-O0"])) else { return };
    let n = 37usize;
    // struct __attribute__((packed)) { char tag; float value; short count; int extra; }: 11 bytes.
    let records: Vec<(i8, f32, i16, i32)> = (0..n).map(|i| ((i as i8) * 5 - 40, i as f32 * 0.75 - 9.0, (i as i16) * 300 - 4000, (i as i32) * 70_001 - 1_000_000)).collect();
    let pack = |r: &[(i8, f32, i16, i32)]| -> Vec<u8> {
        let mut b = Vec::new();
        for (t, v, c, e) in r {
            b.push(*t as u8);
            b.extend(v.to_le_bytes());
            b.extend(c.to_le_bytes());
            b.extend(e.to_le_bytes());
        }
        b.resize(b.len().next_multiple_of(4), 0);
        b
    };
    let want_out: Vec<f32> = records.iter().map(|(t, v, c, e)| v.mul_add(*c as f32, *t as f32) + *e as f32).collect();
    let want_records = pack(&records.iter().map(|(t, v, c, e)| (*t, v + 1.0, c.wrapping_sub(2), e.wrapping_mul(3).wrapping_sub(*t as i32))).collect::<Vec<_>>());
    for ctx in &common::contexts() {
        for (build, spirv) in [("-O2", &optimized), ("-O0", &unoptimized)] {
            let name = format!("{} ({build})", ctx.caps().name);
            let k = ctx.load_kernel(spirv, "packed_members").unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut br = ctx.buffer_from_slice(&pack(&records), "records").unwrap();
            let mut bout = ctx.buffer_from_slice(&vec![-7.0f32; n], "out").unwrap();
            ctx.launch(&k, &NdRange::linear(n as u32, Some(1)), &[KernelArg::Buffer(&br), KernelArg::Buffer(&bout)]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bout).unwrap();
            for (i, (g, w)) in got.iter().zip(&want_out).enumerate() {
                assert!((g - w).abs() <= 1e-6 * w.abs().max(1.0), "{name}: out[{i}] = {g}, want {w}");
            }
            let got: Vec<u8> = ctx.read_buffer(&mut br).unwrap();
            assert_eq!(got, want_records, "{name}: records");
            eprintln!("{name}: packed members match");
        }
    }
}

/// Structs in private memory that mix member sizes (`mixed_structs.cl`): a char and a short
/// beside floats, through pointers, initialized from constants; a packed struct copied out of a
/// buffer and changed through a pointer. Optimized and at -O0.
#[test]
fn structs_of_mixed_sizes_in_private_memory() {
    let (Some(optimized), Some(unoptimized)) = (common::opencl("mixed_structs"), common::opencl_with("mixed_structs", &["-O0"])) else { return };
    let xs: Vec<f32> = (0..16).map(|k| k as f32 * 3.7 - 20.0).collect();
    let want: Vec<f32> = (0..64)
        .map(|i| {
            let (mut best, mut idx, mut w) = (1e30f32, -1i16, 0.0f32);
            for (k, x) in xs.iter().enumerate() {
                let d = (x - i as f32).abs();
                if d < best {
                    (best, idx, w) = (d, k as i16, d * 0.5);
                }
            }
            best + idx as f32 * 1000.0 + w
        })
        .collect();
    // Record: char tag, float value, short count, packed: 7 bytes.
    let n = 24usize;
    let recs: Vec<(i8, f32, i16)> = (0..n).map(|i| (i as i8 - 9, i as f32 * 1.25 - 4.0, i as i16 * 7 - 50)).collect();
    let mut bytes: Vec<u8> = recs.iter().flat_map(|(t, v, c)| std::iter::once(*t as u8).chain(v.to_le_bytes()).chain(c.to_le_bytes())).collect();
    bytes.resize(bytes.len().next_multiple_of(4), 0);
    let want_records: Vec<f32> = recs.iter().map(|(t, v, c)| v.mul_add((c + 1) as f32, *t as f32)).collect();
    for ctx in &common::contexts() {
        for (build, spirv) in [("-O2", &optimized), ("-O0", &unoptimized)] {
            let name = format!("{} ({build})", ctx.caps().name);
            let k = ctx.load_kernel(spirv, "nearest").unwrap_or_else(|e| panic!("{name}: {e}"));
            let bx = ctx.buffer_from_slice(&xs, "xs").unwrap();
            let mut bout = ctx.buffer_from_slice(&vec![-7.0f32; 64], "out").unwrap();
            ctx.launch(&k, &NdRange::linear(64, None), &[KernelArg::Buffer(&bx), KernelArg::Buffer(&bout), KernelArg::Bytes(&16i32.to_le_bytes())]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bout).unwrap();
            assert_eq!(got, want, "{name}: nearest");
            let k = ctx.load_kernel(spirv, "records").unwrap_or_else(|e| panic!("{name}: {e}"));
            let br = ctx.buffer_from_slice(&bytes, "records").unwrap();
            let mut bout = ctx.buffer_from_slice(&vec![-7.0f32; n], "out").unwrap();
            ctx.launch(&k, &NdRange::linear(n as u32, Some(1)), &[KernelArg::Buffer(&br), KernelArg::Buffer(&bout)]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bout).unwrap();
            for (i, (g, w)) in got.iter().zip(&want_records).enumerate() {
                assert!((g - w).abs() <= 1e-6 * w.abs().max(1.0), "{name}: records out[{i}] = {g}, want {w}");
            }
            eprintln!("{name}: mixed-size structs match");
        }
    }
}

/// 64-bit integers that need all their bits (`long_data.cl`): a hash and a random-number
/// generator with wide constants and shifts, `long` buffers and arguments wider than 32 bits,
/// signed and unsigned comparisons, division and remainders, narrowing and widening,
/// conversions to and from float, and `mad_sat` of longs and ulongs; optimized and at -O0. Devices without 64-bit integers hold
/// them as pairs of words; every device must give the host's results bit for bit.
#[test]
fn long_data_exact_everywhere() {
    let (Some(optimized), Some(unoptimized)) = (common::opencl("long_data"), common::opencl_with("long_data", &["-O0"])) else { return };
    let n = 96usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(64);
    let input: Vec<i64> = (0..n).map(|i| if i % 4 == 0 { rng.random_range(-1000..1000) } else { rng.random_range(-(1i64 << 61)..(1i64 << 61)) }).collect();
    let x: Vec<f32> = (0..n).map(|i| if i % 3 == 0 { rng.random_range(-1000.0..1000.0) } else { rng.random_range(-9.0e18f32..9.0e18) }).collect();
    let (seed, bias) = (0x0123_4567_89ab_cdefu64, -0x123_4567_8912i64);
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut want = vec![0u64; 8 * n];
    let mut want_f = vec![0u32; 2 * n];
    let mut want_back = vec![0i64; 2 * n];
    for i in 0..n {
        let (iu, v) = (i as u64, input[i]);
        let h = mix(seed.wrapping_add(iu.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        let mut s = h | 1;
        for _ in 0..i % 5 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
        }
        let flags = [v < bias, h > v as u64, v <= -bias, v as u64 >= h, v == bias, h != s];
        want[8 * i..8 * i + 8].copy_from_slice(&[
            h,
            s,
            (v + bias) as u64 - (-v) as u64,
            ((v >> (i & 63)) ^ ((v as u64) << (i % 13)) as i64 ^ (h >> (63 - (i & 63))) as i64) as u64,
            flags.iter().enumerate().map(|(k, f)| u64::from(*f) << k).sum(),
            (h / (iu + 3)).wrapping_add(h % (iu + 7)),
            (v / (i as i64 % 7 + 1) + v % -3) as u64,
            (h as u32 as i32 as i64 as u64).wrapping_add((h >> 32) * u64::from(v as u16)),
        ]);
        want_f[2 * i] = (h as f32).to_bits();
        want_f[2 * i + 1] = (v as f32).to_bits();
        want_back[2 * i] = x[i] as i64;
        want_back[2 * i + 1] = x[i].abs() as u64 as i64;
    }
    // Records { int tag; long value; uint count; }: 24 bytes, padding kept as it was.
    let record = |i: usize| ((i as i32 * 7919) - 300_000, input[i] / 5, (i as u32).wrapping_mul(2_654_435_761));
    let mut record_bytes = Vec::with_capacity(24 * n);
    let mut want_records = Vec::with_capacity(24 * n);
    let rotl = |x: u64, k: u32| x.rotate_left(k);
    for i in 0..n {
        let (tag, value, count) = record(i);
        let mut s: [u64; 4] = std::array::from_fn(|k| mix(seed.wrapping_add(4 * i as u64 + k as u64)));
        let mut r = 0u64;
        for _ in 0..=i % 3 {
            let result = rotl(s[1].wrapping_mul(5), 7).wrapping_mul(9);
            let t = s[1] << 17;
            s[2] ^= s[0];
            s[3] ^= s[1];
            s[1] ^= s[2];
            s[0] ^= s[3];
            s[2] ^= t;
            s[3] = rotl(s[3], 45);
            r ^= result;
        }
        let fields = |tag: i32, value: i64, count: u32| [&tag.to_le_bytes()[..], &[0xAB; 4], &value.to_le_bytes(), &count.to_le_bytes(), &[0xCD; 4]].concat();
        record_bytes.extend(fields(tag, value, count));
        let new_value = value.wrapping_mul(3).wrapping_add(r as i64).wrapping_add(s[i & 3] as i64);
        let mut want = fields(-tag, new_value, count.wrapping_add((r >> 60) as u32));
        // A whole-struct store may write the padding or leave it.
        want[4..8].copy_from_slice(&[0xAB; 4]);
        want[20..24].copy_from_slice(&[0xCD; 4]);
        want_records.extend(want);
    }
    for ctx in &common::contexts() {
        for (build, spirv) in [("-O2", &optimized), ("-O0", &unoptimized)] {
            let name = format!("{} ({build})", ctx.caps().name);
            let k = ctx.load_kernel(spirv, "long_data").unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut out = ctx.zeroed_buffer::<u64>(8 * n, "out").unwrap();
            let bin = ctx.buffer_from_slice(&input, "in").unwrap();
            let mut f = ctx.zeroed_buffer::<f32>(2 * n, "f").unwrap();
            let bx = ctx.buffer_from_slice(&x, "x").unwrap();
            let mut back = ctx.zeroed_buffer::<i64>(2 * n, "back").unwrap();
            let args = [
                KernelArg::Buffer(&out),
                KernelArg::Buffer(&bin),
                KernelArg::Bytes(&seed.to_le_bytes()),
                KernelArg::Bytes(&bias.to_le_bytes()),
                KernelArg::Buffer(&f),
                KernelArg::Buffer(&bx),
                KernelArg::Buffer(&back),
            ];
            ctx.launch(&k, &NdRange::linear(n as u32, Some(32)), &args).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<u64> = ctx.read_buffer(&mut out).unwrap();
            let got_f: Vec<f32> = ctx.read_buffer(&mut f).unwrap();
            let got_back: Vec<i64> = ctx.read_buffer(&mut back).unwrap();
            for (j, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{name}: out[{j}] (item {}, value {}): {g:#x}, want {w:#x}", j / 8, j % 8);
            }
            for (j, (g, w)) in got_f.iter().zip(&want_f).enumerate() {
                assert_eq!(g.to_bits(), *w, "{name}: f[{j}] = {g}, want {}", f32::from_bits(*w));
            }
            assert_eq!(got_back, want_back, "{name}: float to long");
            // long_records: xoshiro256** on a private array, a struct's `long` in a buffer.
            let k = ctx.load_kernel(spirv, "long_records").unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut records = ctx.buffer_from_slice(&record_bytes, "records").unwrap();
            ctx.launch(&k, &NdRange::linear(n as u32, Some(32)), &[KernelArg::Buffer(&records), KernelArg::Bytes(&seed.to_le_bytes())]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<u8> = ctx.read_buffer(&mut records).unwrap();
            for i in 0..n {
                assert_eq!(got[24 * i..24 * i + 24], want_records[24 * i..24 * i + 24], "{name}: record {i}");
            }
            // long_builtins: each item's values, the broadcast against its sub-group's first.
            let k = ctx.load_kernel(spirv, "long_builtins").unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut out = ctx.zeroed_buffer::<u64>(8 * n, "out").unwrap();
            ctx.launch(&k, &NdRange::linear(n as u32, Some(32)), &[KernelArg::Buffer(&out), KernelArg::Buffer(&bin), KernelArg::Bytes(&seed.to_le_bytes())]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<u64> = ctx.read_buffer(&mut out).unwrap();
            for i in 0..n {
                let (h, v) = (mix(seed.wrapping_add(i as u64)), input[i]);
                let first = got[8 * i + 7];
                assert!(first <= i as u64 && i as u64 - first < 64, "{name}: item {i}: first item of its sub-group {first}");
                let want = [
                    mix(seed.wrapping_add(first)),
                    u64::from(h.count_ones() + h.leading_zeros() * 100 + h.trailing_zeros() * 10000),
                    h.rotate_left((i & 63) as u32),
                    ((u128::from(h) * u128::from(v as u64)) >> 64) as u64,
                    ((i128::from(h as i64) * i128::from(v)) >> 64) as u64,
                    h.max(v as u64) - h.min(v as u64) + h.abs_diff(v as u64),
                    ((h as i64).max(v).wrapping_add((h as i64).min(v)) as u64) ^ v.unsigned_abs(),
                ];
                assert_eq!(got[8 * i..8 * i + 7], want, "{name}: long_builtins item {i}");
            }
            // long_saturating: mad_sat against 128-bit products.
            let k = ctx.load_kernel(spirv, "long_saturating").unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut out = ctx.zeroed_buffer::<i64>(4 * n, "out").unwrap();
            ctx.launch(&k, &NdRange::linear(n as u32, Some(32)), &[KernelArg::Buffer(&out), KernelArg::Buffer(&bin), KernelArg::Bytes(&seed.to_le_bytes())]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<i64> = ctx.read_buffer(&mut out).unwrap();
            let signed = |a: i64, b: i64, c: i64| (i128::from(a) * i128::from(b) + i128::from(c)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
            let unsigned = |a: u64, b: u64, c: u64| (u128::from(a) * u128::from(b) + u128::from(c)).min(u128::from(u64::MAX)) as u64 as i64;
            for i in 0..n {
                let (h, v) = (mix(seed.wrapping_add(i as u64)) as i64, input[i]);
                let want = [signed(v, h >> (i & 63), i as i64 * -7919), signed(v, v, h), unsigned(h as u64, (v as u64) >> (i & 63), v as u64), unsigned(v as u64 & 0xffff, i as u64 + 1, h as u64)];
                assert_eq!(got[4 * i..4 * i + 4], want, "{name}: long_saturating item {i} (v = {v}, h = {h})");
            }
            // long_sums: a tree in local memory, per work-group of 32.
            let k = ctx.load_kernel(spirv, "long_sums").unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut sums = ctx.zeroed_buffer::<u64>(n / 32, "sums").unwrap();
            ctx.launch(&k, &NdRange::linear(n as u32, Some(32)), &[KernelArg::Buffer(&sums), KernelArg::Buffer(&bin), KernelArg::Bytes(&seed.to_le_bytes())]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<u64> = ctx.read_buffer(&mut sums).unwrap();
            let want: Vec<u64> = input.chunks(32).map(|g| g.iter().fold(0u64, |s, v| s.wrapping_add(*v as u64 ^ seed))).collect();
            assert_eq!(got, want, "{name}: long_sums");
            // long_reductions: sub-group sums, scans and extremes, each sub-group found by its
            // first work-item.
            let k = ctx.load_kernel(spirv, "long_reductions").unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut out = ctx.zeroed_buffer::<u64>(6 * n, "out").unwrap();
            ctx.launch(&k, &NdRange::linear(n as u32, Some(32)), &[KernelArg::Buffer(&out), KernelArg::Buffer(&bin), KernelArg::Bytes(&seed.to_le_bytes())]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<u64> = ctx.read_buffer(&mut out).unwrap();
            let hash = |i: usize| mix(seed.wrapping_add(i as u64));
            for i in 0..n {
                let start = got[6 * i + 5] as usize;
                let members: Vec<usize> = (0..n).filter(|j| got[6 * j + 5] as usize == start).collect();
                assert!(start <= i && members.contains(&i), "{name}: long_reductions item {i} in the sub-group from {start}");
                let sum = members.iter().fold(0u64, |s, j| s.wrapping_add(hash(*j)));
                let before = members.iter().filter(|j| **j < i).fold(0u64, |s, j| s.wrapping_add(hash(*j)));
                let max = members.iter().map(|j| input[*j]).max().unwrap_or(0) as u64;
                let min = members.iter().map(|j| hash(*j)).min().unwrap_or(0);
                let want = [sum, before.wrapping_add(hash(i)), before, max, min];
                assert_eq!(&got[6 * i..6 * i + 5], &want, "{name}: long_reductions item {i}");
            }
            // long_work_group: work-group sums and scans, per work-group of 32.
            let k = ctx.load_kernel(spirv, "long_work_group").unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut out = ctx.zeroed_buffer::<u64>(2 * n, "out").unwrap();
            ctx.launch(&k, &NdRange::linear(n as u32, Some(32)), &[KernelArg::Buffer(&out), KernelArg::Bytes(&seed.to_le_bytes())]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<u64> = ctx.read_buffer(&mut out).unwrap();
            for i in 0..n {
                let group = i / 32 * 32..i / 32 * 32 + 32;
                let sum = group.clone().fold(0u64, |s, j| s.wrapping_add(hash(j)));
                let prefix = (group.start..=i).fold(0u64, |s, j| s.wrapping_add(hash(j)));
                assert_eq!(&got[2 * i..2 * i + 2], &[sum, prefix], "{name}: long_work_group item {i}");
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{name}: {e}"));
            eprintln!("{name}: 64-bit data matches");
        }
    }
}

/// OpenCL C 8.2's sampled read of a float image of `size` (per axis) at `coord`, with `border`
/// for texels outside it under `CLK_ADDRESS_CLAMP`: the reference the translated kernels meet.
/// An address mode of `None` clamps, as matbridge does (OpenCL leaves it undefined).
fn sample_reference(size: &[i32], texel: &dyn Fn(&[i32]) -> [f32; 4], border: [f32; 4], s: Sampler, coord: &[f32]) -> [f32; 4] {
    let n = size.len();
    // Index after the address mode (None: outside, for the border color).
    let address = |i: i32, z: i32| -> Option<i32> {
        match s.address {
            AddressMode::Clamp => (0..z).contains(&i).then_some(i),
            _ => Some(i.clamp(0, z - 1)),
        }
    };
    let fetch = |idx: &[i32]| -> [f32; 4] {
        let mut at = Vec::new();
        for (a, &i) in idx.iter().enumerate() {
            match address(i, size[a]) {
                Some(i) => at.push(i),
                None => return border,
            }
        }
        texel(&at)
    };
    let unnorm = |a: usize| if s.normalized_coords { coord[a] * size[a] as f32 } else { coord[a] };
    let repeat_u = |a: usize| (coord[a] - coord[a].floor()) * size[a] as f32;
    let mirror_u = |a: usize| (coord[a] - 2.0 * (0.5 * coord[a]).round_ties_even()).abs() * size[a] as f32;
    if !s.linear {
        let idx: Vec<i32> = (0..n)
            .map(|a| {
                let z = size[a];
                match s.address {
                    AddressMode::Repeat => {
                        let i = repeat_u(a).floor() as i32;
                        if i > z - 1 {
                            i - z
                        } else {
                            i
                        }
                    }
                    AddressMode::MirroredRepeat => (mirror_u(a).floor() as i32).min(z - 1),
                    _ => unnorm(a).floor() as i32,
                }
            })
            .collect();
        return fetch(&idx);
    }
    let pairs: Vec<(i32, i32, f32)> = (0..n)
        .map(|a| {
            let z = size[a];
            let u = match s.address {
                AddressMode::Repeat => repeat_u(a),
                AddressMode::MirroredRepeat => mirror_u(a),
                _ => unnorm(a),
            } - 0.5;
            let (i0, w) = (u.floor() as i32, u - u.floor());
            let i1 = i0 + 1;
            match s.address {
                AddressMode::Repeat => (if i0 < 0 { z + i0 } else { i0 }, if i1 > z - 1 { i1 - z } else { i1 }, w),
                AddressMode::MirroredRepeat => (i0.max(0), i1.min(z - 1), w),
                _ => (i0, i1, w),
            }
        })
        .collect();
    let mut total = [0.0f32; 4];
    for corner in 0..1usize << n {
        let mut idx = Vec::new();
        let mut weight = 1.0f32;
        for (a, (i0, i1, w)) in pairs.iter().enumerate() {
            let high = corner >> a & 1 == 1;
            idx.push(if high { *i1 } else { *i0 });
            let f = if high { *w } else { 1.0 - *w };
            weight = if a == 0 { f } else { weight * f };
        }
        let t = fetch(&idx);
        for c in 0..4 {
            total[c] += t[c] * weight;
        }
    }
    total
}

/// Whether `coord` is far enough from the places where the index or the weight of a texel
/// jumps that a fused multiply-add on the device cannot move it across one.
fn clear_of_texel_edges(size: &[i32], s: Sampler, coord: &[f32]) -> bool {
    size.iter().zip(coord).all(|(&z, &c)| {
        let u = if s.normalized_coords { c * z as f32 } else { c };
        [u, u - 0.5, c.fract() * z as f32, 0.5 * c].iter().all(|v| (v - v.round()).abs() > 2e-3)
    })
}

fn close(a: [f32; 4], b: [f32; 4]) -> bool {
    a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 1e-4 * (1.0 + y.abs()))
}

fn image_of(ctx: &Context, desc: ImageDesc, bytes: &[u8], name: &str) -> Image {
    let image = ctx.create_image(&desc, name).unwrap();
    ctx.write_image(&image, bytes).unwrap();
    image
}

fn floats_of(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

#[test]
fn images_and_samplers() {
    let rgba = |t| ImageFormat::new(ChannelOrder::RGBA, t);
    let samplers: Vec<Sampler> = [false, true]
        .into_iter()
        .flat_map(|normalized_coords| {
            let modes: &[AddressMode] =
                if normalized_coords { &[AddressMode::ClampToEdge, AddressMode::Clamp, AddressMode::Repeat, AddressMode::MirroredRepeat] } else { &[AddressMode::ClampToEdge, AddressMode::Clamp] };
            modes.iter().flat_map(move |&address| [false, true].map(|linear| Sampler { normalized_coords, address, linear }))
        })
        .collect();
    for flags in [&[][..], &["-O0"][..]] {
        let Some(spirv) = common::opencl_with("images", flags) else { return };
        for ctx in common::contexts() {
            let name = format!("{} {}", ctx.caps().name, flags.concat());
            // box3: an 8-bit RGBA image filtered into a float one, edges clamped.
            let (w, h) = (13usize, 7usize);
            let src: Vec<u8> = (0..w * h * 4).map(|i| (i * 37 % 251) as u8).collect();
            let bsrc = image_of(&ctx, ImageDesc::d2(rgba(ChannelType::UnormInt8), w as u32, h as u32), &src, "src");
            let dst = ctx.create_image(&ImageDesc::d2(rgba(ChannelType::Float), w as u32, h as u32), "dst").unwrap();
            let k = ctx.load_kernel(&spirv, "box3").unwrap();
            let range = NdRange { dims: 2, global: [w as u32, h as u32, 1], local: Some([1, 1, 1]), offset: [0; 3] };
            ctx.launch(&k, &range, &[KernelArg::Image(&bsrc), KernelArg::Image(&dst)]).unwrap();
            let got = floats_of(&ctx.read_image(&dst).unwrap());
            for y in 0..h as i32 {
                for x in 0..w as i32 {
                    for c in 0..4 {
                        let mut sum = 0.0f32;
                        for dy in -1..=1 {
                            for dx in -1..=1 {
                                let (xx, yy) = ((x + dx).clamp(0, w as i32 - 1) as usize, (y + dy).clamp(0, h as i32 - 1) as usize);
                                sum += src[(yy * w + xx) * 4 + c] as f32 / 255.0;
                            }
                        }
                        let g = got[(y as usize * w + x as usize) * 4 + c];
                        assert!((g - sum / 9.0).abs() < 1e-5, "{name}: box3 at ({x}, {y}) channel {c}: {g} vs {}", sum / 9.0);
                    }
                }
            }

            // box3 from a BGRA image into a float one, and from the RGBA image into a BGRA one:
            // red and blue trade places in memory, the kernel sees them in RGBA order.
            let rgba_src = bsrc;
            let bgra = ImageFormat::new(ChannelOrder::BGRA, ChannelType::UnormInt8);
            let swap = |i: usize| i / 4 * 4 + [2, 1, 0, 3][i % 4];
            let bsrc = image_of(&ctx, ImageDesc::d2(bgra, w as u32, h as u32), &src, "bgra src");
            ctx.launch(&k, &range, &[KernelArg::Image(&bsrc), KernelArg::Image(&dst)]).unwrap();
            let from_bgra = floats_of(&ctx.read_image(&dst).unwrap());
            for (i, g) in from_bgra.iter().enumerate() {
                assert!((g - got[swap(i)]).abs() < 1e-5, "{name}: box3 of a BGRA image, value {i}: {g}, want {}", got[swap(i)]);
            }
            let bdst = ctx.create_image(&ImageDesc::d2(bgra, w as u32, h as u32), "bgra dst").unwrap();
            ctx.launch(&k, &range, &[KernelArg::Image(&rgba_src), KernelArg::Image(&bdst)]).unwrap();
            // Written as OpenCL converts: convert_uchar_sat_rte(f * 255).
            for (i, g) in ctx.read_image(&bdst).unwrap().iter().enumerate() {
                let want = (got[swap(i)].clamp(0.0, 1.0) * 255.0).round_ties_even() as u8;
                assert_eq!(*g, want, "{name}: box3 into a BGRA image, byte {i} (from {})", got[swap(i)]);
            }

            // Sizes the device cannot hold, and writes of the wrong length, are errors naming them.
            let huge = ctx.create_image(&ImageDesc::d2(rgba(ChannelType::Float), 1 << 20, 4), "huge").unwrap_err().to_string();
            assert!(huge.contains("maxImageDimension2D"), "{name}: {huge}");
            let short = ctx.write_image(&dst, &[0u8; 12]).unwrap_err().to_string();
            assert!(short.contains("expected") && short.contains(&format!("{}", w * h * 16)) && short.contains("given 12"), "{name}: {short}");

            // sample2d: every sampler the launch can pass, on a float RGBA image (border alpha 0).
            let (w, h) = (5i32, 4i32);
            let texel = |p: &[i32]| [p[0] as f32 + 10.0 * p[1] as f32, (p[0] * p[1]) as f32 * 0.25, 0.5 * p[0] as f32 - p[1] as f32, 1.0 + p[1] as f32];
            let pixels: Vec<f32> = (0..h).flat_map(|y| (0..w).flat_map(move |x| texel(&[x, y]))).collect();
            let img = image_of(&ctx, ImageDesc::d2(rgba(ChannelType::Float), w as u32, h as u32), bytemuck::cast_slice(&pixels), "sampled");
            let k = ctx.load_kernel(&spirv, "sample2d").unwrap();
            let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
            for s in &samplers {
                let (lo, hi) = if s.normalized_coords { (-0.7f32, 1.9f32) } else { (-2.3f32, 7.1f32) };
                let coords: Vec<[f32; 2]> = std::iter::repeat_with(|| [rng.random_range(lo..hi), rng.random_range(lo..hi)]).filter(|c| clear_of_texel_edges(&[w, h], *s, c)).take(64).collect();
                let bc = ctx.buffer_from_slice(&coords, "coords").unwrap();
                let mut bo = ctx.zeroed_buffer::<[f32; 4]>(64, "out").unwrap();
                ctx.launch(&k, &NdRange::linear(64, None), &[KernelArg::Image(&img), KernelArg::Sampler(*s), KernelArg::Buffer(&bc), KernelArg::Buffer(&bo)]).unwrap();
                let out: Vec<[f32; 4]> = ctx.read_buffer(&mut bo).unwrap();
                for (c, o) in coords.iter().zip(&out) {
                    let want = sample_reference(&[w, h], &|p: &[i32]| texel(p), [0.0; 4], *s, c);
                    assert!(close(*o, want), "{name}: {s:?} at {c:?}: {o:?}, want {want:?}");
                }
            }

            // shifted: integer coordinates with the border color of a two-channel image (alpha 1),
            // and writes that fall outside the destination.
            let (w, h) = (6usize, 5usize);
            let rg: Vec<u8> = (0..w * h * 2).map(|i| (i * 11 % 256) as u8).collect();
            let img = image_of(&ctx, ImageDesc::d2(ImageFormat::new(ChannelOrder::RG, ChannelType::UnormInt8), w as u32, h as u32), &rg, "rg");
            let fill = vec![-1.0f32; w * h * 4];
            let dst = image_of(&ctx, ImageDesc::d2(rgba(ChannelType::Float), w as u32, h as u32), bytemuck::cast_slice(&fill), "shifted");
            let k = ctx.load_kernel(&spirv, "shifted").unwrap();
            let shift = 2i32;
            let range = NdRange { dims: 2, global: [w as u32, h as u32, 1], local: Some([1, 1, 1]), offset: [0; 3] };
            ctx.launch(&k, &range, &[KernelArg::Image(&img), KernelArg::Image(&dst), KernelArg::Bytes(&shift.to_le_bytes())]).unwrap();
            let got = floats_of(&ctx.read_image(&dst).unwrap());
            for y in 0..h as i32 {
                for x in 0..w as i32 {
                    let sx = x - shift; // the work-item that wrote (x, y) read (x - 2 shift, y + shift)
                    let want = if sx < 0 {
                        [-1.0; 4]
                    } else {
                        let (rx, ry) = (sx - shift, y + shift);
                        if (0..w as i32).contains(&rx) && (0..h as i32).contains(&ry) {
                            let at = (ry as usize * w + rx as usize) * 2;
                            [rg[at] as f32 / 255.0, rg[at + 1] as f32 / 255.0, 0.0, 1.0]
                        } else {
                            [0.0, 0.0, 0.0, 1.0]
                        }
                    };
                    let at = (y as usize * w + x as usize) * 4;
                    assert!(close([got[at], got[at + 1], got[at + 2], got[at + 3]], want), "{name}: shifted at ({x}, {y}): {:?}, want {want:?}", &got[at..at + 4]);
                }
            }

            // integers: unsigned and signed images, a read-write image, queries.
            let (w, h) = (4usize, 3usize);
            let a: Vec<u8> = (0..w * h * 4).map(|i| (i * 7 % 256) as u8).collect();
            let b: Vec<i16> = (0..w * h * 4).map(|i| i as i16 * 100 - 2000).collect();
            let ia = image_of(&ctx, ImageDesc::d2(rgba(ChannelType::UnsignedInt8), w as u32, h as u32), &a, "a");
            let ib = image_of(&ctx, ImageDesc::d2(rgba(ChannelType::SignedInt16), w as u32, h as u32), bytemuck::cast_slice(&b), "b");
            let mut binfo = ctx.zeroed_buffer::<i32>(8, "info").unwrap();
            let k = ctx.load_kernel(&spirv, "integers").unwrap();
            let range = NdRange { dims: 2, global: [w as u32, h as u32, 1], local: Some([1, 1, 1]), offset: [0; 3] };
            ctx.launch(&k, &range, &[KernelArg::Image(&ia), KernelArg::Image(&ib), KernelArg::Buffer(&binfo)]).unwrap();
            let got: Vec<i16> = bytemuck::pod_collect_to_vec(&ctx.read_image(&ib).unwrap());
            for i in 0..w * h * 4 {
                assert_eq!(got[i], (b[i] as i32 * 3 - a[i] as i32) as i16, "{name}: integers texel word {i}");
            }
            let info: Vec<i32> = ctx.read_buffer(&mut binfo).unwrap();
            // CL_RGBA, CL_UNSIGNED_INT8, CL_RGBA, CL_SIGNED_INT16.
            assert_eq!(&info[..7], &[4, 3, 403, 0x10B5, 0x10DA, 0x10B5, 0x10D8], "{name}: image queries");
            // A 1D image where the kernel takes a 2D one is refused by name.
            let line1 = ctx.create_image(&ImageDesc { kind: ImageKind::D1, format: rgba(ChannelType::UnsignedInt8), width: 4, height: 1, depth: 1 }, "1d").unwrap();
            let wrong = ctx.launch(&k, &range, &[KernelArg::Image(&line1), KernelArg::Image(&ib), KernelArg::Buffer(&binfo)]).unwrap_err().to_string();
            assert!(wrong.contains("argument 0") && wrong.contains("2-dimensional") && wrong.contains("D1"), "{name}: {wrong}");

            // any_type: read_imagef, _ui and _i on one image, picked by its channel type.
            let k = ctx.load_kernel(&spirv, "any_type").unwrap();
            let texels: [(ChannelType, Vec<u8>, Vec<f32>); 4] = [
                (ChannelType::Float, bytemuck::cast_slice(&[1.5f32, -2.0, 0.25, 8.0]).to_vec(), vec![1.5, -2.0, 0.25, 8.0]),
                (ChannelType::UnormInt8, vec![0, 51, 255, 102], vec![0.0, 0.2, 1.0, 0.4]),
                (ChannelType::UnsignedInt16, bytemuck::cast_slice(&[7u16, 65535, 300, 0]).to_vec(), vec![7.0, 65535.0, 300.0, 0.0]),
                (ChannelType::SignedInt8, vec![0x80, 0x7f, 0xff, 5], vec![-128.0, 127.0, -1.0, 5.0]),
            ];
            for (ty, bytes, want) in texels {
                let img = image_of(&ctx, ImageDesc::d2(rgba(ty), 1, 1), &bytes, "any");
                let mut bo = ctx.zeroed_buffer::<[f32; 4]>(1, "out").unwrap();
                ctx.launch(&k, &NdRange::linear(1, None), &[KernelArg::Image(&img), KernelArg::Buffer(&bo)]).unwrap();
                let out: Vec<[f32; 4]> = ctx.read_buffer(&mut bo).unwrap();
                assert!(close(out[0], [want[0], want[1], want[2], want[3]]), "{name}: any_type of a {ty:?} image: {:?}, want {want:?}", out[0]);
            }

            // halves: half texels of a half image into a float one, through a helper function.
            let (w, h) = (3usize, 2usize);
            let hv: Vec<half::f16> = (0..w * h * 4).map(|i| half::f16::from_f32(i as f32 * 0.375 - 2.0)).collect();
            let ih = image_of(&ctx, ImageDesc::d2(rgba(ChannelType::HalfFloat), w as u32, h as u32), bytemuck::cast_slice(&hv), "halves");
            let out = ctx.create_image(&ImageDesc::d2(rgba(ChannelType::Float), w as u32, h as u32), "out").unwrap();
            let k = ctx.load_kernel(&spirv, "halves").unwrap();
            let range = NdRange { dims: 2, global: [w as u32, h as u32, 1], local: Some([1, 1, 1]), offset: [0; 3] };
            ctx.launch(&k, &range, &[KernelArg::Image(&ih), KernelArg::Image(&out)]).unwrap();
            let got = floats_of(&ctx.read_image(&out).unwrap());
            for (i, g) in got.iter().enumerate() {
                let want = (hv[i] * half::f16::from_f32(2.0) + half::f16::from_f32([0.25, 0.5, -1.0, 0.0][i % 4])).to_f32();
                assert_eq!(*g, want, "{name}: halves channel value {i}");
            }

            // texels: image buffers.
            let n = 40usize;
            let a: Vec<u32> = (0..n as u32 * 4).map(|i| i * 7 + 1).collect();
            let ta = image_of(&ctx, ImageDesc { kind: ImageKind::D1Buffer, format: rgba(ChannelType::UnsignedInt32), width: n as u32, height: 1, depth: 1 }, bytemuck::cast_slice(&a), "a");
            let tb = ctx.create_image(&ImageDesc { kind: ImageKind::D1Buffer, format: rgba(ChannelType::UnsignedInt32), width: n as u32, height: 1, depth: 1 }, "b").unwrap();
            let k = ctx.load_kernel(&spirv, "texels").unwrap();
            ctx.launch(&k, &NdRange::linear(n as u32, None), &[KernelArg::Image(&ta), KernelArg::Image(&tb)]).unwrap();
            let got: Vec<u32> = bytemuck::pod_collect_to_vec(&ctx.read_image(&tb).unwrap());
            for (i, g) in got.iter().enumerate() {
                assert_eq!(*g, a[i] * 2 + if i % 4 == 0 { n as u32 } else { 0 }, "{name}: image buffer texel word {i}");
            }
            let wrong = ctx.launch(&k, &NdRange::linear(n as u32, None), &[KernelArg::Image(&line1), KernelArg::Image(&tb)]).unwrap_err().to_string();
            assert!(wrong.contains("argument 0") && wrong.contains("takes an image buffer"), "{name}: {wrong}");

            // shapes: a 3D image at normalized coordinates, a 2D array and a 1D image.
            let vol_size = [4i32, 4, 2];
            let vtexel = |p: &[i32]| [p[0] as f32, p[1] as f32 * 2.0, p[2] as f32 * 4.0, (p[0] + p[1] + p[2]) as f32];
            let vol: Vec<f32> = (0..2).flat_map(|z| (0..4).flat_map(move |y| (0..4).flat_map(move |x| vtexel(&[x, y, z])))).collect();
            let ivol = image_of(&ctx, ImageDesc { kind: ImageKind::D3, format: rgba(ChannelType::Float), width: 4, height: 4, depth: 2 }, bytemuck::cast_slice(&vol), "vol");
            let ltexel = |x: i32, y: i32, l: i32| [x as f32, y as f32, l as f32, 0.5];
            let lay: Vec<f32> = (0..3).flat_map(|l| (0..2).flat_map(move |y| (0..4).flat_map(move |x| ltexel(x, y, l)))).collect();
            let ilay = image_of(&ctx, ImageDesc { kind: ImageKind::D2Array, format: rgba(ChannelType::Float), width: 4, height: 2, depth: 3 }, bytemuck::cast_slice(&lay), "layers");
            let line = ctx.create_image(&ImageDesc { kind: ImageKind::D1, format: rgba(ChannelType::Float), width: 32, height: 1, depth: 1 }, "line").unwrap();
            let k = ctx.load_kernel(&spirv, "shapes").unwrap();
            for linear in [false, true] {
                let s = Sampler { normalized_coords: true, address: AddressMode::ClampToEdge, linear };
                let mut bo = ctx.zeroed_buffer::<[f32; 4]>(32, "out").unwrap();
                ctx.launch(&k, &NdRange::linear(32, None), &[KernelArg::Image(&ivol), KernelArg::Sampler(s), KernelArg::Image(&ilay), KernelArg::Image(&line), KernelArg::Buffer(&bo)]).unwrap();
                let out: Vec<[f32; 4]> = ctx.read_buffer(&mut bo).unwrap();
                for (i, o) in out.iter().enumerate() {
                    let i = i as i32;
                    let c = [((i % 4) as f32 + 0.5) / 4.0, ((i / 4 % 4) as f32 + 0.5) / 4.0, ((i / 16) as f32 + 0.25) / 2.0];
                    let v = sample_reference(&vol_size, &|p: &[i32]| vtexel(p), [0.0; 4], s, &c);
                    let l = ltexel(i % 4, i / 4 % 2, i / 8 % 3);
                    let want = [v[0] + l[0] * 1000.0, v[1] + l[1] * 1000.0, v[2] + l[2] * 1000.0, v[3] + l[3] * 1000.0];
                    assert!(close(*o, want), "{name}: shapes ({s:?}) item {i}: {o:?}, want {want:?}");
                }
                let got = floats_of(&ctx.read_image(&line).unwrap());
                for i in 0..32 {
                    assert_eq!(&got[i * 4..i * 4 + 4], &[i as f32, 2.0, 3.0, 1.0], "{name}: 1D image texel {i}");
                }
            }
        }
    }
}

/// `local_halves`: local tiles of halves and bytes that fit every test device as written (21 KiB)
/// but not widened (50 KiB): held packed in words where the device lacks halves or bytes
/// (SwiftShader), at -O2 and -O0. Exact: sums of multiples of 1/16 below 2^9, plus a byte.
#[test]
fn local_tiles_of_halves_and_bytes() {
    let (Some(o2), Some(o0)) = (common::opencl("local_halves"), common::opencl_with("local_halves", &["-O0"])) else { return };
    let n = 128usize;
    let a: Vec<half::f16> = (0..n * n).map(|i| half::f16::from_f32(((i * 7) % 17) as f32 / 4.0 - 2.0)).collect();
    let b: Vec<half::f16> = (0..n * n).map(|i| half::f16::from_f32(((i * 5) % 13) as f32 / 4.0 - 1.5)).collect();
    let codes: Vec<u8> = (0..64 * 64).map(|i| ((i * 37) % 251) as u8).collect();
    let want: Vec<f32> = (0..n * n)
        .map(|i| {
            let (r, c) = (i / n, i % n);
            (0..n).map(|k| a[r * n + k].to_f32() * b[k * n + c].to_f32()).sum::<f32>() + f32::from(codes[(r % 64) * 64 + c % 64])
        })
        .collect();
    for ctx in common::contexts() {
        for (spirv, level) in [(&o2, "-O2"), (&o0, "-O0")] {
            let what = format!("{} ({level})", ctx.caps().name);
            let kernel = ctx.load_kernel(spirv, "hgemm").unwrap_or_else(|e| panic!("{what}: {e}"));
            let ba = ctx.buffer_from_slice(&a, "A").unwrap();
            let bb = ctx.buffer_from_slice(&b, "B").unwrap();
            let bd = ctx.buffer_from_slice(&codes, "codes").unwrap();
            let mut bc = ctx.zeroed_buffer::<f32>(n * n, "C").unwrap();
            let range = NdRange { dims: 2, global: [n as u32 / 4, n as u32 / 4, 1], local: None, offset: [0; 3] };
            let size = (n as u32).to_le_bytes();
            ctx.launch(&kernel, &range, &[KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&bd), KernelArg::Buffer(&bc), KernelArg::Bytes(&size)])
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bc).unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{what}: C[{}][{}]", i / n, i % n);
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: {n} x {n} through local half and byte tiles matches");
        }
    }
}

/// `local_halves`' `mirror_through_local_args`: halves and bytes in local-memory arguments,
/// whose launch sizes count elements of the argument's own type however the device holds them
/// (widened to 32 bits on SwiftShader).
#[test]
fn local_arguments_of_halves_and_bytes() {
    let Some(spirv) = common::opencl("local_halves") else { return };
    let (groups, size) = (4usize, 64usize);
    let n = groups * size;
    let halves: Vec<half::f16> = (0..n).map(|i| half::f16::from_f32(i as f32 / 8.0 - 3.0)).collect();
    let bytes: Vec<u8> = (0..n).map(|i| ((i * 37) % 251) as u8).collect();
    let want: Vec<f32> = (0..n)
        .map(|i| {
            let m = i - i % size + size - 1 - i % size;
            halves[m].to_f32() * 2.0 + f32::from(bytes[m])
        })
        .collect();
    for ctx in common::contexts() {
        let what = ctx.caps().name.clone();
        let kernel = ctx.load_kernel(&spirv, "mirror_through_local_args").unwrap_or_else(|e| panic!("{what}: {e}"));
        let bh = ctx.buffer_from_slice(&halves, "in").unwrap();
        let bb = ctx.buffer_from_slice(&bytes, "bytes").unwrap();
        let mut out = ctx.zeroed_buffer::<f32>(n, "out").unwrap();
        let args = [KernelArg::Buffer(&bh), KernelArg::Buffer(&bb), KernelArg::Buffer(&out), KernelArg::Local(2 * size as u64), KernelArg::Local(size as u64)];
        ctx.launch(&kernel, &NdRange::linear(n as u32, Some(size as u32)), &args).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(ctx.read_buffer::<f32>(&mut out).unwrap(), want, "{what}");
        ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
    }
}

/// `v`'s low `n` bits, sign-extended.
fn sext(v: i64, n: u32) -> i64 {
    (v << (64 - n)) >> (64 - n)
}

/// `v`'s low `n` bits.
fn zext(v: i64, n: u32) -> i64 {
    ((v as u64) & (u64::MAX >> (64 - n))) as i64
}

fn bit_ints_reference(a: &[i32], b: &[i32], i: usize) -> [i32; 26] {
    let (x, y) = (sext(a[i].into(), 12), sext(b[i].into(), 12));
    let (u, v) = (zext(a[i].into(), 6), zext(b[i].into(), 6));
    let (s, t) = (sext(i64::from(a[i]) * 6133, 24), sext(b[i].into(), 24));
    let flag = |c: bool| i64::from(c);
    let guarded = |d: i64, f: &dyn Fn() -> i64| if d == 0 || d == -1 { 7 } else { f() };
    let acc: i64 = (0..v).map(|c| zext(c * u, 6)).sum();
    let case = match x {
        -5 => 1,
        100 => 2,
        -2048 => 3,
        2047 => 4,
        _ => x & 15,
    };
    let out = [
        sext(x + y, 12),
        sext(x - y, 12),
        sext(x * y, 12),
        guarded(y, &|| x / y),
        guarded(y, &|| x % y),
        x >> 3,
        sext(zext(x, 12) << 5, 12),
        flag(x < y) + 2 * flag(x <= y) + 4 * flag(x > -100),
        zext(u + v * 3, 6),
        if v == 0 { 7 } else { u / v + 100 * (u % v) },
        (u >> 2) + 100 * zext(u << 3, 6) + 10000 * flag(u < v),
        zext(!u, 6) + 100 * zext(-u, 6),
        sext(s + t * t, 24),
        guarded(t, &|| (s / t) * 1000 + s % t),
        (s >> 7) ^ (zext(s, 24) >> 7),
        x * 1000 + zext(s, 24) / 4096,
        (a[i] as f32 * 0.25) as i64,
        acc,
        case,
        sext(s * 37, 24) + zext(s >> 9, 12),
        (x & y) | (x ^ 0x5a5),
        sext(x * sext(a[i ^ 1].into(), 12), 12) - zext(i as i64 ^ 63, 6),
        x.abs(),
        flag(x == y) + 2 * flag(u != v),
        if zext(x, 12) == 0 { 99 } else { (zext(x, 12) as u32).leading_zeros() as i64 - 20 } + 100 * if zext(y, 12) == 0 { 77 } else { (zext(y, 12) as u32).trailing_zeros() as i64 },
        (zext(x, 12) as u32).count_ones() as i64 + 100 * if u == 0 { 55 } else { (u as u32).leading_zeros() as i64 - 26 },
    ];
    out.map(|v| v as i32)
}

fn bit_ints_wide_reference(a: &[i32], b: &[i32], i: usize) -> [i64; 8] {
    let (a, b) = (i64::from(a[i]), i64::from(b[i]));
    let (p, t) = (a * b, sext(b, 40));
    let q = sext(p.wrapping_mul(a * 40503), 40);
    let w = zext(a.wrapping_mul(0x9E3779B97F4A), 48);
    let guarded = |f: &dyn Fn() -> i64| if t == 0 || t == -1 { 7 } else { f() };
    let flag = |c: bool| i64::from(c);
    [q, q >> 13, guarded(&|| q / t), guarded(&|| q % t), w, (w >> 17) ^ zext(q, 40), flag(q < p) + 2 * flag(w > zext(b, 48)) + 4 * flag(q == -1), sext(w + p, 40)]
}

/// `_BitInt(N)` arithmetic of widths 6, 12 and 24 (held in 32 bits) and 40 and 48 (held in 64),
/// and a GEMM through local tiles indexed by `i % 64`, which clang narrows to 6 bits: optimized
/// and at -O0, against results computed here. The modules must declare the arbitrary-precision capability, or the
/// test would not test its widening.
#[test]
fn arbitrary_precision_integers() {
    let contexts = common::contexts();
    let n = 256usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(40);
    // The switch's cases (also wrapped), divisors 0 and -1, 6- and 12-bit edges.
    let special = [0, -1, 1, -5, 100, 2047, -2048, 4096 + 100, -4096 - 5, 63, 64, 4095, 4096, -4096, 1368];
    let len = special.len();
    let a: Vec<i32> = (0..n).map(|i| if i < len { special[i] } else { rng.random_range(-3000..=3000) }).collect();
    let b: Vec<i32> = (0..n).map(|i| if i < 2 * len { special[(2 * len - 1 - i) % len] } else { rng.random_range(-3000..=3000) }).collect();
    // Exact: sums of multiples of 1/16 below 2^9.
    let m = 128usize;
    let ha: Vec<half::f16> = (0..m * m).map(|i| half::f16::from_f32(((i * 7) % 17) as f32 / 4.0 - 2.0)).collect();
    let hb: Vec<half::f16> = (0..m * m).map(|i| half::f16::from_f32(((i * 5) % 13) as f32 / 4.0 - 1.5)).collect();
    let gemm: Vec<f32> = (0..m * m).map(|i| (0..m).map(|k| ha[i / m * m + k].to_f32() * hb[k * m + i % m].to_f32()).sum::<f32>()).collect();
    for flags in [&[][..], &["-O0"]] {
        let (Some(spirv), Some(wide)) = (common::opencl_with("bit_ints", flags), common::opencl_with("bit_ints_wide", flags)) else { return };
        for m in [&spirv, &wide] {
            let module = matbridge_translator::ir::Module::from_words(m).unwrap();
            assert!(module.has_capability(spirv::Capability::ArbitraryPrecisionIntegersALTERA), "{flags:?}: the producers wrote no arbitrary-precision integers");
        }
        for ctx in &contexts {
            let name = &format!("{} {flags:?}", ctx.caps().name);
            let k = ctx.load_kernel(&spirv, "bit_ints").unwrap_or_else(|e| panic!("{name}: {e}"));
            let (ba, bb) = (ctx.buffer_from_slice(&a, "a").unwrap(), ctx.buffer_from_slice(&b, "b").unwrap());
            let mut bo = ctx.zeroed_buffer::<i32>(n * 26, "out").unwrap();
            ctx.launch(&k, &NdRange::linear(n as u32, Some(64)), &[KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&bo)]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<i32> = ctx.read_buffer(&mut bo).unwrap();
            for i in 0..n {
                let want = bit_ints_reference(&a, &b, i);
                for (k, w) in want.iter().enumerate() {
                    assert_eq!(got[i * 26 + k], *w, "{name}: work-item {i} (a {}, b {}), out[{k}]", a[i], b[i]);
                }
            }
            let k = ctx.load_kernel(&spirv, "tiled_hgemm").unwrap_or_else(|e| panic!("{name}: {e}"));
            let (bh, bg) = (ctx.buffer_from_slice(&ha, "A").unwrap(), ctx.buffer_from_slice(&hb, "B").unwrap());
            let mut bc = ctx.zeroed_buffer::<f32>(m * m, "C").unwrap();
            let range = NdRange { dims: 2, global: [m as u32 / 4, m as u32 / 4, 1], local: None, offset: [0; 3] };
            ctx.launch(&k, &range, &[KernelArg::Buffer(&bh), KernelArg::Buffer(&bg), KernelArg::Buffer(&bc), KernelArg::Bytes(&(m as u32).to_le_bytes())]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bc).unwrap();
            for (i, (g, w)) in got.iter().zip(&gemm).enumerate() {
                assert_eq!(g, w, "{name}: C[{}][{}]", i / m, i % m);
            }
            {
                let k = ctx.load_kernel(&wide, "bit_ints_wide").unwrap_or_else(|e| panic!("{name}: {e}"));
                let mut bo = ctx.zeroed_buffer::<i64>(n * 8, "out").unwrap();
                ctx.launch(&k, &NdRange::linear(n as u32, Some(64)), &[KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&bo)]).unwrap_or_else(|e| panic!("{name}: {e}"));
                let got: Vec<i64> = ctx.read_buffer(&mut bo).unwrap();
                for i in 0..n {
                    let want = bit_ints_wide_reference(&a, &b, i);
                    for (k, w) in want.iter().enumerate() {
                        assert_eq!(got[i * 8 + k], *w, "{name}: work-item {i} (a {}, b {}), wide out[{k}]", a[i], b[i]);
                    }
                }
            }
            {
                // Points inside, on and outside a 5x6x7 box (coordinates -1..=7).
                let points: Vec<i32> = (0..3 * n).map(|i| ((i * 7 + i / 3) % 9) as i32 - 1).collect();
                let (nx, ny, nz) = (5i32, 6i32, 7i32);
                let k = ctx.load_kernel(&spirv, "inside_box").unwrap_or_else(|e| panic!("{name}: {e}"));
                let bp = ctx.buffer_from_slice(&points, "p").unwrap();
                let mut bo = ctx.zeroed_buffer::<i32>(n, "out").unwrap();
                let dims = [nx, ny, nz].map(i32::to_le_bytes);
                ctx.launch(
                    &k,
                    &NdRange::linear(n as u32, Some(64)),
                    &[KernelArg::Buffer(&bp), KernelArg::Buffer(&bo), KernelArg::Bytes(&dims[0]), KernelArg::Bytes(&dims[1]), KernelArg::Bytes(&dims[2])],
                )
                .unwrap_or_else(|e| panic!("{name}: {e}"));
                let got: Vec<i32> = ctx.read_buffer(&mut bo).unwrap();
                for g in 0..n {
                    let [x, y, z] = [points[3 * g], points[3 * g + 1], points[3 * g + 2]];
                    let inside = x > 0 && y > 0 && z > 0 && x < nx - 1 && y < ny - 1 && z < nz - 1;
                    let edge = x == 0 || y == 0 || z == 0 || x == nx - 1;
                    assert_eq!(got[g], i32::from(inside) * 2 + i32::from(edge), "{name}: point {g} ({x}, {y}, {z})");
                }
            }
        }
    }
}

/// `producer_hints.cl` through llvm-spirv with every extension enabled, at -O2 and -O0: the
/// modules carry alias scopes, accuracy decorations, OptNone and assumptions that drivers
/// refuse; translated, they run and compute what the CPU does.
#[test]
fn producer_hints_are_dropped() {
    let contexts = common::contexts();
    let (rows, n) = (64usize, 24usize);
    let x: Vec<f32> = (0..rows * n).map(|i| ((i * 13) % 29) as f32 / 8.0 - 1.5).collect();
    let y0: Vec<f32> = (0..rows * n).map(|i| ((i * 7) % 23) as f32 - 11.0).collect();
    let a = 3.0f32;
    for flags in [&[][..], &["-O0"]] {
        let Some(spirv) = common::opencl_with("producer_hints", flags) else { return };
        let module = matbridge_translator::ir::Module::from_words(&spirv).unwrap();
        let hints = ["SPV_INTEL_fp_max_error", "SPV_KHR_expect_assume", if flags.is_empty() { "SPV_INTEL_memory_access_aliasing" } else { "SPV_INTEL_optnone" }];
        for ext in hints {
            assert!(module.has_extension(ext), "{flags:?}: the producers wrote no {ext}");
        }
        for ctx in &contexts {
            let name = &format!("{} {flags:?}", ctx.caps().name);
            let k = ctx.load_kernel(&spirv, "producer_hints").unwrap_or_else(|e| panic!("{name}: {e}"));
            let bx = ctx.buffer_from_slice(&x, "x").unwrap();
            let mut by = ctx.buffer_from_slice(&y0, "y").unwrap();
            let (a_bytes, n_bytes) = (a.to_le_bytes(), (n as i32).to_le_bytes());
            ctx.launch(&k, &NdRange::linear(rows as u32, Some(32)), &[KernelArg::Buffer(&by), KernelArg::Buffer(&bx), KernelArg::Bytes(&a_bytes), KernelArg::Bytes(&n_bytes)])
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut by).unwrap();
            for g in 0..rows {
                for i in 0..n {
                    let want = y0[g * n + i] / a + x[g * n + i] * x[g * n + n - 1 - i];
                    // Vulkan divides within 2.5 units in the last place, as OpenCL does.
                    let got = got[g * n + i];
                    assert!((got - want).abs() <= 4.0 * f32::EPSILON * want.abs().max(1.0), "{name}: y[{g}][{i}] = {got}, want {want}");
                }
            }
        }
    }
}

/// Runs `entry(x, o, hx, ho)` over `x.len()` work-items: `per` floats out per float in, two
/// halves per half.
fn float_and_half_results(ctx: &Context, spirv: &[u32], entry: &str, x: &[f32], hx: &[half::f16], per: usize) -> (Vec<f32>, Vec<half::f16>) {
    let n = x.len();
    let k = ctx.load_kernel(spirv, entry).unwrap();
    let (bx, bhx) = (ctx.buffer_from_slice(x, "x").unwrap(), ctx.buffer_from_slice(hx, "hx").unwrap());
    let mut bo = ctx.zeroed_buffer::<f32>(per * n, "o").unwrap();
    let mut bho = ctx.zeroed_buffer::<half::f16>(2 * n, "ho").unwrap();
    ctx.launch(&k, &NdRange::linear(n as u32, Some(64)), &[KernelArg::Buffer(&bx), KernelArg::Buffer(&bo), KernelArg::Buffer(&bhx), KernelArg::Buffer(&bho)]).unwrap();
    (ctx.read_buffer(&mut bo).unwrap(), ctx.read_buffer(&mut bho).unwrap())
}

/// Units in the last place of `want` (as an f32) between `got` and `want`.
fn f32_ulps(got: f32, want: f64) -> f64 {
    let w = want.abs().max(f64::from(f32::MIN_POSITIVE));
    let ulp = 2f64.powi(w.log2().floor() as i32 - 23);
    (f64::from(got) - want).abs() / ulp
}

/// `trigonometry.cl`: sin, cos, tan and sincos of floats (scalars and vectors) and halves, and
/// sinpi, cospi and tanpi, to OpenCL's accuracy (4 units in the last place, tan 5, tanpi 6)
/// against glibc's doubles: small,
/// medium and huge arguments (to 3e38), floats nearest to multiples of pi/2 (where reduction
/// cancels), zeros of both signs, subnormals, infinities and NaNs. Vulkan's own `Sin` is only
/// promised 2^-11 absolute inside [-pi, pi] (SwiftShader's is off by 2e-4).
#[test]
fn trigonometry_to_opencl_accuracy() {
    let Some((spirv, contexts)) = kernels_and_devices("trigonometry") else { return };
    let mut x: Vec<f32> = vec![0.0, -0.0, 1e-40, -3e-39, 1e-30, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MAX, -f32::MAX, 16_777_216.0, 16_777_215.0, 26_353_588.0, 1e22, -7.267_782e22];
    for k in [1u32, 2, 3, 7, 100, 355, 1000, 4096, 4097, 71_111, 1 << 20, 10_680_707, 16_000_001] {
        let m = (f64::from(k) * std::f64::consts::FRAC_PI_2) as f32;
        x.extend([m, m.next_up(), m.next_down(), -m]);
    }
    let mut rng = rand::rngs::SmallRng::seed_from_u64(21);
    while x.len() < 1024 {
        let v: f32 = match x.len() % 4 {
            0 => rng.random_range(-4.0..4.0),
            1 => rng.random_range(-1e4..1e4),
            2 => rng.random_range(-3e7..3e7),
            _ => f32::from_bits(rng.random::<u32>() & 0x7f7f_ffff) * if rng.random() { 1.0 } else { -1.0 },
        };
        x.push(v);
    }
    let n = x.len();
    let hx: Vec<half::f16> = x.iter().map(|v| half::f16::from_f32(v.clamp(-65504.0, 65504.0))).collect();
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let (o, ho) = float_and_half_results(ctx, &spirv, "trigonometry", &x, &hx, 11);
        for g in 0..n {
            let v = f64::from(x[g]);
            // sinpi and cospi have period 2, tanpi 1: reduced exactly here first.
            let (r2, r1) = (v - 2.0 * (v / 2.0).round(), v - v.round_ties_even());
            let pi = std::f64::consts::PI;
            let wants = [
                (v.sin(), 4.0),
                (v.cos(), 4.0),
                (v.tan(), 5.0),
                (v.sin(), 4.0),
                (v.cos(), 4.0),
                ((-v).sin(), 4.0),
                (f64::from(x[g] * 0.5).sin(), 4.0),
                (f64::from(x[g] * 2.0).cos(), 4.0),
                // Integers and half-integers give exact zeros and (tanpi) signed infinities.
                (if r2.fract() == 0.0 { 0.0 } else { (pi * r2).sin() }, 4.0),
                (if r2.abs() == 0.5 { 0.0 } else { (pi * r2).cos() }, 4.0),
                (
                    if r1 == 0.0 {
                        0.0
                    } else if r1.abs() == 0.5 {
                        f64::INFINITY.copysign(r1)
                    } else {
                        (pi * r1).tan()
                    },
                    6.0,
                ),
            ];
            for (k, (want, bound)) in wants.into_iter().enumerate() {
                let got = o[g * 11 + k];
                if want.is_nan() || want.is_infinite() {
                    assert!(got.is_nan() == want.is_nan() && (want.is_nan() || f64::from(got) == want), "{name}: result {k} of {:e}: {got}, want {want}", x[g]);
                    continue;
                }
                // A subnormal argument may be flushed to zero (Vulkan allows it), and a
                // subnormal result may be too, or compared as zero.
                let flushed = x[g].is_subnormal() && (f32_ulps(got, if matches!(k, 1 | 4 | 7 | 9) { 1.0 } else { 0.0 }) <= bound || got.is_subnormal());
                assert!(f32_ulps(got, want) <= bound || flushed, "{name}: result {k} of {:e} ({:#x}): {got:e}, want {want:e} ({:.1} units)", x[g], x[g].to_bits(), f32_ulps(got, want));
            }
            // Halves: within one unit of the half nearest the exact value.
            let hv = hx[g].to_f64();
            for (k, want) in [hv.sin(), hv.cos()].into_iter().enumerate() {
                let got = ho[g * 2 + k];
                if want.is_nan() {
                    assert!(got.is_nan(), "{name}: half result {k} of {hv}: {got}");
                    continue;
                }
                let nearest = half::f16::from_f64(want);
                let diff = (i32::from(got.to_bits() as i16) - i32::from(nearest.to_bits() as i16)).abs();
                let subnormal = |h: half::f16| h.to_bits() & 0x7c00 == 0 && h.to_bits() & 0x3ff != 0;
                let flushed = subnormal(hx[g]) || (subnormal(nearest) && got.to_f64() == 0.0);
                assert!(diff <= 1 || (want.abs() < 1e-3 && (got.to_f64() - want).abs() < 1e-7) || flushed, "{name}: half result {k} of {hv}: {got}, want {want}");
            }
        }
    }
}

/// `gamma.cl`: tgamma of floats (scalars and vectors, `x` and `-x`) and halves to OpenCL's
/// 16 units against the `libm` crate's doubles: zeros, arguments below 2^-25, positive integers
/// (exact factorials), negative integers and infinities (NaN, and `+inf` itself), the overflow
/// near 35.04, negative arguments to past -42 (subnormal and zero results with Gamma's sign),
/// and random ones. lgamma and lgamma_r (OpenCL sets no bound) within 16 units or 2^-20 (near
/// lgamma's zeros), infinite at the poles, and the sign of Gamma exactly.
#[test]
fn gamma_to_opencl_accuracy() {
    let Some((spirv, contexts)) = kernels_and_devices("gamma") else { return };
    let mut x: Vec<f32> = vec![
        0.0,
        -0.0,
        1.0,
        2.0,
        3.0,
        0.5,
        -0.5,
        -1.0,
        -2.5,
        1e-30,
        1e-8,
        3e-8,
        35.0,
        35.04,
        35.05,
        36.0,
        100.0,
        -35.5,
        -38.5,
        -40.5,
        -42.0,
        -43.2,
        f32::INFINITY,
        f32::NAN,
        5.0,
        10.0,
        23.0,
        24.0,
        1e-40,
        8.0,
        7.999_999_5,
        5.524_68,
        1.461_632_1,
        -2.457_024_7,
        1e30,
        3e36,
        0.9,
        1.75,
        1.25,
        0.23,
        0.74,
    ];
    let mut rng = rand::rngs::SmallRng::seed_from_u64(71);
    while x.len() < 1024 {
        x.push(match x.len() % 5 {
            0 => rng.random_range(-45.0..40.0),
            1 => rng.random_range(0.0..5.0),
            2 => 2f32.powf(rng.random_range(-30.0..5.0)),
            3 => 2f32.powf(rng.random_range(3.0..120.0)),
            _ => rng.random_range(-10.0..10.0),
        });
    }
    let hx: Vec<half::f16> = x.iter().map(|v| half::f16::from_f32(v.clamp(-65504.0, 65504.0))).collect();
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let (o, ho) = float_and_half_results(ctx, &spirv, "gammas", &x, &hx, 5);
        // lgamma_r with its sign pointer into a buffer: the same values and signs.
        let k = ctx.load_kernel(&spirv, "lgamma_signs").unwrap_or_else(|e| panic!("{name}: {e}"));
        let bx = ctx.buffer_from_slice(&x, "x").unwrap();
        let (mut bo, mut bs) = (ctx.zeroed_buffer::<f32>(x.len(), "o").unwrap(), ctx.zeroed_buffer::<i32>(x.len(), "s").unwrap());
        ctx.launch(&k, &NdRange::linear(x.len() as u32, Some(64)), &[KernelArg::Buffer(&bx), KernelArg::Buffer(&bo), KernelArg::Buffer(&bs)]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (values, signs): (Vec<f32>, Vec<i32>) = (ctx.read_buffer(&mut bo).unwrap(), ctx.read_buffer(&mut bs).unwrap());
        for g in 0..x.len() {
            assert!(values[g].to_bits() == o[g * 5 + 3].to_bits() || values[g].is_nan() && o[g * 5 + 3].is_nan(), "{name}: lgamma_r({:e}) through a buffer: {}", x[g], values[g]);
            assert_eq!(signs[g] as f32, o[g * 5 + 4], "{name}: lgamma_r sign of {:e} through a buffer", x[g]);
        }
        for g in 0..x.len() {
            for (k, v) in [x[g], -x[g]].into_iter().enumerate() {
                let wants = [libm::tgamma(f64::from(v)), libm::tgamma(flushed(v))];
                let got = o[g * 5 + k];
                if wants[0] as f32 == 0.0 && v != 0.0 {
                    // Underflowed (x below about -42): a zero with Gamma's sign where the
                    // device keeps signed zeros (SignedZeroInfNanPreserve, which kernels get
                    // where it is honoured); elsewhere of either sign.
                    assert_eq!(got, 0.0, "{name}: tgamma({v:e})");
                    if ctx.caps().float_controls.signed_zero_inf_nan_preserve.f32 {
                        assert_eq!(got.is_sign_negative(), (wants[0] as f32).is_sign_negative(), "{name}: the sign of tgamma({v:e}) = {got:e}");
                    }
                    continue;
                }
                assert_within(got, wants, 16.0, &|| format!("{name}: tgamma({v:e})"));
            }
            let v = x[g];
            let (want, sign) = libm::lgamma_r(f64::from(v));
            for (k, got) in [o[g * 5 + 2], o[g * 5 + 3]].into_iter().enumerate() {
                let close = f32_ulps(got, want) <= 16.0 || (f64::from(got) - want).abs() <= 2f64.powi(-20);
                let same = if want.is_nan() {
                    got.is_nan()
                } else if want.is_infinite() {
                    f64::from(got) == want
                } else {
                    close || v.is_subnormal()
                };
                assert!(same, "{name}: lgamma result {k} of {v:e}: {got:e}, want {want:e}");
            }
            if want.is_finite() && !v.is_subnormal() && v != 0.0 {
                assert_eq!(o[g * 5 + 4], sign as f32, "{name}: lgamma_r sign of {v:e}");
            }
            for (k, want) in [libm::tgamma(hx[g].to_f64()), libm::lgamma(hx[g].to_f64())].into_iter().enumerate() {
                let got = ho[g * 2 + k];
                if want.is_nan() {
                    assert!(got.is_nan(), "{name}: half result {k} of {}: {got}", hx[g]);
                    continue;
                }
                let nearest = half::f16::from_f64(want);
                let diff = (i32::from(got.to_bits() as i16) - i32::from(nearest.to_bits() as i16)).abs();
                let subnormal = |h: half::f16| h.to_bits() & 0x7c00 == 0;
                let near_zero = k == 1 && (got.to_f64() - want).abs() <= 2f64.powi(-12);
                assert!(diff <= 1 || (subnormal(nearest) && subnormal(got)) || near_zero, "{name}: half result {k} of {}: {got}, want {want}", hx[g]);
            }
        }
    }
}

/// The operands of `remainders.cl`'s tests: doubles `x`, `y` (every pair of edge values, then
/// quotients to 2^2000 over divisors into the subnormals), floats `xf`, `yf` (the same edge
/// pairs, then quotients to 2^250) and halves `hx`.
struct RemainderOperands {
    x: Vec<f64>,
    y: Vec<f64>,
    xf: Vec<f32>,
    yf: Vec<f32>,
    hx: Vec<half::f16>,
}

fn remainder_operands() -> RemainderOperands {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(83);
    let edges = [0.0f64, -0.0, 1.0, -1.0, 3.25, 1e-30, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e300, -5e-324, 0.1];
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for a in edges {
        for b in edges {
            x.push(a);
            y.push(b);
        }
    }
    while x.len() < 1024 {
        let sign = if rng.random() { 1.0 } else { -1.0 };
        x.push(sign * 2f64.powf(rng.random_range(-60.0..1020.0)) * rng.random_range(1.0..2.0));
        y.push(2f64.powf(rng.random_range(-1070.0..60.0)) * rng.random_range(1.0..2.0));
    }
    let (xf, yf): (Vec<f32>, Vec<f32>) = (0..x.len())
        .map(|i| {
            if i < edges.len() * edges.len() {
                (x[i] as f32, y[i] as f32)
            } else {
                let sign = if rng.random() { 1.0 } else { -1.0 };
                (sign * 2f32.powf(rng.random_range(-20.0..127.0)) * rng.random_range(1.0..2.0), 2f32.powf(rng.random_range(-120.0..30.0)) * rng.random_range(1.0..2.0))
            }
        })
        .unzip();
    // Half-way quotients (n + 1/2) y, exact in 24 bits, where a rounded x / y picks either
    // neighbour.
    let (mut xf, mut yf) = (xf, yf);
    for i in 0..64 {
        let b = 2f32.powi(i % 9 - 4) * (1.0 + (i % 8) as f32 / 8.0);
        let n = (1u32 << (i % 19)) as f32 + (i as f32);
        xf[200 + i as usize] = (n + 0.5) * b;
        yf[200 + i as usize] = if i % 2 == 0 { b } else { -b };
    }
    let hx: Vec<half::f16> = xf.iter().map(|v| half::f16::from_f32(v.clamp(-65504.0, 65504.0))).collect();
    RemainderOperands { x, y, xf, yf, hx }
}

/// Whether `got` is `want` bit for bit but NaN's payload.
fn same_float(got: f64, want: f64) -> bool {
    (got.is_nan() && want.is_nan()) || (got == want && got.is_sign_negative() == want.is_sign_negative())
}

/// `remainders.cl`: fmod of floats (scalars and vectors), halves and doubles exactly (OpenCL's
/// 0 units), against Rust's `%`: quotients to 2^250 (floats) and 2^2000 (doubles), subnormal
/// divisors, zeros of both signs, infinities and NaNs.
#[test]
fn fmod_is_exact() {
    let Some((spirv, contexts)) = kernels_and_devices("remainders") else { return };
    let RemainderOperands { x, y, xf, yf, hx } = remainder_operands();
    let same = same_float;
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let k = ctx.load_kernel(&spirv, "float_fmod").unwrap_or_else(|e| panic!("{name}: {e}"));
        let (bx, by, bhx) = (ctx.buffer_from_slice(&xf, "x").unwrap(), ctx.buffer_from_slice(&yf, "y").unwrap(), ctx.buffer_from_slice(&hx, "hx").unwrap());
        let mut bo = ctx.zeroed_buffer::<f32>(2 * xf.len(), "o").unwrap();
        let mut bho = ctx.zeroed_buffer::<half::f16>(xf.len(), "ho").unwrap();
        ctx.launch(&k, &NdRange::linear(xf.len() as u32, Some(64)), &[KernelArg::Buffer(&bx), KernelArg::Buffer(&by), KernelArg::Buffer(&bo), KernelArg::Buffer(&bhx), KernelArg::Buffer(&bho)])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let (o, ho): (Vec<f32>, Vec<half::f16>) = (ctx.read_buffer(&mut bo).unwrap(), ctx.read_buffer(&mut bho).unwrap());
        let subnormal = |v: f32| v != 0.0 && v.abs() < f32::MIN_POSITIVE;
        for g in 0..xf.len() {
            let (a, b) = (xf[g], yf[g]);
            // Subnormal operands or results may be flushed (Vulkan allows it).
            if subnormal(a) || subnormal(b) || subnormal(a % b) || subnormal(a % -b) {
                continue;
            }
            assert!(same(f64::from(o[2 * g]), f64::from(a % b)), "{name}: fmod({a:e}, {b:e}) = {:e}, want {:e}", o[2 * g], a % b);
            assert!(same(f64::from(o[2 * g + 1]), f64::from(a % -b)), "{name}: fmod({a:e}, {:e}) = {:e}, want {:e}", -b, o[2 * g + 1], a % -b);
            let h = hx[g].to_f32() % half::f16::from_f32(0.3).to_f32();
            assert!(same(ho[g].to_f64(), f64::from(half::f16::from_f32(h))), "{name}: half fmod({}, 0.3) = {}, want {h}", hx[g], ho[g]);
        }
        if !ctx.caps().shader_float64 {
            continue;
        }
        let k = ctx.load_kernel(&spirv, "double_fmod").unwrap_or_else(|e| panic!("{name}: {e}"));
        let (bx, by) = (ctx.buffer_from_slice(&x, "x").unwrap(), ctx.buffer_from_slice(&y, "y").unwrap());
        let mut bo = ctx.zeroed_buffer::<f64>(x.len(), "o").unwrap();
        ctx.launch(&k, &NdRange::linear(x.len() as u32, Some(64)), &[KernelArg::Buffer(&bx), KernelArg::Buffer(&by), KernelArg::Buffer(&bo)]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let o: Vec<f64> = ctx.read_buffer(&mut bo).unwrap();
        for g in 0..x.len() {
            let (a, b) = (x[g], y[g]);
            let tiny = |v: f64| v != 0.0 && v.abs() < f64::MIN_POSITIVE;
            if tiny(a) || tiny(b) || tiny(a % b) {
                continue;
            }
            assert!(same(o[g], a % b), "{name}: fmod({a:e}, {b:e}) = {:e}, want {:e}", o[g], a % b);
        }
    }
}

/// `remquo`'s quotient as OpenCL C keeps it: the seven low bits of musl's (which keeps 31), with
/// its sign; 0 where the remainder is NaN.
fn seven_quotient_bits(r: f64, q: i32) -> i32 {
    if r.is_nan() {
        0
    } else if q < 0 {
        -((-q) & 127)
    } else {
        q & 127
    }
}

/// `remainders.cl`: remainder and remquo of floats (scalars and vectors), halves and doubles
/// exactly, against the `libm` crate (musl's exact algorithm): quotients far past the
/// significand, where `x - y rint(x / y)` gave 0, half-way quotients (ties to even), subnormal
/// divisors, zeros of both signs, infinities and NaNs; remquo's seven low quotient bits and
/// sign.
#[test]
fn remainder_and_remquo_are_exact() {
    let Some((spirv, contexts)) = kernels_and_devices("remainders") else { return };
    let RemainderOperands { x, y, xf, yf, hx } = remainder_operands();
    let hy = half::f16::from_f32(0.3).to_f32();
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let k = ctx.load_kernel(&spirv, "float_remainder").unwrap_or_else(|e| panic!("{name}: {e}"));
        let (bx, by, bhx) = (ctx.buffer_from_slice(&xf, "x").unwrap(), ctx.buffer_from_slice(&yf, "y").unwrap(), ctx.buffer_from_slice(&hx, "hx").unwrap());
        let mut bo = ctx.zeroed_buffer::<f32>(3 * xf.len(), "o").unwrap();
        let mut bq = ctx.zeroed_buffer::<i32>(2 * xf.len(), "q").unwrap();
        let mut bho = ctx.zeroed_buffer::<half::f16>(xf.len(), "ho").unwrap();
        let mut bhq = ctx.zeroed_buffer::<i32>(xf.len(), "hq").unwrap();
        let args = [KernelArg::Buffer(&bx), KernelArg::Buffer(&by), KernelArg::Buffer(&bo), KernelArg::Buffer(&bq), KernelArg::Buffer(&bhx), KernelArg::Buffer(&bho), KernelArg::Buffer(&bhq)];
        ctx.launch(&k, &NdRange::linear(xf.len() as u32, Some(64)), &args).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (o, q): (Vec<f32>, Vec<i32>) = (ctx.read_buffer(&mut bo).unwrap(), ctx.read_buffer(&mut bq).unwrap());
        let (ho, hq): (Vec<half::f16>, Vec<i32>) = (ctx.read_buffer(&mut bho).unwrap(), ctx.read_buffer(&mut bhq).unwrap());
        let subnormal = |v: f32| v != 0.0 && v.abs() < f32::MIN_POSITIVE;
        for g in 0..xf.len() {
            let (a, b) = (xf[g], yf[g]);
            let (want, wq) = libm::remquof(a, b);
            let (want_neg, wq_neg) = libm::remquof(a, -b);
            // Subnormal operands or results may be flushed (Vulkan allows it).
            if subnormal(a) || subnormal(b) || subnormal(want) {
                continue;
            }
            let wq = seven_quotient_bits(f64::from(want), wq);
            assert!(same_float(f64::from(o[3 * g]), f64::from(libm::remainderf(a, b))), "{name}: remainder({a:e}, {b:e}) = {:e}, want {want:e}", o[3 * g]);
            assert!(same_float(f64::from(o[3 * g + 1]), f64::from(want)), "{name}: remquo({a:e}, {b:e}) = {:e}, want {want:e}", o[3 * g + 1]);
            assert_eq!(q[2 * g], wq, "{name}: remquo({a:e}, {b:e}) quotient");
            assert!(same_float(f64::from(o[3 * g + 2]), f64::from(want_neg)), "{name}: remquo({a:e}, {:e}) = {:e}, want {want_neg:e}", -b, o[3 * g + 2]);
            assert_eq!(q[2 * g + 1], seven_quotient_bits(f64::from(want_neg), wq_neg), "{name}: remquo({a:e}, {:e}) quotient", -b);
            let (h, hwq) = libm::remquof(hx[g].to_f32(), hy);
            assert!(same_float(ho[g].to_f64(), f64::from(half::f16::from_f32(h))), "{name}: half remquo({}, {hy}) = {}, want {h}", hx[g], ho[g]);
            assert_eq!(hq[g], seven_quotient_bits(f64::from(h), hwq), "{name}: half remquo({}, {hy}) quotient", hx[g]);
        }
        if !ctx.caps().shader_float64 {
            continue;
        }
        let k = ctx.load_kernel(&spirv, "double_remainder").unwrap_or_else(|e| panic!("{name}: {e}"));
        let (bx, by) = (ctx.buffer_from_slice(&x, "x").unwrap(), ctx.buffer_from_slice(&y, "y").unwrap());
        let mut bo = ctx.zeroed_buffer::<f64>(2 * x.len(), "o").unwrap();
        let mut bq = ctx.zeroed_buffer::<i32>(x.len(), "q").unwrap();
        ctx.launch(&k, &NdRange::linear(x.len() as u32, Some(64)), &[KernelArg::Buffer(&bx), KernelArg::Buffer(&by), KernelArg::Buffer(&bo), KernelArg::Buffer(&bq)])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let (o, q): (Vec<f64>, Vec<i32>) = (ctx.read_buffer(&mut bo).unwrap(), ctx.read_buffer(&mut bq).unwrap());
        for g in 0..x.len() {
            let (a, b) = (x[g], y[g]);
            let (want, wq) = libm::remquo(a, b);
            let tiny = |v: f64| v != 0.0 && v.abs() < f64::MIN_POSITIVE;
            if tiny(a) || tiny(b) || tiny(want) {
                continue;
            }
            assert!(same_float(o[2 * g], libm::remainder(a, b)), "{name}: remainder({a:e}, {b:e}) = {:e}, want {want:e}", o[2 * g]);
            assert!(same_float(o[2 * g + 1], want), "{name}: remquo({a:e}, {b:e}) = {:e}, want {want:e}", o[2 * g + 1]);
            assert_eq!(q[g], seven_quotient_bits(want, wq), "{name}: remquo({a:e}, {b:e}) quotient");
        }
    }
}

/// `exponentials.cl`: exp, exp2, exp10, log, log2 and log10 of floats (scalars and vectors) and
/// halves to OpenCL's accuracy (3 units in the last place) against glibc's doubles, over the
/// whole range: arguments near overflow and into subnormal results, logarithms of subnormals,
/// of numbers near 1 (where `log2(x) ln 2` loses most digits), of powers of two and ten, and
/// zeros, infinities, negatives and NaN. Drivers' `Exp` computes `Exp2(x log2 e)`: lavapipe
/// was 20 units off at |x| = 10.
#[test]
fn exponentials_and_logarithms_to_opencl_accuracy() {
    let Some((spirv, contexts)) = kernels_and_devices("exponentials") else { return };
    let mut x: Vec<f32> =
        vec![0.0, -0.0, 1.0, -1.0, 2.0, 10.0, 1e10, 1e-10, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 88.72, 88.73, -87.0, -103.0, 127.9, -149.5, 38.5, -44.0, 1e-40, f32::MAX, f32::MIN_POSITIVE];
    x.extend([1.0f32.next_up(), 1.0f32.next_down(), 0.999, 1.001, std::f32::consts::SQRT_2, std::f32::consts::FRAC_1_SQRT_2]);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(31);
    while x.len() < 1024 {
        let v: f32 = match x.len() % 4 {
            0 => rng.random_range(-104.0..89.0),
            1 => rng.random_range(-10.0..10.0),
            2 => 2f32.powf(rng.random_range(-140.0..127.0)),
            _ => rng.random_range(0.5..2.0),
        };
        x.push(v);
    }
    let n = x.len();
    let hx: Vec<half::f16> = x.iter().map(|v| half::f16::from_f32(v.clamp(-20.0, 65504.0))).collect();
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let (o, ho) = float_and_half_results(ctx, &spirv, "exponentials", &x, &hx, 6);
        for g in 0..n {
            let v = f64::from(x[g]);
            let wants = [v.exp(), v.exp2(), 10f64.powf(v), v.ln(), v.log2(), v.log10()];
            for (k, want) in wants.into_iter().enumerate() {
                let got = o[g * 6 + k];
                let want_f32 = want as f32;
                if want.is_nan() || want_f32.is_infinite() {
                    assert!(got.is_nan() == want.is_nan() && (want.is_nan() || got == want_f32), "{name}: result {k} of {:e}: {got}, want {want}", x[g]);
                    continue;
                }
                // Subnormal results and arguments may be flushed to zero (Vulkan allows it).
                let flushed = (want.abs() < f64::from(f32::MIN_POSITIVE) && (got == 0.0 || got.is_subnormal())) || (x[g].is_subnormal() && (k < 3 && got == 1.0 || k >= 3 && got == f32::NEG_INFINITY));
                assert!(f32_ulps(got, want) <= 3.0 || flushed, "{name}: result {k} of {:e} ({:#x}): {got:e}, want {want:e} ({:.1} units)", x[g], x[g].to_bits(), f32_ulps(got, want));
            }
            let hv = hx[g].to_f64();
            for (k, want) in [hv.exp(), hv.ln()].into_iter().enumerate() {
                let got = ho[g * 2 + k];
                let nearest = half::f16::from_f64(want);
                if want.is_nan() || nearest.is_infinite() {
                    assert!(got.is_nan() == want.is_nan() && (want.is_nan() || got == nearest), "{name}: half result {k} of {hv}: {got}, want {want}");
                    continue;
                }
                let diff = (i32::from(got.to_bits() as i16) - i32::from(nearest.to_bits() as i16)).abs();
                let subnormal = |h: half::f16| h.to_bits() & 0x7c00 == 0 && h.to_bits() & 0x3ff != 0;
                assert!(diff <= 1 || subnormal(nearest) || subnormal(hx[g]), "{name}: half result {k} of {hv}: {got}, want {want}");
            }
        }
    }
}
/// `double_math.cl`: `nan` builds quiet NaNs with the payload's bits (doubles, floats and
/// halves), `copysign` of doubles keeps every magnitude bit and takes the sign of zeros too,
/// `degrees` and `radians` of doubles (which `GLSL.std.450` has only for narrower
/// floats) round like the products they are, and `rint`, `trunc` and `round` of doubles are
/// exact at ties, past 2^23 and for signed zeros.
#[test]
fn double_nans_angles_and_rounding() {
    let Some((spirv, contexts)) = kernels_and_devices("double_math") else { return };
    for ctx in &contexts {
        let name = &ctx.caps().name;
        if !ctx.caps().shader_float64 {
            continue;
        }
        let k = ctx.load_kernel(&spirv, "nans_and_angles").unwrap_or_else(|e| panic!("{name}: {e}"));
        let n = 64usize;
        // Multiples of 0.731, ties, and values past 2^23 and 2^52 with and without fractions.
        let x: Vec<f64> = (0..n)
            .map(|i| match i % 4 {
                0 | 1 => (i as f64 - 20.0) * 0.731,
                2 => (i as f64 - 32.0) + 0.5,
                _ => (i as f64 - 30.0) * [24_229_960.553_024_84, 1e15 + 0.5, 0.3, 4_503_599_627_370_497.0][i / 4 % 4],
            })
            .collect();
        let bx = ctx.buffer_from_slice(&x, "x").unwrap();
        let mut bits = ctx.zeroed_buffer::<u64>(n, "bits").unwrap();
        let mut bo = ctx.zeroed_buffer::<f64>(6 * n, "o").unwrap();
        let mut fbits = ctx.zeroed_buffer::<u32>(n, "fbits").unwrap();
        let mut hbits = ctx.zeroed_buffer::<u16>(n, "hbits").unwrap();
        ctx.launch(&k, &NdRange::linear(n as u32, Some(64)), &[KernelArg::Buffer(&bx), KernelArg::Buffer(&bits), KernelArg::Buffer(&bo), KernelArg::Buffer(&fbits), KernelArg::Buffer(&hbits)])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let (bits, o): (Vec<u64>, Vec<f64>) = (ctx.read_buffer(&mut bits).unwrap(), ctx.read_buffer(&mut bo).unwrap());
        let (fbits, hbits): (Vec<u32>, Vec<u16>) = (ctx.read_buffer(&mut fbits).unwrap(), ctx.read_buffer(&mut hbits).unwrap());
        for g in 0..n {
            assert_eq!(bits[g], 0x7ff8_0000_0000_0000 | (g as u64 * 0x10001), "{name}: double nan({g})");
            assert_eq!(fbits[g], 0x7fc0_0000 | (g as u32 * 0x1001), "{name}: float nan({g})");
            assert_eq!(hbits[g], 0x7e00 | g as u16, "{name}: half nan({g})");
            assert_eq!(o[g * 6], -x[g] * (180.0 / std::f64::consts::PI), "{name}: degrees({})", -x[g]);
            assert_eq!(o[g * 6 + 1], x[g] * (std::f64::consts::PI / 180.0), "{name}: radians({})", x[g]);
            let sign = [-1.0, -0.0, 1.0][g % 3];
            assert_eq!(o[g * 6 + 5].to_bits(), x[g].copysign(sign).to_bits(), "{name}: copysign({}, {sign})", x[g]);
            for (k, (what, want)) in [("rint", x[g].round_ties_even()), ("trunc", x[g].trunc()), ("round", x[g].round())].into_iter().enumerate() {
                let got = o[g * 6 + 2 + k];
                assert!(got == want && got.is_sign_negative() == want.is_sign_negative(), "{name}: {what}({}) = {got}, want {want}", x[g]);
            }
        }
    }
}

/// `double_math.cl`'s `transcendentals`: exp, exp2, exp10, log, log2, log10, expm1, log1p, the
/// hyperbolic functions and their inverses, pow, powr, pown, cbrt, rootn, hypot, asin, acos,
/// atan, atan2, sin, cos, tan, sincos and their pi forms, erf, erfc, tgamma and lgamma_r of
/// doubles (which `GLSL.std.450` has only for narrower floats, or not at all) to OpenCL's accuracy against the `libm` crate, over edge values
/// (zeros, subnormals, near 1, overflow and underflow thresholds, infinities, NaN, the doubles
/// nearest to multiples of pi/2, the one nearest of all, integers and half-integers for the pi
/// forms, whose zeros carry OpenCL's signs) and random ones, on every device with doubles.
#[test]
fn double_transcendentals_to_opencl_accuracy() {
    let Some((spirv, contexts)) = kernels_and_devices("double_math") else { return };
    let mut x = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        0.5,
        1e-300,
        -1e-300,
        1e300,
        -1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        22.0,
        -30.0,
        709.7,
        710.4,
        -745.0,
        1e-10,
        -1e-10,
        0.999,
        5e-324,
        1.000_000_1,
        0.999_999_9,
        308.2,
        -323.5,
        1023.9,
        -1074.5,
        f64::MAX,
        1e22,
        // The double nearest to a multiple of pi/2 (2^-61 away).
        6_381_956_970_095_103.0 * 2f64.powi(797),
        3.5,
        -2.5,
        -3.0,
        4.0,
        2.25,
        9_007_199_254_740_993.0,
    ];
    for k in [1u32, 2, 3, 4, 7, 100, 355, 1000, 71_111, (1 << 20) - 1, 1 << 20, 1 << 21, 10_680_707, 1 << 30] {
        let m = f64::from(k) * std::f64::consts::FRAC_PI_2;
        x.extend([m, m.next_up(), m.next_down(), -m]);
    }
    let mut rng = rand::rngs::SmallRng::seed_from_u64(53);
    while x.len() < 2048 {
        x.push(match x.len() % 6 {
            0 => rng.random_range(-10.0..10.0),
            1 => rng.random_range(-750.0..750.0),
            2 => 2f64.powf(rng.random_range(-1070.0..1020.0)) * if rng.random() { 1.0 } else { -1.0 },
            3 => rng.random_range(-0.01..0.01),
            4 => rng.random_range(-1e8..1e8),
            _ => rng.random_range(0.5..40.0),
        });
    }
    let y: Vec<f64> = x.iter().enumerate().map(|(i, v)| if i % 2 == 0 { v / (1.0 + v.abs()) } else { rng.random_range(-1.0..1.0) }).collect();
    let k: Vec<i32> = (0..x.len()).map(|i| [-3, -2, -1, 0, 1, 2, 3, 5, 7, -7, 100, 1_048_577, -1000][i % 13]).collect();
    let powr = |a: f64, b: f64| -> f64 {
        let bad = a < 0.0 || a.is_nan() || b.is_nan() || (a == 0.0 || a == f64::INFINITY) && b == 0.0 || a == 1.0 && b.is_infinite();
        if bad {
            f64::NAN
        } else {
            a.abs().powf(b)
        }
    };
    // rootn by pow with 1/n rounded: that rounding alone is |ln a / n| / 2 units of the
    // reference, allowed on top.
    let rootn = |a: f64, n: i32| -> (f64, f64) {
        if n == 0 || (a < 0.0 && n % 2 == 0) || a.is_nan() {
            return (f64::NAN, 0.0);
        }
        let m = if a == 0.0 || a.is_infinite() {
            if (a == 0.0) == (n < 0) {
                f64::INFINITY
            } else {
                0.0
            }
        } else {
            a.abs().powf(1.0 / f64::from(n))
        };
        let slack = if a == 0.0 || a.is_infinite() { 0.0 } else { (a.abs().ln() / f64::from(n)).abs() };
        (if n % 2 != 0 { m.copysign(a) } else { m }, slack)
    };
    // sin, cos and tan of pi r for the exact reduction `r` (sinpi and cospi have period 2,
    // tanpi 1), with pi r a double-double; integers and half-integers give OpenCL's zeros
    // and infinities.
    let pi_forms = |v: f64| -> [f64; 3] {
        if !v.is_finite() {
            return [f64::NAN; 3];
        }
        let (r2, r1) = (v - 2.0 * (v / 2.0).round_ties_even(), v - v.round_ties_even());
        let pi = std::f64::consts::PI;
        let of = |r: f64| -> (f64, f64) {
            let h = pi * r;
            (h, pi.mul_add(r, -h) + 1.224_646_799_147_353_2e-16 * r)
        };
        let (h2, l2) = of(r2);
        let sin = if r2.fract() == 0.0 { 0.0f64.copysign(v) } else { libm::sin(h2) + libm::cos(h2) * l2 };
        let cos = if r2.abs() == 0.5 { 0.0 } else { libm::cos(h2) - libm::sin(h2) * l2 };
        let odd = v.round_ties_even() % 2.0 != 0.0;
        let tan = if r1 == 0.0 {
            0.0f64.copysign(if odd { -v } else { v })
        } else if r1.abs() == 0.5 {
            f64::INFINITY.copysign(r1)
        } else {
            let (h1, l1) = of(r1);
            let (s, c) = (libm::sin(h1) + libm::cos(h1) * l1, libm::cos(h1) - libm::sin(h1) * l1);
            s / c
        };
        [sin, cos, tan]
    };
    let ulps = |got: f64, want: f64| -> f64 {
        // The unit in the last place at `want`: 2^(e - 52), 2^-1074 for subnormals.
        let e = ((want.abs().to_bits() >> 52) as i32).max(1) - 1075;
        let ulp = if e >= -1022 { f64::from_bits(((e + 1023) as u64) << 52) } else { f64::from_bits(1u64 << (e + 1074)) };
        (got - want).abs() / ulp
    };
    for ctx in contexts.iter().filter(|c| c.caps().shader_float64) {
        let name = &ctx.caps().name;
        let kernel = ctx.load_kernel(&spirv, "transcendentals").unwrap_or_else(|e| panic!("{name}: {e}"));
        let (bx, by) = (ctx.buffer_from_slice(&x, "x").unwrap(), ctx.buffer_from_slice(&y, "y").unwrap());
        let bk = ctx.buffer_from_slice(&k, "k").unwrap();
        let mut bo = ctx.zeroed_buffer::<f64>(41 * x.len(), "o").unwrap();
        ctx.launch(&kernel, &NdRange::linear(x.len() as u32, Some(64)), &[KernelArg::Buffer(&bx), KernelArg::Buffer(&by), KernelArg::Buffer(&bk), KernelArg::Buffer(&bo)])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let o: Vec<f64> = ctx.read_buffer(&mut bo).unwrap();
        for g in 0..x.len() {
            let (a, b, n) = (x[g], y[g], k[g]);
            let (root, slack) = rootn(a, n);
            let [sinpi, cospi, tanpi] = pi_forms(a);
            let wants = [
                (a.exp(), 3.0),
                (a.exp2(), 3.0),
                (libm::exp10(a), 3.0),
                (a.ln(), 3.0),
                (a.log2(), 3.0),
                (a.log10(), 3.0),
                (libm::expm1(a), 3.0),
                (libm::log1p(a), 2.0),
                (libm::sinh(a), 4.0),
                (libm::cosh(a), 4.0),
                (libm::tanh(a), 5.0),
                (libm::asinh(a), 4.0),
                (if a < 1.0 { f64::NAN } else { libm::acosh(a) }, 4.0),
                (libm::atanh(b), 5.0),
                (a.powf(b * 40.0), 16.0),
                (powr(a, b), 16.0),
                (a.powf(f64::from(n)), 16.0),
                (libm::cbrt(a), 2.0),
                (root, 16.0 + slack),
                (libm::hypot(a, b), 4.0),
                (libm::asin(b), 4.0),
                (libm::acos(b), 4.0),
                (libm::atan(a), 5.0),
                (libm::atan2(a, b), 6.0),
                (libm::asin(b) / std::f64::consts::PI, 5.0),
                (libm::acos(b) / std::f64::consts::PI, 5.0),
                (libm::atan(a) / std::f64::consts::PI, 5.0),
                (libm::atan2(a, b) / std::f64::consts::PI, 6.0),
                (libm::sin(a), 4.0),
                (libm::cos(a), 4.0),
                (libm::tan(a), 5.0),
                (libm::sin(a), 4.0),
                (libm::cos(a), 4.0),
                (sinpi, 4.0),
                (cospi, 4.0),
                (tanpi, 6.0),
                (libm::erf(a), 16.0),
                (libm::erfc(a), 16.0),
                (libm::tgamma(a), 16.0),
            ];
            // lgamma_r: within 16 units or 2^-48 (near its zeros), and Gamma's sign.
            let (lgamma, sign) = libm::lgamma_r(a);
            let got = o[g * 41 + 39];
            let close = if lgamma.is_nan() { got.is_nan() } else { got == lgamma || ulps(got, lgamma) <= 16.0 || (got - lgamma).abs() <= 2f64.powi(-48) };
            assert!(close || a.abs() < f64::MIN_POSITIVE, "{name}: lgamma_r({a:e}) = {got:e}, want {lgamma:e} ({:.1} units)", ulps(got, lgamma));
            if lgamma.is_finite() && a.abs() >= f64::MIN_POSITIVE {
                assert_eq!(o[g * 41 + 40], f64::from(sign), "{name}: lgamma_r sign of {a:e}");
            }
            for (j, (want, bound)) in wants.into_iter().enumerate() {
                let got = o[g * 41 + j];
                let ok = if want.is_nan() {
                    got.is_nan()
                } else if want.is_infinite() || want == 0.0 {
                    got == want && got.is_sign_negative() == want.is_sign_negative()
                } else {
                    // Subnormal results may be flushed (Vulkan allows it), and subnormal
                    // arguments taken as zeros.
                    let flushed_arg = a.abs() < f64::MIN_POSITIVE;
                    (want.abs() < f64::MIN_POSITIVE && (got == 0.0 || got.abs() < f64::MIN_POSITIVE)) || ulps(got, want) <= bound || flushed_arg
                };
                assert!(ok, "{name}: result {j} of ({a:e}, {b:e}): {got:e}, want {want:e} ({:.1} units)", ulps(got, want));
            }
        }
    }
}

/// Arguments of `powers.cl`, `hyperbolics.cl` and `inverse_trigonometry.cl`: every pair of
/// edge values (zeros, ones, subnormals, the largest floats, infinities, NaN, and where the
/// functions change formula or overflow), then random pairs over the ranges each formula
/// serves; the integers mix small ones of both parities with ones past 2^24.
fn accuracy_arguments(seed: u64) -> (Vec<f32>, Vec<f32>, Vec<i32>) {
    let edges = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        2.0,
        -2.0,
        0.5,
        -0.5,
        1e-30,
        -1e-30,
        1e30,
        -1e30,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        3.0,
        -3.0,
        9.0,
        -10.0,
        88.72,
        89.4,
        -100.0,
        1e-5,
        -1e-5,
        0.999,
        -0.999,
        1e-40,
        f32::MAX,
        0.346,
        2.4142137,
    ];
    let ints = [-3, -2, -1, 0, 1, 2, 3, 4, 5, 7, 10, -7, 16_777_217, -33_554_433, 4097, -64];
    let (mut x, mut y, mut k) = (Vec::new(), Vec::new(), Vec::new());
    for a in edges {
        for b in edges {
            x.push(a);
            y.push(b);
            k.push(ints[x.len() % ints.len()]);
        }
    }
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    while x.len() < 4096 {
        let (a, b): (f32, f32) = match x.len() % 7 {
            0 => (rng.random_range(-10.0..10.0), rng.random_range(-1.0..1.0)),
            1 => (rng.random_range(-100.0..100.0), rng.random_range(-20.0..20.0)),
            2 => (2f32.powf(rng.random_range(-140.0..127.0)) * if rng.random() { 1.0 } else { -1.0 }, rng.random_range(-1.0..1.0)),
            3 => (rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)),
            4 => (rng.random_range(-0.01..0.01), rng.random_range(-1e-3..1e-3)),
            5 => (rng.random_range(0.0..30.0), rng.random_range(-20i32..=20) as f32),
            _ => (1.0 + rng.random_range(-1e-6..1e-6), rng.random_range(-3e8..3e8)),
        };
        x.push(a);
        y.push(b);
        k.push(if rng.random_range(0..8) == 0 { rng.random() } else { rng.random_range(-12..=12) });
    }
    (x, y, k)
}

/// Launches `entry` of a kernel of `accuracy_arguments`' shape: `per` float results and two
/// half results per work-item (halves of `x` and `y`, clamped to the half range).
fn two_argument_results(ctx: &Context, spirv: &[u32], entry: &str, (x, y, k): &(Vec<f32>, Vec<f32>, Vec<i32>), per: usize) -> (Vec<f32>, Vec<half::f16>) {
    let n = x.len();
    let kernel = ctx.load_kernel(spirv, entry).unwrap_or_else(|e| panic!("{}: {e}", ctx.caps().name));
    let halves = |v: &[f32]| -> Vec<half::f16> { v.iter().map(|a| half::f16::from_f32(a.clamp(-65504.0, 65504.0))).collect() };
    let (bx, by, bk) = (ctx.buffer_from_slice(x, "x").unwrap(), ctx.buffer_from_slice(y, "y").unwrap(), ctx.buffer_from_slice(k, "k").unwrap());
    let (bhx, bhy) = (ctx.buffer_from_slice(&halves(x), "hx").unwrap(), ctx.buffer_from_slice(&halves(y), "hy").unwrap());
    let mut bo = ctx.zeroed_buffer::<f32>(per * n, "o").unwrap();
    let mut bho = ctx.zeroed_buffer::<half::f16>(2 * n, "ho").unwrap();
    let args = [KernelArg::Buffer(&bx), KernelArg::Buffer(&by), KernelArg::Buffer(&bk), KernelArg::Buffer(&bo), KernelArg::Buffer(&bhx), KernelArg::Buffer(&bhy), KernelArg::Buffer(&bho)];
    ctx.launch(&kernel, &NdRange::linear(n as u32, Some(64)), &args).unwrap();
    (ctx.read_buffer(&mut bo).unwrap(), ctx.read_buffer(&mut bho).unwrap())
}

/// Asserts that `got` is within `bound` units of one of `wants` (the value for the arguments
/// as given and for them flushed to zero, which Vulkan allows for subnormals): NaN for NaN,
/// exactly the infinity or the signed zero C99 gives, subnormal results also flushed to zero.
fn assert_within(got: f32, wants: [f64; 2], bound: f64, what: &dyn Fn() -> String) {
    let meets = |want: f64| {
        let want32 = want as f32;
        if want.is_nan() {
            got.is_nan()
        } else if want32.is_infinite() || want == 0.0 {
            got == want32 && got.is_sign_negative() == want32.is_sign_negative()
        } else {
            (want.abs() < f64::from(f32::MIN_POSITIVE) && (got == 0.0 || got.is_subnormal())) || f32_ulps(got, want) <= bound
        }
    };
    assert!(wants.into_iter().any(meets), "{}: {got:e}, want {:e} ({:.1} units)", what(), wants[0], f32_ulps(got, wants[0]));
}

/// `v` with a subnormal flushed to a zero of its sign.
fn flushed(v: f32) -> f64 {
    f64::from(if v.is_subnormal() { 0.0f32.copysign(v) } else { v })
}

/// Asserts that half `got` is the half nearest to `want` or next to it.
fn assert_half_near(got: half::f16, want: f64, what: &dyn Fn() -> String) {
    let nearest = half::f16::from_f64(want);
    if want.is_nan() || nearest.is_infinite() {
        assert!(got.is_nan() == want.is_nan() && (want.is_nan() || got == nearest), "{}: {got}, want {want}", what());
        return;
    }
    let subnormal = |h: half::f16| h.to_bits() & 0x7c00 == 0;
    let diff = (i32::from(got.to_bits() as i16) - i32::from(nearest.to_bits() as i16)).abs();
    assert!(diff <= 1 || (subnormal(nearest) && (got.to_f64() - want).abs() < 2e-7), "{}: {got}, want {want}", what());
}

/// `powers.cl`: pow, powr, pown, rootn, cbrt and hypot to OpenCL's accuracy against glibc's
/// doubles, and C99's values at every edge pair: `GLSL.std.450` `Pow` leaves negative bases and
/// zero to the driver (`pow(-2, 3)` and `pow(0, -1)` came out wrong) and loses 70 units where
/// `y log2 x` is large.
#[test]
fn powers_to_opencl_accuracy() {
    let Some((spirv, contexts)) = kernels_and_devices("powers") else { return };
    let args = accuracy_arguments(41);
    let (x, y, k) = &args;
    let rootn = |a: f64, n: i32| -> f64 {
        if n == 0 || (a < 0.0 && n % 2 == 0) {
            return f64::NAN;
        }
        let m = if a == 0.0 {
            if n < 0 {
                f64::INFINITY
            } else {
                0.0
            }
        } else {
            a.abs().powf(1.0 / f64::from(n))
        };
        if n % 2 != 0 {
            m.copysign(a)
        } else {
            m
        }
    };
    let powr = |a: f64, b: f64| -> f64 {
        let bad = a < 0.0 || a.is_nan() || b.is_nan() || (a == 0.0 || a == f64::INFINITY) && b == 0.0 || a == 1.0 && b.is_infinite();
        if bad {
            f64::NAN
        } else {
            a.abs().powf(b)
        }
    };
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let (o, ho) = two_argument_results(ctx, &spirv, "powers", &args, 7);
        for g in 0..x.len() {
            let n = k[g];
            let wants = |a: f64, b: f64| [(a.powf(b), 16.0), (powr(a, b), 16.0), (a.powf(f64::from(n)), 16.0), (rootn(a, n), 16.0), (a.cbrt(), 2.0), (a.hypot(b), 4.0), (a.powf(b), 16.0)];
            let (a, b) = (f64::from(x[g]), f64::from(y[g]));
            let (given, flush) = (wants(a, b), wants(flushed(x[g]), flushed(y[g])));
            for j in 0..7 {
                assert_within(o[g * 7 + j], [given[j].0, flush[j].0], given[j].1, &|| format!("{name}: result {j} of ({a:e}, {b:e}, {n})"));
            }
            let (ha, hb) = (f64::from(half::f16::from_f32(x[g].clamp(-65504.0, 65504.0))), f64::from(half::f16::from_f32(y[g].clamp(-65504.0, 65504.0))));
            assert_half_near(ho[g * 2], ha.powf(hb), &|| format!("{name}: half pow({ha}, {hb})"));
            assert_half_near(ho[g * 2 + 1], ha.powf(f64::from(n)), &|| format!("{name}: half pown({ha}, {n})"));
        }
    }
}

/// `hyperbolics.cl`: expm1, log1p, sinh, cosh, tanh, asinh, acosh and atanh to OpenCL's
/// accuracy against glibc's doubles. The drivers' `GLSL.std.450` forms were textbook
/// formulas (lavapipe's `tanh(1e-30)` was 3e-8, `sinh` overflowed from 88.7), and `expm1` and
/// `log1p` lost every digit near zero.
#[test]
fn hyperbolics_to_opencl_accuracy() {
    let Some((spirv, contexts)) = kernels_and_devices("hyperbolics") else { return };
    let args = accuracy_arguments(43);
    let (x, y, _) = &args;
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let (o, ho) = two_argument_results(ctx, &spirv, "hyperbolics", &args, 8);
        for g in 0..x.len() {
            let wants = |a: f64, b: f64| [(a.exp_m1(), 3.0), (a.ln_1p(), 2.0), (a.sinh(), 4.0), (a.cosh(), 4.0), (a.tanh(), 5.0), (a.asinh(), 4.0), (a.acosh(), 4.0), (b.atanh(), 5.0)];
            let (a, b) = (f64::from(x[g]), f64::from(y[g]));
            let (given, flush) = (wants(a, b), wants(flushed(x[g]), flushed(y[g])));
            for j in 0..8 {
                assert_within(o[g * 8 + j], [given[j].0, flush[j].0], given[j].1, &|| format!("{name}: result {j} of ({a:e}, {b:e})"));
            }
            let ha = f64::from(half::f16::from_f32(x[g].clamp(-65504.0, 65504.0)));
            assert_half_near(ho[g * 2], ha.tanh(), &|| format!("{name}: half tanh({ha})"));
            assert_half_near(ho[g * 2 + 1], ha.ln_1p(), &|| format!("{name}: half log1p({ha})"));
        }
    }
}

/// `inverse_trigonometry.cl`: asin, acos, atan, atan2 and their pi forms to OpenCL's accuracy
/// against glibc's doubles, with C99's values on the axes and at the infinities (lavapipe's
/// `Asin` was 3,800 units off, its `Atan2(0, 0)` 3pi/4).
#[test]
fn inverse_trigonometry_to_opencl_accuracy() {
    let Some((spirv, contexts)) = kernels_and_devices("inverse_trigonometry") else { return };
    let args = accuracy_arguments(47);
    let (x, y, _) = &args;
    let pi = std::f64::consts::PI;
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let (o, ho) = two_argument_results(ctx, &spirv, "inverse_trigonometry", &args, 8);
        for g in 0..x.len() {
            let wants =
                |a: f64, b: f64| [(b.asin(), 4.0), (b.acos(), 4.0), (a.atan(), 5.0), (a.atan2(b), 6.0), (b.asin() / pi, 5.0), (b.acos() / pi, 5.0), (a.atan() / pi, 5.0), (a.atan2(b) / pi, 6.0)];
            let (a, b) = (f64::from(x[g]), f64::from(y[g]));
            let (given, flush) = (wants(a, b), wants(flushed(x[g]), flushed(y[g])));
            for j in 0..8 {
                assert_within(o[g * 8 + j], [given[j].0, flush[j].0], given[j].1, &|| format!("{name}: result {j} of ({a:e}, {b:e})"));
            }
            let (ha, hb) = (f64::from(half::f16::from_f32(x[g].clamp(-65504.0, 65504.0))), f64::from(half::f16::from_f32(y[g].clamp(-65504.0, 65504.0))));
            assert_half_near(ho[g * 2], ha.atan2(hb), &|| format!("{name}: half atan2({ha}, {hb})"));
            assert_half_near(ho[g * 2 + 1], hb.asin(), &|| format!("{name}: half asin({hb})"));
        }
    }
}

/// `ping_pong.cl`: local arrays of halves chosen at run time as source and destination (their
/// pointers selected, compared by the vectorizer's overlap check at -O2, merged by a phi at
/// -O0; the larger pair held packed on SwiftShader), and private arrays chosen by the work-item,
/// against results computed here. Exact: sums of small integers in halves.
#[test]
fn buffers_chosen_at_run_time() {
    let contexts = common::contexts();
    let groups = 3usize;
    let a: Vec<half::f16> = (0..groups * 6144).map(|i| half::f16::from_f32((i * 7 % 9) as f32 - 4.0)).collect();
    let ints: Vec<i32> = (0..256).map(|i| i * 37 % 101 - 50).collect();
    for flags in [&[][..], &["-O0"]] {
        let Some(spirv) = common::opencl_with("ping_pong", flags) else { return };
        for ctx in &contexts {
            let name = &format!("{} {flags:?}", ctx.caps().name);
            let ba = ctx.buffer_from_slice(&a.iter().map(|h| h.to_bits()).collect::<Vec<u16>>(), "a").unwrap();
            for (kernel, t) in [("ping_pong", 4096usize), ("ping_pong_packed", 6144)] {
                let k = ctx.load_kernel(&spirv, kernel).unwrap_or_else(|e| panic!("{name}: {e}"));
                for steps in [0u32, 1, 4, 5] {
                    let mut bo = ctx.zeroed_buffer::<f32>(groups * t, "out").unwrap();
                    ctx.launch(&k, &NdRange::linear((groups * 256) as u32, Some(256)), &[KernelArg::Buffer(&ba), KernelArg::Buffer(&bo), KernelArg::Bytes(&steps.to_le_bytes())])
                        .unwrap_or_else(|e| panic!("{name}: {e}"));
                    let got: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
                    for g in 0..groups {
                        let mut buf: Vec<half::f16> = a[g * t..(g + 1) * t].to_vec();
                        for _ in 0..steps {
                            buf = (0..t).map(|i| buf[(i + 1) % t] + buf[i]).collect();
                        }
                        for i in 0..t {
                            assert_eq!(got[g * t + i], buf[i].to_f32(), "{name}: {kernel}, {steps} steps, group {g}, element {i}");
                        }
                    }
                }
            }
            let k = ctx.load_kernel(&spirv, "private_choice").unwrap_or_else(|e| panic!("{name}: {e}"));
            let bi = ctx.buffer_from_slice(&ints, "a").unwrap();
            let mut bo = ctx.zeroed_buffer::<i32>(ints.len(), "out").unwrap();
            ctx.launch(&k, &NdRange::linear(ints.len() as u32, Some(64)), &[KernelArg::Buffer(&bi), KernelArg::Buffer(&bo)]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<i32> = ctx.read_buffer(&mut bo).unwrap();
            for (i, (g, x)) in got.iter().zip(&ints).enumerate() {
                let want: i32 = (0..8).map(|k| if i & 1 == 1 { x + k } else { x * k } * (k + 1)).sum();
                assert_eq!(*g, want, "{name}: private_choice[{i}]");
            }
        }
    }
}

/// A program's kernels load one at a time: one that every device runs loads and runs beside a
/// sibling that reads a depth image, which is refused by name when it is loaded itself.
#[test]
fn kernels_load_apart_from_their_siblings() {
    let Some((spirv, contexts)) = kernels_and_devices("sibling_kernels") else { return };
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let k = ctx.load_kernel(&spirv, "scale").unwrap_or_else(|e| panic!("{name}: {e}"));
        let x: Vec<f32> = (0..64).map(|i| i as f32).collect();
        let mut bx = ctx.buffer_from_slice(&x, "x").unwrap();
        ctx.launch(&k, &NdRange::linear(64, None), &[KernelArg::Buffer(&bx), KernelArg::Bytes(&f32_bytes(2.5))]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Vec<f32> = ctx.read_buffer(&mut bx).unwrap();
        assert_eq!(got, x.iter().map(|v| v * 2.5).collect::<Vec<f32>>(), "{name}");
        let e = ctx.load_kernel(&spirv, "depth").err().unwrap_or_else(|| panic!("{name}: the depth-image kernel loaded")).to_string();
        assert!(e.contains("depth image") && e.contains("kernel `depth`"), "{name}: {e}");
        let e = ctx.load_kernel(&spirv, "absent").err().unwrap_or_else(|| panic!("{name}: a kernel that is not there loaded")).to_string();
        assert!(e.contains("no kernel entry point named `absent`"), "{name}: {e}");
    }
}

/// `irreducible.cl`: loops entered at more than one block (gotos into loops), which
/// `reduce-irreducible-loops` gives single headers: two loops entering each other, and a
/// scanner whose state loop is entered in the middle, carrying values into both entries and
/// holding a second two-entry loop, against the same state machines in Rust.
#[test]
fn loops_with_several_entries_run_as_written() {
    let Some((spirv, contexts)) = kernels_and_devices("irreducible") else { return };
    let (_, report) = matbridge_translator::translate(&spirv, &matbridge_translator::profile::DeviceCaps::lavapipe()).unwrap();
    assert!(report.passes.iter().any(|p| p.name == "reduce-irreducible-loops" && p.changed), "the kernels' loops have single entries already");
    let limit = 40u32;
    let collatz = |g: u32| {
        let (mut x, mut steps, mut odd) = (g + 1, 0u32, (g + 1).is_multiple_of(3));
        loop {
            if !odd {
                if x == 1 {
                    return steps;
                }
                if x & 1 == 1 {
                    odd = true;
                    continue;
                }
                x >>= 1;
                steps += 1;
            } else {
                if x == 1 || steps > limit {
                    return steps;
                }
                x = 3 * x + 1;
                steps += 1;
                odd = false;
            }
        }
    };
    let (rows, width) = (64usize, 24usize);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(41);
    let alphabet = b" ab#c d# 3";
    let text: Vec<u8> = (0..rows * width).map(|_| alphabet[rng.random_range(0..alphabet.len())]).collect();
    let scan = |row: &[u8]| {
        #[derive(PartialEq)]
        enum State {
            Word,
            Digits,
            Space,
        }
        let (mut i, mut count, mut sum) = (0usize, 0u32, 0u32);
        let mut state = if row[0] == b' ' { State::Space } else { State::Word };
        loop {
            match state {
                State::Word => {
                    sum += u32::from(row[i]);
                    i += 1;
                    if i >= row.len() {
                        break;
                    }
                    if row[i] == b' ' {
                        count += 1;
                        state = State::Space;
                    } else if row[i] == b'#' {
                        state = State::Digits;
                    }
                }
                State::Digits => {
                    sum += 3 * u32::from(row[i]);
                    i += 1;
                    if i >= row.len() {
                        break;
                    }
                    if row[i] & 1 == 0 {
                        state = State::Word;
                    }
                }
                State::Space => {
                    i += 1;
                    if i >= row.len() {
                        break;
                    }
                    if row[i] != b' ' {
                        state = State::Word;
                    }
                }
            }
        }
        (count, sum)
    };
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let k = ctx.load_kernel(&spirv, "collatz_steps").unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut out = ctx.buffer_from_slice(&vec![u32::MAX; 256], "out").unwrap();
        ctx.launch(&k, &NdRange::linear(256, None), &[KernelArg::Buffer(&out), KernelArg::Bytes(&limit.to_le_bytes())]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Vec<u32> = ctx.read_buffer(&mut out).unwrap();
        assert_eq!(got, (0..256).map(collatz).collect::<Vec<u32>>(), "{name}: collatz_steps");
        let k = ctx.load_kernel(&spirv, "scan_words").unwrap_or_else(|e| panic!("{name}: {e}"));
        let bt = ctx.buffer_from_slice(&text, "text").unwrap();
        let mut words = ctx.buffer_from_slice(&vec![u32::MAX; rows], "words").unwrap();
        let mut sums = ctx.buffer_from_slice(&vec![u32::MAX; rows], "sums").unwrap();
        let args = [KernelArg::Buffer(&bt), KernelArg::Bytes(&(width as i32).to_le_bytes()), KernelArg::Buffer(&words), KernelArg::Buffer(&sums)];
        ctx.launch(&k, &NdRange::linear(rows as u32, None), &args).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (got_words, got_sums): (Vec<u32>, Vec<u32>) = (ctx.read_buffer(&mut words).unwrap(), ctx.read_buffer(&mut sums).unwrap());
        let want: Vec<(u32, u32)> = text.chunks(width).map(scan).collect();
        assert_eq!(got_words.into_iter().zip(got_sums).collect::<Vec<_>>(), want, "{name}: scan_words");
    }
}

/// `long_atomics.cl`: a kernel with 32-bit atomics loads alone beside a sibling with 64-bit
/// ones, on devices without 64-bit integers too (the sibling's `Int64Atomics` goes with it);
/// the sibling runs where the device has them and is refused by name where it has not.
#[test]
fn kernels_load_apart_from_siblings_with_long_atomics() {
    let Some((spirv, contexts)) = kernels_and_devices("long_atomics") else { return };
    let x: Vec<u32> = (0..256).map(|i| i * 3 + 1).collect();
    let sum: u64 = x.iter().map(|&v| u64::from(v)).sum();
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let bx = ctx.buffer_from_slice(&x, "x").unwrap();
        let k = ctx.load_kernel(&spirv, "sum_int").unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut total = ctx.buffer_from_slice(&[0u32], "total").unwrap();
        ctx.launch(&k, &NdRange::linear(256, None), &[KernelArg::Buffer(&total), KernelArg::Buffer(&bx)]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(ctx.read_buffer::<u32>(&mut total).unwrap(), vec![sum as u32], "{name}: sum_int");
        match ctx.load_kernel(&spirv, "sum_long") {
            Ok(k) => {
                let mut total = ctx.buffer_from_slice(&[0u64], "total").unwrap();
                ctx.launch(&k, &NdRange::linear(256, None), &[KernelArg::Buffer(&total), KernelArg::Buffer(&bx)]).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(ctx.read_buffer::<u64>(&mut total).unwrap(), vec![sum << 32], "{name}: sum_long");
            }
            Err(e) => assert!(!ctx.caps().shader_int64 && e.to_string().contains("64-bit"), "{name}: {e}"),
        }
    }
}

/// `program_globals.cl`: a program-scope `__global` variable is refused naming the variable
/// and where it is declared (no launch's buffer could hold what must outlive every launch); its
/// sibling, which reads only a `__constant` table, loads and runs without it.
#[test]
fn program_scope_globals_are_refused_by_name_beside_siblings_that_run() {
    let Some((spirv, contexts)) = kernels_and_devices("program_globals") else { return };
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let k = ctx.load_kernel(&spirv, "weigh").unwrap_or_else(|e| panic!("{name}: {e}"));
        let x: Vec<f32> = (0..64).map(|i| i as f32 - 20.0).collect();
        let mut bx = ctx.buffer_from_slice(&x, "x").unwrap();
        ctx.launch(&k, &NdRange::linear(64, None), &[KernelArg::Buffer(&bx)]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Vec<f32> = ctx.read_buffer(&mut bx).unwrap();
        assert_eq!(got, x.iter().enumerate().map(|(i, v)| v * [0.5, 1.0, 2.0, 4.0][i % 4]).collect::<Vec<f32>>(), "{name}");
        let e = ctx.load_kernel(&spirv, "count_launches").err().unwrap_or_else(|| panic!("{name}: the kernel with a program-scope variable loaded")).to_string();
        assert!(e.contains("program-scope __global variables (`launches`)") && e.contains("OpVariable at word offset"), "{name}: {e}");
    }
}

/// `float_semantics.cl`: what OpenCL C keeps and Vulkan lets drivers drop. A product and a sum
/// written apart are each rounded (llvm-spirv marks the kernel `ContractionOff`, which becomes
/// `NoContraction`: unfused, `a b + c` with `c = -(a b)` is 0, fused it is the product's
/// rounding error); `x + 0` of -0 and `0 - x` of +0 are +0, `x - x` and `x * 0` of infinities
/// are NaN, and
/// `isnan`/`isinf` see NaNs and infinities (`SignedZeroInfNanPreserve`, where the device
/// honours it). Floats and doubles, bit for bit against Rust's arithmetic.
#[test]
fn kernels_round_apart_and_keep_signed_zeros_infinities_and_nans() {
    let Some((spirv, contexts)) = kernels_and_devices("float_semantics") else { return };
    let mut rng = rand::rngs::SmallRng::seed_from_u64(29);
    let edges = [0.0f64, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1.0, -3.5, 1e300];
    let n = 256;
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for g in 0..n {
        let (x, y) = if g < edges.len() * edges.len() { (edges[g / edges.len()], edges[g % edges.len()]) } else { (rng.random_range(-4.0..4.0), rng.random_range(-4.0..4.0)) };
        a.push(x);
        b.push(y);
        // The negated product: a fused multiply-add leaves its rounding error.
        c.push(if g % 3 == 0 { -(x * y) } else { rng.random_range(-1.0..1.0) });
    }
    // Without the device's SignedZeroInfNanPreserve only the rounding is checked.
    fn check<T: Into<f64> + Copy>(name: &str, width: u32, [a, b, c]: [&[T]; 3], o: &[T], keeps: bool, round: impl Fn(f64) -> f64) {
        let classify = |s: f64| {
            if s.is_nan() {
                1.0
            } else if s.is_infinite() {
                2.0
            } else {
                3.0
            }
        };
        for g in 0..a.len() {
            let (x, y, z) = (a[g].into(), b[g].into(), c[g].into());
            let s = round(round(x * y) + z);
            let wants = [s, round(x + 0.0), round(x - x), round(x * 0.0), classify(s), round(0.0 - x)];
            for (k, want) in wants.into_iter().enumerate().take(if keeps { 6 } else { 1 }) {
                if !keeps && !want.is_finite() {
                    continue;
                }
                let got: f64 = o[g * 6 + k].into();
                let sign_ok = !keeps || want.is_nan() || got.is_sign_negative() == want.is_sign_negative();
                let ok = (want.is_nan() && got.is_nan()) || (got == want && sign_ok);
                assert!(ok, "{name}: {width}-bit result {k} of a = {x:e}, b = {y:e}, c = {z:e}: got {got:e}, want {want:e}");
            }
        }
    }
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let keeps = ctx.caps().float_controls.signed_zero_inf_nan_preserve;
        let af: Vec<f32> = a.iter().map(|v| *v as f32).collect();
        let bf: Vec<f32> = b.iter().map(|v| *v as f32).collect();
        let cf: Vec<f32> = (0..n).map(|g| if g % 3 == 0 { -(af[g] * bf[g]) } else { c[g] as f32 }).collect();
        let k = ctx.load_kernel(&spirv, "float_semantics").unwrap_or_else(|e| panic!("{name}: {e}"));
        let bufs = [ctx.buffer_from_slice(&af, "a").unwrap(), ctx.buffer_from_slice(&bf, "b").unwrap(), ctx.buffer_from_slice(&cf, "c").unwrap()];
        let mut bo = ctx.zeroed_buffer::<f32>(6 * n, "o").unwrap();
        ctx.launch(&k, &NdRange::linear(n as u32, Some(64)), &[KernelArg::Buffer(&bufs[0]), KernelArg::Buffer(&bufs[1]), KernelArg::Buffer(&bufs[2]), KernelArg::Buffer(&bo)])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let o: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
        check(name, 32, [&af, &bf, &cf], &o, keeps.f32, |v| v as f32 as f64);
        if !ctx.caps().shader_float64 {
            continue;
        }
        let k = ctx.load_kernel(&spirv, "double_semantics").unwrap_or_else(|e| panic!("{name}: {e}"));
        let bufs = [ctx.buffer_from_slice(&a, "a").unwrap(), ctx.buffer_from_slice(&b, "b").unwrap(), ctx.buffer_from_slice(&c, "c").unwrap()];
        let mut bo = ctx.zeroed_buffer::<f64>(6 * n, "o").unwrap();
        ctx.launch(&k, &NdRange::linear(n as u32, Some(64)), &[KernelArg::Buffer(&bufs[0]), KernelArg::Buffer(&bufs[1]), KernelArg::Buffer(&bufs[2]), KernelArg::Buffer(&bo)])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let o: Vec<f64> = ctx.read_buffer(&mut bo).unwrap();
        check(name, 64, [&a, &b, &c], &o, keeps.f64, |v| v);
    }
}

/// How the elements of an operand are drawn: random integer bits, or small multiples of 1/4
/// whose products and sums every path computes exactly (tf32 with random low mantissa bits,
/// which DPAS ignores), so that GPU and reference agree bit for bit.
#[derive(Clone, Copy, Debug)]
enum Fill {
    Bits,
    F16,
    Bf16,
    Tf32,
    F32,
}

impl Fill {
    fn draw(self, rng: &mut rand::rngs::SmallRng, bits: u32) -> u64 {
        let quarter = |rng: &mut rand::rngs::SmallRng, range: i32| rng.random_range(-range..=range) as f32 / 4.0;
        match self {
            Fill::Bits => rng.random::<u64>() & ((1u64 << bits) - 1),
            Fill::F16 => half::f16::from_f32(quarter(rng, 8)).to_bits() as u64,
            Fill::Bf16 => half::bf16::from_f32(quarter(rng, 8)).to_bits() as u64,
            Fill::Tf32 => (quarter(rng, 8).to_bits() | rng.random_range(0..0x2000u32)) as u64,
            Fill::F32 => quarter(rng, 64).to_bits() as u64,
        }
    }
}

/// One operand of a DPAS kernel: container type, components per invocation, element width, fill.
#[derive(Clone, Copy, Debug)]
struct DpasPart(matbridge_translator::reference::dpas::Container, usize, u32, Fill);

struct DpasCase {
    kernel: &'static str,
    subgroup: usize,
    /// Intel's sub-group-32 form (N = 16, half the data per invocation).
    intel32: bool,
    k: u32,
    operands: u32,
    a: DpasPart,
    b: DpasPart,
    c: DpasPart,
    result: DpasPart,
}

fn dpas_cases() -> Vec<DpasCase> {
    use matbridge_translator::reference::dpas::Container::{Float, Int};
    use Fill::*;
    let case = |kernel, subgroup, intel32, k, operands, a, b, c, result| DpasCase { kernel, subgroup, intel32, k, operands, a, b, c, result };
    vec![
        case("i8_i8_k32_sg8", 8, false, 32, 0x33, DpasPart(Int(32), 8, 8, Bits), DpasPart(Int(32), 8, 8, Bits), DpasPart(Int(32), 8, 32, Bits), DpasPart(Int(32), 8, 32, Bits)),
        case("u8_i8_k32_sg8", 8, false, 32, 0x32, DpasPart(Int(32), 4, 8, Bits), DpasPart(Int(32), 8, 8, Bits), DpasPart(Int(32), 4, 32, Bits), DpasPart(Int(32), 4, 32, Bits)),
        case("f16_k16_sg8", 8, false, 16, 0xc00, DpasPart(Int(32), 8, 16, F16), DpasPart(Int(32), 8, 16, F16), DpasPart(Float(32), 8, 32, F32), DpasPart(Float(32), 8, 32, F32)),
        case("bf16_k16_sg8", 8, false, 16, 0x3000, DpasPart(Int(32), 2, 16, Bf16), DpasPart(Int(32), 8, 16, Bf16), DpasPart(Float(32), 2, 32, F32), DpasPart(Float(32), 2, 32, F32)),
        case("i4_k64_sg8", 8, false, 64, 0xc3, DpasPart(Int(32), 1, 4, Bits), DpasPart(Int(32), 8, 4, Bits), DpasPart(Int(32), 1, 32, Bits), DpasPart(Int(32), 1, 32, Bits)),
        case("f16_k16_sg16", 16, false, 16, 0xc00, DpasPart(Int(16), 8, 16, F16), DpasPart(Int(32), 8, 16, F16), DpasPart(Float(32), 8, 32, F32), DpasPart(Float(32), 8, 32, F32)),
        case("bf16_acc_k16_sg16", 16, false, 16, 0x300c, DpasPart(Int(16), 4, 16, Bf16), DpasPart(Int(32), 8, 16, Bf16), DpasPart(Int(16), 4, 16, Bf16), DpasPart(Int(16), 4, 16, Bf16)),
        case("i8_u8_k32_sg16", 16, false, 32, 0x31, DpasPart(Int(16), 2, 8, Bits), DpasPart(Int(32), 8, 8, Bits), DpasPart(Int(32), 2, 32, Bits), DpasPart(Int(32), 2, 32, Bits)),
        case("tf32_k8_sg16", 16, false, 8, 0x300, DpasPart(Float(32), 2, 32, Tf32), DpasPart(Float(32), 8, 32, Tf32), DpasPart(Float(32), 4, 32, F32), DpasPart(Float(32), 4, 32, F32)),
        case("f16_acc_k16_sg16", 16, false, 16, 0xc00, DpasPart(Int(16), 8, 16, F16), DpasPart(Int(32), 8, 16, F16), DpasPart(Float(16), 8, 16, F16), DpasPart(Float(16), 8, 16, F16)),
        case("spirv_f16_sg16", 16, false, 16, 0xc00, DpasPart(Int(16), 4, 16, F16), DpasPart(Int(32), 8, 16, F16), DpasPart(Float(32), 4, 32, F32), DpasPart(Float(32), 4, 32, F32)),
        case("intel_f16_sg32", 32, true, 16, 0xc00, DpasPart(Int(16), 4, 16, F16), DpasPart(Int(32), 4, 16, F16), DpasPart(Float(32), 4, 32, F32), DpasPart(Float(32), 4, 32, F32)),
        case("intel_i8_sg32", 32, true, 32, 0x33, DpasPart(Int(16), 4, 8, Bits), DpasPart(Int(32), 4, 8, Bits), DpasPart(Int(32), 4, 32, Bits), DpasPart(Int(32), 4, 32, Bits)),
        case("intel_bf16_sg32", 32, true, 16, 0x3000, DpasPart(Int(16), 4, 16, Bf16), DpasPart(Int(32), 4, 16, Bf16), DpasPart(Float(32), 4, 32, F32), DpasPart(Float(32), 4, 32, F32)),
        case("intel_f16_acc_sg32", 32, true, 16, 0xc00, DpasPart(Int(16), 4, 16, F16), DpasPart(Int(32), 4, 16, F16), DpasPart(Float(16), 4, 16, F16), DpasPart(Float(16), 4, 16, F16)),
        case("intel_u8_sg32", 32, true, 32, 0x30, DpasPart(Int(16), 4, 8, Bits), DpasPart(Int(32), 4, 8, Bits), DpasPart(Int(32), 4, 32, Bits), DpasPart(Int(32), 4, 32, Bits)),
        case("spec_f16_m1_sg32", 32, false, 16, 0xc00, DpasPart(Int(16), 1, 16, F16), DpasPart(Int(32), 8, 16, F16), DpasPart(Float(32), 1, 32, F32), DpasPart(Float(32), 1, 32, F32)),
    ]
}

/// Per invocation, `comps` containers of `p` filled element by element.
fn dpas_operand(rng: &mut rand::rngs::SmallRng, p: DpasPart, invocations: usize) -> Vec<Vec<u64>> {
    let (bits, epc) = (p.0.bits(), p.0.bits() / p.2);
    (0..invocations)
        .map(|_| (0..p.1).map(|_| (0..epc).fold(0u64, |w, e| w | p.3.draw(rng, p.2) << (e * p.2))).collect())
        .map(|v: Vec<u64>| v.into_iter().map(|x| x & (u64::MAX >> (64 - bits))).collect())
        .collect()
}

fn dpas_bytes(data: &[Vec<u64>], bits: u32) -> Vec<u8> {
    data.iter().flatten().flat_map(|x| x.to_le_bytes()[..(bits / 8) as usize].to_vec()).collect()
}

#[test]
fn intel_dpas_matches_the_reference_at_every_subgroup_size() {
    use matbridge_translator::reference::dpas::{from_subgroup32, to_subgroup32, Dpas, Operand};
    let Some((spirv, contexts)) = kernels_and_devices("dpas") else { return };
    let groups = 2;
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let mut rng = rand::rngs::SmallRng::seed_from_u64(131);
        for case in dpas_cases() {
            let sg = case.subgroup;
            let kernel = ctx.load_kernel(&spirv, case.kernel).unwrap_or_else(|e| panic!("{name}: {}: {e}", case.kernel));
            let draw = |rng: &mut rand::rngs::SmallRng, p: DpasPart| dpas_operand(rng, p, sg * groups);
            let (a, b, c) = (draw(&mut rng, case.a), draw(&mut rng, case.b), draw(&mut rng, case.c));
            let buffer = |data: &[Vec<u64>], p: DpasPart, label: &str| ctx.buffer_from_slice(&dpas_bytes(data, p.0.bits()), label).unwrap();
            let (ba, bb, bc) = (buffer(&a, case.a, "a"), buffer(&b, case.b, "b"), buffer(&c, case.c, "c"));
            let out_bytes = sg * groups * case.result.1 * (case.result.0.bits() / 8) as usize;
            let mut bd = ctx.buffer_from_slice(&vec![0xa5u8; out_bytes], "d").unwrap();
            ctx.launch(&kernel, &NdRange::linear((sg * groups) as u32, Some(sg as u32)), &[KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&bc), KernelArg::Buffer(&bd)])
                .unwrap_or_else(|e| panic!("{name}: {}: {e}", case.kernel));
            let got: Vec<u8> = ctx.read_buffer(&mut bd).unwrap();
            let width = (case.result.0.bits() / 8) as usize;
            for g in 0..groups {
                let lanes = |d: &[Vec<u64>]| d[g * sg..(g + 1) * sg].to_vec();
                let (ga, gb, gc) = (lanes(&a), lanes(&b), lanes(&c));
                let op = |p: DpasPart, data: Vec<Vec<u64>>| Operand { container: p.0, data: if case.intel32 { from_subgroup32(&data, 2 * p.1) } else { data } };
                let m = if case.intel32 { 2 * case.result.1 } else { case.result.1 } as u32;
                let d = Dpas { m, k: case.k, result: case.result.0, operands: case.operands, a: op(case.a, ga), b: op(case.b, gb), c: op(case.c, gc) };
                let want = d.run().unwrap_or_else(|e| panic!("{}: {e}", case.kernel));
                let want = if case.intel32 { to_subgroup32(&want, case.result.1) } else { want };
                for (lane, comps) in want.iter().enumerate() {
                    for (r, w) in comps.iter().enumerate() {
                        let at = ((g * sg + lane) * case.result.1 + r) * width;
                        let mut bytes = [0u8; 8];
                        bytes[..width].copy_from_slice(&got[at..at + width]);
                        assert_eq!(u64::from_le_bytes(bytes), *w, "{name}: {}: group {g} invocation {lane} component {r}", case.kernel);
                    }
                }
            }
        }
    }
}

/// KHR cooperative-matrix MulAdds in a module.
fn cooperative_muladds(words: &[u32]) -> usize {
    let module = matbridge_translator::Module::from_words(words).unwrap();
    module.functions.iter().flat_map(|f| f.insts()).filter(|i| i.is(spirv::Op::CooperativeMatrixMulAddKHR)).count()
}

/// `D = A B` in f32 of row-major f16 `a` (m x k) and `b` (k x n).
fn gemm_f16_reference(a: &[half::f16], b: &[half::f16], (m, n, k): (usize, usize, usize)) -> Vec<f32> {
    let mut d = vec![0f32; m * n];
    for r in 0..m {
        for c in 0..n {
            d[r * n + c] = (0..k).map(|x| a[r * k + x].to_f32() * b[x * n + c].to_f32()).sum();
        }
    }
    d
}

/// A DPAS GEMM as Intel kernels write it (`tests/kernels/opencl/dpas_gemm.cl`: accumulators
/// carried by a K loop, sub-group 16 and Intel's sub-group-32 form) against the CPU, bit for bit
/// (multiples of 1/4, whose sums every path computes exactly), with 2 x 1 tiles per sub-group
/// (the 4 x 2 kernels take CPU drivers minutes to compile). On devices whose cooperative
/// matrices fit, the sub-group-32 form runs on them (KHR MulAdds in the pipeline's module).
#[test]
fn intel_dpas_gemm_matches_the_reference() {
    let draw = |seed: usize, len: usize| -> Vec<half::f16> { (0..len).map(|i| half::f16::from_f32(((i * 7 + seed * 13) % 17) as f32 * 0.25 - 2.0)).collect() };
    let kernels = [("dpas_gemm_small_sg16", 16), ("dpas_gemm_small_sg32", 32), ("dpas_gemm_small_k48_sg32", 32)];
    check_dpas_gemm("dpas_gemm", &kernels, (64, 32, 48), draw);
}

/// A DPAS GEMM whose operands come through 2D block reads and whose results leave through 2D
/// block writes (`tests/kernels/opencl/dpas_block_gemm.cl`), at sub-group 16 and in Intel's
/// sub-group-32 form, against the CPU bit for bit. M, N and K are no multiples of the tiles:
/// blocks reach past every edge of A, B and D, reading zero and writing nothing there. On
/// devices whose cooperative matrices fit, the DPAS run on them.
#[test]
fn intel_dpas_block_gemm_matches_the_reference() {
    let draw = |seed: usize, len: usize| -> Vec<half::f16> { (0..len).map(|i| half::f16::from_f32(((i * 5 + seed * 11) % 19) as f32 * 0.25 - 2.25)).collect() };
    check_dpas_gemm("dpas_block_gemm", &[("dpas_block_gemm_small_sg16", 16), ("dpas_block_gemm_small_sg32", 32)], (40, 24, 40), draw);
}

/// A DPAS GEMM as Intel's Triton backend writes it (`tests/kernels/opencl/triton_gemm.cl`:
/// A's 2D block read lands in one `VectorAnyINTEL` vector of 32 halves, and the DPAS
/// operands are shuffled out of it), against the CPU bit for bit, with blocks past every edge.
#[test]
fn triton_style_dpas_gemm_matches_the_reference() {
    let Some(spirv) = common::opencl("triton_gemm") else { return };
    let module = matbridge_translator::ir::Module::from_words(&spirv).unwrap();
    assert!(module.has_extension("SPV_INTEL_vector_compute"), "llvm-spirv wrote no VectorAnyINTEL vectors");
    let draw = |seed: usize, len: usize| -> Vec<half::f16> { (0..len).map(|i| half::f16::from_f32(((i * 3 + seed * 7) % 23) as f32 * 0.25 - 2.75)).collect() };
    check_dpas_gemm("triton_gemm", &[("triton_gemm", 16)], (40, 40, 72), draw);
    // Triton's larger tiles (vectors of 64 halves and 32 words) translate for every profile.
    use matbridge_translator::profile::DeviceCaps;
    let mut wide = module.clone();
    matbridge_translator::kernel::keep_entry_point(&mut wide, "triton_gemm_wide").unwrap();
    for caps in [DeviceCaps::lavapipe(), DeviceCaps::swiftshader(), DeviceCaps::h100()] {
        let (out, _) = matbridge_translator::translate(&wide.to_words(), &caps).unwrap_or_else(|e| panic!("{}: {e}", caps.name));
        matbridge_translator::tools::validate(&out, "vulkan1.3").unwrap_or_else(|e| panic!("{}: {e}", caps.name));
    }
}

/// One-component vectors as Triton's LLVM IR has them (`tests/kernels/opencl/single_component_vectors.ll`,
/// through llvm-spirv with every extension enabled) become scalars and compute what the CPU does,
/// bit for bit.
#[test]
fn single_component_vectors_match_the_cpu() {
    let Some((spirv, contexts)) = kernels_and_devices("single_component_vectors") else { return };
    let module = matbridge_translator::ir::Module::from_words(&spirv).unwrap();
    assert!(module.globals().iter().any(|g| g.is(spirv::Op::TypeVector) && g.word_opt(1) == Some(1)), "llvm-spirv wrote no one-component vector");
    let n = 96usize;
    let x: Vec<f32> = (0..n).map(|i| (i as f32 - 40.0) * 0.25).collect();
    let s = 1.5f32;
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let k = ctx.load_kernel(&spirv, "single_component_vectors").unwrap_or_else(|e| panic!("{name}: {e}"));
        let bx = ctx.buffer_from_slice(&x, "in").unwrap();
        let mut bits = ctx.buffer_from_slice(&vec![0u32; n], "bits").unwrap();
        let mut wide = ctx.buffer_from_slice(&vec![0f32; n], "wide").unwrap();
        let sb = f32_bytes(s);
        ctx.launch(&k, &NdRange::linear(n as u32, Some(32)), &[KernelArg::Buffer(&bits), KernelArg::Buffer(&wide), KernelArg::Buffer(&bx), KernelArg::Bytes(&sb)])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let (got_bits, got_wide): (Vec<u32>, Vec<f32>) = (ctx.read_buffer(&mut bits).unwrap(), ctx.read_buffer(&mut wide).unwrap());
        for g in 0..n {
            let m = x[g] * s;
            let want = ((if m > 0.0 { m } else { -0.5 }) + (x[g] + 2.0)).to_bits().wrapping_add(1);
            assert_eq!(got_bits[g], want, "{name}: bits[{g}]");
            assert_eq!(got_wide[g].to_bits(), (m + 1.0).to_bits(), "{name}: wide[{g}]");
        }
    }
}

/// Vectors of 32 components (`tests/kernels/opencl/vector_any_ops.ll`, VectorAnyINTEL) under
/// built-ins, comparisons, a lane mask, selects, dynamic extraction and conversion to halves,
/// against the CPU bit for bit (quarters, whose products and sums every path computes exactly).
#[test]
fn vector_any_operations_match_the_cpu() {
    let Some((spirv, contexts)) = kernels_and_devices("vector_any_ops") else { return };
    let n = 40usize;
    let x: Vec<f32> = (0..32 * n).map(|i| ((i * 29) % 33) as f32 * 0.25 - 4.0).collect();
    let pick = 21i32;
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let k = ctx.load_kernel(&spirv, "vector_any_ops").unwrap_or_else(|e| panic!("{name}: {e}"));
        let bx = ctx.buffer_from_slice(&x, "in").unwrap();
        let mut out = ctx.buffer_from_slice(&vec![0f32; 32 * n], "out").unwrap();
        let mut hout = ctx.buffer_from_slice(&vec![half::f16::ZERO; 32 * n], "hout").unwrap();
        let mut mask = ctx.buffer_from_slice(&vec![0u32; n], "mask").unwrap();
        let pb = pick.to_le_bytes();
        let args = [KernelArg::Buffer(&out), KernelArg::Buffer(&hout), KernelArg::Buffer(&mask), KernelArg::Buffer(&bx), KernelArg::Bytes(&pb)];
        ctx.launch(&k, &NdRange::linear(n as u32, Some(8)), &args).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (got, got_h, got_mask): (Vec<f32>, Vec<half::f16>, Vec<u32>) = (ctx.read_buffer(&mut out).unwrap(), ctx.read_buffer(&mut hout).unwrap(), ctx.read_buffer(&mut mask).unwrap());
        for g in 0..n {
            let v = &x[32 * g..32 * g + 32];
            let mut w: Vec<f32> = v.iter().map(|&v| if v > 0.0 { (v * v + v).max(0.0) } else { v }).collect();
            w[3] = w[pick as usize];
            let bits = v.iter().enumerate().fold(0u32, |m, (l, &v)| m | (u32::from(v > 0.0) << l));
            assert_eq!(got_mask[g], bits, "{name}: mask[{g}]");
            for l in 0..32 {
                assert_eq!(got[32 * g + l].to_bits(), w[l].to_bits(), "{name}: out[{g}][{l}]");
                assert_eq!(got_h[32 * g + l], half::f16::from_f32(w[l]), "{name}: hout[{g}][{l}]");
            }
        }
    }
}

/// VectorAnyINTEL vectors of 6 floats and 5 ints (`tests/kernels/opencl/odd_vectors.ll`: parts
/// of 4 and a shorter or scalar last one) built by dynamic inserts, shuffled, computed on,
/// compared and read at dynamic indices, against the CPU bit for bit.
#[test]
fn odd_vector_any_vectors_match_the_cpu() {
    let Some((spirv, contexts)) = kernels_and_devices("odd_vectors") else { return };
    let n = 48usize;
    let x: Vec<f32> = (0..6 * n).map(|i| ((i * 13) % 19) as f32 * 0.5 - 4.0).collect();
    let k: Vec<u32> = (0..n as u32).map(|g| g * 7 + 3).collect();
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let kernel = ctx.load_kernel(&spirv, "odd_vectors").unwrap_or_else(|e| panic!("{name}: {e}"));
        let (bx, bk) = (ctx.buffer_from_slice(&x, "in").unwrap(), ctx.buffer_from_slice(&k, "k").unwrap());
        let mut out = ctx.buffer_from_slice(&vec![0f32; 6 * n], "out").unwrap();
        let mut picked = ctx.buffer_from_slice(&vec![0f32; n], "picked").unwrap();
        let mut nout = ctx.buffer_from_slice(&vec![0i32; 5 * n], "nout").unwrap();
        let args = [KernelArg::Buffer(&out), KernelArg::Buffer(&picked), KernelArg::Buffer(&nout), KernelArg::Buffer(&bx), KernelArg::Buffer(&bk)];
        ctx.launch(&kernel, &NdRange::linear(n as u32, Some(16)), &args).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (got, got_picked, got_n): (Vec<f32>, Vec<f32>, Vec<i32>) = (ctx.read_buffer(&mut out).unwrap(), ctx.read_buffer(&mut picked).unwrap(), ctx.read_buffer(&mut nout).unwrap());
        for g in 0..n {
            let y: Vec<f32> = (0..6).map(|j| x[6 * g + j] * 2.0 + (5 - j) as f32).collect();
            let w: Vec<f32> = (0..6).map(|j| y[j].max(y[(j + 5) % 6])).collect();
            for j in 0..6 {
                assert_eq!(got[6 * g + j].to_bits(), w[j].to_bits(), "{name}: out[{g}][{j}]");
            }
            assert_eq!(got_picked[g].to_bits(), w[k[g] as usize % 6].to_bits(), "{name}: picked[{g}]");
            for j in 0..5 {
                let v = w[j] as i32 * 3 - 1;
                assert_eq!(got_n[5 * g + j], if v > 2 { v } else { -v }, "{name}: nout[{g}][{j}]");
            }
        }
    }
}

/// Split work-group barriers (`tests/kernels/opencl/split_barriers.cl`,
/// SPV_INTEL_split_barrier) synchronize like the barriers they become: every step reads a
/// neighbour's value published before the arrive, against the CPU bit for bit.
#[test]
fn split_barriers_synchronize_the_work_group() {
    let Some((spirv, contexts)) = kernels_and_devices("split_barriers") else { return };
    let module = matbridge_translator::ir::Module::from_words(&spirv).unwrap();
    assert!(module.has_extension("SPV_INTEL_split_barrier"), "llvm-spirv wrote no split barrier");
    let (groups, steps) = (3usize, 7i32);
    let x: Vec<f32> = (0..64 * groups).map(|i| ((i * 37) % 41) as f32 * 0.25 - 5.0).collect();
    let mut want = x.clone();
    for s in 0..steps as usize {
        let before = want.clone();
        for (g, w) in want.iter_mut().enumerate() {
            let (base, l) = (g / 64 * 64, g % 64);
            *w = before[g] * 0.5 + before[base + (l + 1 + s) % 64];
        }
    }
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let k = ctx.load_kernel(&spirv, "split_barriers").unwrap_or_else(|e| panic!("{name}: {e}"));
        let bx = ctx.buffer_from_slice(&x, "in").unwrap();
        let mut bo = ctx.buffer_from_slice(&vec![0f32; x.len()], "out").unwrap();
        let sb = steps.to_le_bytes();
        ctx.launch(&k, &NdRange::linear(x.len() as u32, Some(64)), &[KernelArg::Buffer(&bo), KernelArg::Buffer(&bx), KernelArg::Bytes(&sb)]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Vec<f32> = ctx.read_buffer(&mut bo).unwrap();
        for (g, (a, b)) in got.iter().zip(&want).enumerate() {
            assert_eq!(a.to_bits(), b.to_bits(), "{name}: out[{g}] = {a}, want {b}");
        }
    }
}

/// Runs the GEMM kernels `(name, sub-group size)` of OpenCL program `program` (arguments A, B,
/// D, M, N, K; 2 x 1 DPAS tiles, 16 x 16 of D, per sub-group; work-groups of 4 sub-groups) on
/// every test device with A and B from `draw(seed, len)`, and checks D against the CPU bit for
/// bit, the float after D untouched, and KHR MulAdds in the pipeline's module where the device's
/// cooperative matrices fit (sub-group 32, f16 with K 16).
fn check_dpas_gemm(program: &str, kernels: &[(&str, u32)], (m, n, k): (usize, usize, usize), draw: impl Fn(usize, usize) -> Vec<half::f16>) {
    let Some((spirv, contexts)) = kernels_and_devices(program) else { return };
    let (a, b) = (draw(1, m * k), draw(2, k * n));
    let want = gemm_f16_reference(&a, &b, (m, n, k));
    for ctx in &contexts {
        let name = &ctx.caps().name;
        for &(kernel, sg) in kernels {
            let loaded = ctx.load_kernel(&spirv, kernel).unwrap_or_else(|e| panic!("{name}: {kernel}: {e}"));
            // Both forms: the sub-group-16 one's work-groups fill whole 32-wide sub-groups.
            let native = ctx.caps().subgroup_size == 32 && ctx.caps().cooperative_matrix.iter().any(|s| s.a == matbridge_translator::profile::ComponentType::F16 && s.k == 16);
            if native {
                assert!(cooperative_muladds(loaded.spirv()) > 0, "{name}: {kernel} does not run on the device's cooperative matrices");
            }
            check_gemm_launch(ctx, &loaded, kernel, (m, n, k), (16, sg), (&a, &b), &want);
        }
    }
}

/// Launches GEMM kernel `loaded` (arguments A, B, D, m, n, k; each sub-group a `tile` x `tile`
/// block of D, in work-groups of four sub-groups of `sg`) and checks D against `want` bit for
/// bit, and that nothing was written past it.
fn check_gemm_launch(ctx: &Context, loaded: &matbridge_runtime::Kernel, kernel: &str, (m, n, k): (usize, usize, usize), (tile, sg): (usize, u32), (a, b): (&[half::f16], &[half::f16]), want: &[f32]) {
    let name = &ctx.caps().name;
    let (ba, bb) = (ctx.buffer_from_slice(a, "a").unwrap(), ctx.buffer_from_slice(b, "b").unwrap());
    // One float more than D: a write past it would land there.
    let mut bd = ctx.buffer_from_slice(&vec![-1f32; m * n + 1], "d").unwrap();
    let dims = [m as i32, n as i32, k as i32].map(i32::to_le_bytes);
    let groups = (m.div_ceil(tile) * n.div_ceil(tile)).div_ceil(4) as u32 * 4;
    let args = [KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&bd), KernelArg::Bytes(&dims[0]), KernelArg::Bytes(&dims[1]), KernelArg::Bytes(&dims[2])];
    ctx.launch(loaded, &NdRange::linear(groups * sg, Some(4 * sg)), &args).unwrap_or_else(|e| panic!("{name}: {kernel}: {e}"));
    let got: Vec<f32> = ctx.read_buffer(&mut bd).unwrap();
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "{name}: {kernel}: D[{}][{}] = {g}, want {w}", i / n, i % n);
    }
    assert_eq!(got[m * n], -1.0, "{name}: {kernel} wrote past D");
}

/// DPAS on the H100's cooperative matrices: every kernel of `dpas.cl`, `dpas_gemm.cl` and
/// `dpas_block_gemm.cl` (and `triton_gemm.cl`'s) whose sub-group is the H100's (32), or splits from it in work-groups of
/// whole sub-groups of 32, and whose element types it lists becomes KHR MulAdds (transposed,
/// 16 x 8 x K); the others stay plain code (`dpas.cl`'s sub-group-16 kernels run in work-groups
/// of one sub-group of 16); spirv-val passes every output.
#[test]
fn intel_dpas_uses_cooperative_matrices_where_listed() {
    use matbridge_translator::{kernel::keep_entry_point, profile::DeviceCaps, Module};
    let (Some(single), Some(gemm), Some(block), Some(triton)) = (common::opencl("dpas"), common::opencl("dpas_gemm"), common::opencl("dpas_block_gemm"), common::opencl("triton_gemm")) else { return };
    let mut cases: Vec<(&[u32], &str, bool)> = dpas_cases().iter().map(|c| (single.as_slice(), c.kernel, c.subgroup == 32)).collect();
    // The GEMMs' fixed work-groups fill whole sub-groups of 32: at sub-group 16 each physical
    // sub-group computes the matrices of the two split from it.
    cases.extend([
        (gemm.as_slice(), "dpas_gemm_sg16", true),
        (gemm.as_slice(), "dpas_gemm_sg32", true),
        (gemm.as_slice(), "dpas_gemm_small_sg16", true),
        (gemm.as_slice(), "dpas_gemm_small_k48_sg32", true),
        (block.as_slice(), "dpas_block_gemm_sg16", true),
        (block.as_slice(), "dpas_block_gemm_sg32", true),
        (block.as_slice(), "dpas_block_gemm_small_sg16", true),
        (block.as_slice(), "dpas_block_gemm_small_sg32", true),
        (triton.as_slice(), "triton_gemm", true),
        (triton.as_slice(), "triton_gemm_wide", true),
    ]);
    for (module, kernel, on_matrices) in cases {
        let mut m = Module::from_words(module).unwrap();
        keep_entry_point(&mut m, kernel).unwrap();
        let (out, report) = matbridge_translator::translate(&m.to_words(), &DeviceCaps::h100()).unwrap_or_else(|e| panic!("{kernel}: {e}"));
        matbridge_translator::tools::validate(&out, "vulkan1.3").unwrap_or_else(|e| panic!("{kernel}: {e}"));
        let staged = report.passes.iter().any(|p| p.name == "lower-dpas-to-cooperative-matrix" && p.changed);
        let plain = report.passes.iter().any(|p| p.name == "lower-subgroup-matrix-multiply-accumulate" && p.changed);
        assert_eq!((staged, plain), (on_matrices, !on_matrices), "{kernel}");
        let muladds = cooperative_muladds(&out);
        assert_eq!(muladds > 0, on_matrices, "{kernel}");
    }
}

/// One sub-group of a block_io.cl kernel: the region buffer, the region's offset, width,
/// height and pitch (`geometry`), the block coordinate and the kernel's last buffer.
fn block_io_launch(
    ctx: &Context,
    kernel: &matbridge_runtime::Kernel,
    sg: u32,
    geometry: [i32; 4],
    region: &matbridge_runtime::Buffer,
    coord: (i64, i64),
    last: &matbridge_runtime::Buffer,
) -> matbridge_runtime::Result<matbridge_runtime::RunStats> {
    let [off, w, h, p] = geometry.map(i32::to_le_bytes);
    let [cx, cy] = [coord.0 as i32, coord.1 as i32].map(i32::to_le_bytes);
    let args =
        [KernelArg::Buffer(region), KernelArg::Bytes(&off), KernelArg::Bytes(&w), KernelArg::Bytes(&h), KernelArg::Bytes(&p), KernelArg::Bytes(&cx), KernelArg::Bytes(&cy), KernelArg::Buffer(last)];
    ctx.launch(kernel, &NdRange::linear(sg, Some(sg)), &args)
}

/// cl_intel_subgroup_2d_block_io's reads and writes (tests/kernels/opencl/block_io.cl) against
/// `reference::block_io`, byte for byte, with blocks inside the region and across its right,
/// bottom, left and top edges (out-of-bounds elements read zero and are not written).
#[test]
fn intel_2d_block_io_matches_the_reference_across_the_region_edges() {
    use matbridge_translator::reference::block_io::{load, store, Block, LoadKind, Region};
    let Some((spirv, contexts)) = kernels_and_devices("block_io") else { return };
    let (rows, pitch, width) = (20u32, 128u32, 100u32);
    let region = Region { width: width as u64, height: rows as u64, pitch: pitch as u64 };
    let block = |elem_size, width, height, count| Block { elem_size, width, height, count };
    // Kernel, sub-group size, block, load kind, bytes per value.
    let reads = [
        ("read_16b_8r16x2c", 16u32, block(2, 16, 8, 2), LoadKind::Plain, 2usize),
        ("transform_16b_16r16x1c", 16, block(2, 16, 16, 1), LoadKind::Transform, 4),
        ("transform_8b_32r16x1c", 16, block(1, 16, 32, 1), LoadKind::Transform, 4),
        ("transpose_32b_16r8x1c", 16, block(4, 8, 16, 1), LoadKind::Transpose, 4),
        ("read_8b_4r32x1c", 8, block(1, 32, 4, 1), LoadKind::Plain, 1),
        ("transform_vector", 16, block(2, 16, 16, 1), LoadKind::Transform, 4),
        ("read_16b_5r12x1c", 16, block(2, 12, 5, 1), LoadKind::Plain, 2),
        ("read_16b_5r8x2c", 16, block(2, 8, 5, 2), LoadKind::Plain, 2),
    ];
    let mut rng = rand::rngs::SmallRng::seed_from_u64(137);
    // The region starts `offset` bytes into the buffer.
    let offset = 256usize;
    let buffer: Vec<u8> = (0..offset + (rows * pitch) as usize).map(|_| rng.random()).collect();
    let memory = &buffer[offset..];
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let geometry = [offset as i32, width as i32, rows as i32, pitch as i32];
        for (kernel_name, sg, blk, kind, size) in reads {
            let kernel = ctx.load_kernel(&spirv, kernel_name).unwrap_or_else(|e| panic!("{name}: {kernel_name}: {e}"));
            let elems = (width / blk.elem_size) as i32;
            for coord in [(0i64, 0i64), (elems as i64 - 6, rows as i64 - 3), (-3, -2), (elems as i64 / 2, 5)] {
                let want = load(memory, &region, &blk, coord, sg, kind).unwrap();
                let values = want[0].len();
                let bm = ctx.buffer_from_slice(&buffer, "region").unwrap();
                let mut bo = ctx.buffer_from_slice(&vec![0xa5u8; values * sg as usize * size], "out").unwrap();
                block_io_launch(ctx, &kernel, sg, geometry, &bm, coord, &bo).unwrap_or_else(|e| panic!("{name}: {kernel_name}: {e}"));
                let got: Vec<u8> = ctx.read_buffer(&mut bo).unwrap();
                for (l, vals) in want.iter().enumerate() {
                    for (k, v) in vals.iter().enumerate() {
                        let at = (l * values + k) * size;
                        let mut raw = [0u8; 8];
                        raw[..size].copy_from_slice(&got[at..at + size]);
                        assert_eq!(u64::from_le_bytes(raw), *v, "{name}: {kernel_name} at {coord:?}: invocation {l} value {k}");
                    }
                }
            }
        }
        // Writes of two-byte elements (8 rows of 16, and 3 of 12, padded to 16), invocation l's
        // value k from in[l * V + k].
        for (kernel_name, blk) in [("write_16b_8r16x1c", block(2, 16, 8, 1)), ("write_16b_3r12x1c", block(2, 12, 3, 1))] {
            let kernel = ctx.load_kernel(&spirv, kernel_name).unwrap_or_else(|e| panic!("{name}: {kernel_name}: {e}"));
            let v = blk.height as usize;
            for coord in [(3i64, 1i64), (44, 15), (-5, -3)] {
                let values: Vec<u16> = (0..v * 16).map(|_| rng.random()).collect();
                let data: Vec<Vec<u64>> = (0..16).map(|l| (0..v).map(|k| values[l * v + k] as u64).collect()).collect();
                let mut want = buffer.clone();
                store(&mut want[offset..], &region, &blk, coord, 16, &data).unwrap();
                let mut bm = ctx.buffer_from_slice(&buffer, "region").unwrap();
                let bi = ctx.buffer_from_slice(&values, "in").unwrap();
                block_io_launch(ctx, &kernel, 16, geometry, &bm, coord, &bi).unwrap_or_else(|e| panic!("{name}: {kernel_name}: {e}"));
                let got: Vec<u8> = ctx.read_buffer(&mut bm).unwrap();
                assert_eq!(got, want, "{name}: {kernel_name} at {coord:?}");
            }
        }
    }
}

/// One matrix operand of a joint_matrix.ll kernel: element, rows, columns, layout, stride.
#[derive(Clone, Copy)]
struct JointOperand(matbridge_translator::reference::elements::Elem, u32, u32, matbridge_translator::reference::matrix::Layout, u64);

/// A joint_matrix.ll kernel: D = A * B + C (C filled with `fill` where given; every element x
/// of D made 2x + 1 where `scaled`), D stored like C.
struct JointCase {
    kernel: &'static str,
    subgroup: u32,
    mad: matbridge_translator::reference::matrix::JointMad,
    a: JointOperand,
    b: JointOperand,
    c: JointOperand,
    fill: Option<f64>,
    scaled: bool,
    /// Every element of D gets 64 x its row + its column added, through the element
    /// coordinates of the work-item's elements.
    coords: bool,
    /// D is B, stored like C (A and C are not read).
    copy_b: bool,
    /// The size of a local-memory argument after D (none where 0).
    local_bytes: u64,
}

fn joint_cases() -> Vec<JointCase> {
    use matbridge_translator::reference::elements::Elem::{self, *};
    use matbridge_translator::reference::matrix::{JointMad, Layout::*};
    let (i8s, i32s) = (Int { bits: 8, signed: true }, Int { bits: 32, signed: true });
    let op = |e: Elem, r, c, l, s| JointOperand(e, r, c, l, s);
    let case = |kernel, subgroup, mad, a, b, c| JointCase { kernel, subgroup, mad, a, b, c, fill: None, scaled: false, coords: false, copy_b: false, local_bytes: 0 };
    let f16_gemm = |kernel, subgroup, (la, lb, lc), (sa, sb, sc)| case(kernel, subgroup, JointMad::Mad, op(F16, 8, 16, la, sa), op(F16, 16, 16, lb, sb), op(F32, 8, 16, lc, sc));
    let i8_gemm = |kernel, mad| case(kernel, 8, mad, op(i8s, 8, 32, RowMajor, 40), op(i8s, 32, 8, RowMajor, 12), op(i32s, 8, 8, RowMajor, 8));
    vec![
        f16_gemm("mad_f16", 16, (RowMajor, ColumnMajor, RowMajor), (24, 20, 18)),
        f16_gemm("mad_f16_sg8", 8, (ColumnMajor, RowMajor, ColumnMajor), (16, 16, 16)),
        f16_gemm("mad_f16_sg32", 32, (RowMajor, ColumnMajor, RowMajor), (24, 20, 18)),
        case("mad_half_acc", 16, JointMad::Mad, op(F16, 8, 16, RowMajor, 16), op(F16, 16, 16, RowMajor, 16), op(F16, 8, 16, RowMajor, 16)),
        i8_gemm("mad_s8", JointMad::Mad),
        i8_gemm("mad_su8", JointMad::SU),
        i8_gemm("mad_us8", JointMad::US),
        i8_gemm("mad_uu8", JointMad::UU),
        case("mad_s8_sg32", 32, JointMad::Mad, op(i8s, 8, 32, RowMajor, 32), op(i8s, 32, 16, RowMajor, 16), op(i32s, 8, 16, RowMajor, 16)),
        case("mad_bf16", 16, JointMad::Mad, op(Bf16, 8, 16, RowMajor, 16), op(Bf16, 16, 16, RowMajor, 16), op(F32, 8, 16, RowMajor, 16)),
        case("mad_tf32", 8, JointMad::Mad, op(Tf32, 8, 8, RowMajor, 8), op(Tf32, 8, 8, RowMajor, 8), op(F32, 8, 8, RowMajor, 8)),
        JointCase { scaled: true, ..f16_gemm("scale_elements", 16, (RowMajor, RowMajor, RowMajor), (16, 16, 16)) },
        JointCase { fill: Some(0.5), ..case("fill_f32", 8, JointMad::Mad, op(Tf32, 8, 8, RowMajor, 8), op(Tf32, 8, 8, ColumnMajor, 8), op(F32, 8, 8, RowMajor, 8)) },
        // B matrices in the Packed (VNNI) layout, with padded strides (s8's as DPC++'s first
        // API numbered it, `packed_b` = 3).
        JointCase { coords: true, ..f16_gemm("element_coords", 16, (RowMajor, RowMajor, RowMajor), (16, 16, 16)) },
        JointCase { coords: true, ..f16_gemm("element_coords_sg32", 32, (RowMajor, ColumnMajor, RowMajor), (24, 20, 18)) },
        JointCase { copy_b: true, ..case("store_packed", 16, JointMad::Mad, op(F16, 8, 16, RowMajor, 16), op(F16, 16, 16, RowMajor, 16), op(F16, 16, 16, Packed, 36)) },
        case("mad_s8_packed", 8, JointMad::Mad, op(i8s, 8, 32, RowMajor, 40), op(i8s, 32, 8, Packed, 32), op(i32s, 8, 8, RowMajor, 8)),
        case("mad_f16_packed_sg32", 32, JointMad::Mad, op(F16, 8, 16, RowMajor, 24), op(F16, 16, 16, Packed, 34), op(F32, 8, 16, RowMajor, 18)),
        case("mad_bf16_packed", 16, JointMad::Mad, op(Bf16, 8, 16, RowMajor, 16), op(Bf16, 16, 16, Packed, 36), op(F32, 8, 16, RowMajor, 16)),
        // A and B loaded from local memory the work-items filled (as halves, as bytes, and
        // through a local-memory argument), and D stored to local memory.
        f16_gemm("mad_f16_local", 16, (RowMajor, RowMajor, RowMajor), (16, 16, 16)),
        f16_gemm("mad_f16_local_bytes", 16, (RowMajor, RowMajor, RowMajor), (16, 16, 16)),
        JointCase { local_bytes: 768, ..f16_gemm("mad_f16_local_arg", 16, (RowMajor, RowMajor, RowMajor), (16, 16, 16)) },
        f16_gemm("mad_f16_local_store", 16, (RowMajor, RowMajor, RowMajor), (16, 16, 16)),
    ]
}

/// The kernels of joint_matrix_khr.ll (SPV_INTEL_joint_matrix's KHR form): joint_matrix.ll's of
/// the same names, and a GEMM whose C and D are bf16 too.
fn khr_joint_cases() -> Vec<JointCase> {
    use matbridge_translator::reference::elements::Elem::*;
    use matbridge_translator::reference::matrix::{JointMad, Layout::*};
    let names = [
        "mad_f16",
        "mad_f16_sg8",
        "mad_f16_sg32",
        "mad_half_acc",
        "mad_s8",
        "mad_su8",
        "mad_us8",
        "mad_uu8",
        "mad_s8_sg32",
        "mad_bf16",
        "mad_tf32",
        "scale_elements",
        "fill_f32",
        "element_coords",
        "element_coords_sg32",
        "mad_bf16_packed",
        "mad_f16_packed_sg32",
    ];
    let mut cases: Vec<JointCase> = joint_cases().into_iter().filter(|c| names.contains(&c.kernel)).collect();
    assert_eq!(cases.len(), names.len(), "every KHR-form kernel has its joint_matrix.ll case");
    let op = |e, r, c| JointOperand(e, r, c, RowMajor, 16);
    cases.push(JointCase {
        kernel: "mad_bf16_acc",
        subgroup: 16,
        mad: JointMad::Mad,
        a: op(Bf16, 8, 16),
        b: op(Bf16, 16, 16),
        c: op(Bf16, 8, 16),
        fill: None,
        scaled: false,
        coords: false,
        copy_b: false,
        local_bytes: 0,
    });
    cases
}

/// Raw bits of an element of `e` drawn so that every sum the kernels compute is exact: random
/// integer bits, floats in halves of -2..2 (C in quarters), TF32 with random bits below its
/// precision (which the multiply must ignore).
fn joint_element(rng: &mut rand::rngs::SmallRng, e: matbridge_translator::reference::elements::Elem, accumulator: bool) -> u64 {
    use matbridge_translator::reference::elements::Elem;
    let step = if accumulator && e == Elem::F32 { 4.0 } else { 2.0 };
    let v = rng.random_range(-4i32..4) as f32 / step;
    match e {
        Elem::Int { bits, .. } => rng.random::<u64>() & ((1u64 << bits) - 1),
        Elem::F16 => half::f16::from_f32(v).to_bits() as u64,
        Elem::Bf16 => half::bf16::from_f32(v).to_bits() as u64,
        Elem::Tf32 => (v.to_bits() | rng.random_range(0..0x2000u32)) as u64,
        _ => v.to_bits() as u64,
    }
}

/// Elements a matrix of `o` spans in memory.
fn joint_span(o: JointOperand) -> usize {
    let JointOperand(elem, rows, cols, layout, stride) = o;
    matbridge_translator::reference::matrix::memory_index(layout, stride, elem.bits(), rows - 1, cols - 1) as usize + 1
}

fn joint_bytes(mem: &[u64], bits: u32) -> Vec<u8> {
    mem.iter().flat_map(|x| x.to_le_bytes()[..(bits / 8) as usize].to_vec()).collect()
}

/// SPV_INTEL_joint_matrix from the SPIR-V friendly LLVM IR DPC++ emits
/// (tests/kernels/opencl/joint_matrix.ll, through llvm-spirv), lowered to KHR cooperative
/// matrices: every Mad form, f16, bf16 and TF32 interpretations, int8, both layouts and padded
/// strides, fills, and element access through the work-item's elements, against
/// `reference::matrix`, bit for bit, memory past the matrices included. The same module in the
/// spec's own form (`OpTypeJointMatrixINTEL` 6184, converted from llvm-spirv's below) must give
/// the same results, and so must the KHR form current DPC++ writes (joint_matrix_khr.ll: KHR
/// matrices read as bf16 or TF32 by the multiply-add's operands, element access through access
/// chains). Kernels a device cannot run (16-bit data on SwiftShader, which lacks 8- and
/// 16-bit storage; sub-groups of 16 on the H100's 32-wide ones) are refused by name.
#[test]
fn intel_joint_matrix_matches_the_reference() {
    use matbridge_translator::reference::elements::{Elem, Value};
    use matbridge_translator::reference::matrix::{joint_mad, load, store, Matrix};
    let Some((spirv, contexts)) = kernels_and_devices("joint_matrix") else { return };
    let spec_form = joint_matrix_in_spec_form(&spirv);
    let Some(khr_form) = common::opencl("joint_matrix_khr") else { return };
    let forms = [("llvm-spirv", &spirv, joint_cases()), ("spec", &spec_form, joint_cases()), ("KHR", &khr_form, khr_joint_cases())];
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let mut rng = rand::rngs::SmallRng::seed_from_u64(139);
        for (form, module, cases) in &forms {
            for case in cases {
                let narrow = [case.a.0, case.b.0, case.c.0].iter().any(|e| e.bits() < 32);
                let kernel = match ctx.load_kernel(module, case.kernel) {
                    Ok(k) => k,
                    Err(e) if narrow && ctx.caps().name.contains("SwiftShader") => {
                        assert!(e.to_string().contains("lacks 8-bit integers") || e.to_string().contains("16-bit"), "{name}: {}: {e}", case.kernel);
                        continue;
                    }
                    Err(e) => panic!("{name}: {} ({form} form): {e}", case.kernel),
                };
                let draw = |rng: &mut rand::rngs::SmallRng, o: JointOperand, acc: bool| -> Vec<u64> { (0..joint_span(o)).map(|_| joint_element(rng, o.0, acc)).collect() };
                let (ma, mb, mc) = (draw(&mut rng, case.a, false), draw(&mut rng, case.b, false), draw(&mut rng, case.c, true));
                let bits = |o: JointOperand| if o.0 == Elem::Tf32 { 32 } else { o.0.bits() };
                let buffer = |mem: &[u64], o: JointOperand, label: &str| ctx.buffer_from_slice(&joint_bytes(mem, bits(o)), label).unwrap();
                let (ba, bb, bc) = (buffer(&ma, case.a, "a"), buffer(&mb, case.b, "b"), buffer(&mc, case.c, "c"));
                let sentinel: Vec<u64> = (0..joint_span(case.c)).map(|_| joint_element(&mut rng, case.c.0, true)).collect();
                let mut bd = buffer(&sentinel, case.c, "d");
                let mut args = vec![KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&bc), KernelArg::Buffer(&bd)];
                if case.local_bytes > 0 {
                    args.push(KernelArg::Local(case.local_bytes));
                }
                ctx.launch(&kernel, &NdRange::linear(case.subgroup, Some(case.subgroup)), &args).unwrap_or_else(|e| panic!("{name}: {}: {e}", case.kernel));
                let got: Vec<u8> = ctx.read_buffer(&mut bd).unwrap();
                let m = |mem: &[u64], o: JointOperand| load(mem, o.1, o.2, o.0, o.3, o.4).unwrap();
                let c = match case.fill {
                    Some(v) => Matrix { rows: case.c.1, cols: case.c.2, elem: case.c.0, data: vec![case.c.0.encode(Value::Float(v)); (case.c.1 * case.c.2) as usize] },
                    None => m(&mc, case.c),
                };
                let mut d = if case.copy_b { m(&mb, case.b) } else { joint_mad(case.mad, &m(&ma, case.a), &m(&mb, case.b), &c, case.c.0).unwrap() };
                if case.scaled {
                    d.data = d.data.iter().map(|&x| d.elem.encode(Value::Float(d.elem.decode(x).as_f64() * 2.0 + 1.0))).collect();
                }
                if case.coords {
                    let cols = d.cols as usize;
                    d.data = d.data.iter().enumerate().map(|(i, &x)| d.elem.encode(Value::Float(d.elem.decode(x).as_f64() + (64 * (i / cols) + i % cols) as f64))).collect();
                }
                let mut want = sentinel.clone();
                store(&d, &mut want, case.c.3, case.c.4).unwrap();
                assert_eq!(got, joint_bytes(&want, bits(case.c)), "{name}: {} ({form} form)", case.kernel);
            }
        }
    }
}

/// A checked_* kernel of joint_matrix_khr.ll: the tile at (row, col) of an m x n x k GEMM, A
/// and B of the layouts given, C filled with `fill` inside the m x n region.
struct CheckedCase {
    kernel: &'static str,
    subgroup: u32,
    a: (matbridge_translator::reference::elements::Elem, u32, u32, matbridge_translator::reference::matrix::Layout),
    b: (matbridge_translator::reference::elements::Elem, u32, u32, matbridge_translator::reference::matrix::Layout),
    c: (matbridge_translator::reference::elements::Elem, u32, u32),
    fill: f64,
}

/// SPV_INTEL_joint_matrix's bounds-checked loads, stores and fills (DPC++'s
/// `joint_matrix_load_checked` and its kin, in the KHR form) against `reference::matrix`, bit for
/// bit: tiles inside the region (the plain KHR path, at offsets), across its edges in rows,
/// columns and K (element by element, zeros read and nothing written outside), and wholly
/// outside it (nothing written); row-major and column-major A, row-major and packed B; f16, bf16,
/// TF32 and int8. The A and C tiles the checked load and fill made are checked too.
#[test]
fn intel_checked_joint_matrix_matches_the_reference() {
    use matbridge_translator::reference::elements::{Elem::*, Value};
    use matbridge_translator::reference::matrix::{joint_mad, memory_index, JointMad, Layout::*, Matrix};
    let Some((spirv, contexts)) = kernels_and_devices("joint_matrix_khr") else { return };
    let (i8s, i32s) = (Int { bits: 8, signed: true }, Int { bits: 32, signed: true });
    let cases = [
        CheckedCase { kernel: "checked_f16", subgroup: 16, a: (F16, 8, 16, RowMajor), b: (F16, 16, 16, RowMajor), c: (F32, 8, 16), fill: 0.5 },
        CheckedCase { kernel: "checked_f16_packed", subgroup: 16, a: (F16, 8, 16, ColumnMajor), b: (F16, 16, 16, Packed), c: (F32, 8, 16), fill: 0.5 },
        CheckedCase { kernel: "checked_bf16", subgroup: 16, a: (Bf16, 8, 16, RowMajor), b: (Bf16, 16, 16, Packed), c: (F32, 8, 16), fill: 0.5 },
        CheckedCase { kernel: "checked_tf32", subgroup: 8, a: (Tf32, 8, 8, ColumnMajor), b: (Tf32, 8, 8, RowMajor), c: (F32, 8, 8), fill: 0.5 },
        CheckedCase { kernel: "checked_s8_sg32", subgroup: 32, a: (i8s, 8, 32, RowMajor), b: (i8s, 32, 16, RowMajor), c: (i32s, 8, 16), fill: 1.0 },
        CheckedCase { kernel: "checked_f16_packed_sg8", subgroup: 8, a: (F16, 8, 16, ColumnMajor), b: (F16, 16, 16, Packed), c: (F32, 8, 16), fill: 0.5 },
        CheckedCase { kernel: "checked_bf16_sg32", subgroup: 32, a: (Bf16, 8, 16, RowMajor), b: (Bf16, 16, 16, Packed), c: (F32, 8, 16), fill: 0.5 },
        CheckedCase { kernel: "checked_bf16_sg8", subgroup: 8, a: (Bf16, 8, 16, RowMajor), b: (Bf16, 16, 16, Packed), c: (F32, 8, 16), fill: 0.5 },
    ];
    // Every profile translates them into modules spirv-val accepts; the H100 runs the sub-group
    // 32 kernel's matrices natively.
    {
        use matbridge_translator::{kernel::keep_entry_point, profile::DeviceCaps, Module};
        for target in [DeviceCaps::lavapipe(), DeviceCaps::swiftshader(), DeviceCaps::h100()] {
            for case in &cases {
                let mut m = Module::from_words(&spirv).unwrap();
                keep_entry_point(&mut m, case.kernel).unwrap();
                match matbridge_translator::translate(&m.to_words(), &target) {
                    Ok((out, report)) => {
                        matbridge_translator::tools::validate(&out, "vulkan1.3").unwrap_or_else(|e| panic!("{}: {}: {e}", target.name, case.kernel));
                        let emulated = report.passes.iter().any(|p| p.name == "emulate-cooperative-matrix" && p.changed);
                        if target.name.contains("H100") {
                            assert_eq!(emulated, case.subgroup < 32, "{}: {}", target.name, case.kernel);
                        }
                    }
                    Err(e) if target.name.contains("SwiftShader") => assert!(e.to_string().contains("lacks"), "{e}"),
                    Err(e) => panic!("{}: {}: {e}", target.name, case.kernel),
                }
            }
        }
        // A layout no matrix has, and a load without its Stride, are refused by name.
        for (mutation, expected) in [("layout", "Memory Layout 3 (RowMajor 0, ColumnMajor 1 and Packed 2 are defined)"), ("stride", "a checked load without its Stride")] {
            let mut m = Module::from_words(&spirv).unwrap();
            keep_entry_point(&mut m, "checked_f16").unwrap();
            let three = m.constant_u32(3);
            let load = m
                .functions
                .iter_mut()
                .flat_map(|f| f.blocks.iter_mut())
                .flat_map(|b| b.insts.iter_mut())
                .find(|i| i.opcode == matbridge_translator::ir::grammar::intel_cooperative_matrix::LOAD_CHECKED)
                .unwrap();
            match mutation {
                "layout" => load.operands[3] = matbridge_translator::ir::Operand::Id(three),
                _ => load.operands.truncate(6),
            }
            let err = matbridge_translator::translate(&m.to_words(), &DeviceCaps::lavapipe()).unwrap_err().to_string();
            assert!(err.contains("CooperativeMatrixLoadCheckedINTEL at word offset") && err.contains(expected), "{mutation}: {err}");
        }
    }
    for ctx in &contexts {
        let name = &ctx.caps().name;
        let mut rng = rand::rngs::SmallRng::seed_from_u64(151);
        for case in &cases {
            let narrow = [case.a.0, case.b.0, case.c.0].iter().any(|e| e.bits() < 32);
            let kernel = match ctx.load_kernel(&spirv, case.kernel) {
                Ok(k) => k,
                Err(e) if narrow && name.contains("SwiftShader") => {
                    assert!(e.to_string().contains("lacks"), "{name}: {}: {e}", case.kernel);
                    continue;
                }
                Err(e) => panic!("{name}: {}: {e}", case.kernel),
            };
            let ((ea, tm, tk, la), (eb, _, tn, lb), (ec, _, _)) = (case.a, case.b, case.c);
            let bits = |e: matbridge_translator::reference::elements::Elem| if e == Tf32 { 32 } else { e.bits() };
            // K past the tile and short of it; tiles inside, at offsets, across the edges, outside.
            for (k, tiles) in [(tk + tk / 4, vec![(0, 0), (5, 4), (8, 16), (16, 0)]), (tk - tk / 4, vec![(0, 0), (8, 16)])] {
                let (m, n) = (13u32, 21u32);
                let a_index = |r: u32, kk: u32| if la == ColumnMajor { kk * m + r } else { r * k + kk } as usize;
                let b_stride = if lb == Packed { u64::from(n) * u64::from((32 / bits(eb)).max(1)) } else { u64::from(n) };
                let b_index = |kk: u32, c: u32| memory_index(lb, b_stride, bits(eb), kk, c) as usize;
                let mut ma = vec![0u64; (m * k) as usize];
                for r in 0..m {
                    for kk in 0..k {
                        ma[a_index(r, kk)] = joint_element(&mut rng, ea, false);
                    }
                }
                let mut mb = vec![0u64; b_index(k - 1, n - 1).max(b_index(k - 2, n - 1)) + 1];
                for kk in 0..k {
                    for c in 0..n {
                        mb[b_index(kk, c)] = joint_element(&mut rng, eb, false);
                    }
                }
                for &(row, col) in &tiles {
                    let sentinel: Vec<u64> = (0..m * n).map(|_| joint_element(&mut rng, ec, true)).collect();
                    let (ba, bb) = (ctx.buffer_from_slice(&joint_bytes(&ma, bits(ea)), "a").unwrap(), ctx.buffer_from_slice(&joint_bytes(&mb, bits(eb)), "b").unwrap());
                    let mut bd = ctx.buffer_from_slice(&joint_bytes(&sentinel, bits(ec)), "d").unwrap();
                    let mut bta = ctx.buffer_from_slice(&vec![0xa5u8; (tm * tk * bits(ea) / 8) as usize], "ta").unwrap();
                    let mut btc = ctx.buffer_from_slice(&vec![0xa5u8; (tm * tn * bits(ec) / 8) as usize], "tc").unwrap();
                    let ints = [m, n, k, row, col].map(u32::to_le_bytes);
                    let mut args = vec![KernelArg::Buffer(&ba), KernelArg::Buffer(&bb), KernelArg::Buffer(&bd), KernelArg::Buffer(&bta), KernelArg::Buffer(&btc)];
                    args.extend(ints.iter().map(|b| KernelArg::Bytes(b)));
                    ctx.launch(&kernel, &NdRange::linear(case.subgroup, Some(case.subgroup)), &args).unwrap_or_else(|e| panic!("{name}: {}: {e}", case.kernel));
                    let got: Vec<u8> = ctx.read_buffer(&mut bd).unwrap();
                    let (got_a, got_c): (Vec<u8>, Vec<u8>) = (ctx.read_buffer(&mut bta).unwrap(), ctx.read_buffer(&mut btc).unwrap());
                    // The tile as the checked accesses see it: zeros outside the region.
                    let tile =
                        |rows: u32, cols: u32, elem, at: &dyn Fn(u32, u32) -> Option<u64>| Matrix { rows, cols, elem, data: (0..rows * cols).map(|i| at(i / cols, i % cols).unwrap_or(0)).collect() };
                    let ta = tile(tm, tk, ea, &|r, kk| (row + r < m && kk < k).then(|| ma[a_index(row + r, kk)]));
                    let tb = tile(tk, tn, eb, &|kk, c| (kk < k && col + c < n).then(|| mb[b_index(kk, col + c)]));
                    let fill = ec.encode(Value::Float(case.fill));
                    let tc = tile(tm, tn, ec, &|r, c| (row + r < m && col + c < n).then_some(fill));
                    let d = joint_mad(JointMad::Mad, &ta, &tb, &tc, ec).unwrap();
                    let mut want = sentinel.clone();
                    for r in 0..tm {
                        for c in 0..tn {
                            if row + r < m && col + c < n {
                                want[((row + r) * n + col + c) as usize] = d.data[(r * tn + c) as usize];
                            }
                        }
                    }
                    let at = format!("{name}: {} with k {k}, tile at ({row}, {col})", case.kernel);
                    assert_eq!(got_a, joint_bytes(&ta.data, bits(ea)), "{at}: A as loaded");
                    assert_eq!(got_c, joint_bytes(&tc.data, bits(ec)), "{at}: C as filled");
                    assert_eq!(got, joint_bytes(&want, bits(ec)), "{at}");
                }
            }
        }
    }
}

/// A GEMM as DPC++ writes one with SYCL's joint_matrix (`tests/kernels/opencl/joint_matrix_gemm.ll`,
/// the KHR form: accumulators a K loop carries, 2 x 2 tiles of 16 x 16 x 16 or 4 x 2 of Intel's
/// 8 x 16 x 16 per sub-group) against the CPU, bit for bit (multiples of 1/4, whose sums every
/// path computes exactly). The plain kernels run a problem of whole tiles; the checked ones
/// (`joint_matrix_load_checked` and `joint_matrix_store_checked`) one whose M, N and K are no
/// multiples of them, so that tiles reach past every edge of A, B and D (reading zeros and
/// writing nothing there). On the H100 the sub-group-32 kernels run on its cooperative
/// matrices (Intel's 8-row tiles padded to 16).
#[test]
fn intel_joint_matrix_gemm_matches_the_reference() {
    let Some((spirv, contexts)) = kernels_and_devices("joint_matrix_gemm") else { return };
    let draw = |seed: usize, len: usize| -> Vec<half::f16> { (0..len).map(|i| half::f16::from_f32(((i * 7 + seed * 5) % 17) as f32 * 0.25 - 2.0)).collect() };
    let kernels = [
        ("jm_gemm_16x16_sg32", 32, false),
        ("jm_gemm_8x16_sg32", 32, false),
        ("jm_gemm_16x16_sg32_checked", 32, true),
        ("jm_gemm_8x16_sg32_checked", 32, true),
        ("jm_gemm_8x16_sg16_checked", 16, true),
        ("jm_gemm_8x16_sg8_checked", 8, true),
    ];
    for ctx in &contexts {
        let name = &ctx.caps().name;
        for &(kernel, sg, checked) in &kernels {
            let (m, n, k) = if checked { (45, 70, 37) } else { (64, 128, 48) };
            let loaded = match ctx.load_kernel(&spirv, kernel) {
                Ok(l) => l,
                // f16 in global memory needs 16-bit storage.
                Err(e) if name.contains("SwiftShader") => {
                    assert!(e.to_string().contains("lacks"), "{name}: {kernel}: {e}");
                    continue;
                }
                Err(e) => panic!("{name}: {kernel}: {e}"),
            };
            if name.contains("H100") && sg == 32 {
                assert!(cooperative_muladds(loaded.spirv()) > 0, "{name}: {kernel} does not run on the device's cooperative matrices");
            }
            let (a, b) = (draw(1, m * k), draw(2, k * n));
            let want = gemm_f16_reference(&a, &b, (m, n, k));
            check_gemm_launch(ctx, &loaded, kernel, (m, n, k), (32, sg), (&a, &b), &want);
        }
    }
}

/// `spirv` (llvm-spirv's joint matrices) in the spec's form: types 6184 without the Layout, loads
/// and stores without the Scope and with a Memory Operands literal, multiply-adds without the
/// Scope.
fn joint_matrix_in_spec_form(spirv: &[u32]) -> Vec<u32> {
    use matbridge_translator::ir::grammar::legacy_joint_matrix as jm;
    let constants: std::collections::HashMap<u32, u32> = {
        let mut map = std::collections::HashMap::new();
        let mut i = 5;
        while i < spirv.len() {
            let (n, op) = ((spirv[i] >> 16) as usize, spirv[i] & 0xffff);
            if op == spirv::Op::Constant as u32 && n == 4 {
                map.insert(spirv[i + 2], spirv[i + 3]);
            }
            i += n.max(1);
        }
        map
    };
    let packed = constants.iter().find(|(_, v)| **v == 2).map(|(id, _)| *id).expect("the module has a constant 2");
    let mut out = spirv[..5].to_vec();
    let mut i = 5;
    while i < spirv.len() {
        let (n, op) = ((spirv[i] >> 16) as usize, spirv[i] & 0xffff);
        let ops = &spirv[i + 1..i + n];
        let new: Vec<u32> = match op {
            o if o == jm::TYPE_JOINT_MATRIX_WITH_LAYOUT => [&ops[..4], &ops[5..]].concat(),
            // DPC++'s first API's `packed_b` (3) is the spec's Packed (2).
            o if o == jm::LOAD && constants.get(&ops[4]) == Some(&3) => [&ops[..4], &[packed], &[constants.get(&ops[6]).copied().unwrap_or(0)][..]].concat(),
            o if o == jm::LOAD => [&ops[..5], &[constants.get(&ops[6]).copied().unwrap_or(0)][..]].concat(),
            o if o == jm::STORE => [&ops[..4], &[constants.get(&ops[5]).copied().unwrap_or(0)][..]].concat(),
            o if [jm::MAD, jm::SU_MAD, jm::US_MAD, jm::UU_MAD].contains(&o) => ops[..5].to_vec(),
            _ => ops.to_vec(),
        };
        let op = if op == jm::TYPE_JOINT_MATRIX_WITH_LAYOUT { jm::TYPE_JOINT_MATRIX } else { op };
        out.push(((new.len() as u32 + 1) << 16) | op);
        out.extend(new);
        i += n.max(1);
    }
    out
}

/// Every joint_matrix.ll kernel, alone as the runtime loads it, translates for the three device
/// profiles into modules spirv-val accepts (the translator validates its output), in both forms;
/// on the H100 the kernels that require sub-groups of 8 or 16 run split out of its 32 with their
/// matrices emulated per logical sub-group, those of 32 natively (padded to its shapes).
#[test]
fn intel_joint_matrix_translates_for_every_profile() {
    use matbridge_translator::{kernel::keep_entry_point, profile::DeviceCaps, Module};
    let Some(spirv) = common::opencl("joint_matrix") else { return };
    let Some(khr_form) = common::opencl("joint_matrix_khr") else { return };
    for (module, cases) in [(spirv.clone(), joint_cases()), (joint_matrix_in_spec_form(&spirv), joint_cases()), (khr_form, khr_joint_cases())] {
        for target in [DeviceCaps::lavapipe(), DeviceCaps::swiftshader(), DeviceCaps::h100()] {
            for case in &cases {
                let mut m = Module::from_words(&module).unwrap();
                keep_entry_point(&mut m, case.kernel).unwrap();
                let narrow = [case.a.0, case.b.0, case.c.0].iter().any(|e| e.bits() < 32);
                match matbridge_translator::translate(&m.to_words(), &target) {
                    Ok((out, report)) => {
                        matbridge_translator::tools::validate(&out, "vulkan1.3").unwrap_or_else(|e| panic!("{}: {}: {e}", target.name, case.kernel));
                        let emulated = report.passes.iter().any(|p| p.name == "emulate-cooperative-matrix" && p.changed);
                        if target.name.contains("H100") {
                            assert_eq!(emulated, case.subgroup < 32, "{}: {}: {:?}", target.name, case.kernel, report.passes.iter().filter(|p| p.changed).map(|p| p.name).collect::<Vec<_>>());
                        }
                    }
                    Err(e) if narrow && target.name.contains("SwiftShader") => assert!(e.to_string().contains("lacks"), "{e}"),
                    Err(e) => panic!("{}: {}: {e}", target.name, case.kernel),
                }
            }
        }
    }
    // KHR-form interpretations that do not fit their matrices are refused by name: bf16 on f16
    // components, TF32 on f16 ones.
    for (bits, expected) in [(0x40, "a bf16 Cooperative Matrix Operand on %"), (0x20, "MatrixAAndBTF32ComponentsINTEL on %")] {
        let mut m = Module::from_words(&common::opencl("joint_matrix_khr").unwrap()).unwrap();
        keep_entry_point(&mut m, "mad_f16").unwrap();
        for f in &mut m.functions {
            for b in &mut f.blocks {
                for i in b.insts.iter_mut().filter(|i| i.is(spirv::Op::CooperativeMatrixMulAddKHR)) {
                    i.operands[3] = matbridge_translator::ir::Operand::Enum(rspirv::grammar::OperandKind::CooperativeMatrixOperands, bits);
                }
            }
        }
        let err = matbridge_translator::translate(&m.to_words(), &DeviceCaps::lavapipe()).unwrap_err().to_string();
        assert!(err.contains("OpCooperativeMatrixMulAddKHR at word offset") && err.contains(expected), "{bits:#x}: {err}");
    }
    // What no target can take is refused naming the instruction or type and the reason.
    for (mutation, expected) in [
        (JointMutation::PackedLayout, "OpJointMatrixLoadINTEL at word offset"),
        (JointMutation::ElementCoord, "a result type that is not a 2-component integer vector"),
        (JointMutation::WorkgroupScope, "has scope 2 (only Subgroup joint matrices"),
        (JointMutation::PackedInt4, "PackedInt4 Component Type Interpretation"),
    ] {
        let mut words = joint_matrix_mutated(&spirv, mutation);
        if mutation == JointMutation::ElementCoord {
            // Alone, as the runtime loads it (the query is in scale_elements).
            let mut m = Module::from_words(&words).unwrap();
            keep_entry_point(&mut m, "scale_elements").unwrap();
            words = m.to_words();
        }
        let err = matbridge_translator::translate(&words, &DeviceCaps::lavapipe()).unwrap_err().to_string();
        assert!(err.contains(expected), "{mutation:?}: {err}");
        if mutation == JointMutation::PackedLayout {
            assert!(err.contains("the Packed (VNNI) layout (value 2) on a MatrixA matrix"), "{err}");
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum JointMutation {
    /// The first load's layout becomes Packed (2).
    PackedLayout,
    /// Every type's scope becomes Workgroup (2).
    WorkgroupScope,
    /// The first type with an interpretation (bf16) gets PackedInt4 (4).
    PackedInt4,
    /// The first work-item length becomes an element-coordinate query of the matrix (its result
    /// an integer, not the row and column).
    ElementCoord,
}

/// llvm-spirv's joint_matrix module with one `mutation`, made on its words.
fn joint_matrix_mutated(spirv: &[u32], mutation: JointMutation) -> Vec<u32> {
    use matbridge_translator::ir::grammar::legacy_joint_matrix as jm;
    let mut words = spirv.to_vec();
    // An id of the 32-bit integer constant `value`, added when the module has none.
    let constant = |words: &mut Vec<u32>, value: u32| -> u32 {
        let (mut i, mut int32) = (5, 0);
        while i < words.len() {
            let (n, op) = ((words[i] >> 16) as usize, words[i] & 0xffff);
            if op == spirv::Op::TypeInt as u32 && words[i + 2] == 32 {
                int32 = words[i + 1];
            }
            if op == spirv::Op::Constant as u32 && n == 4 && words[i + 1] == int32 && words[i + 3] == value {
                return words[i + 2];
            }
            i += n.max(1);
        }
        let id = words[3];
        words[3] += 1;
        // Before the first joint-matrix type, which may use it.
        let mut at = 5;
        while at < words.len() && words[at] & 0xffff != jm::TYPE_JOINT_MATRIX_WITH_LAYOUT {
            at += ((words[at] >> 16) as usize).max(1);
        }
        words.splice(at..at, [(4 << 16) | spirv::Op::Constant as u32, int32, id, value]);
        id
    };
    let target_value = match mutation {
        JointMutation::PackedLayout | JointMutation::WorkgroupScope => 2,
        JointMutation::PackedInt4 => 4,
        JointMutation::ElementCoord => 0,
    };
    let c = constant(&mut words, target_value);
    let mut i = 5;
    let mut done = false;
    while i < words.len() {
        let (n, op) = ((words[i] >> 16) as usize, words[i] & 0xffff);
        match mutation {
            JointMutation::PackedLayout if op == jm::LOAD && !done => {
                words[i + 5] = c;
                done = true;
            }
            JointMutation::WorkgroupScope if op == jm::TYPE_JOINT_MATRIX_WITH_LAYOUT => words[i + 6] = c,
            JointMutation::PackedInt4 if op == jm::TYPE_JOINT_MATRIX_WITH_LAYOUT && n == 9 && !done => {
                words[i + 8] = c;
                done = true;
            }
            JointMutation::ElementCoord if op == jm::WORK_ITEM_LENGTH && !done => {
                // OpJointMatrixGetElementCoordINTEL %type %result %matrix %index, in the length's
                // words (the result type stays an integer).
                let (ty, result, matrix) = (words[i + 1], words[i + 2], words[i + 3]);
                words.splice(i..i + n, [(5 << 16) | jm::GET_ELEMENT_COORD, ty, result, matrix, c]);
                done = true;
            }
            _ => {}
        }
        i += ((words[i] >> 16) as usize).max(1);
    }
    words
}

/// The loop of `sink_private_stores/loop_stores.spvasm` (a kernel storing into private arrays in
/// every iteration, in some, through a dynamic index, and reading one back) leaves each array
/// as the loop wrote it, for one iteration and many, on every device.
#[test]
fn stores_sunk_from_loops_leave_what_the_last_iteration_wrote() {
    let text = include_str!("../translator/tests/in/sink_private_stores/loop_stores.spvasm");
    let Ok(spirv) = matbridge_translator::tools::assemble(text, "spv1.4") else {
        assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
        return;
    };
    for ctx in &common::contexts() {
        let name = &ctx.caps().name;
        let kernel = ctx.load_kernel(&spirv, "loop_stores").unwrap_or_else(|e| panic!("{name}: {e}"));
        for n in [0u32, 1, 2, 7, 10] {
            let mut out = ctx.buffer_from_slice(&[u32::MAX; 8], "out").unwrap();
            let nb = n.to_le_bytes();
            ctx.launch(&kernel, &NdRange::linear(1, Some(1)), &[KernelArg::Buffer(&out), KernelArg::Bytes(&nb)]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<u32> = ctx.read_buffer(&mut out).unwrap();
            // The body runs at least once (the loop tests at its bottom).
            let last = n.max(1) - 1;
            let sum: u32 = (0..=last).sum();
            let mut want = [sum, last, 0, 0, 0, 0, 0, sum];
            for i in 0..=last {
                want[2 + (i & 3) as usize] = i * i;
                if i & 1 != 0 {
                    want[6] = i;
                }
            }
            assert_eq!(got, want, "{name}: n = {n}");
        }
    }
}
