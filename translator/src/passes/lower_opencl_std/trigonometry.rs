//! `sin`, `cos`, `tan` and `sincos` (and the `sinpi`, `cospi`, `tanpi` of `special.rs`, after
//! their exact reduction) of floats and halves to OpenCL's accuracy (4 units in the
//! last place for `sin` and `cos`, 5 for `tan`, for every finite argument). Vulkan promises
//! `GLSL.std.450` `Sin` and `Cos` only an absolute error of 2^-11 inside [-pi, pi] and nothing
//! outside (SwiftShader's are off by 2e-4), so these call `matbridge.sincos_f32`, a helper that
//! returns `(sin x, cos x, tan x)` of one float:
//!
//! - **Reduction** to `r = |x| - k pi/2`, `|r| <= pi/4`. Below 2^24: Cody-Waite with pi/2 in five
//!   parts, the first four of 12 significant bits, and `k` split into a multiple of 4096 and the
//!   rest, so that every product is exact (the subtractions are then exact or lose only bits
//!   below the result's precision); `k` is `round(|x| 2/pi)` corrected by one where the first
//!   reduction lands outside +-pi/4, and the reduction is redone with it. From 2^24 up
//!   (and for infinities and NaNs, replaced at the end): Payne-Hanek in 32-bit integers: the
//!   significand times the 96 bits of 2/pi around the binary point (`OpUMulExtended`, the
//!   table in two `uvec4` constants), the quadrant from the two bits above it and the fraction
//!   from the 64 below, normalized and scaled to a float, times pi/2.
//! - **Polynomials** on `r` (Cephes' single-precision minimax ones for sin and cos on
//!   [-pi/4, pi/4]), then the quadrant picks and signs them; `tan` is their quotient in the
//!   quadrant's order. The sign of `x` comes back last (sin and tan odd, cos even), so `-0`
//!   stays `-0`. Infinities and NaNs give NaN.
//!
//! Errors stay below 3 units for sin and cos and 4 for tan (`tests/opencl_kernels.rs`,
//! `trigonometry_to_opencl_accuracy`, holds them to OpenCL's 4 and 5 on every device). The
//! `native_` and `half_` variants keep the driver's functions; doubles have their own helper
//! (`double_trigonometry.rs`).

use super::scalar::Scalar;
use super::Lower;
use spirv::{GlslStd450Op as G, Op, Word};

/// The first 1,216 bits of 2/pi's binary fraction in 32-bit words (fdlibm's `ipio2` table
/// regrouped), enough for the largest double's reduction; floats use the first eight.
pub(super) const TWO_OVER_PI: [u32; 38] = [
    0xa2f9_836e,
    0x4e44_1529,
    0xfc27_57d1,
    0xf534_ddc0,
    0xdb62_9599,
    0x3c43_9041,
    0xfe51_63ab,
    0xdebb_c561,
    0xb724_6e3a,
    0x424d_d2e0,
    0x0649_2eea,
    0x09d1_921c,
    0xfe1d_eb1c,
    0xb129_a73e,
    0xe882_35f5,
    0x2ebb_4484,
    0xe99c_7026,
    0xb45f_7e41,
    0x3991_d639,
    0x8353_39f4,
    0x9c84_5f8b,
    0xbdf9_283b,
    0x1ff8_97ff,
    0xde05_980f,
    0xef2f_118b,
    0x5a0a_6d1f,
    0x6d36_7ecf,
    0x27cb_09b7,
    0x4f46_3f66,
    0x9e5f_ea2d,
    0x7527_bac7,
    0xebe5_f17b,
    0x3d07_39f7,
    0x8a52_92ea,
    0x6bfb_5fb1,
    0x1f8d_5d08,
    0x5603_3046,
    0xfc7b_6bab,
];
/// pi/2 in five parts: the first four of 12 significant bits (products with integers below
/// 2^12 are exact), the last the rest rounded.
const PIO2_PARTS: [f32; 5] = [f32::from_bits(0x3fc9_0000), f32::from_bits(0x39fd_a000), f32::from_bits(0x33a2_2000), f32::from_bits(0x2c34_6000), f32::from_bits(0x248d_3132)];
const NAME: &str = "matbridge.sincos_f32";

