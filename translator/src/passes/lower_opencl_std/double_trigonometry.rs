//! `sin`, `cos`, `tan` and `sincos` of doubles (and the `sinpi`, `cospi`, `tanpi` of
//! `special.rs` after their exact reduction) to OpenCL's accuracy (4 units in the last place for
//! `sin` and `cos`, 5 for `tan`). `GLSL.std.450` has no 64-bit `Sin`, so these call
//! `matbridge.sincos_f64`, a helper that returns `(sin x, cos x, tan x)` of one double, in
//! fdlibm's scheme with every bit handled in 32-bit words (no `Int64` needed):
//!
//! - **Reduction** to `y0 + y1 = |x| - n pi/2`, `|y0| <= pi/4`, a double-double. Below
//!   `2^20 pi/2`: fdlibm's `__rem_pio2` medium case, `n = rint(|x| 2/pi)` and pi/2 in three
//!   parts of 33 bits (each product with `n` exact) and their tails, the second and third
//!   rounds taken where the first cancelled more than 16 and 49 bits (all three computed,
//!   one selected). From there up (and for infinities and NaNs, replaced at the end):
//!   Payne-Hanek in 32-bit integers: the 53-bit significand times the 192 bits of 2/pi that
//!   start where the product's bit of weight 2 lies (a function-scope table of 40 words, two of
//!   zeros before [`TWO_OVER_PI`]), 11 `OpUMulExtended` summed with `OpIAddCarry` into the
//!   product's low 192 bits: the quadrant is the top two, the fraction the 190 below. A
//!   fraction past one half is the next quadrant less its complement (one's complement: the
//!   error is 2^-190 of a quadrant). The fraction's first nonzero word and the three after it
//!   become a double-double (exact word conversions, one two-sum), times pi/2 in two parts by
//!   Dekker's product. Doubles come within 2^-61 of a multiple of pi/2 at worst, so the 190
//!   bits leave over 120 below the first nonzero one.
//! - **Kernels**: fdlibm's `__kernel_sin` and `__kernel_cos` on `(y0, y1)` (minimax polynomials
//!   of degree 13 and 14 on [-pi/4, pi/4], the tail folded in to first order), then the quadrant
//!   picks and signs them; `tan` is their quotient in the quadrant's order. The sign of `x` comes
//!   back last (sin and tan odd, cos even), so `-0` stays `-0`; infinities and NaNs give NaN.
//!
//! Every float operation is `NoContraction`: the splits and two-sums need each rounding where
//! it is written. `tests/opencl_kernels.rs`, `double_transcendentals_to_opencl_accuracy`,
//! holds the results to OpenCL's bounds against the `libm` crate.

use super::scalar::Scalar;
use super::trigonometry::TWO_OVER_PI;
use super::Lower;
use spirv::{GlslStd450Op as G, Op, Word};

const NAME: &str = "matbridge.sincos_f64";
/// `2/pi` rounded.
const INV_PIO2: f64 = std::f64::consts::FRAC_2_PI;
/// fdlibm's pi/2 in three parts of 33 significant bits (`PIO2_1`, `PIO2_2`, `PIO2_3`), each
/// with the rest of pi/2 below it rounded (`PIO2_1T`, ...): the bits.
const PIO2_ROUNDS: [(u64, u64); 3] = [(0x3ff9_21fb_5440_0000, 0x3dd0_b461_1a62_6331), (0x3dd0_b461_1a60_0000, 0x3ba3_198a_2e03_7073), (0x3ba3_198a_2e00_0000, 0x397b_839a_2520_49c1)];
/// pi/2 in two parts: the double nearest and the rest.
const PIO2_HI: f64 = std::f64::consts::FRAC_PI_2;
const PIO2_LO: f64 = f64::from_bits(0x3c91_a626_3314_5c07);
/// `2^20 pi/2`'s high word: the medium reduction serves what lies below.
const MEDIUM_LIMIT: u32 = 0x4139_21fb;
/// fdlibm's `__kernel_sin` coefficients `S1`..`S6`, as bits.
const SIN: [u64; 6] = [0xbfc5_5555_5555_5549, 0x3f81_1111_1110_f8a6, 0xbf2a_01a0_19c1_61d5, 0x3ec7_1de3_57b1_fe7d, 0xbe5a_e5e6_8a2b_9ceb, 0x3de5_d93a_5acf_d57c];
/// fdlibm's `__kernel_cos` coefficients `C1`..`C6`, as bits.
const COS: [u64; 6] = [0x3fa5_5555_5555_554c, 0xbf56_c16c_16c1_5177, 0x3efa_01a0_19cb_1590, 0xbe92_7e4f_809c_52ad, 0x3e21_ee9e_bdb4_b1c4, 0xbda8_fae9_be88_38d4];

