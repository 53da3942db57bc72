//! `exp`, `exp2`, `exp10`, `log`, `log2` and `log10` of floats and halves to OpenCL's accuracy
//! (3 units in the last place). Drivers compute `GLSL.std.450` `Exp` as `Exp2(x log2 e)`,
//! whose rounded product costs about `|x|` units (20 on lavapipe at |x| = 10, more near
//! overflow), and `Log` as `Log2(x) ln 2`, whose absolute error is tens or hundreds of units
//! near 1; Vulkan allows both. Each function here is a helper `matbridge.<name>_f32`:
//!
//! - **Exponentials**: `k = rint(x log2 b)`; `r = x ln b - k ln 2` by Cody-Waite with `ln 2`
//!   (for `exp10`, `log10 2`, then times `ln 10`) split so that `k` times the first part is
//!   exact; `e^r` on [-ln2/2, ln2/2] by its Taylor polynomial to degree 7 (truncation below
//!   0.05 units), the ones added last; times `2^k` in two exact steps (subnormal results round
//!   once). Overflow gives infinity, underflow zero, NaN stays.
//! - **Logarithms** (fdlibm's `logf`): `x = m 2^e` with `m` in [sqrt(2)/2, sqrt(2)) (subnormals
//!   scaled by 2^23 first), `f = m - 1`, `s = f / (2 + f)`, `log(1 + f) = f - (f^2/2 - s (f^2/2 +
//!   R(s^2)))` with fdlibm's minimax `R`; then `e ln 2 + log(1 + f)` with `ln 2` in two parts,
//!   `e + log(1 + f) log2 e` (exact at powers of two), `e log10 2 + log(1 + f) log10 e`. Zero
//!   gives -infinity, negatives and NaN NaN, infinity infinity.
//!
//! A model of these operations (f32 rounding after each, no fused multiply-add) measured at
//! most 1.3 units for the exponentials and 1.9 for the logarithms; `tests/opencl_kernels.rs`
//! (`exponentials_and_logarithms_to_opencl_accuracy`) holds the devices to 3. The `half_` and
//! `native_` variants keep the driver's functions. Doubles get the same schemes in double
//! precision (`matbridge.<name>_f64`: fdlibm's `log` with `Lg1`..`Lg7`, the exponential's
//! series to degree 13, the bits through the high word), within 2 units of `libm`.

use super::scalar::Scalar;
use super::Lower;
use spirv::{GlslStd450Op as G, Op, OpenclStd100Op as CL, Word};

/// `ln 2` in two parts: the first of 16 significant bits (exact times any exponent), the rest.
const LN2: [f32; 2] = [f32::from_bits(0x3f31_7200), f32::from_bits(0x35bf_be8e)];
/// `log10 2` in two parts, the first of 8 significant bits.
const LOG10_2: [f32; 2] = [f32::from_bits(0x3e9a_0000), f32::from_bits(0x3982_6a14)];
/// For doubles: `ln 2` in two parts (the first of 32 significant bits), `log10 2` in two parts
/// (the first of 40), fdlibm's `Lg1`..`Lg7`.
const LN2_DOUBLE: [u64; 2] = [0x3fe6_2e42_fee0_0000, 0x3dea_39ef_3579_3c76];
const LOG10_2_DOUBLE: [u64; 2] = [0x3fd3_4413_509f_6000, 0x3d59_fef3_11f1_2b36];
const LG_DOUBLE: [u64; 7] = [0x3fe5_5555_5555_5593, 0x3fd9_9999_9997_fa04, 0x3fd2_4924_9422_9359, 0x3fcc_71c5_1d8e_78af, 0x3fc7_4664_96cb_03de, 0x3fc3_9a09_d078_c69f, 0x3fc2_f112_df3e_5244];
/// fdlibm's `Lg1`..`Lg4` for `R(z)`.
const LG: [f32; 4] = [f32::from_bits(0x3f2a_aaaa), f32::from_bits(0x3ecc_ce13), f32::from_bits(0x3e91_e9ee), f32::from_bits(0x3e78_9e26)];

impl Lower<'_, '_> {
    /// `op` of `x` (a float or half scalar or vector of type `ty`) to OpenCL's accuracy, or
    /// `None` for other types.
    pub(super) fn precise_exponential(&mut self, op: CL, ty: Word, x: Word) -> Option<Word> {
        let width = self.helper_width(ty)?;
        let name = match op {
            CL::exp => "exp",
            CL::exp2 => "exp2",
            CL::exp10 => "exp10",
            CL::log => "log",
            CL::log2 => "log2",
            CL::log10 => "log10",
            _ => return None,
        };
        let helper = self.unary_helper(width, name, |s, x| match op {
            CL::exp | CL::exp2 | CL::exp10 => s.exponential(op, x),
            _ => s.logarithm(op, x),
        });
        Some(self.per_component(ty, x, helper))
    }
}

