//! 8- and 16-bit types on devices without them: kernels doing f16, i8 and i16 arithmetic,
//! conversions, sub-word stores and bit casts run legalized (held in 32 bits, rounded or wrapped
//! after each operation, memory read and written as words) on every test device, and natively
//! where the device has the types, bit for bit against a CPU computation.

mod common;

use half::f16;
use matbridge_runtime::{Context, Dispatch, PipelineDesc};
use matbridge_translator::{tools, translate, DeviceCaps};
use rand::{Rng, SeedableRng};

/// The targets to run on `ctx`: the device without any 8- or 16-bit type (legalized), and the
/// device itself where it has them (native); with "legalized" or "native".
fn targets(ctx: &Context) -> Vec<(DeviceCaps, &'static str)> {
    let caps = ctx.caps().clone();
    let mut narrowless = caps.clone();
    narrowless.shader_float16 = false;
    narrowless.shader_int8 = false;
    narrowless.shader_int16 = false;
    narrowless.shader_bfloat16 = false;
    narrowless.storage_buffer_8bit = false;
    narrowless.storage_buffer_16bit = false;
    narrowless.storage_push_constant_8bit = false;
    narrowless.storage_push_constant_16bit = false;
    let mut out = vec![(narrowless, "legalized")];
    if caps.shader_float16 && caps.shader_int8 && caps.shader_int16 && caps.storage_buffer_8bit && caps.storage_buffer_16bit {
        out.push((caps, "native"));
    }
    out
}

/// Translates `input` for `target`, checks what legalization did, validates.
fn translated(input: &[u32], target: &DeviceCaps, mode: &str) -> Vec<u32> {
    let (words, report) = translate(input, target).unwrap_or_else(|e| panic!("{}: {e}", target.name));
    let legalized = report.passes.iter().any(|p| p.name == "legalize-narrow-types" && p.changed);
    assert_eq!(legalized, mode == "legalized", "{report:?}");
    tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{} ({mode}): {e}", target.name));
    words
}

/// A random f16 that is finite and not zero (WGSL's min and max may order -0 and +0 either way).
fn finite_f16(rng: &mut impl Rng) -> f16 {
    loop {
        let h = f16::from_bits(rng.random());
        if h.is_finite() && h.to_bits() & 0x7fff != 0 {
            return h;
        }
    }
}

/// f32 inputs for f32 -> f16 conversion: random magnitudes over f16's range and beyond, exact
/// ties between neighbouring f16 values (normal and subnormal), and the edges.
fn conversion_inputs(rng: &mut impl Rng, n: usize) -> Vec<f32> {
    let mut x = vec![0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 65504.0, 65519.996, 65520.0, -65536.0, 6.0e-8, 2.9e-8, 3.0e-8, 6.1e-5, 1.0e-10];
    while x.len() < n {
        let v = match x.len() % 3 {
            0 => {
                // A tie: halfway between an f16 value and the next.
                let h = finite_f16(rng);
                let next = f16::from_bits(h.to_bits() + 1);
                if !next.is_finite() {
                    continue;
                }
                ((h.to_f64() + next.to_f64()) / 2.0) as f32
            }
            1 => f32::from_bits(rng.random_range(0x3280_0000u32..0x4800_0000)) * if rng.random() { -1.0 } else { 1.0 },
            _ => rng.random_range(-70000.0f32..70000.0),
        };
        x.push(v);
    }
    x
}

fn same_f16(got: f16, want: f16) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