impl Lower<'_, '_> {
    /// `(sin, cos, tan)` of `x`, a double, float or half scalar or vector of type `ty`, each
    /// of `ty`.
    pub(super) fn precise_sin_cos_tan(&mut self, ty: Word, x: Word) -> (Word, Word, Word) {
        // Doubles take the double helper; floats and halves the f32 one.
        let helper = if self.shape(ty).2 == 64 { self.double_sincos_helper() } else { self.sincos_helper() };
        let parts = self.per_component_parts(ty, &[x], helper, 3);
        (parts[0], parts[1], parts[2])
    }

    /// `sin` (`G::Sin`) or `tan` (`G::Tan`) of `x`: the helper's where it serves `ty`, else
    /// `GLSL.std.450`'s.
    pub(super) fn sin_or_tan(&mut self, which: G, ty: Word, x: Word) -> Word {
        if !self.precise_math_serves(ty) {
            return self.gl(which, ty, &[x]);
        }
        let (s, _, t) = self.precise_sin_cos_tan(ty, x);
        if which == G::Tan {
            t
        } else {
            s
        }
    }

    /// Whether `ty` (a scalar or vector) has doubles, floats or halves, which the helpers
    /// serve.
    pub(super) fn precise_math_serves(&self, ty: Word) -> bool {
        self.helper_width(ty).is_some()
    }

    /// The helper function, built the first time.
    pub(super) fn sincos_helper(&mut self) -> Word {
        let f32_ty = self.b.module.type_float(32);
        let v3 = self.b.module.type_vector(f32_ty, 3);
        self.scalar_helper(NAME, v3, |s, x| s.sin_cos_tan(x))
    }
}

impl Scalar<'_, '_> {
    /// `|x| - k pi/2` by Cody-Waite for `k` below 2^24 (see the module comment).
    fn cody_waite(&mut self, ax: Word, k: Word) -> Word {
        let f = self.f();
        let step = self.fc(4096.0);
        let inv_step = self.fc(1.0 / 4096.0);
        let blocks = self.fop(Op::FMul, k, inv_step);
        let blocks = self.gl(G::Floor, f, &[blocks]);
        let high = self.fop(Op::FMul, blocks, step);
        let low = self.fop(Op::FSub, k, high);
        let mut r = ax;
        for part in PIO2_PARTS {
            let c = self.fc(part);
            let hc = self.fop(Op::FMul, high, c);
            r = self.fop(Op::FSub, r, hc);
            let lc = self.fop(Op::FMul, low, c);
            r = self.fop(Op::FSub, r, lc);
        }
        r
    }

    /// Word `j` (0..=8) of 2/pi: a word of zeros, then [`TWO_OVER_PI`]'s first eight.
    fn table_word(&mut self, j: Word) -> Word {
        let u = self.u();
        let uvec4 = self.b.module.type_vector(u, 4);
        // One word of zeros (2/pi's integer part), then the fraction.
        let words: Vec<Word> = std::iter::once(0).chain(TWO_OVER_PI[..8].iter().copied()).map(|w| self.b.module.constant_u32(w)).collect();
        let first = self.b.module.constant_composite(uvec4, &words[0..4]);
        let second = self.b.module.constant_composite(uvec4, &words[4..8]);
        let three = self.uc(3);
        let lane = self.uop(Op::BitwiseAnd, j, three);
        let a = self.b.op(Op::VectorExtractDynamic, u, &[first, lane]);
        let b = self.b.op(Op::VectorExtractDynamic, u, &[second, lane]);
        let four = self.uc(4);
        let eight = self.uc(8);
        let in_first = self.test(Op::ULessThan, j, four);
        let in_second = self.test(Op::ULessThan, j, eight);
        let tail = words[8];
        let later = self.pick_u(in_second, b, tail);
        self.pick_u(in_first, a, later)
    }