impl Scalar<'_, '_> {
    /// `(k, 2^(k/2), 2^(k - k/2))` for a float integer `k`: `k` as an integer and two normal
    /// powers of two whose product is `2^k` (for `k` up to twice the exponent range).
    pub(super) fn halved_power_of_two(&mut self, k: Word) -> (Word, Word, Word) {
        let u = self.u();
        let ki = self.b.op(Op::ConvertFToS, u, &[k]);
        let two = self.uc(2);
        let k1 = self.uop(Op::SDiv, ki, two);
        let k2 = self.uop(Op::ISub, ki, k1);
        let s1 = self.power_of_two(k1);
        let s2 = self.power_of_two(k2);
        (ki, s1, s2)
    }

    /// `1/k!` for `k` from `highest` down to 2, constants of the emitter's width.
    pub(super) fn inverse_factorials(&mut self, highest: u32) -> Vec<Word> {
        (2..=highest).rev().map(|k| (2..=k).map(f64::from).product::<f64>()).collect::<Vec<_>>().into_iter().map(|p| self.fd(1.0 / p)).collect()
    }

    /// `2^k` for an integer `k` in [-126, 127] (for doubles [-1022, 1023]).
    pub(super) fn power_of_two(&mut self, k: Word) -> Word {
        let f = self.f();
        if self.width == 64 {
            let bias = self.uc(1023);
            let biased = self.uop(Op::IAdd, k, bias);
            let c20 = self.uc(20);
            let high = self.uop(Op::ShiftLeftLogical, biased, c20);
            return self.double_of_high_word(high);
        }
        let bias = self.uc(127);
        let biased = self.uop(Op::IAdd, k, bias);
        let c23 = self.uc(23);
        let bits = self.uop(Op::ShiftLeftLogical, biased, c23);
        self.b.bitcast(f, bits)
    }

    /// `e^r 2^k` for `|r| <= ln2/2` and a float integer `k` in [-150, 128].
    pub(super) fn exp_core(&mut self, r: Word, k: Word) -> Word {
        let factorials: Vec<Word> = if self.width == 64 {
            // Truncation below 0.05 units of a double.
            self.inverse_factorials(13)
        } else {
            [1.0f32 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5].into_iter().map(|c| self.fc(c)).collect()
        };
        let mut q = factorials[0];
        for c in &factorials[1..] {
            let t = self.fop(Op::FMul, q, r);
            q = self.fop(Op::FAdd, t, *c);
        }
        let rr = self.fop(Op::FMul, r, r);
        let t = self.fop(Op::FMul, rr, q);
        let t = self.fop(Op::FAdd, t, r);
        let one = self.fd(1.0);
        let p = self.fop(Op::FAdd, one, t);
        // 2^k in two halves, each a normal float.
        let (_, s1, s2) = self.halved_power_of_two(k);
        let p = self.fop(Op::FMul, p, s1);
        self.fop(Op::FMul, p, s2)
    }

    /// `(r, k)` with `x = k ln 2 + r`, `|r| <= ln2/2` (Cody-Waite), `k` a float integer, for
    /// `|x|` up to 128 ln 2 or so.
    pub(super) fn exp_reduce(&mut self, x: Word) -> (Word, Word) {
        let f = self.f();
        let scale = self.fd(std::f64::consts::LOG2_E);
        let estimate = self.fop(Op::FMul, x, scale);
        let k = self.gl(G::RoundEven, f, &[estimate]);
        let mut r = x;
        for j in 0..2 {
            let c = self.fw(LN2[j].to_bits(), LN2_DOUBLE[j]);
            let kc = self.fop(Op::FMul, k, c);
            r = self.fop(Op::FSub, r, kc);
        }
        (r, k)
    }