impl Lower<'_, '_> {
    /// The helper function of doubles, built the first time.
    pub(super) fn double_sincos_helper(&mut self) -> Word {
        let f64_ty = self.b.module.type_float(64);
        let v3 = self.b.module.type_vector(f64_ty, 3);
        self.helper_of_width(64, NAME, v3, &[f64_ty], |s, p| s.double_sin_cos_tan(p[0]))
    }
}

impl Scalar<'_, '_> {
    /// `(low, high)` words of double `x`.
    fn double_words(&mut self, x: Word) -> (Word, Word) {
        let u = self.u();
        let uvec2 = self.b.module.type_vector(u, 2);
        let words = self.gl(G::UnpackDouble2x32, uvec2, &[x]);
        (self.b.composite_extract(u, words, 0), self.b.composite_extract(u, words, 1))
    }

    /// The biased exponent of double `x`.
    fn double_exponent(&mut self, x: Word) -> Word {
        let high = self.high_word(x);
        let c20 = self.uc(20);
        let shifted = self.uop(Op::ShiftRightLogical, high, c20);
        let mask = self.uc(0x7ff);
        self.uop(Op::BitwiseAnd, shifted, mask)
    }

    /// `(n, y0, y1)` of `|x|` (`ax`, high word `ahigh`) below `2^20 pi/2`: fdlibm's medium
    /// reduction.
    fn medium_reduction(&mut self, ax: Word, ahigh: Word) -> (Word, Word, Word) {
        let f = self.f();
        let u = self.u();
        let inv = self.fd(INV_PIO2);
        let estimate = self.fop(Op::FMul, ax, inv);
        let n = self.gl(G::RoundEven, f, &[estimate]);
        let c20 = self.uc(20);
        let ex = self.uop(Op::ShiftRightLogical, ahigh, c20);
        // Round one.
        let (p1, p1t) = (self.fd(f64::from_bits(PIO2_ROUNDS[0].0)), self.fd(f64::from_bits(PIO2_ROUNDS[0].1)));
        let np = self.fop(Op::FMul, n, p1);
        let r1 = self.fop(Op::FSub, ax, np);
        let w1 = self.fop(Op::FMul, n, p1t);
        let y1 = self.fop(Op::FSub, r1, w1);
        // Rounds two and three: `t = r; w = n p; r = t - w; w = n pt - ((t - r) - w)`.
        let mut rounds = vec![(r1, w1, y1)];
        for &(part, tail) in &PIO2_ROUNDS[1..] {
            let (t, _, _) = *rounds.last().unwrap_or(&(r1, w1, y1));
            let (p, pt) = (self.fd(f64::from_bits(part)), self.fd(f64::from_bits(tail)));
            let w = self.fop(Op::FMul, n, p);
            let r = self.fop(Op::FSub, t, w);
            let lost = self.fop(Op::FSub, t, r);
            let lost = self.fop(Op::FSub, lost, w);
            let npt = self.fop(Op::FMul, n, pt);
            let w = self.fop(Op::FSub, npt, lost);
            let y = self.fop(Op::FSub, r, w);
            rounds.push((r, w, y));
        }
        // The second round where the first lost more than 16 bits, the third where the second
        // lost more than 49.
        let cancelled = |s: &mut Self, y: Word, bits: u32| {
            let ey = s.double_exponent(y);
            let lost = s.uop(Op::ISub, ex, ey);
            let limit = s.uc(bits);
            s.test(Op::SGreaterThan, lost, limit)
        };
        let second = cancelled(self, rounds[0].2, 16);
        let third = cancelled(self, rounds[1].2, 49);
        let pick = |s: &mut Self, c: Word, a: (Word, Word, Word), b: (Word, Word, Word)| (s.pick_f(c, a.0, b.0), s.pick_f(c, a.1, b.1), s.pick_f(c, a.2, b.2));
        let later = pick(self, third, rounds[2], rounds[1]);
        let (r, w, y0) = pick(self, second, later, rounds[0]);
        let rest = self.fop(Op::FSub, r, y0);
        let y1 = self.fop(Op::FSub, rest, w);
        let n = self.b.op(Op::ConvertFToU, u, &[n]);
        (n, y0, y1)
    }

