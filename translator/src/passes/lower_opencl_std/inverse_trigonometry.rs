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
//! bounds. Doubles are refused (`doubles.rs`).

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

impl Lower<'_, '_> {
    /// `op` of `args` (floats or halves of type `ty`) to OpenCL's accuracy, or `None` for
    /// other types.
    pub(super) fn precise_inverse_trigonometry(&mut self, op: CL, ty: Word, args: &[Word]) -> Option<Word> {
        if !self.precise_math_serves(ty) {
            return None;
        }
        let f32_ty = self.b.module.type_float(32);
        let asin = self.scalar_helper("matbridge.asin_f32", f32_ty, |s, x| s.asin(x));
        let acos = self.scalar_helper("matbridge.acos_f32", f32_ty, |s, x| s.acos(x));
        let atan = self.scalar_helper("matbridge.atan_f32", f32_ty, |s, x| s.atan(x));
        let atan2 = self.helper("matbridge.atan2_f32", f32_ty, &[f32_ty; 2], |s, p| s.atan2(p[0], p[1]));
        let over_pi = |name: &str, helper: Word, arity: usize, cx: &mut Self| {
            cx.helper(name, f32_ty, &vec![f32_ty; arity], |s, p| {
                let v = s.call(helper, p);
                let k = s.fc(std::f32::consts::FRAC_1_PI);
                s.fop(Op::FMul, v, k)
            })
        };
        let helper = match op {
            CL::asin => asin,
            CL::acos => acos,
            CL::atan => atan,
            CL::atan2 => atan2,
            CL::asinpi => over_pi("matbridge.asinpi_f32", asin, 1, self),
            CL::acospi => over_pi("matbridge.acospi_f32", acos, 1, self),
            CL::atanpi => over_pi("matbridge.atanpi_f32", atan, 1, self),
            CL::atan2pi => over_pi("matbridge.atan2pi_f32", atan2, 2, self),
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

    /// `hi - (v - lo)` for a constant `(hi, lo)`.
    fn minus_from(&mut self, constant: (f32, f32), v: Word) -> Word {
        let (hi, lo) = (self.fc(constant.0), self.fc(constant.1));
        let d = self.fop(Op::FSub, v, lo);
        self.fop(Op::FSub, hi, d)
    }

    fn nan_outside_one(&mut self, x: Word, v: Word) -> Word {
        let f = self.f();
        let a = self.gl(G::FAbs, f, &[x]);
        let one = self.fc(1.0);
        let outside = self.test(Op::FOrdGreaterThan, a, one);
        let nan = self.fc(f32::NAN);
        let v = self.pick_f(outside, nan, v);
        let boolean = self.b.module.type_bool();
        let is_nan = self.b.op(Op::IsNan, boolean, &[x]);
        self.pick_f(is_nan, x, v)
    }

    /// `asin x`.
    fn asin(&mut self, x: Word) -> Word {
        let f = self.f();
        let a = self.gl(G::FAbs, f, &[x]);
        let (p, reflected) = self.asin_core(a);
        let twice = self.fop(Op::FAdd, p, p);
        let far = self.minus_from(HALF_PI, twice);
        let v = self.pick_f(reflected, far, p);
        let v = self.copysign(v, x);
        self.nan_outside_one(x, v)
    }

    /// `acos x`.
    fn acos(&mut self, x: Word) -> Word {
        let f = self.f();
        let a = self.gl(G::FAbs, f, &[x]);
        let (p, reflected) = self.asin_core(a);
        let signed = self.copysign(p, x);
        let middle = self.minus_from(HALF_PI, signed);
        let twice = self.fop(Op::FAdd, p, p);
        let left = self.minus_from(PI, twice);
        let zero = self.fc(0.0);
        let negative = self.test(Op::FOrdLessThan, x, zero);
        let outer = self.pick_f(negative, left, twice);
        let v = self.pick_f(reflected, outer, middle);
        self.nan_outside_one(x, v)
    }

    /// `atan a` for `a >= 0` (infinity included).
    fn atan_core(&mut self, a: Word) -> Word {
        let (one, zero) = (self.fc(1.0), self.fc(0.0));
        let (high, low) = (self.fc(2.414_213_6), self.fc(0.414_213_57));
        let big = self.test(Op::FOrdGreaterThan, a, high);
        let mid = self.test(Op::FOrdGreaterThan, a, low);
        let minus_one = self.fc(-1.0);
        let inverse = self.fop(Op::FDiv, minus_one, a);
        let num = self.fop(Op::FSub, a, one);
        let den = self.fop(Op::FAdd, a, one);
        let folded = self.fop(Op::FDiv, num, den);
        let t = self.pick_f(mid, folded, a);
        let t = self.pick_f(big, inverse, t);
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
        let (high, low) = (self.fbits(0x5f80_0000), self.fbits(0x1f80_0000));
        let above = self.test(Op::FOrdGreaterThan, larger, high);
        let below = self.test(Op::FOrdLessThan, larger, low);
        let one = self.fc(1.0);
        let scale = self.pick_f(above, low, one);
        let scale = self.pick_f(below, high, scale);
        let sy = self.fop(Op::FMul, ay, scale);
        let sx = self.fop(Op::FMul, ax, scale);
        let r = self.fop(Op::FDiv, sy, sx);
        let (zero, inf) = (self.fc(0.0), self.fc(f32::INFINITY));
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
        let left = self.minus_from(PI, a);
        let bits = self.b.bitcast(u, x);
        let zero_u = self.uc(0);
        let negative = self.test(Op::SLessThan, bits, zero_u);
        let v = self.pick_f(negative, left, a);
        let v = self.copysign(v, y);
        let x_nan = self.b.op(Op::IsNan, boolean, &[x]);
        let y_nan = self.b.op(Op::IsNan, boolean, &[y]);
        let either = self.b.op(Op::LogicalOr, boolean, &[x_nan, y_nan]);
        let nan = self.fc(f32::NAN);
        self.pick_f(either, nan, v)
    }
}