#[test]
fn f16_arithmetic_matches_the_cpu_bit_for_bit() {
    let input = common::wgsl("narrow_f16", include_str!("kernels/narrow_f16.wgsl"));
    let n = 4096usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(16);
    let a: Vec<f16> = (0..n).map(|_| finite_f16(&mut rng)).collect();
    let b: Vec<f16> = (0..n).map(|_| finite_f16(&mut rng)).collect();
    let x = conversion_inputs(&mut rng, n);
    let raw: Vec<u32> = (0..n).map(|_| finite_f16(&mut rng).to_bits() as u32 | (finite_f16(&mut rng).to_bits() as u32) << 16).collect();
    let tenth = f16::from_f64(0.1);
    let three = f16::from_f32(3.0);
    for ctx in common::contexts() {
        for (target, mode) in targets(&ctx) {
            let what = format!("{} ({mode})", ctx.caps().name);
            let words = translated(&input, &target, mode);
            let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 8, label: "narrow_f16", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
            let bits = |v: &[f16]| -> Vec<u16> { v.iter().map(|h| h.to_bits()).collect() };
            let ba = ctx.buffer_from_slice(&bits(&a), "a").unwrap();
            let bb = ctx.buffer_from_slice(&bits(&b), "b").unwrap();
            let bx = ctx.buffer_from_slice(&x, "x").unwrap();
            let braw = ctx.buffer_from_slice(&raw, "raw").unwrap();
            // 7 halves per invocation, rounded up to whole words.
            let mut bout = ctx.zeroed_buffer::<u16>(7 * n + 1, "out").unwrap();
            let mut bpairs = ctx.zeroed_buffer::<u16>(2 * n, "pairs").unwrap();
            let mut bquads = ctx.zeroed_buffer::<u16>(4 * n, "quads").unwrap();
            let mut bwide = ctx.zeroed_buffer::<f32>(n, "wide").unwrap();
            let buffers = [&ba, &bb, &bx, &braw, &bout, &bpairs, &bquads, &bwide];
            ctx.run(&[Dispatch { pipeline: &p, buffers: &buffers, images: &[], push_constants: &[], groups: [(n / 64) as u32, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let out: Vec<u16> = ctx.read_buffer(&mut bout).unwrap();
            let pairs: Vec<u16> = ctx.read_buffer(&mut bpairs).unwrap();
            let quads: Vec<u16> = ctx.read_buffer(&mut bquads).unwrap();
            let wide: Vec<f32> = ctx.read_buffer(&mut bwide).unwrap();
            for i in 0..n {
                let (p, q) = (a[i], b[i]);
                let (rx, ry) = (f16::from_bits(raw[i] as u16), f16::from_bits((raw[i] >> 16) as u16));
                let fx = f16::from_f32(x[i]);
                let want = [p + q, p - q, p * q, p / q, fx, -p * tenth, p.max(q) + rx.min(ry) * three];
                for (k, w) in want.iter().enumerate() {
                    let g = f16::from_bits(out[7 * i + k]);
                    // Vulkan bounds a native f16 division to 2.5 units in the last place only
                    // for divisors in [2^-14, 2^14], and lets a driver contract `max + min * 3`
                    // into a fused multiply-add, whose error cancellation magnifies (the H100
                    // does both); the legalized results are exact.
                    let bounded = (2f32.powi(-14)..=2f32.powi(14)).contains(&q.to_f32().abs());
                    let slack = match (mode, k) {
                        ("native", 3) if bounded => 3,
                        ("native", 3 | 6) => u16::MAX,
                        _ => 0,
                    };
                    let near = slack == u16::MAX || (g.to_bits().abs_diff(w.to_bits()) <= slack && g.is_sign_negative() == w.is_sign_negative());
                    assert!(
                        same_f16(g, *w) || near,
                        "{what}: result {k} of a = {p:e} ({:#06x}), b = {q:e}, x = {:e}: got {g:e} ({:#06x}), expected {w:e} ({:#06x})",
                        p.to_bits(),
                        x[i],
                        g.to_bits(),
                        w.to_bits()
                    );
                }
                assert!(same_f16(f16::from_bits(pairs[2 * i]), p * q) && same_f16(f16::from_bits(pairs[2 * i + 1]), p + q), "{what}: pair {i}");
                let quad: Vec<f16> = quads[4 * i..4 * i + 4].iter().map(|h| f16::from_bits(*h)).collect();
                let want = [p * q, q * fx, -rx, -ry];
                assert!(quad.iter().zip(&want).all(|(g, w)| same_f16(*g, *w)), "{what}: quad {i}: {quad:?}, expected {want:?}");
                assert_eq!(wide[i], p.to_f32() * 3.0 + q.to_f32(), "{what}: wide {i}");
            }
            // The word past the last result: untouched by the sub-word stores around it.
            assert_eq!(out[7 * n], 0, "{what}: a store spilled past its half");
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: {n} invocations match");
        }
    }
}

/// What `narrow_int.spvasm` writes for bytes `a` and `b` at invocation `i`.
fn int_reference(a: i8, b: i8, i: u32) -> ([i8; 8], [i16; 4], [i32; 6]) {
    let safe = if b == 0 || b == -1 { 7 } else { b };
    let sh = (b & 7) as u32;
    let bytes = [a.wrapping_add(b), a.wrapping_sub(b), a.wrapping_mul(b), a / safe, a % safe, a >> sh, ((a as u8) << sh) as i8, !a ^ b.wrapping_neg()];
    let shorts = [a as i16 * b as i16, ((a as u8 as u16) * (b as u8 as u16)).wrapping_add(999) as i16, (a as i16).wrapping_mul(300) as i8 as i16, a.max(b).wrapping_add(b.wrapping_abs()) as i16];
    let lanes = 16_909_060i32.wrapping_add(i as i32).to_le_bytes();
    let ints = [
        (a < b) as i32 | (((a as u8) < (b as u8)) as i32) << 1,
        a as i32,
        a as u8 as i32,
        i32::from_le_bytes([a as u8, b as u8, a.wrapping_add(b) as u8, -5i8 as u8]),
        (lanes[2] as i8).wrapping_mul(lanes[0] as i8) as i32,
        ((a as f32) * 0.5) as i8 as i32,
    ];
    (bytes, shorts, ints)
}

#[test]
fn narrow_integer_arithmetic_matches_the_cpu() {
    let input = common::assembled("narrow_int");
    let n = 4096usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(8);
    let mut a: Vec<i8> = (0..n).map(|_| rng.random()).collect();
    let mut b: Vec<i8> = (0..n).map(|_| rng.random()).collect();
    // Every pair of the extremes.
    let edges = [i8::MIN, -1, 0, 1, i8::MAX, -7];
    for (k, (x, y)) in edges.iter().flat_map(|x| edges.iter().map(move |y| (*x, *y))).enumerate() {
        a[k] = x;
        b[k] = y;
    }
    for ctx in common::contexts() {
        for (target, mode) in targets(&ctx) {
            let what = format!("{} ({mode})", ctx.caps().name);
            let words = translated(&input, &target, mode);
            let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 5, label: "narrow_int", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
            let ba = ctx.buffer_from_slice(&a, "a").unwrap();
            let bb = ctx.buffer_from_slice(&b, "b").unwrap();
            let mut b8 = ctx.zeroed_buffer::<i8>(8 * n, "o8").unwrap();
            let mut b16 = ctx.zeroed_buffer::<i16>(4 * n, "o16").unwrap();
            let mut b32 = ctx.zeroed_buffer::<i32>(6 * n, "o32").unwrap();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &b8, &b16, &b32], images: &[], push_constants: &[], groups: [(n / 64) as u32, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let o8: Vec<i8> = ctx.read_buffer(&mut b8).unwrap();
            let o16: Vec<i16> = ctx.read_buffer(&mut b16).unwrap();
            let o32: Vec<i32> = ctx.read_buffer(&mut b32).unwrap();
            for i in 0..n {
                let (bytes, shorts, ints) = int_reference(a[i], b[i], i as u32);
                assert_eq!(&o8[8 * i..8 * i + 8], &bytes, "{what}: bytes of a = {}, b = {}", a[i], b[i]);
                assert_eq!(&o16[4 * i..4 * i + 4], &shorts, "{what}: shorts of a = {}, b = {}", a[i], b[i]);
                assert_eq!(&o32[6 * i..6 * i + 6], &ints, "{what}: ints of a = {}, b = {}, i = {i}", a[i], b[i]);
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: {n} invocations match");
        }
    }
}

/// Integer -> f16 conversions (`narrow_int_to_half`) of 16-, 32- and 8-bit integers, signed and
/// unsigned: rounded once to nearest even (ties such as 2049), to infinity from 65520 on.
#[test]
fn integer_to_f16_conversions_round_once() {
    let input = common::assembled("narrow_int_to_half");
    let n = 4096usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(12);
    let mut u16s: Vec<u16> = (0..n).map(|_| rng.random()).collect();
    let mut i16s: Vec<i16> = (0..n).map(|_| rng.random()).collect();
    let mut u32s: Vec<u32> = (0..n).map(|i| if i % 2 == 0 { rng.random_range(0..70_000) } else { rng.random() }).collect();
    let mut i32s: Vec<i32> = (0..n).map(|i| if i % 2 == 0 { rng.random_range(-70_000..70_000) } else { rng.random() }).collect();
    let u8s: Vec<u8> = (0..n).map(|_| rng.random()).collect();
    let edges: [i64; 12] = [0, 1, 2049, 2051, 4097, 65504, 65519, 65520, 65535, 65536, -65520, -2049];
    for (k, e) in edges.iter().enumerate() {
        u16s[k] = *e as u16;
        i16s[k] = *e as i16;
        u32s[k] = *e as u32;
        i32s[k] = *e as i32;
    }
    (u32s[20], i32s[20], i32s[21]) = (u32::MAX, i32::MIN, i32::MAX);
    let want = |v: i64| f16::from_f64(v as f64).to_bits();
    for ctx in common::contexts() {
        for (target, mode) in targets(&ctx) {
            let what = format!("{} ({mode})", ctx.caps().name);
            let words = translated(&input, &target, mode);
            let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 6, label: "narrow_int_to_half", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
            let ins = [
                ctx.buffer_from_slice(&u16s, "u16").unwrap(),
                ctx.buffer_from_slice(&i16s, "i16").unwrap(),
                ctx.buffer_from_slice(&u32s, "u32").unwrap(),
                ctx.buffer_from_slice(&i32s, "i32").unwrap(),
                ctx.buffer_from_slice(&u8s, "u8").unwrap(),
            ];
            let mut bh = ctx.zeroed_buffer::<u16>(5 * n, "h").unwrap();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&ins[0], &ins[1], &ins[2], &ins[3], &ins[4], &bh], images: &[], push_constants: &[], groups: [(n / 64) as u32, 1, 1] }])
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let h: Vec<u16> = ctx.read_buffer(&mut bh).unwrap();
            for i in 0..n {
                let values = [u16s[i] as i64, i16s[i] as i64, u32s[i] as i64, i32s[i] as i64, u8s[i] as i64];
                for (j, v) in values.iter().enumerate() {
                    let got = f16::from_bits(h[5 * i + j]);
                    assert_eq!(h[5 * i + j], want(*v), "{what}: {} {v} became {got}, expected {}", ["u16", "i16", "u32", "i32", "u8"][j], f16::from_bits(want(*v)));
                }
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
        }
    }
}

/// 32-bit integer -> bf16 conversions (`narrow_int_to_bf16`): legalized, a conversion to f32
/// would round once and the rounding to bf16 again; values such as 2^24 + 2^16 + 1 (just above
/// a tie of bf16, on one of f32) show it. Native results are only checked to be faithful.
#[test]
fn integer_to_bf16_conversions_round_once() {
    let input = common::assembled("narrow_int_to_bf16");
    let n = 4096usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(13);
    let mut a: Vec<i32> = (0..n).map(|i| if i % 2 == 0 { rng.random_range(-(1 << 26)..1 << 26) } else { rng.random() }).collect();
    let edges = [0, 1, -1, 257, (1 << 24) + (1 << 16) + 1, (1 << 24) + (1 << 16), -((1 << 24) + (1 << 16) + 1), (1 << 25) + (1 << 17) + 3, i32::MAX, i32::MIN, 0x7f80_0001, -0x0100_8001];
    a[..edges.len()].copy_from_slice(&edges);
    // Rounded once from the exact integer (half's from_f64 goes through f32 and rounds twice).
    let want = |v: f64| {
        let (mag, sign) = (v.abs() as u64, if v < 0.0 { 0x8000u16 } else { 0 });
        let bits = 64 - mag.leading_zeros();
        let (mut kept, mut shift) = (mag, 0);
        if bits > 8 {
            shift = bits - 8;
            let (rem, half) = (mag & ((1 << shift) - 1), 1u64 << (shift - 1));
            kept = (mag >> shift) + u64::from(rem > half || (rem == half && (mag >> shift) & 1 == 1));
        }
        ((kept as f32 * (shift as f32).exp2()).to_bits() >> 16) as u16 | sign
    };
    assert_eq!(half::bf16::from_bits(want(((1 << 24) + (1 << 16) + 1) as f64)).to_f64(), ((1 << 24) + (1 << 17)) as f64, "reference rounding");
    let mut ran = false;
    for ctx in common::contexts() {
        for (target, mode) in targets(&ctx) {
            if mode == "native" && !ctx.caps().shader_bfloat16 {
                continue;
            }
            ran = true;
            let what = format!("{} ({mode})", ctx.caps().name);
            let words = translated(&input, &target, mode);
            let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 2, label: "narrow_int_to_bf16", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
            let ba = ctx.buffer_from_slice(&a, "a").unwrap();
            let mut bo = ctx.zeroed_buffer::<u16>(2 * n, "o").unwrap();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&ba, &bo], images: &[], push_constants: &[], groups: [(n / 64) as u32, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let o: Vec<u16> = ctx.read_buffer(&mut bo).unwrap();
            for i in 0..n {
                for (j, v) in [a[i] as f64, a[i] as u32 as f64].iter().enumerate() {
                    let got = half::bf16::from_bits(o[2 * i + j]);
                    // Natively, a driver's conversion need only be faithful (the H100's
                    // truncates some values): within one bf16 step of the exact value. The
                    // legalized conversion must round once, to nearest even.
                    let step = if *v == 0.0 { 0.0 } else { (v.abs().log2().floor() - 7.0).exp2() };
                    let faithful = (got.to_f64() - v).abs() < step;
                    let ok = o[2 * i + j] == want(*v) || (mode == "native" && faithful);
                    assert!(ok, "{what}: {} {v} became {got}, expected {}", ["signed", "unsigned"][j], half::bf16::from_bits(want(*v)));
                }
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
        }
    }
    assert!(ran, "no device ran the kernel");
}

/// Invocation `i`'s record in `narrow_refs`'s `Items` (std430, 16 bytes): f16 scale at 0, i8 bias
/// at 2, u8 rgb at 4..7, f16 v[4] at 8.
fn item(scale: f16, bias: i8, rgb: [u8; 3], v: [f16; 4], pad: [u8; 2]) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[0..2].copy_from_slice(&scale.to_le_bytes());
    out[2] = bias as u8;
    out[3] = pad[0];
    out[4..7].copy_from_slice(&rgb);
    out[7] = pad[1];
    for (k, h) in v.iter().enumerate() {
        out[8 + 2 * k..10 + 2 * k].copy_from_slice(&h.to_le_bytes());
    }
    out
}

#[test]
fn buffer_references_to_narrow_data_match_the_cpu() {
    let input = common::assembled("narrow_refs");
    let n = 256usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(32);
    // Quarters below 8 and small integers: every sum and product the kernel forms is exact in
    // f16, so a driver that fuses a multiply and an add gives the same bits.
    let quarter = |rng: &mut rand::rngs::SmallRng| f16::from_f32(rng.random_range(-32i32..32) as f32 / 4.0);
    let h: Vec<f16> = (0..n).map(|_| quarter(&mut rng)).collect();
    let h2: Vec<f16> = (0..n).map(|_| quarter(&mut rng)).collect();
    let bytes: Vec<u8> = (0..n).map(|i| if i < 4 { [0, 1, 254, 255][i] } else { rng.random() }).collect();
    let items: Vec<[u8; 16]> = (0..n)
        .map(|_| {
            let v = [quarter(&mut rng), quarter(&mut rng), quarter(&mut rng), quarter(&mut rng)];
            item(f16::from_f32(rng.random_range(-4i32..=4) as f32), rng.random(), rng.random(), v, rng.random())
        })
        .collect();
    let item_bytes: Vec<u8> = items.iter().flatten().copied().collect();
    let shift = f16::from_f32(-1.75);
    for ctx in common::contexts() {
        if !ctx.caps().buffer_device_address {
            eprintln!("{}: no bufferDeviceAddress, skipped", ctx.caps().name);
            continue;
        }
        let mut all = targets(&ctx);
        // 16-bit storage but none in push constants: the f16 push constant alone makes the
        // module legalized.
        if let Some((native, _)) = all.iter().find(|(_, mode)| *mode == "native").cloned() {
            let mut no_push = native;
            no_push.storage_push_constant_16bit = false;
            all.push((no_push, "legalized"));
        }
        for (target, mode) in all {
            let what = format!("{} ({mode}, 16-bit push constants: {})", ctx.caps().name, target.storage_push_constant_16bit);
            let words = translated(&input, &target, mode);
            let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 0, push_constant_bytes: 52, label: "narrow_refs", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
            let bh = ctx.buffer_from_slice(&h, "h").unwrap();
            let bh2 = ctx.buffer_from_slice(&h2, "h2").unwrap();
            let bb = ctx.buffer_from_slice(&bytes, "bytes").unwrap();
            let mut bi = ctx.buffer_from_slice(&item_bytes, "items").unwrap();
            let mut bo = ctx.zeroed_buffer::<u16>(n, "o").unwrap();
            let mut bs = ctx.zeroed_buffer::<i16>(2 * n, "s").unwrap();
            let address = |b: &matbridge_runtime::Buffer| b.device_address().unwrap();
            let table: Vec<u64> = vec![address(&bh), n as u64];
            let bt = ctx.buffer_from_slice(&table, "table").unwrap();
            let mut push: Vec<u8> = [address(&bt), address(&bb), address(&bi), address(&bo), address(&bs), address(&bh2)].iter().flat_map(|a| a.to_le_bytes()).collect();
            push.extend(shift.to_le_bytes());
            push.resize(52, 0);
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[], images: &[], push_constants: &push, groups: [(n / 64) as u32, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let o: Vec<u16> = ctx.read_buffer(&mut bo).unwrap();
            let s: Vec<i16> = ctx.read_buffer(&mut bs).unwrap();
            let after: Vec<u8> = ctx.read_buffer(&mut bi).unwrap();
            for i in 0..n {
                let it = &items[i];
                let scale = f16::from_le_bytes([it[0], it[1]]);
                let bias = it[2] as i8;
                let v: Vec<f16> = (0..4).map(|k| f16::from_le_bytes([it[8 + 2 * k], it[9 + 2 * k]])).collect();
                let r = h[i] * scale + h2[i ^ 1];
                let r = r + (f16::from_f32(bytes[i] as f32) + f16::from_f32(bias as f32) + v[1]);
                let r = r + shift;
                assert_eq!(o[i], r.to_bits(), "{what}: O[{i}] = {}, expected {r}", f16::from_bits(o[i]));
                assert_eq!(s[2 * i], it[4] as i16 - it[6] as i16, "{what}: S[{}]", 2 * i);
                assert_eq!(s[2 * i + 1], (bytes[i] as i16).wrapping_mul(-3), "{what}: S[{}]", 2 * i + 1);
                let mut want = *it;
                want[5] = bytes[i].wrapping_add(1);
                for (k, x) in v.iter().enumerate() {
                    want[8 + 2 * k..10 + 2 * k].copy_from_slice(&(*x * f16::from_f32(2.0)).to_le_bytes());
                }
                assert_eq!(&after[16 * i..16 * i + 16], &want, "{what}: Items[{i}] (neighbouring bytes and padding must survive)");
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: {n} invocations match");
        }
    }
}

/// f16 atomics on a storage buffer (`narrow_atomics`) and through buffer references
/// (`narrow_atomics_refs`): native where the device has them; otherwise (and on the legalized
/// target) compare-and-swap loops on the 32-bit words holding the halves, reached through the
/// widened buffer or, where the device has f16 and 64-bit integers, through the word's address.
#[test]
fn f16_atomics_match_the_cpu() {
    let n = 512usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(64);
    // Quarters below 8: every partial sum of at most n/7 of them is exact in f16, so the sums
    // do not depend on the order the atomics take.
    let x: Vec<f16> = (0..n).map(|_| f16::from_f32(rng.random_range(-32i32..32) as f32 / 4.0)).collect();
    let start: Vec<f16> = (0..20 + n).map(|k| f16::from_f32(k as f32 / 2.0 - 4.0)).collect();
    for (kernel, references) in [("narrow_atomics", false), ("narrow_atomics_refs", true)] {
        let input = common::assembled(kernel);
        for ctx in common::contexts() {
            let caps = ctx.caps().clone();
            if references && !caps.buffer_device_address {
                continue;
            }
            let native = caps.shader_float16 && caps.storage_buffer_16bit && caps.atomic_float16 && caps.atomic_float16_add && caps.atomic_float16_min_max;
            let mut all = vec![targets(&ctx)[0].clone()];
            // A device with f16 but not these atomics: legalized for them alone, or (through
            // references, with 64-bit integers) built on the words' addresses.
            if caps.shader_float16 && caps.storage_buffer_16bit {
                let mode = match (native, references && caps.shader_int64) {
                    (true, _) => "native",
                    (false, true) => "addressed",
                    (false, false) => "legalized",
                };
                all.push((caps, mode));
            }
            for (target, mode) in all {
                let what = format!("{} ({kernel}, {mode})", ctx.caps().name);
                let words = translated(&input, &target, mode);
                let bindings = if references { 0 } else { 3 };
                let p = ctx
                    .create_pipeline(&PipelineDesc { spirv: &words, bindings, push_constant_bytes: if references { 24 } else { 0 }, label: kernel, ..Default::default() })
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let mut bs = ctx.buffer_from_slice(&start, "s").unwrap();
                let bx = ctx.buffer_from_slice(&x, "x").unwrap();
                let mut bo = ctx.zeroed_buffer::<u16>(n, "olds").unwrap();
                let push: Vec<u8> = if references { [&bs, &bx, &bo].iter().flat_map(|b| b.device_address().unwrap().to_le_bytes()).collect() } else { Vec::new() };
                let buffers: &[&matbridge_runtime::Buffer] = if references { &[] } else { &[&bs, &bx, &bo] };
                ctx.run(&[Dispatch { pipeline: &p, buffers, images: &[], push_constants: &push, groups: [(n / 64) as u32, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
                let s: Vec<f16> = ctx.read_buffer(&mut bs).unwrap();
                let olds: Vec<f16> = ctx.read_buffer(&mut bo).unwrap();
                let mut want = start.clone();
                for i in 0..n {
                    want[i % 7] += x[i];
                    want[8 + i % 3] = want[8 + i % 3].max(x[i]);
                    want[12 + i % 5] = want[12 + i % 5].min(x[i]);
                    want[20 + i] = x[i];
                }
                for (k, (got, want)) in s.iter().zip(&want).enumerate() {
                    assert_eq!(got.to_bits(), want.to_bits(), "{what}: S[{k}] = {got}, expected {want}");
                }
                for i in 0..n {
                    assert_eq!(olds[i].to_bits(), start[20 + i].to_bits(), "{what}: old value of S[{}]", 20 + i);
                }
                ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
                eprintln!("{what}: {n} invocations of f16 atomics match");
            }
        }
    }
}

/// Atomics on 8- and 16-bit integers (no Vulkan device has them natively): add, signed
/// maximum, increment in a loop header, compare-exchange and load, legalized into
/// compare-and-swap loops on words, on every device.
#[test]
fn narrow_integer_atomics_match_the_cpu() {
    let input = common::assembled("narrow_int_atomics");
    let n = 512usize;
    let c0: Vec<i16> = (0..8).map(|k| (k as i16) * 1000 - 3000).collect();
    let b0: Vec<u8> = (0..8 + n).map(|k| k as u8).collect();
    let mut c = c0.clone();
    let mut b = b0.clone();
    let mut o = vec![0u32; 2 * n];
    for i in 0..n {
        c[i % 4] = c[i % 4].wrapping_add((i % 5) as i16 - 2);
        c[4 + i % 4] = c[4 + i % 4].max(((i * 37) % 199) as i16 - 99);
        b[i % 8] = b[i % 8].wrapping_add(3);
        let start = (8 + i) as u8;
        let comparator = if i % 2 == 1 { 255 } else { start };
        let old = b[8 + i];
        if old == comparator {
            b[8 + i] = i as u8;
        }
        o[2 * i] = old as u32;
        o[2 * i + 1] = b[8 + i] as u32;
    }
    for ctx in common::contexts() {
        // The device itself too: it has 8- and 16-bit types, but no atomics on them.
        for target in [targets(&ctx).remove(0).0, ctx.caps().clone()] {
            let mode = "legalized";
            let what = format!("{} ({mode}, shaderInt8: {})", ctx.caps().name, target.shader_int8);
            let words = translated(&input, &target, mode);
            let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 3, label: "narrow_int_atomics", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
            let mut bc = ctx.buffer_from_slice(&c0, "c").unwrap();
            let mut bb = ctx.buffer_from_slice(&b0, "b").unwrap();
            let mut bo = ctx.zeroed_buffer::<u32>(2 * n, "o").unwrap();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&bc, &bb, &bo], images: &[], push_constants: &[], groups: [(n / 64) as u32, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got_c: Vec<i16> = ctx.read_buffer(&mut bc).unwrap();
            let got_b: Vec<u8> = ctx.read_buffer(&mut bb).unwrap();
            let got_o: Vec<u32> = ctx.read_buffer(&mut bo).unwrap();
            assert_eq!(got_c, c, "{what}: C");
            assert_eq!(got_b, b, "{what}: B");
            assert_eq!(got_o, o, "{what}: O");
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: {n} invocations of 8- and 16-bit atomics match");
        }
    }
}

/// Buffer-reference pointers to f16 stepped with `OpPtrAccessChain` and kept in function
/// variables (`narrow_ref_values`): on the legalized target each such pointer becomes an address
/// again (its word, bit-cast) before it is stored.
#[test]
fn derived_f16_references_kept_in_variables_match_the_cpu() {
    let input = common::assembled("narrow_ref_values");
    let n = 256usize;
    let src: Vec<f16> = (0..n + 8).map(|k| f16::from_f32(k as f32 / 4.0 - 8.0)).collect();
    for ctx in common::contexts() {
        if !ctx.caps().buffer_device_address {
            continue;
        }
        for (target, mode) in targets(&ctx) {
            let what = format!("{} ({mode})", ctx.caps().name);
            let words = translated(&input, &target, mode);
            let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, push_constant_bytes: 16, label: "narrow_ref_values", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
            let bs = ctx.buffer_from_slice(&src, "src").unwrap();
            let mut bd = ctx.buffer_from_slice(&vec![f16::from_f32(-1.5); n + 2], "dst").unwrap();
            let push: Vec<u8> = [&bs, &bd].iter().flat_map(|b| b.device_address().unwrap().to_le_bytes()).collect();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[], images: &[], push_constants: &push, groups: [(n / 64) as u32, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let d: Vec<f16> = ctx.read_buffer(&mut bd).unwrap();
            assert_eq!(&d[..2], &[f16::from_f32(-1.5); 2], "{what}: dst[0..2] must stay");
            for i in 0..n {
                assert_eq!(d[2 + i], src[8 + i] * f16::from_f32(2.0), "{what}: dst[{}]", 2 + i);
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
        }
    }
}

/// f16 matrices in storage buffers (`narrow_matrices`, the operand layout of llama.cpp's aligned
/// matrix kernels): column- and row-major matrices loaded and stored whole, f32 matrices
/// converted to f16, columns and elements reached through access chains, loaded and stored
/// (a row-major matrix's column is strided: its halves are stored one by one), against the CPU.
#[test]
fn f16_matrices_in_blocks_match_the_cpu() {
    let input = common::assembled("narrow_matrices");
    let n = 256usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(41);
    // Quarters below 8: their sums are exact in f16.
    let quarter = |rng: &mut rand::rngs::SmallRng| f16::from_f32(rng.random_range(-32i32..32) as f32 / 4.0);
    let a: Vec<f16> = (0..8 * n).map(|_| quarter(&mut rng)).collect();
    let b: Vec<f16> = (0..8 * n).map(|_| quarter(&mut rng)).collect();
    let c = conversion_inputs(&mut rng, 8 * n);
    // Element (column, row) of matrix i: A and C column-major (4 rows a column), B row-major
    // (2 columns a row).
    let at_a = |i: usize, col: usize, row: usize| a[8 * i + 4 * col + row];
    let at_b = |i: usize, col: usize, row: usize| b[8 * i + 2 * row + col];
    for ctx in common::contexts() {
        for (target, mode) in targets(&ctx) {
            let what = format!("{} ({mode})", ctx.caps().name);
            let words = translated(&input, &target, mode);
            let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 7, label: "narrow_matrices", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
            let ba = ctx.buffer_from_slice(&a, "a").unwrap();
            let bb = ctx.buffer_from_slice(&b, "b").unwrap();
            let bc = ctx.buffer_from_slice(&c, "c").unwrap();
            let mut bo = ctx.zeroed_buffer::<u16>(8 * n, "o").unwrap();
            let mut bz = ctx.zeroed_buffer::<u16>(8 * n, "z").unwrap();
            let mut br = ctx.zeroed_buffer::<u16>(8 * n, "r").unwrap();
            let mut bs = ctx.zeroed_buffer::<u16>(n, "s").unwrap();
            let buffers = [&ba, &bb, &bc, &bo, &bz, &br, &bs];
            ctx.run(&[Dispatch { pipeline: &p, buffers: &buffers, images: &[], push_constants: &[], groups: [(n / 64) as u32, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let o: Vec<f16> = ctx.read_buffer(&mut bo).unwrap();
            let z: Vec<f16> = ctx.read_buffer(&mut bz).unwrap();
            let r: Vec<f16> = ctx.read_buffer(&mut br).unwrap();
            let s: Vec<f16> = ctx.read_buffer(&mut bs).unwrap();
            for i in 0..n {
                for col in 0..2 {
                    for row in 0..4 {
                        let k = 8 * i + 4 * col + row;
                        let sum = at_a(i, col, row) + at_b(i, col, row);
                        assert_eq!(o[k].to_bits(), sum.to_bits(), "{what}: O[{i}][{col}][{row}] = {}, expected {sum}", o[k]);
                        let h = f16::from_f32(c[k]);
                        assert!(same_f16(z[k], h), "{what}: Z[{i}][{col}][{row}] = {}, expected {h} (from {:e})", z[k], c[k]);
                        let want = match (col, row) {
                            (1, _) => at_a(i ^ 1, 1, row),
                            (0, 2) => at_b(i ^ 2, 1, 3),
                            _ => at_b(i, col, row),
                        };
                        let got = r[8 * i + 2 * row + col];
                        assert_eq!(got.to_bits(), want.to_bits(), "{what}: R[{i}][{col}][{row}] = {got}, expected {want}");
                    }
                }
                let want = at_a(i ^ 3, 0, 3) + at_b(i, 0, 1);
                assert_eq!(s[i].to_bits(), want.to_bits(), "{what}: S[{i}] = {}, expected {want}", s[i]);
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: {n} invocations of f16 matrices match");
        }
    }
}

/// `narrow_shared_tiles`: workgroup arrays of f16, of structs of f16 and int8, and of uint8 that
/// fit every test device as written (21 KiB) but none widened (50 KiB). Legalized, they are held
/// packed in 32-bit words (neighbouring invocations storing halves and bytes of one word);
/// native where the device has the types. Exact: the sums are of multiples of 1/16 below 2^8.
#[test]
fn packed_workgroup_arrays_of_narrow_data_match_the_cpu() {
    let input = common::assembled("narrow_shared_tiles");
    let (m, n, k) = (256usize, 256usize, 64usize);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(21);
    let quarter = |rng: &mut rand::rngs::SmallRng| f16::from_f32(rng.random_range(-8i32..=8) as f32 / 4.0);
    let a: Vec<f16> = (0..m * k).map(|_| quarter(&mut rng)).collect();
    let b: Vec<f16> = (0..k * n).map(|_| quarter(&mut rng)).collect();
    let codes: Vec<u8> = (0..m * 32).map(|_| rng.random()).collect();
    let want: Vec<f32> = (0..m * n)
        .map(|i| {
            let (r, c) = (i / n, i % n);
            let sum: f32 = (0..k).map(|x| a[r * k + x].to_f32() * b[x * n + c].to_f32()).sum();
            let scale = ((r % 5) as f32 - 2.0) * 0.5;
            let bias = (r % 7) as f32 - 3.0;
            sum * scale + bias + f32::from(codes[r * 32 + c % 32])
        })
        .collect();
    let push: Vec<u8> = [m as u32, n as u32, k as u32].iter().flat_map(|v| v.to_le_bytes()).collect();
    for ctx in common::contexts() {
        for (target, mode) in targets(&ctx) {
            let what = format!("{} ({mode})", ctx.caps().name);
            let (words, report) = translate(&input, &target).unwrap_or_else(|e| panic!("{what}: {e}"));
            let packed = report.passes.iter().filter(|p| p.name == "legalize-narrow-types").flat_map(|p| &p.notes).any(|n| n.starts_with("4 workgroup variables"));
            assert_eq!(packed, mode == "legalized", "{what}: {report:?}");
            tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{what}: {e}"));
            let p = ctx
                .create_pipeline(&PipelineDesc { spirv: &words, bindings: 4, push_constant_bytes: 12, label: "narrow_shared_tiles", ..Default::default() })
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let ba = ctx.buffer_from_slice(&a, "a").unwrap();
            let bb = ctx.buffer_from_slice(&b, "b").unwrap();
            let bc = ctx.buffer_from_slice(&codes, "codes").unwrap();
            let mut bd = ctx.zeroed_buffer::<f32>(m * n, "d").unwrap();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&ba, &bb, &bc, &bd], images: &[], push_constants: &push, groups: [(n / 128) as u32, (m / 128) as u32, 1] }])
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let got: Vec<f32> = ctx.read_buffer(&mut bd).unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{what}: D[{}][{}]", i / n, i % n);
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: {m} x {n} x {k} through packed workgroup tiles matches");
        }
    }
}

/// f16 atomic add and max on workgroup arrays (`narrow_atomics_shared`): where the device lacks
/// them (every test device), the arrays are held packed in words and the atomics loop on them,
/// both on the legalized target and on a device with f16 but not these atomics (lavapipe);
/// native where the device has them.
#[test]
fn f16_atomics_on_workgroup_memory_match_the_cpu() {
    let input = common::assembled("narrow_atomics_shared");
    let groups = 16usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(65);
    // Quarters below 8: the sums of eight of them are exact in f16, in any order.
    let x: Vec<f16> = (0..64 * groups).map(|_| f16::from_f32(rng.random_range(-32i32..32) as f32 / 4.0)).collect();
    let want: Vec<f16> = (0..16 * groups)
        .map(|k| {
            let (g, b) = (k / 16, k % 16);
            let bucket = (0..8).map(|j| x[g * 64 + b % 8 + 8 * j]);
            if b < 8 {
                f16::from_f32(bucket.map(f16::to_f32).sum())
            } else {
                bucket.fold(f16::from_f32(-65504.0), f16::max)
            }
        })
        .collect();
    for ctx in common::contexts() {
        let caps = ctx.caps().clone();
        let native = caps.shader_float16 && caps.storage_buffer_16bit && caps.atomic_float16_add && caps.atomic_float16_min_max;
        let mut all = vec![targets(&ctx)[0].clone()];
        if caps.shader_float16 && caps.storage_buffer_16bit {
            all.push((caps, if native { "native" } else { "legalized" }));
        }
        for (target, mode) in all {
            let what = format!("{} ({mode})", ctx.caps().name);
            let (words, report) = translate(&input, &target).unwrap_or_else(|e| panic!("{what}: {e}"));
            let packed = report.passes.iter().filter(|p| p.name == "legalize-narrow-types").flat_map(|p| &p.notes).any(|n| n.starts_with("2 workgroup variables"));
            assert_eq!(packed, mode == "legalized", "{what}: {report:?}");
            tools::validate(&words, "vulkan1.3").unwrap_or_else(|e| panic!("{what}: {e}"));
            let p = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 2, label: "narrow_atomics_shared", ..Default::default() }).unwrap_or_else(|e| panic!("{what}: {e}"));
            let bx = ctx.buffer_from_slice(&x, "x").unwrap();
            let mut bo = ctx.zeroed_buffer::<u16>(16 * groups, "o").unwrap();
            ctx.run(&[Dispatch { pipeline: &p, buffers: &[&bx, &bo], images: &[], push_constants: &[], groups: [groups as u32, 1, 1] }]).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got: Vec<f16> = ctx.read_buffer(&mut bo).unwrap();
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g.to_bits(), w.to_bits(), "{what}: workgroup {} {} {}: {g}, expected {w}", k / 16, if k % 16 < 8 { "sum" } else { "max" }, k % 8);
            }
            ctx.check_validation().unwrap_or_else(|e| panic!("{what}: {e}"));
            eprintln!("{what}: {groups} workgroups of f16 atomics on workgroup memory match");
        }
    }
}
