//! `asin`, `acos`, `atan` and `atan2`, and their `pi` forms (`asinpi`, `acospi`, `atanpi`,
//! `atan2pi`), of floats and halves to OpenCL's accuracy (4 units for `asin` and `acos`, 5 for
//! `atan` and the `pi` forms, 6 for `atan2` and `atan2pi`). lavapipe's `GLSL.std.450` `Asin`,
//! `Acos` and `Atan` are 300 to 3,800 units off (a short polynomial over the whole range), and
//! its `Atan2(0, 0)` is 3pi/4. Each is a helper `matbridge.<name>_f32` on Cephes' single-precision
//! minimax polynomials:
//!
//! - `asin`: `|x| + |x| z P(z)` with `z = x^2` to 1/2; beyond, `pi/2 - 2 asin(s)` with `s =
//!   sqrt((1 - |x|)/2)` (exact halving of an exact difference), `pi/2` in two parts; NaN past 1.
//! - `acos`: `pi/2 - asin x` to 1/2; `2 asin(s)` above; `pi - 2 asin(s)` below -1/2.
//! - `atan`: `|x|` reduced to `t` in [-0.42, 0.42] by `t = -1/|x|` (adding pi/2) above
//!   tan(3pi/8) or `(|x| - 1)/(|x| + 1)` (adding pi/4) above tan(pi/8), then `t + t z Q(z)`.
//! - `atan2(y, x)`: `atan(|y|/|x|)` (both scaled first by a power of two that brings the
//!   larger into [2^-64, 2^64], where every driver's division is accurate; 0 for two zeros, 1
//!   for two infinities, infinity where the quotient overflows), `pi` minus it for `x` of negative sign (`-0` included), then
//!   `y`'s sign: C99's values on both axes and at the infinities.
//! - The `pi` forms are these times `1/pi`.
//!
//! Odd functions take `x`'s sign last, so `-0` stays `-0`; NaNs stay NaN. `tests/
//! opencl_kernels.rs` (`inverse_trigonometry_to_opencl_accuracy`) holds the devices to OpenCL's
//! bounds. Doubles (`matbridge.<name>_f64`) use fdlibm's double `atan` (reduction at 7/16,
//! 11/16, 19/16, 39/16; `atan(c)` in two parts; an 11-term polynomial), `asin` as `atan(|x| /
//! sqrt((1 - |x|)(1 + |x|)))`, `acos` as `2 atan(sqrt((1 - x)/(1 + x)))`: within 2 units on
//! lavapipe.

use super::scalar::Scalar;
use super::Lower;
use spirv::{GlslStd450Op as G, Op, OpenclStd100Op as CL, Word};

/// Cephes' `asinf` polynomial, highest power first.
const ASIN: [f32; 5] = [4.216_32e-2, 2.418_131e-2, 4.547_002_6e-2, 7.495_300_3e-2, 1.666_675_2e-1];
/// Cephes' `atanf` polynomial, highest power first.
const ATAN: [f32; 4] = [8.053_744_5e-2, -1.387_768_6e-1, 1.997_771_1e-1, -3.333_295e-1];
/// pi, pi/2 and pi/4 as a float and the rest.
const PI: (f32, f32) = (std::f32::consts::PI, -8.742_278e-8);
const HALF_PI: (f32, f32) = (std::f32::consts::FRAC_PI_2, -4.371_139e-8);
const QUARTER_PI: (f32, f32) = (std::f32::consts::FRAC_PI_4, -2.185_569_5e-8);
/// For doubles, fdlibm's `atan`: `atan(1/2)`, `atan(1)`, `atan(3/2)`, `atan(inf)` as a double
/// and the rest, and its polynomial `aT`.
const ATAN_HI_DOUBLE: [u64; 4] = [0x3fdd_ac67_0561_bb4f, 0x3fe9_21fb_5444_2d18, 0x3fef_730b_d281_f69b, 0x3ff9_21fb_5444_2d18];
const ATAN_LO_DOUBLE: [u64; 4] = [0x3c7a_2b7f_222f_65e2, 0x3c81_a626_3314_5c07, 0x3c70_0788_7af0_cbbd, 0x3c91_a626_3314_5c07];
const ATAN_DOUBLE: [u64; 11] = [
    0x3fd5_5555_5555_550d,
    0xbfc9_9999_9998_ebc4,
    0x3fc2_4924_9200_83ff,
    0xbfbc_71c6_fe23_1671,
    0x3fb7_45cd_c54c_206e,
    0xbfb3_b0f2_af74_9a6d,
    0x3fb1_0d66_a0d0_3d51,
    0xbfad_de2d_52de_fd9a,
    0x3fa9_7b4b_2476_0deb,
    0xbfa2_b444_2c6a_6c2f,
    0x3f90_ad3a_e322_da11,
];
/// pi and pi/2 as a double and the rest.
const PI_DOUBLE: (f64, f64) = (std::f64::consts::PI, 1.224_646_799_147_353_2e-16);
const HALF_PI_DOUBLE: (f64, f64) = (std::f64::consts::FRAC_PI_2, 6.123_233_995_736_766e-17);