    /// `(n, y0, y1)` of `|x|` (`ax`, from `2^20 pi/2` up) by Payne-Hanek.
    fn double_payne_hanek(&mut self, ax: Word) -> (Word, Word, Word) {
        let f = self.f();
        let u = self.u();
        let (low, high) = self.double_words(ax);
        let c20 = self.uc(20);
        let exponent = self.uop(Op::ShiftRightLogical, high, c20);
        let fraction_mask = self.uc(0xf_ffff);
        let top = self.uop(Op::BitwiseAnd, high, fraction_mask);
        let implicit = self.uc(0x10_0000);
        let m = [low, self.uop(Op::BitwiseOr, top, implicit)];
        // With `|x| = m 2^(e - 1075)`, bit `t = e - 1013` of the table (its first fraction bit
        // is bit 64) is the one the product gives weight 2: the bits before it give multiples
        // of 4, a whole turn.
        let lowest = self.uc(1043);
        let e = self.gl(G::UMax, u, &[exponent, lowest]);
        let c1013 = self.uc(1013);
        let start = self.uop(Op::ISub, e, c1013);
        let c5 = self.uc(5);
        let word = self.uop(Op::ShiftRightLogical, start, c5);
        let c31 = self.uc(31);
        let shift = self.uop(Op::BitwiseAnd, start, c31);
        // The table: two words of zeros (2/pi's integer part, for the smallest exponents),
        // then TWO_OVER_PI.
        let values: Vec<Word> = [0, 0].iter().chain(TWO_OVER_PI.iter()).map(|w| self.uc(*w)).collect();
        let table = self.constant_table(u, &values);
        let mut words = Vec::new();
        for i in 0..7 {
            let ci = self.uc(i);
            let j = self.uop(Op::IAdd, word, ci);
            words.push(self.table_element(table, u, j));
        }
        let c32 = self.uc(32);
        let back = self.uop(Op::ISub, c32, shift);
        let zero = self.uc(0);
        let aligned = self.test(Op::IEqual, shift, zero);
        // The window, least significant word first.
        let mut window = Vec::new();
        for i in (0..6).rev() {
            let high = self.uop(Op::ShiftLeftLogical, words[i], shift);
            let low = self.uop(Op::ShiftRightLogical, words[i + 1], back);
            let joined = self.uop(Op::BitwiseOr, high, low);
            window.push(self.pick_u(aligned, words[i], joined));
        }
        // The product's low six words, row by row (a product plus two words never overflows
        // 64 bits, so each row's carry fits a word).
        let pair = self.b.module.type_struct(&[u, u]);
        let mut column = [zero; 6];
        for (row, &mi) in m.iter().enumerate() {
            let mut carry = zero;
            for (j, &v) in window.iter().enumerate().take(6 - row) {
                let product = self.b.op(Op::UMulExtended, pair, &[mi, v]);
                let (lo, hi) = (self.b.composite_extract(u, product, 0), self.b.composite_extract(u, product, 1));
                let first = self.b.op(Op::IAddCarry, pair, &[column[row + j], lo]);
                let (sum, c1) = (self.b.composite_extract(u, first, 0), self.b.composite_extract(u, first, 1));
                let second = self.b.op(Op::IAddCarry, pair, &[sum, carry]);
                let (sum, c2) = (self.b.composite_extract(u, second, 0), self.b.composite_extract(u, second, 1));
                column[row + j] = sum;
                let hc = self.uop(Op::IAdd, hi, c1);
                carry = self.uop(Op::IAdd, hc, c2);
            }
        }
        let c30 = self.uc(30);
        let quadrant = self.uop(Op::ShiftRightLogical, column[5], c30);
        let c29 = self.uc(29);
        let one = self.uc(1);
        let half_bit = self.uop(Op::ShiftRightLogical, column[5], c29);
        let half_bit = self.uop(Op::BitwiseAnd, half_bit, one);
        let upper = self.test(Op::INotEqual, half_bit, zero);
        let quadrant = self.uop(Op::IAdd, quadrant, half_bit);
        // From one half up, the complement (`!w` for `1 - w`).
        for w in column.iter_mut() {
            let not = self.b.op(Op::Not, u, &[*w]);
            *w = self.pick_u(upper, not, *w);
        }
        let mask = self.uc(0x3fff_ffff);
        column[5] = self.uop(Op::BitwiseAnd, column[5], mask);
        // The first nonzero word among the top three and the three after it, with the
        // weight of the first (bit 29 of the top word is worth 1/2 a quadrant).
        let windows: Vec<([Word; 4], f64)> = (0..4).map(|s: i32| ([5 - s, 4 - s, 3 - s, 2 - s].map(|i| usize::try_from(i).map_or(zero, |i| column[i])), 2f64.powi(-30 - 32 * s))).collect();
        let mut chosen = windows[3].0;
        let mut scale = self.fd(windows[3].1);
        for s in (0..3).rev() {
            let empty = self.test(Op::IEqual, windows[s].0[0], zero);
            for (kept, &here) in chosen.iter_mut().zip(&windows[s].0) {
                *kept = self.pick_u(empty, *kept, here);
            }
            let here = self.fd(windows[s].1);
            scale = self.pick_f(empty, scale, here);
        }
        let mut parts = Vec::new();
        for (k, w) in chosen.iter().enumerate() {
            let v = self.b.op(Op::ConvertUToF, f, &[*w]);
            let k = self.fd(2f64.powi(-32 * k as i32));
            let v = self.fop(Op::FMul, v, k);
            parts.push(self.fop(Op::FMul, v, scale));
        }
        // Two-sum of the first two (the first is the larger), the rest into the tail.
        let hi = self.fop(Op::FAdd, parts[0], parts[1]);
        let kept = self.fop(Op::FSub, hi, parts[0]);
        let tail = self.fop(Op::FSub, parts[1], kept);
        let tail = self.fop(Op::FAdd, tail, parts[2]);
        let tail = self.fop(Op::FAdd, tail, parts[3]);
        let (fh, fl) = self.fast_two_sum(hi, tail);
        // Times pi/2: Dekker's product of the high parts, the cross terms into the tail.
        let p_hi = self.fd(PIO2_HI);
        let p = self.fop(Op::FMul, fh, p_hi);
        let (ah, al) = self.veltkamp_split(fh);
        let (bh, bl) = split(PIO2_HI);
        let (bh, bl) = (self.fd(bh), self.fd(bl));
        let hh = self.fop(Op::FMul, ah, bh);
        let err = self.fop(Op::FSub, hh, p);
        let hl = self.fop(Op::FMul, ah, bl);
        let err = self.fop(Op::FAdd, err, hl);
        let lh = self.fop(Op::FMul, al, bh);
        let err = self.fop(Op::FAdd, err, lh);
        let ll = self.fop(Op::FMul, al, bl);
        let err = self.fop(Op::FAdd, err, ll);
        let p_lo = self.fd(PIO2_LO);
        let cross = self.fop(Op::FMul, fh, p_lo);
        let low_high = self.fop(Op::FMul, fl, p_hi);
        let cross = self.fop(Op::FAdd, cross, low_high);
        let err = self.fop(Op::FAdd, err, cross);
        let (rh, rl) = self.fast_two_sum(p, err);
        let neg_h = self.b.op(Op::FNegate, f, &[rh]);
        let neg_l = self.b.op(Op::FNegate, f, &[rl]);
        let y0 = self.pick_f(upper, neg_h, rh);
        let y1 = self.pick_f(upper, neg_l, rl);
        (quadrant, y0, y1)
    }