    /// `(quadrant, r)` of `|x|` by Payne-Hanek (meaningful from 2^24 up).
    fn payne_hanek(&mut self, ax: Word) -> (Word, Word) {
        let u = self.u();
        let f = self.f();
        let bits = self.b.bitcast(u, ax);
        let c23 = self.uc(23);
        let exponent = self.uop(Op::ShiftRightLogical, bits, c23);
        let fraction_mask = self.uc(0x7f_ffff);
        let fraction = self.uop(Op::BitwiseAnd, bits, fraction_mask);
        let implicit = self.uc(0x80_0000);
        let m = self.uop(Op::BitwiseOr, fraction, implicit);
        // The window starts at bit `e - 120` of the table (its unit bit is bit 31): the bits of
        // 2/pi worth 2^1 and less once multiplied by the value's exponent.
        let lowest = self.uc(151);
        let e = self.gl(G::UMax, u, &[exponent, lowest]);
        let c120 = self.uc(120);
        let start = self.uop(Op::ISub, e, c120);
        let c5 = self.uc(5);
        let word = self.uop(Op::ShiftRightLogical, start, c5);
        let c31 = self.uc(31);
        let shift = self.uop(Op::BitwiseAnd, start, c31);
        let mut table = Vec::new();
        for i in 0..4 {
            let ci = self.uc(i);
            let j = self.uop(Op::IAdd, word, ci);
            table.push(self.table_word(j));
        }
        let c32 = self.uc(32);
        let back = self.uop(Op::ISub, c32, shift);
        let zero = self.uc(0);
        let aligned = self.test(Op::IEqual, shift, zero);
        let mut window = Vec::new();
        for i in 0..3 {
            let high = self.uop(Op::ShiftLeftLogical, table[i], shift);
            let low = self.uop(Op::ShiftRightLogical, table[i + 1], back);
            let joined = self.uop(Op::BitwiseOr, high, low);
            window.push(self.pick_u(aligned, table[i], joined));
        }
        // The product's words below bit 96 (the quadrant's bits are 94 and 95).
        let pair = self.b.module.type_struct(&[u, u]);
        let mut products = Vec::new();
        for w in &window {
            let p = self.b.op(Op::UMulExtended, pair, &[m, *w]);
            let lo = self.b.composite_extract(u, p, 0);
            let hi = self.b.composite_extract(u, p, 1);
            products.push((lo, hi));
        }
        let (l0, _) = products[0];
        let (l1, h1) = products[1];
        let (l2, h2) = products[2];
        let w0 = l2;
        let w1 = self.uop(Op::IAdd, l1, h2);
        let carried = self.test(Op::ULessThan, w1, l1);
        let one = self.uc(1);
        let carry = self.pick_u(carried, one, zero);
        let w2 = self.uop(Op::IAdd, l0, h1);
        let w2 = self.uop(Op::IAdd, w2, carry);
        let c30 = self.uc(30);
        let quadrant = self.uop(Op::ShiftRightLogical, w2, c30);
        // The 64 bits below: a fraction of a quadrant; from one half up, the next quadrant less
        // the complement.
        let two = self.uc(2);
        let hi_a = self.uop(Op::ShiftLeftLogical, w2, two);
        let hi_b = self.uop(Op::ShiftRightLogical, w1, c30);
        let hi = self.uop(Op::BitwiseOr, hi_a, hi_b);
        let lo_a = self.uop(Op::ShiftLeftLogical, w1, two);
        let lo_b = self.uop(Op::ShiftRightLogical, w0, c30);
        let lo = self.uop(Op::BitwiseOr, lo_a, lo_b);
        let top_bit = self.uop(Op::ShiftRightLogical, hi, c31);
        let upper = self.test(Op::INotEqual, top_bit, zero);
        let quadrant = self.uop(Op::IAdd, quadrant, top_bit);
        let neg_lo = self.uop(Op::ISub, zero, lo);
        let not_hi = self.b.op(Op::Not, u, &[hi]);
        let lo_zero = self.test(Op::IEqual, lo, zero);
        let borrow = self.pick_u(lo_zero, one, zero);
        let neg_hi = self.uop(Op::IAdd, not_hi, borrow);
        let hi = self.pick_u(upper, neg_hi, hi);
        let lo = self.pick_u(upper, neg_lo, lo);
        // Normalized: the first set bit at the top of `hi`.
        let hi_zero = self.test(Op::IEqual, hi, zero);
        let hi2 = self.pick_u(hi_zero, lo, hi);
        let lo2 = self.pick_u(hi_zero, zero, lo);
        let extra = self.pick_u(hi_zero, c32, zero);
        let msb = self.gl(G::FindUMsb, u, &[hi2]);
        let lz = self.uop(Op::ISub, c31, msb);
        let shifted_hi = self.uop(Op::ShiftLeftLogical, hi2, lz);
        let lz_back = self.uop(Op::ISub, c32, lz);
        let from_lo = self.uop(Op::ShiftRightLogical, lo2, lz_back);
        let joined = self.uop(Op::BitwiseOr, shifted_hi, from_lo);
        let no_shift = self.test(Op::IEqual, lz, zero);
        let top = self.pick_u(no_shift, hi2, joined);
        let value = self.b.op(Op::ConvertUToF, f, &[top]);
        // Times 2^-(32 + lz + extra), built as a float's bits.
        let c127 = self.uc(127);
        let down = self.uop(Op::IAdd, c32, lz);
        let down = self.uop(Op::IAdd, down, extra);
        let biased = self.uop(Op::ISub, c127, down);
        let scale_bits = self.uop(Op::ShiftLeftLogical, biased, c23);
        let scale = self.b.bitcast(f, scale_bits);
        let fraction = self.fop(Op::FMul, value, scale);
        let pio2 = self.fc(std::f32::consts::FRAC_PI_2);
        let r = self.fop(Op::FMul, fraction, pio2);
        let neg_r = self.b.op(Op::FNegate, f, &[r]);
        let r = self.pick_f(upper, neg_r, r);
        let fzero = self.fc(0.0);
        let nothing = self.test(Op::IEqual, hi2, zero);
        let r = self.pick_f(nothing, fzero, r);
        (quadrant, r)
    }