impl Lower<'_, '_> {
    /// `op` of `args` (floats or halves of type `ty`) to OpenCL's accuracy, or `None` for
    /// other types.
    pub(super) fn precise_inverse_trigonometry(&mut self, op: CL, ty: Word, args: &[Word]) -> Option<Word> {
        let width = self.helper_width(ty)?;
        let fty = self.b.module.type_float(width);
        let asin = self.unary_helper(width, "asin", |s, x| s.asin(x));
        let acos = self.unary_helper(width, "acos", |s, x| s.acos(x));
        let atan = self.unary_helper(width, "atan", |s, x| s.atan(x));
        let atan2 = self.helper_of_width(width, &format!("matbridge.atan2_f{width}"), fty, &[fty; 2], |s, p| s.atan2(p[0], p[1]));
        let over_pi = |name: &str, helper: Word, arity: usize, cx: &mut Self| {
            cx.helper_of_width(width, &format!("matbridge.{name}_f{width}"), fty, &vec![fty; arity], |s, p| {
                let v = s.call(helper, p);
                let k = s.fd(std::f64::consts::FRAC_1_PI);
                s.fop(Op::FMul, v, k)
            })
        };
        let helper = match op {
            CL::asin => asin,
            CL::acos => acos,
            CL::atan => atan,
            CL::atan2 => atan2,
            CL::asinpi => over_pi("asinpi", asin, 1, self),
            CL::acospi => over_pi("acospi", acos, 1, self),
            CL::atanpi => over_pi("atanpi", atan, 1, self),
            CL::atan2pi => over_pi("atan2pi", atan2, 2, self),
            _ => return None,
        };
        Some(self.per_component_of(ty, args, helper))
    }
}

impl Scalar<'_, '_> {
    /// `(p, reflected)` for `a = |x| <= 1`: `p = asin a` when not `reflected` (`a <= 1/2`),
    /// else `asin(sqrt((1 - a)/2))`.
    fn asin_core(&mut self, a: Word) -> (Word, Word) {
        let f = self.f();
        let (one, half) = (self.fc(1.0), self.fc(0.5));
        let reflected = self.test(Op::FOrdGreaterThan, a, half);
        let rest = self.fop(Op::FSub, one, a);
        let zr = self.fop(Op::FMul, rest, half);
        let s = self.gl(G::Sqrt, f, &[zr]);
        let aa = self.fop(Op::FMul, a, a);
        let v = self.pick_f(reflected, s, a);
        let z = self.pick_f(reflected, zr, aa);
        let mut p = self.fc(ASIN[0]);
        for c in &ASIN[1..] {
            let t = self.fop(Op::FMul, p, z);
            let c = self.fc(*c);
            p = self.fop(Op::FAdd, t, c);
        }
        let t = self.fop(Op::FMul, p, z);
        let t = self.fop(Op::FMul, t, v);
        (self.fop(Op::FAdd, v, t), reflected)
    }