    /// `(a + b, the rounding error)` for `|a| >= |b|`.
    fn fast_two_sum(&mut self, a: Word, b: Word) -> (Word, Word) {
        let s = self.fop(Op::FAdd, a, b);
        let kept = self.fop(Op::FSub, s, a);
        let e = self.fop(Op::FSub, b, kept);
        (s, e)
    }

    /// Veltkamp's split of double `a` (below 2^996) into two halves of 26 bits or fewer.
    fn veltkamp_split(&mut self, a: Word) -> (Word, Word) {
        let c = self.fd(134_217_729.0);
        let t = self.fop(Op::FMul, c, a);
        let d = self.fop(Op::FSub, t, a);
        let h = self.fop(Op::FSub, t, d);
        let l = self.fop(Op::FSub, a, h);
        (h, l)
    }

    /// fdlibm's `__kernel_sin(x, y, 1)`.
    fn kernel_sin(&mut self, x: Word, y: Word) -> Word {
        let z = self.fop(Op::FMul, x, x);
        let w = self.fop(Op::FMul, z, z);
        let [s1, s2, s3, s4, s5, s6] = SIN.map(|c| self.fd(f64::from_bits(c)));
        // r = S2 + z (S3 + z S4) + z w (S5 + z S6)
        let zs4 = self.fop(Op::FMul, z, s4);
        let a = self.fop(Op::FAdd, s3, zs4);
        let za = self.fop(Op::FMul, z, a);
        let r = self.fop(Op::FAdd, s2, za);
        let zs6 = self.fop(Op::FMul, z, s6);
        let b = self.fop(Op::FAdd, s5, zs6);
        let zw = self.fop(Op::FMul, z, w);
        let zwb = self.fop(Op::FMul, zw, b);
        let r = self.fop(Op::FAdd, r, zwb);
        let v = self.fop(Op::FMul, z, x);
        // x - ((z (y/2 - v r) - y) - v S1)
        let half = self.fd(0.5);
        let hy = self.fop(Op::FMul, half, y);
        let vr = self.fop(Op::FMul, v, r);
        let inner = self.fop(Op::FSub, hy, vr);
        let zi = self.fop(Op::FMul, z, inner);
        let zi = self.fop(Op::FSub, zi, y);
        let vs1 = self.fop(Op::FMul, v, s1);
        let all = self.fop(Op::FSub, zi, vs1);
        self.fop(Op::FSub, x, all)
    }