    /// `exp`, `exp2` or `exp10` of `x`.
    pub(super) fn exponential(&mut self, op: CL, x: Word) -> Word {
        let f = self.f();
        // Past these the result is infinite or zero (below the smallest subnormal's half).
        let double = self.width == 64;
        let (high, low) = match (op, double) {
            (CL::exp, false) => (88.722_84f32.into(), (-103.972_08f32).into()),
            (CL::exp2, false) => (128.0, -150.0),
            (_, false) => (38.531_84f32.into(), (-45.154_5f32).into()),
            (CL::exp, true) => (709.782_712_893_384, -745.133_219_101_941_2),
            (CL::exp2, true) => (1024.0, -1075.0),
            (_, true) => (308.254_715_559_916_7, -323.607),
        };
        let (high_c, low_c) = (self.fd(high), self.fd(low));
        let clamped = self.gl(G::FClamp, f, &[x, low_c, high_c]);
        let (r, k) = match op {
            CL::exp2 => {
                let k = self.gl(G::RoundEven, f, &[clamped]);
                let frac = self.fop(Op::FSub, clamped, k);
                let ln2 = self.fd(std::f64::consts::LN_2);
                let r = self.fop(Op::FMul, frac, ln2);
                (r, k)
            }
            CL::exp => self.exp_reduce(clamped),
            _ => {
                let scale = self.fd(std::f64::consts::LOG2_10);
                let estimate = self.fop(Op::FMul, clamped, scale);
                let k = self.gl(G::RoundEven, f, &[estimate]);
                let mut r = clamped;
                for j in 0..2 {
                    let c = self.fw(LOG10_2[j].to_bits(), LOG10_2_DOUBLE[j]);
                    let kc = self.fop(Op::FMul, k, c);
                    r = self.fop(Op::FSub, r, kc);
                }
                let ln10 = self.fd(std::f64::consts::LN_10);
                r = self.fop(Op::FMul, r, ln10);
                (r, k)
            }
        };
        let value = self.exp_core(r, k);
        let boolean = self.b.module.type_bool();
        let over = self.test(Op::FOrdGreaterThan, x, high_c);
        let under = self.test(Op::FOrdLessThan, x, low_c);
        let (inf, zero) = (self.fd(f64::INFINITY), self.fd(0.0));
        let value = self.pick_f(over, inf, value);
        let value = self.pick_f(under, zero, value);
        let nan = self.b.op(Op::IsNan, boolean, &[x]);
        self.pick_f(nan, x, value)
    }

    /// `(e, m)` with `x = m 2^e`, `m` in [sqrt(2)/2, sqrt(2)) (subnormals scaled by 2^23 first),
    /// `e` a 32-bit integer, for positive floats.
    fn log_split(&mut self, x: Word) -> (Word, Word) {
        let f = self.f();
        let u = self.u();
        let bits = self.b.bitcast(u, x);
        let smallest_normal = self.uc(0x0080_0000);
        let subnormal = self.test(Op::ULessThan, bits, smallest_normal);
        let up = self.fc(8_388_608.0);
        let scaled = self.fop(Op::FMul, x, up);
        let y = self.pick_f(subnormal, scaled, x);
        let (minus_23, zero_u) = (self.uc(23u32.wrapping_neg()), self.uc(0));
        let e0 = self.pick_u(subnormal, minus_23, zero_u);
        let bits = self.b.bitcast(u, y);
        let c23 = self.uc(23);
        let biased = self.uop(Op::ShiftRightLogical, bits, c23);
        let bias = self.uc(127);
        let e = self.uop(Op::ISub, biased, bias);
        let e = self.uop(Op::IAdd, e, e0);
        let fraction_mask = self.uc(0x7f_ffff);
        let m = self.uop(Op::BitwiseAnd, bits, fraction_mask);
        let sqrt2 = self.uc(0x35_04f3);
        let big = self.test(Op::UGreaterThan, m, sqrt2);
        let (half_exp, one_exp) = (self.uc(0x3f00_0000), self.uc(0x3f80_0000));
        let exponent = self.pick_u(big, half_exp, one_exp);
        let m = self.uop(Op::BitwiseOr, m, exponent);
        let one_u = self.uc(1);
        let carry = self.pick_u(big, one_u, zero_u);
        let e = self.uop(Op::IAdd, e, carry);
        (e, self.b.bitcast(f, m))
    }

    /// [`Scalar::log_split`] for doubles (subnormals scaled by 2^54), on the high word.
    fn log_split_double(&mut self, x: Word) -> (Word, Word) {
        let high = self.high_word(x);
        let smallest_normal = self.uc(0x0010_0000);
        let subnormal = self.test(Op::ULessThan, high, smallest_normal);
        let up = self.fd(18_014_398_509_481_984.0);
        let scaled = self.fop(Op::FMul, x, up);
        let y = self.pick_f(subnormal, scaled, x);
        let (minus_54, zero_u) = (self.uc(54u32.wrapping_neg()), self.uc(0));
        let e0 = self.pick_u(subnormal, minus_54, zero_u);
        let high = self.high_word(y);
        let c20 = self.uc(20);
        let biased = self.uop(Op::ShiftRightLogical, high, c20);
        let bias = self.uc(1023);
        let e = self.uop(Op::ISub, biased, bias);
        let e = self.uop(Op::IAdd, e, e0);
        let fraction_mask = self.uc(0xf_ffff);
        let fraction = self.uop(Op::BitwiseAnd, high, fraction_mask);
        let sqrt2 = self.uc(0x6_a09e);
        let big = self.test(Op::UGreaterThan, fraction, sqrt2);
        let (half_exp, one_exp) = (self.uc(0x3fe0_0000), self.uc(0x3ff0_0000));
        let exponent = self.pick_u(big, half_exp, one_exp);
        let high = self.uop(Op::BitwiseOr, fraction, exponent);
        let one_u = self.uc(1);
        let carry = self.pick_u(big, one_u, zero_u);
        let e = self.uop(Op::IAdd, e, carry);
        (e, self.with_high_word(y, high))
    }