    /// `hi - (v - lo)` for a constant `(hi, lo)`: `single` for floats, `double` for doubles.
    fn minus_from(&mut self, single: (f32, f32), double: (f64, f64), v: Word) -> Word {
        let (hi, lo) = if self.width == 64 { (self.fd(double.0), self.fd(double.1)) } else { (self.fc(single.0), self.fc(single.1)) };
        let d = self.fop(Op::FSub, v, lo);
        self.fop(Op::FSub, hi, d)
    }

    fn nan_outside_one(&mut self, x: Word, v: Word) -> Word {
        let f = self.f();
        let a = self.gl(G::FAbs, f, &[x]);
        let one = self.fd(1.0);
        let outside = self.test(Op::FOrdGreaterThan, a, one);
        let nan = self.fd(f64::NAN);
        let v = self.pick_f(outside, nan, v);
        let boolean = self.b.module.type_bool();
        let is_nan = self.b.op(Op::IsNan, boolean, &[x]);
        self.pick_f(is_nan, x, v)
    }

    /// `asin x`.
    fn asin(&mut self, x: Word) -> Word {
        let f = self.f();
        let a = self.gl(G::FAbs, f, &[x]);
        if self.width == 64 {
            // atan(a / sqrt((1 - a)(1 + a))), pi/2 at 1.
            let one = self.fd(1.0);
            let below = self.fop(Op::FSub, one, a);
            let above = self.fop(Op::FAdd, one, a);
            let product = self.fop(Op::FMul, below, above);
            let root = self.gl(G::Sqrt, f, &[product]);
            let r = self.fop(Op::FDiv, a, root);
            let v = self.atan_core(r);
            let at_one = self.test(Op::FOrdEqual, a, one);
            let half_pi = self.fd(std::f64::consts::FRAC_PI_2);
            let v = self.pick_f(at_one, half_pi, v);
            let v = self.copysign(v, x);
            return self.nan_outside_one(x, v);
        }
        let (p, reflected) = self.asin_core(a);
        let twice = self.fop(Op::FAdd, p, p);
        let far = self.minus_from(HALF_PI, HALF_PI_DOUBLE, twice);
        let v = self.pick_f(reflected, far, p);
        let v = self.copysign(v, x);
        self.nan_outside_one(x, v)
    }

    /// `acos x`.
    fn acos(&mut self, x: Word) -> Word {
        let f = self.f();
        let a = self.gl(G::FAbs, f, &[x]);
        if self.width == 64 {
            // 2 atan(sqrt((1 - x)/(1 + x))), pi at -1.
            let one = self.fd(1.0);
            let below = self.fop(Op::FSub, one, x);
            let above = self.fop(Op::FAdd, one, x);
            let q = self.fop(Op::FDiv, below, above);
            let root = self.gl(G::Sqrt, f, &[q]);
            let v = self.atan_core(root);
            let v = self.fop(Op::FAdd, v, v);
            let minus_one = self.fd(-1.0);
            let at_minus_one = self.test(Op::FOrdEqual, x, minus_one);
            let pi = self.fd(std::f64::consts::PI);
            let v = self.pick_f(at_minus_one, pi, v);
            return self.nan_outside_one(x, v);
        }
        let (p, reflected) = self.asin_core(a);
        let signed = self.copysign(p, x);
        let middle = self.minus_from(HALF_PI, HALF_PI_DOUBLE, signed);
        let twice = self.fop(Op::FAdd, p, p);
        let left = self.minus_from(PI, PI_DOUBLE, twice);
        let zero = self.fc(0.0);
        let negative = self.test(Op::FOrdLessThan, x, zero);
        let outer = self.pick_f(negative, left, twice);
        let v = self.pick_f(reflected, outer, middle);
        self.nan_outside_one(x, v)
    }