    /// The helper's value: `vec3(sin x, cos x, tan x)`.
    fn sin_cos_tan(&mut self, x: Word) -> Word {
        let f = self.f();
        let u = self.u();
        let ax = self.gl(G::FAbs, f, &[x]);
        let bits = self.b.bitcast(u, x);
        let c31 = self.uc(31);
        let sign = self.uop(Op::ShiftRightLogical, bits, c31);
        let zero = self.uc(0);
        let negative = self.test(Op::INotEqual, sign, zero);
        // Cody-Waite below 2^24.
        let two_over_pi = self.fc(std::f32::consts::FRAC_2_PI);
        let estimate = self.fop(Op::FMul, ax, two_over_pi);
        let k0 = self.gl(G::RoundEven, f, &[estimate]);
        let r0 = self.cody_waite(ax, k0);
        let quarter = self.fc(std::f32::consts::FRAC_PI_4);
        let minus_quarter = self.fc(-std::f32::consts::FRAC_PI_4);
        let above = self.test(Op::FOrdGreaterThan, r0, quarter);
        let below = self.test(Op::FOrdLessThan, r0, minus_quarter);
        let (plus, minus, none) = (self.fc(1.0), self.fc(-1.0), self.fc(0.0));
        let down = self.pick_f(below, minus, none);
        let adjust = self.pick_f(above, plus, down);
        let k = self.fop(Op::FAdd, k0, adjust);
        let r_small = self.cody_waite(ax, k);
        let k_int = self.b.op(Op::ConvertFToU, u, &[k]);
        // Payne-Hanek from 2^24 up.
        let (q_large, r_large) = self.payne_hanek(ax);
        let limit = self.fc(16_777_216.0);
        let large = self.test(Op::FOrdGreaterThanEqual, ax, limit);
        let r = self.pick_f(large, r_large, r_small);
        let q = self.pick_u(large, q_large, k_int);
        let three = self.uc(3);
        let q = self.uop(Op::BitwiseAnd, q, three);
        // Polynomials on [-pi/4, pi/4].
        let z = self.fop(Op::FMul, r, r);
        let mut s = self.fc(-1.951_529_6e-4);
        for coefficient in [8.332_161e-3, -1.666_665_5e-1] {
            let t = self.fop(Op::FMul, s, z);
            let c = self.fc(coefficient);
            s = self.fop(Op::FAdd, t, c);
        }
        let zr = self.fop(Op::FMul, z, r);
        let s = self.fop(Op::FMul, s, zr);
        let s = self.fop(Op::FAdd, s, r);
        let mut c = self.fc(2.443_315_7e-5);
        for coefficient in [-1.388_731_6e-3, 4.166_664_6e-2] {
            let t = self.fop(Op::FMul, c, z);
            let k = self.fc(coefficient);
            c = self.fop(Op::FAdd, t, k);
        }
        let c = self.fop(Op::FMul, c, z);
        let c = self.fop(Op::FMul, c, z);
        let half = self.fc(0.5);
        let half_z = self.fop(Op::FMul, half, z);
        let c = self.fop(Op::FSub, c, half_z);
        let one = self.fc(1.0);
        let c = self.fop(Op::FAdd, c, one);
        self.by_quadrant(q, (s, c), negative, ax)
    }