    /// `log`, `log2` or `log10` of `x`.
    pub(super) fn logarithm(&mut self, op: CL, x: Word) -> Word {
        self.logarithm_corrected(op, x, None)
    }

    /// `log`, `log2` or `log10` of `x`; for `log`, of `x (1 + c)` where `correction` is `c`
    /// (small: `log1p`'s rounding error of `1 + x`, relative to it).
    pub(super) fn logarithm_corrected(&mut self, op: CL, x: Word, correction: Option<Word>) -> Word {
        let f = self.f();
        let (e, m) = if self.width == 64 { self.log_split_double(x) } else { self.log_split(x) };
        let one = self.fd(1.0);
        let r = self.fop(Op::FSub, m, one);
        let two = self.fd(2.0);
        let denominator = self.fop(Op::FAdd, two, r);
        let s = self.fop(Op::FDiv, r, denominator);
        let z = self.fop(Op::FMul, s, s);
        let coefficients: Vec<Word> = if self.width == 64 { LG_DOUBLE.iter().rev().map(|c| self.fd(f64::from_bits(*c))).collect() } else { LG.iter().rev().map(|c| self.fc(*c)).collect() };
        let mut poly = coefficients[0];
        for c in &coefficients[1..] {
            let t = self.fop(Op::FMul, poly, z);
            poly = self.fop(Op::FAdd, t, *c);
        }
        let big_r = self.fop(Op::FMul, z, poly);
        let half = self.fd(0.5);
        let half_r = self.fop(Op::FMul, half, r);
        let hfsq = self.fop(Op::FMul, half_r, r);
        let inner = self.fop(Op::FAdd, hfsq, big_r);
        let s_inner = self.fop(Op::FMul, s, inner);
        let ef = self.b.op(Op::ConvertSToF, f, &[e]);
        let value = match op {
            CL::log => {
                let (hi, lo) = (self.fw(LN2[0].to_bits(), LN2_DOUBLE[0]), self.fw(LN2[1].to_bits(), LN2_DOUBLE[1]));
                let mut e_lo = self.fop(Op::FMul, ef, lo);
                if let Some(c) = correction {
                    e_lo = self.fop(Op::FAdd, e_lo, c);
                }
                let t = self.fop(Op::FAdd, s_inner, e_lo);
                let t = self.fop(Op::FSub, hfsq, t);
                let t = self.fop(Op::FSub, t, r);
                let e_hi = self.fop(Op::FMul, ef, hi);
                self.fop(Op::FSub, e_hi, t)
            }
            _ => {
                // log(1 + f), then in base 2 or 10.
                let t = self.fop(Op::FSub, hfsq, s_inner);
                let l = self.fop(Op::FSub, r, t);
                if op == CL::log2 {
                    let log2e = self.fd(std::f64::consts::LOG2_E);
                    let l2 = self.fop(Op::FMul, l, log2e);
                    self.fop(Op::FAdd, ef, l2)
                } else {
                    let (hi, lo) = (self.fw(LOG10_2[0].to_bits(), LOG10_2_DOUBLE[0]), self.fw(LOG10_2[1].to_bits(), LOG10_2_DOUBLE[1]));
                    let log10e = self.fd(std::f64::consts::LOG10_E);
                    let l10 = self.fop(Op::FMul, l, log10e);
                    let e_lo = self.fop(Op::FMul, ef, lo);
                    let t = self.fop(Op::FAdd, e_lo, l10);
                    let e_hi = self.fop(Op::FMul, ef, hi);
                    self.fop(Op::FAdd, e_hi, t)
                }
            }
        };
        // Zero: -infinity; negatives and NaN: NaN; infinity: infinity.
        let (zero, inf, minus_inf, nan) = (self.fd(0.0), self.fd(f64::INFINITY), self.fd(f64::NEG_INFINITY), self.fd(f64::NAN));
        let is_zero = self.test(Op::FOrdEqual, x, zero);
        let value = self.pick_f(is_zero, minus_inf, value);
        let is_inf = self.test(Op::FOrdEqual, x, inf);
        let value = self.pick_f(is_inf, inf, value);
        let defined = self.test(Op::FOrdGreaterThanEqual, x, zero);
        self.pick_f(defined, value, nan)
    }
}