    /// `atan a` for `a >= 0` (infinity included).
    fn atan_core(&mut self, a: Word) -> Word {
        if self.width == 64 {
            return self.atan_core_double(a);
        }
        let (one, zero) = (self.fc(1.0), self.fc(0.0));
        let (high, low) = (self.fc(2.414_213_6), self.fc(0.414_213_57));
        let big = self.test(Op::FOrdGreaterThan, a, high);
        let mid = self.test(Op::FOrdGreaterThan, a, low);
        // One quotient: -1/a above tan(3pi/8), (a - 1)/(a + 1) above tan(pi/8).
        let minus_one = self.fc(-1.0);
        let num = self.fop(Op::FSub, a, one);
        let den = self.fop(Op::FAdd, a, one);
        let num = self.pick_f(big, minus_one, num);
        let den = self.pick_f(big, a, den);
        let folded = self.fop(Op::FDiv, num, den);
        let t = self.pick_f(mid, folded, a);
        let (qh, ql, hh, hl) = (self.fc(QUARTER_PI.0), self.fc(QUARTER_PI.1), self.fc(HALF_PI.0), self.fc(HALF_PI.1));
        let base_hi = self.pick_f(mid, qh, zero);
        let base_hi = self.pick_f(big, hh, base_hi);
        let base_lo = self.pick_f(mid, ql, zero);
        let base_lo = self.pick_f(big, hl, base_lo);
        let z = self.fop(Op::FMul, t, t);
        let mut p = self.fc(ATAN[0]);
        for c in &ATAN[1..] {
            let m = self.fop(Op::FMul, p, z);
            let c = self.fc(*c);
            p = self.fop(Op::FAdd, m, c);
        }
        let m = self.fop(Op::FMul, p, z);
        let m = self.fop(Op::FMul, m, t);
        let y = self.fop(Op::FAdd, m, t);
        let y = self.fop(Op::FAdd, y, base_lo);
        self.fop(Op::FAdd, base_hi, y)
    }

    /// fdlibm's `atan` for `a >= 0`: `a` reduced at 7/16, 11/16, 19/16 and 39/16 to `t` around
    /// 0, 1/2, 1, 3/2 or infinity, then `atan(c) + t - t (s1 + s2)` with `atan(c)` in two parts.
    fn atan_core_double(&mut self, a: Word) -> Word {
        let (one, two, one_half) = (self.fd(1.0), self.fd(2.0), self.fd(1.5));
        // Each interval's quotient's operands; one quotient of those that serve.
        let twice = self.fop(Op::FMul, two, a);
        let n0 = self.fop(Op::FSub, twice, one);
        let d0 = self.fop(Op::FAdd, two, a);
        let n1 = self.fop(Op::FSub, a, one);
        let d1 = self.fop(Op::FAdd, a, one);
        let n2 = self.fop(Op::FSub, a, one_half);
        let scaled = self.fop(Op::FMul, one_half, a);
        let d2 = self.fop(Op::FAdd, one, scaled);
        let n3 = self.fd(-1.0);
        let limits = [0.4375, 0.6875, 1.1875, 2.4375];
        let inside: Vec<Word> = limits
            .iter()
            .map(|l| {
                let c = self.fd(*l);
                self.test(Op::FOrdLessThan, a, c)
            })
            .collect();
        // From the largest interval down, so the smallest that holds `a` wins.
        let (mut num, mut den) = (n3, a);
        let (mut hi, mut lo) = (self.fd(f64::from_bits(ATAN_HI_DOUBLE[3])), self.fd(f64::from_bits(ATAN_LO_DOUBLE[3])));
        for (id, (n, d)) in [(n0, d0), (n1, d1), (n2, d2)].into_iter().enumerate().rev() {
            let (h, l) = (self.fd(f64::from_bits(ATAN_HI_DOUBLE[id])), self.fd(f64::from_bits(ATAN_LO_DOUBLE[id])));
            num = self.pick_f(inside[id + 1], n, num);
            den = self.pick_f(inside[id + 1], d, den);
            hi = self.pick_f(inside[id + 1], h, hi);
            lo = self.pick_f(inside[id + 1], l, lo);
        }
        let quotient = self.fop(Op::FDiv, num, den);
        let t = self.pick_f(inside[0], a, quotient);
        let z = self.fop(Op::FMul, t, t);
        let w = self.fop(Op::FMul, z, z);
        let even: Vec<u64> = ATAN_DOUBLE.iter().step_by(2).copied().collect();
        let odd: Vec<u64> = ATAN_DOUBLE.iter().skip(1).step_by(2).copied().collect();
        let mut s1 = self.fd(f64::from_bits(even[even.len() - 1]));
        for c in even[..even.len() - 1].iter().rev() {
            let m = self.fop(Op::FMul, w, s1);
            let c = self.fd(f64::from_bits(*c));
            s1 = self.fop(Op::FAdd, c, m);
        }
        let s1 = self.fop(Op::FMul, z, s1);
        let mut s2 = self.fd(f64::from_bits(odd[odd.len() - 1]));
        for c in odd[..odd.len() - 1].iter().rev() {
            let m = self.fop(Op::FMul, w, s2);
            let c = self.fd(f64::from_bits(*c));
            s2 = self.fop(Op::FAdd, c, m);
        }
        let s2 = self.fop(Op::FMul, w, s2);
        let s = self.fop(Op::FAdd, s1, s2);
        let ts = self.fop(Op::FMul, t, s);
        let near_zero = self.fop(Op::FSub, t, ts);
        let d = self.fop(Op::FSub, ts, lo);
        let d = self.fop(Op::FSub, d, t);
        let reduced = self.fop(Op::FSub, hi, d);
        self.pick_f(inside[0], near_zero, reduced)
    }