    /// `vec3(sin x, cos x, tan x)` (of the emitter's width) from `s = sin r`, `c = cos r` with
    /// `|x| = r + q pi/2`: the quadrant picks and signs them, `tan` is their quotient in the
    /// quadrant's order, `x`'s sign comes back last (sin and tan odd, cos even, so `-0` stays
    /// `-0`), and infinities and NaNs (`|x|` not below infinity) give NaN.
    pub(super) fn by_quadrant(&mut self, q: Word, (s, c): (Word, Word), negative: Word, ax: Word) -> Word {
        let f = self.f();
        let zero = self.uc(0);
        // Quadrants: sin = s, c, -s, -c; cos = c, -s, -c, s; tan = s/c or -c/s.
        let neg_s = self.b.op(Op::FNegate, f, &[s]);
        let neg_c = self.b.op(Op::FNegate, f, &[c]);
        let is: Vec<Word> = (0..3).map(|i| self.uc(i)).collect::<Vec<_>>().into_iter().map(|qb| self.test(Op::IEqual, q, qb)).collect();
        let sin = {
            let two_or_three = self.pick_f(is[2], neg_s, neg_c);
            let later = self.pick_f(is[1], c, two_or_three);
            self.pick_f(is[0], s, later)
        };
        let cos = {
            let two_or_three = self.pick_f(is[2], neg_c, s);
            let later = self.pick_f(is[1], neg_s, two_or_three);
            self.pick_f(is[0], c, later)
        };
        let even_tan = self.fop(Op::FDiv, s, c);
        let odd_tan = self.fop(Op::FDiv, neg_c, s);
        let one = self.uc(1);
        let odd_bit = self.uop(Op::BitwiseAnd, q, one);
        let odd = self.test(Op::INotEqual, odd_bit, zero);
        let tan = self.pick_f(odd, odd_tan, even_tan);
        let neg_sin = self.b.op(Op::FNegate, f, &[sin]);
        let sin = self.pick_f(negative, neg_sin, sin);
        let neg_tan = self.b.op(Op::FNegate, f, &[tan]);
        let tan = self.pick_f(negative, neg_tan, tan);
        let infinity = self.fd(f64::INFINITY);
        let finite = self.test(Op::FOrdLessThan, ax, infinity);
        let nan = self.fd(f64::NAN);
        let parts: Vec<Word> = [sin, cos, tan].into_iter().map(|v| self.pick_f(finite, v, nan)).collect();
        let v3 = self.b.module.type_vector(f, 3);
        self.b.op(Op::CompositeConstruct, v3, &parts)
    }
}