    /// fdlibm's `__kernel_cos(x, y)`.
    fn kernel_cos(&mut self, x: Word, y: Word) -> Word {
        let z = self.fop(Op::FMul, x, x);
        let w = self.fop(Op::FMul, z, z);
        let [c1, c2, c3, c4, c5, c6] = COS.map(|c| self.fd(f64::from_bits(c)));
        // r = z (C1 + z (C2 + z C3)) + w w (C4 + z (C5 + z C6))
        let zc3 = self.fop(Op::FMul, z, c3);
        let a = self.fop(Op::FAdd, c2, zc3);
        let za = self.fop(Op::FMul, z, a);
        let a = self.fop(Op::FAdd, c1, za);
        let first = self.fop(Op::FMul, z, a);
        let zc6 = self.fop(Op::FMul, z, c6);
        let b = self.fop(Op::FAdd, c5, zc6);
        let zb = self.fop(Op::FMul, z, b);
        let b = self.fop(Op::FAdd, c4, zb);
        let ww = self.fop(Op::FMul, w, w);
        let second = self.fop(Op::FMul, ww, b);
        let r = self.fop(Op::FAdd, first, second);
        // hz = z/2; w = 1 - hz; w + (((1 - w) - hz) + (z r - x y))
        let half = self.fd(0.5);
        let one = self.fd(1.0);
        let hz = self.fop(Op::FMul, half, z);
        let w = self.fop(Op::FSub, one, hz);
        let lost = self.fop(Op::FSub, one, w);
        let lost = self.fop(Op::FSub, lost, hz);
        let zr = self.fop(Op::FMul, z, r);
        let xy = self.fop(Op::FMul, x, y);
        let tail = self.fop(Op::FSub, zr, xy);
        let tail = self.fop(Op::FAdd, lost, tail);
        self.fop(Op::FAdd, w, tail)
    }

    /// The helper's value: `dvec3(sin x, cos x, tan x)`.
    fn double_sin_cos_tan(&mut self, x: Word) -> Word {
        let f = self.f();
        let ax = self.gl(G::FAbs, f, &[x]);
        let (_, high) = self.double_words(x);
        let c31 = self.uc(31);
        let sign = self.uop(Op::ShiftRightLogical, high, c31);
        let zero = self.uc(0);
        let negative = self.test(Op::INotEqual, sign, zero);
        let magnitude = self.uc(0x7fff_ffff);
        let ahigh = self.uop(Op::BitwiseAnd, high, magnitude);
        let (n_medium, y0_medium, y1_medium) = self.medium_reduction(ax, ahigh);
        let (n_large, y0_large, y1_large) = self.double_payne_hanek(ax);
        let limit = self.uc(MEDIUM_LIMIT);
        let large = self.test(Op::UGreaterThanEqual, ahigh, limit);
        let n = self.pick_u(large, n_large, n_medium);
        let y0 = self.pick_f(large, y0_large, y0_medium);
        let y1 = self.pick_f(large, y1_large, y1_medium);
        let three = self.uc(3);
        let q = self.uop(Op::BitwiseAnd, n, three);
        let s = self.kernel_sin(y0, y1);
        let c = self.kernel_cos(y0, y1);
        self.by_quadrant(q, (s, c), negative, ax)
    }
}

/// Veltkamp's split of a constant, as [`Scalar::veltkamp_split`] computes it.
fn split(a: f64) -> (f64, f64) {
    let t = 134_217_729.0 * a;
    let h = t - (t - a);
    (h, a - h)
}