    /// `atan x`.
    fn atan(&mut self, x: Word) -> Word {
        let f = self.f();
        let a = self.gl(G::FAbs, f, &[x]);
        let v = self.atan_core(a);
        let v = self.copysign(v, x);
        let boolean = self.b.module.type_bool();
        let is_nan = self.b.op(Op::IsNan, boolean, &[x]);
        self.pick_f(is_nan, x, v)
    }

    /// `atan2(y, x)`.
    fn atan2(&mut self, y: Word, x: Word) -> Word {
        let (f, u) = (self.f(), self.u());
        let ay = self.gl(G::FAbs, f, &[y]);
        let ax = self.gl(G::FAbs, f, &[x]);
        // Both scaled by a power of two that keeps the larger inside [2^-64, 2^64]: drivers
        // divide by multiplying with a reciprocal that flushes to zero past 2^126 (NVIDIA's
        // atan2(1e30, 3.4e38) was 0).
        let larger = self.gl(G::NMax, f, &[ax, ay]);
        let (high, low) = (self.fw(0x5f80_0000, 0x43f0_0000_0000_0000), self.fw(0x1f80_0000, 0x3bf0_0000_0000_0000));
        let above = self.test(Op::FOrdGreaterThan, larger, high);
        let below = self.test(Op::FOrdLessThan, larger, low);
        let one = self.fd(1.0);
        let scale = self.pick_f(above, low, one);
        let scale = self.pick_f(below, high, scale);
        let sy = self.fop(Op::FMul, ay, scale);
        let sx = self.fop(Op::FMul, ax, scale);
        let r = self.fop(Op::FDiv, sy, sx);
        let (zero, inf) = (self.fd(0.0), self.fd(f64::INFINITY));
        let y_zero = self.test(Op::FOrdEqual, ay, zero);
        let x_zero = self.test(Op::FOrdEqual, ax, zero);
        let boolean = self.b.module.type_bool();
        let zeros = self.b.op(Op::LogicalAnd, boolean, &[y_zero, x_zero]);
        let y_inf = self.test(Op::FOrdEqual, ay, inf);
        let x_inf = self.test(Op::FOrdEqual, ax, inf);
        let infinities = self.b.op(Op::LogicalAnd, boolean, &[y_inf, x_inf]);
        let r = self.pick_f(zeros, zero, r);
        let r = self.pick_f(infinities, one, r);
        let a = self.atan_core(r);
        let left = self.minus_from(PI, PI_DOUBLE, a);
        let bits = if self.width == 64 { self.high_word(x) } else { self.b.bitcast(u, x) };
        let zero_u = self.uc(0);
        let negative = self.test(Op::SLessThan, bits, zero_u);
        let v = self.pick_f(negative, left, a);
        let v = self.copysign(v, y);
        let x_nan = self.b.op(Op::IsNan, boolean, &[x]);
        let y_nan = self.b.op(Op::IsNan, boolean, &[y]);
        let either = self.b.op(Op::LogicalOr, boolean, &[x_nan, y_nan]);
        let nan = self.fd(f64::NAN);
        self.pick_f(either, nan, v)
    }
}
