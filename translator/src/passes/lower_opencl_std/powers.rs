//! `pow`, `powr`, `pown`, `rootn`, `cbrt` and `hypot` of floats and halves to OpenCL's
//! accuracy and edge values. `GLSL.std.450` `Pow` is `Exp2(y Log2(x))` on every driver
//! measured: undefined for negative `x` (so `pow(-2, 3)` was not -8), wrong at zero (`pow(0, -1)`
//! gave 0) and 70 units off where `y log2 x` is large; OpenCL asks 16 units and C99's values at
//! every zero, infinity, NaN and negative base.
//!
//! All of them call `matbridge.pow_f32(x, yh, yl)`, `x` to the power `yh + yl` (`yl` refines
//! an exponent that one float cannot hold: `1/n`, `1/3`, integers beyond 2^24), in fdlibm's
//! scheme for `powf`, which needs nothing but rounded float operations:
//!
//! - `log2 |x|` as `t1 + t2`, `t1` of 12 significant bits: `|x| = m 2^n` with `m` near 1 or
//!   1.5, `s = (m - b)/(m + b)` with its rounding error carried, `log(m/b) = 2s + 2s^3/3 + s^5
//!   R(s^2)` summed in two parts, times `2/(3 ln 2)` in two parts, plus `log2 b` in two parts
//!   and `n`. Where `|y| > 2^27` (and `x` within 2^-19 of 1, else the result is 0 or infinite;
//!   fdlibm's narrower window sent `pow(1 - 10 2^-24, 1.4e8)`, 2.5e-37, to 0), the series of
//!   `log(1 + t)` instead.
//! - `y log2 |x|` as `p_h + p_l`, `p_h` exact (12 bits times 12 bits); past 128 the result is
//!   infinite, below -150 zero.
//! - `2^(p_h + p_l)`: the nearest integer `n` off, the rest times `ln 2` in two parts as `z +
//!   w`, `e^z` by fdlibm's rational form with its error term `w`, times `2^n` in two exact steps
//!   (a subnormal result rounds once).
//!
//! Each float operation is `NoContraction` (`Scalar::fop`): the splits need each product
//! rounded on its own. The wrappers add C99's values: `y = 0` or `x = 1` give 1 (even with a
//! NaN), zeros and infinities of `x` and `y` their limits, negative `x` to an odd integer a
//! negative result, to a non-integer NaN; `powr` is NaN for negative `x`, `0^0`, `inf^0` and
//! `1^inf`; `pown` takes its sign from the integer's parity; `rootn` is NaN for `n = 0` and even
//! roots of negatives. `hypot` scales both arguments by the larger's power of two (exactly),
//! takes the square root of the sum of squares, and scales back; infinities win over NaNs.
//!
//! `tests/opencl_kernels.rs` (`powers_to_opencl_accuracy`) holds the devices to OpenCL's bounds
//! (16 units; 2 for `cbrt`, 4 for `hypot`). `half_powr` and `native_powr` keep the driver's
//! `Pow`. Doubles (`matbridge.<name>_f64`) take fdlibm's double `pow` constants, the splits at
//! the high word (21 leading bits), `|y| > 2^31` for the series near 1, and 1/3 as `1/3 +
//! 2^-54/3`; within 1 unit of the exact powers on lavapipe.

use super::scalar::Scalar;
use super::Lower;
use spirv::{GlslStd450Op as G, Op, OpenclStd100Op as CL, Word};

/// fdlibm's coefficients of `R(s^2)` in `log(m) = 2s + 2s^3/3 + s^5 R(s^2)` (times 3/2).
const L: [u32; 6] = [0x3f19_999a, 0x3edb_6db7, 0x3eaa_aaab, 0x3e8b_a305, 0x3e6c_3255, 0x3e53_f142];
/// fdlibm's coefficients of the rational form of `e^z`.
const P: [u32; 5] = [0x3e2a_aaab, 0xbb36_0b61, 0x388a_b355, 0xb5dd_ea0e, 0x3331_bb4c];
/// `log2 1.5` in two parts.
const LOG2_15: [u32; 2] = [0x3f15_c000, 0x35d1_cfdc];
/// `ln 2`, and in two parts (the first of 16 bits).
const LN2: u32 = 0x3f31_7218;
const LN2_PARTS: [u32; 2] = [0x3f31_7200, 0x35bf_be8c];
/// `2 / (3 ln 2)`, and in two parts (the first of 12 bits).
const CP: u32 = 0x3f76_384f;
const CP_PARTS: [u32; 2] = [0x3f76_4000, 0xb8f6_23c6];
/// `1 / ln 2`, and in two parts (the first of 16 bits).
const INV_LN2: u32 = 0x3fb8_aa3b;
const INV_LN2_PARTS: [u32; 2] = [0x3fb8_aa00, 0x36ec_a570];
/// How far below 128 `p_h + p_l` may round up to 128 and still not overflow.
const OVERFLOW_TAIL: f32 = 4.299_566_6e-8;
/// Keeps the 12 leading significant bits of a float.
const HIGH12: u32 = 0xffff_f000;
/// The same for doubles (fdlibm's `pow`), the split at 21 leading bits (the high word).
const L_DOUBLE: [u64; 6] = [0x3fe3_3333_3333_3303, 0x3fdb_6db6_db6f_abff, 0x3fd5_5555_518f_264d, 0x3fd1_7460_a91d_4101, 0x3fcd_864a_93c9_db65, 0x3fca_7e28_4a45_4eef];
const P_DOUBLE: [u64; 5] = [0x3fc5_5555_5555_553e, 0xbf66_c16c_16be_bd93, 0x3f11_566a_af25_de2c, 0xbebb_bd41_c5d2_6bf1, 0x3e66_3769_72be_a4d0];
const LOG2_15_DOUBLE: [u64; 2] = [0x3fe2_b803_4000_0000, 0x3e4c_fdeb_43cf_d006];
const LN2_DOUBLE: u64 = 0x3fe6_2e42_fefa_39ef;
const LN2_PARTS_DOUBLE: [u64; 2] = [0x3fe6_2e43_0000_0000, 0xbe20_5c61_0ca8_6c39];
const CP_DOUBLE: u64 = 0x3fee_c709_dc3a_03fd;
const CP_PARTS_DOUBLE: [u64; 2] = [0x3fee_c709_e000_0000, 0xbe3e_2fe0_145b_01f5];
const INV_LN2_DOUBLE: u64 = 0x3ff7_1547_652b_82fe;
const INV_LN2_PARTS_DOUBLE: [u64; 2] = [0x3ff7_1547_6000_0000, 0x3e54_ae0b_f85d_df44];
const OVERFLOW_TAIL_DOUBLE: f64 = 8.008_566_259_537_294e-17;

impl Lower<'_, '_> {
    /// `matbridge.pow_f32(x, yh, yl)` (`_f64` for `width` 64): `x > 0` to the power `yh + yl`,
    /// without the edge values.
    pub(super) fn pow_helper(&mut self, width: u32) -> Word {
        let fty = self.b.module.type_float(width);
        self.helper_of_width(width, &format!("matbridge.pow_f{width}"), fty, &[fty; 3], |s, p| s.pow(p[0], p[1], p[2]))
    }

    /// `op` (`pow`, `powr`, `pown`, `rootn`, `cbrt` or `hypot`) of `args` to OpenCL's
    /// accuracy, or `None` for types the helpers do not serve (bfloat16).
    pub(super) fn precise_power(&mut self, op: CL, ty: Word, args: &[Word]) -> Option<Word> {
        let width = self.helper_width(ty)?;
        let fty = self.b.module.type_float(width);
        let i32_ty = self.b.module.type_int(32, false);
        let name = |f: &str| format!("matbridge.{f}_f{width}");
        let pow = self.pow_helper(width);
        let helper = match op {
            CL::pow => self.helper_of_width(width, &name("pow2"), fty, &[fty; 2], |s, p| {
                let zero = s.fd(0.0);
                s.call(pow, &[p[0], p[1], zero])
            }),
            CL::powr => self.helper_of_width(width, &name("powr"), fty, &[fty; 2], |s, p| s.powr(pow, p[0], p[1])),
            CL::pown => self.helper_of_width(width, &name("pown"), fty, &[fty, i32_ty], |s, p| s.pown(pow, p[0], p[1])),
            CL::rootn => self.helper_of_width(width, &name("rootn"), fty, &[fty, i32_ty], |s, p| s.rootn(pow, p[0], p[1])),
            CL::cbrt => self.helper_of_width(width, &name("cbrt"), fty, &[fty], |s, p| {
                // 1/3 in two parts: for doubles 1/3 - (2^54 - 1)/(3 2^54) = 2^-54/3.
                let (third, rest) = if width == 64 {
                    (s.fd(1.0 / 3.0), s.fd(1.0 / 3.0 / 18_014_398_509_481_984.0))
                } else {
                    let third = 1.0f32 / 3.0;
                    (s.fc(third), s.fc((1.0f64 / 3.0 - f64::from(third)) as f32))
                };
                let ax = s.gl(G::FAbs, fty, &[p[0]]);
                let m = s.call(pow, &[ax, third, rest]);
                s.copysign(m, p[0])
            }),
            CL::hypot => self.helper_of_width(width, &name("hypot"), fty, &[fty; 2], |s, p| s.hypot(p[0], p[1])),
            _ => return None,
        };
        Some(self.per_component_of(ty, args, helper))
    }
}

impl Scalar<'_, '_> {
    /// `|m|` with the sign of `sign`.
    pub(super) fn copysign(&mut self, m: Word, sign: Word) -> Word {
        let (f, u) = (self.f(), self.u());
        if self.width == 64 {
            let (mh, sh) = (self.high_word(m), self.high_word(sign));
            let (abs_mask, sign_mask) = (self.uc(0x7fff_ffff), self.uc(0x8000_0000));
            let mh = self.uop(Op::BitwiseAnd, mh, abs_mask);
            let sh = self.uop(Op::BitwiseAnd, sh, sign_mask);
            let high = self.uop(Op::BitwiseOr, mh, sh);
            return self.with_high_word(m, high);
        }
        let mb = self.b.bitcast(u, m);
        let sb = self.b.bitcast(u, sign);
        let (abs_mask, sign_mask) = (self.uc(0x7fff_ffff), self.uc(0x8000_0000));
        let mb = self.uop(Op::BitwiseAnd, mb, abs_mask);
        let sb = self.uop(Op::BitwiseAnd, sb, sign_mask);
        let bits = self.uop(Op::BitwiseOr, mb, sb);
        self.b.bitcast(f, bits)
    }

    /// The word holding sign, exponent and leading significand bits: a float's bits, a
    /// double's high word.
    fn top(&mut self, x: Word) -> Word {
        if self.width == 64 {
            self.high_word(x)
        } else {
            let u = self.u();
            self.b.bitcast(u, x)
        }
    }

    /// `x` with its top word replaced.
    fn with_top(&mut self, x: Word, top: Word) -> Word {
        if self.width == 64 {
            self.with_high_word(x, top)
        } else {
            let f = self.f();
            self.b.bitcast(f, top)
        }
    }

    /// The float whose top word is `top`, the rest zero.
    fn of_top(&mut self, top: Word) -> Word {
        if self.width == 64 {
            self.double_of_high_word(top)
        } else {
            let f = self.f();
            self.b.bitcast(f, top)
        }
    }

    /// `x` cut to its leading significant bits (12 of a float, 21 of a double), so that the
    /// product of two such is exact.
    fn leading(&mut self, x: Word) -> Word {
        if self.width == 64 {
            let high = self.high_word(x);
            self.double_of_high_word(high)
        } else {
            self.masked(x, HIGH12)
        }
    }

    /// A 32-bit integer constant: `single` for floats, `double` for doubles' high words.
    fn uw(&mut self, single: u32, double: u32) -> Word {
        self.uc(if self.width == 64 { double } else { single })
    }

    fn and(&mut self, a: Word, b: Word) -> Word {
        let boolean = self.b.module.type_bool();
        self.b.op(Op::LogicalAnd, boolean, &[a, b])
    }

    fn or(&mut self, a: Word, b: Word) -> Word {
        let boolean = self.b.module.type_bool();
        self.b.op(Op::LogicalOr, boolean, &[a, b])
    }

    pub(super) fn is_nan(&mut self, x: Word) -> Word {
        let boolean = self.b.module.type_bool();
        self.b.op(Op::IsNan, boolean, &[x])
    }

    /// `c0 + t (c1 + t (c2 + ...))` for the coefficients' bits (`single` for floats,
    /// `double` for doubles).
    fn horner(&mut self, t: Word, single: &[u32], double: &[u64]) -> Word {
        let coefficients: Vec<Word> = (0..single.len()).map(|j| self.fw(single[j], double[j])).collect();
        let mut p = coefficients[coefficients.len() - 1];
        for c in coefficients[..coefficients.len() - 1].iter().rev() {
            let tp = self.fop(Op::FMul, t, p);
            p = self.fop(Op::FAdd, *c, tp);
        }
        p
    }

    /// `log2 ax` as `(t1, t2)`, `t1` of 12 significant bits, for a finite `ax > 0`.
    fn log2_parts(&mut self, ax: Word) -> (Word, Word) {
        let f = self.f();
        let bits = self.top(ax);
        let smallest_normal = self.uw(0x0080_0000, 0x0010_0000);
        let subnormal = self.test(Op::ULessThan, bits, smallest_normal);
        let (shift, up) = if self.width == 64 { (53u32, self.fd(9_007_199_254_740_992.0)) } else { (24, self.fc(16_777_216.0)) };
        let scaled = self.fop(Op::FMul, ax, up);
        let ax = self.pick_f(subnormal, scaled, ax);
        let (minus_shift, zero_u) = (self.uc(shift.wrapping_neg()), self.uc(0));
        let n0 = self.pick_u(subnormal, minus_shift, zero_u);
        let bits = self.top(ax);
        let c23 = self.uw(23, 20);
        let biased = self.uop(Op::ShiftRightLogical, bits, c23);
        let bias = self.uw(127, 1023);
        let e = self.uop(Op::ISub, biased, bias);
        let n = self.uop(Op::IAdd, n0, e);
        let fraction_mask = self.uw(0x7f_ffff, 0xf_ffff);
        let j = self.uop(Op::BitwiseAnd, bits, fraction_mask);
        let one_bits = self.uw(0x3f80_0000, 0x3ff0_0000);
        let ix = self.uop(Op::BitwiseOr, j, one_bits);
        // m below sqrt(3/2): about 1; below sqrt(3): about 1.5; else m/2, about 1.
        let (sqrt_15, sqrt_3) = (self.uw(0x1c_c471, 0x3_988e), self.uw(0x5d_b3d7, 0xb_b67a));
        let above_first = self.test(Op::UGreaterThan, j, sqrt_15);
        let below_second = self.test(Op::ULessThan, j, sqrt_3);
        let k = self.and(above_first, below_second);
        let halve = self.test(Op::UGreaterThanEqual, j, sqrt_3);
        let one_u = self.uc(1);
        let carry = self.pick_u(halve, one_u, zero_u);
        let n = self.uop(Op::IAdd, n, carry);
        let exponent_one = self.uw(0x80_0000, 0x10_0000);
        let down = self.pick_u(halve, exponent_one, zero_u);
        let ix = self.uop(Op::ISub, ix, down);
        let m = self.with_top(ax, ix);
        let (one, one_half) = (self.fd(1.0), self.fd(1.5));
        let base = self.pick_f(k, one_half, one);
        let (zero, dh, dl) = (self.fd(0.0), self.fw(LOG2_15[0], LOG2_15_DOUBLE[0]), self.fw(LOG2_15[1], LOG2_15_DOUBLE[1]));
        let dp_h = self.pick_f(k, dh, zero);
        let dp_l = self.pick_f(k, dl, zero);
        // s = s_h + s_l = (m - b) / (m + b).
        let num = self.fop(Op::FSub, m, base);
        let den = self.fop(Op::FAdd, m, base);
        let inv = self.fop(Op::FDiv, one, den);
        let s = self.fop(Op::FMul, num, inv);
        let s_h = self.leading(s);
        // t_h: m + b to its leading bits, from m's top word.
        let c1 = self.uc(1);
        let half_ix = self.uop(Op::ShiftRightLogical, ix, c1);
        let mask = self.uw(HIGH12, u32::MAX);
        let th = self.uop(Op::BitwiseAnd, half_ix, mask);
        let top = self.uc(0x2000_0000);
        let th = self.uop(Op::BitwiseOr, th, top);
        let add = self.uw(0x0040_0000, 0x0008_0000);
        let th = self.uop(Op::IAdd, th, add);
        let k_bit = self.uw(1 << 21, 1 << 18);
        let k_add = self.pick_u(k, k_bit, zero_u);
        let th = self.uop(Op::IAdd, th, k_add);
        let t_h = self.of_top(th);
        let tb = self.fop(Op::FSub, t_h, base);
        let t_l = self.fop(Op::FSub, m, tb);
        let sht = self.fop(Op::FMul, s_h, t_h);
        let a = self.fop(Op::FSub, num, sht);
        let shl = self.fop(Op::FMul, s_h, t_l);
        let a = self.fop(Op::FSub, a, shl);
        let s_l = self.fop(Op::FMul, inv, a);
        // log(m / b) = s_h t_h + (s_l t_h + t_l s), summed in two parts.
        let s2 = self.fop(Op::FMul, s, s);
        let s4 = self.fop(Op::FMul, s2, s2);
        let poly = self.horner(s2, &L, &L_DOUBLE);
        let r = self.fop(Op::FMul, s4, poly);
        let shs = self.fop(Op::FAdd, s_h, s);
        let corr = self.fop(Op::FMul, s_l, shs);
        let r = self.fop(Op::FAdd, r, corr);
        let s2 = self.fop(Op::FMul, s_h, s_h);
        let three = self.fd(3.0);
        let t = self.fop(Op::FAdd, three, s2);
        let t = self.fop(Op::FAdd, t, r);
        let t_h = self.leading(t);
        let d = self.fop(Op::FSub, t_h, three);
        let d = self.fop(Op::FSub, d, s2);
        let t_l = self.fop(Op::FSub, r, d);
        let uu = self.fop(Op::FMul, s_h, t_h);
        let v1 = self.fop(Op::FMul, s_l, t_h);
        let v2 = self.fop(Op::FMul, t_l, s);
        let v = self.fop(Op::FAdd, v1, v2);
        let p = self.fop(Op::FAdd, uu, v);
        let p_h = self.leading(p);
        let d = self.fop(Op::FSub, p_h, uu);
        let p_l = self.fop(Op::FSub, v, d);
        // Times 2 / (3 ln 2), plus log2 b and n.
        let (cp, cp_h, cp_l) = (self.fw(CP, CP_DOUBLE), self.fw(CP_PARTS[0], CP_PARTS_DOUBLE[0]), self.fw(CP_PARTS[1], CP_PARTS_DOUBLE[1]));
        let z_h = self.fop(Op::FMul, cp_h, p_h);
        let a = self.fop(Op::FMul, cp_l, p_h);
        let b = self.fop(Op::FMul, p_l, cp);
        let z_l = self.fop(Op::FAdd, a, b);
        let z_l = self.fop(Op::FAdd, z_l, dp_l);
        let nf = self.b.op(Op::ConvertSToF, f, &[n]);
        let t1 = self.fop(Op::FAdd, z_h, z_l);
        let t1 = self.fop(Op::FAdd, t1, dp_h);
        let t1 = self.fop(Op::FAdd, t1, nf);
        let t1 = self.leading(t1);
        let d = self.fop(Op::FSub, t1, nf);
        let d = self.fop(Op::FSub, d, dp_h);
        let d = self.fop(Op::FSub, d, z_h);
        let t2 = self.fop(Op::FSub, z_l, d);
        (t1, t2)
    }

    /// `log2 ax` as `(t1, t2)` for `ax` within 2^-19 of 1, by `log(1 + t)`'s series.
    fn log2_near_one(&mut self, ax: Word) -> (Word, Word) {
        let one = self.fd(1.0);
        let t = self.fop(Op::FSub, ax, one);
        let (quarter, third, half) = (self.fd(0.25), self.fd(1.0 / 3.0), self.fd(0.5));
        let a = self.fop(Op::FMul, t, quarter);
        let a = self.fop(Op::FSub, third, a);
        let a = self.fop(Op::FMul, t, a);
        let a = self.fop(Op::FSub, half, a);
        let tt = self.fop(Op::FMul, t, t);
        let w = self.fop(Op::FMul, tt, a);
        let (inv, inv_h, inv_l) = (self.fw(INV_LN2, INV_LN2_DOUBLE), self.fw(INV_LN2_PARTS[0], INV_LN2_PARTS_DOUBLE[0]), self.fw(INV_LN2_PARTS[1], INV_LN2_PARTS_DOUBLE[1]));
        let uu = self.fop(Op::FMul, inv_h, t);
        let a = self.fop(Op::FMul, t, inv_l);
        let b = self.fop(Op::FMul, w, inv);
        let v = self.fop(Op::FSub, a, b);
        let t1 = self.fop(Op::FAdd, uu, v);
        let t1 = self.leading(t1);
        let d = self.fop(Op::FSub, t1, uu);
        let t2 = self.fop(Op::FSub, v, d);
        (t1, t2)
    }

    /// `ax^(yh + yl)` for finite `ax > 0` and finite `yh != 0`: 0 or infinity past the range.
    fn pow_magnitude(&mut self, ax: Word, yh: Word, yl: Word) -> Word {
        let f = self.f();
        let (general_1, general_2) = self.log2_parts(ax);
        let (near_1, near_2) = self.log2_near_one(ax);
        let ay = self.gl(G::FAbs, f, &[yh]);
        let huge_limit = self.fw(0x4d00_0000, 0x41e0_0000_0000_0000);
        let huge = self.test(Op::FOrdGreaterThan, ay, huge_limit);
        let t1 = self.pick_f(huge, near_1, general_1);
        let t2 = self.pick_f(huge, near_2, general_2);
        // y log2 ax = p_h + p_l.
        let y1 = self.leading(yh);
        let dy = self.fop(Op::FSub, yh, y1);
        let a = self.fop(Op::FMul, dy, t1);
        let b = self.fop(Op::FMul, yh, t2);
        let c = self.fop(Op::FMul, yl, t1);
        let p_l = self.fop(Op::FAdd, a, b);
        let p_l = self.fop(Op::FAdd, p_l, c);
        let p_h = self.fop(Op::FMul, y1, t1);
        let z = self.fop(Op::FAdd, p_l, p_h);
        let (c128, c150) = if self.width == 64 { (self.fd(1024.0), self.fd(-1075.0)) } else { (self.fd(128.0), self.fd(-150.0)) };
        let above = self.test(Op::FOrdGreaterThan, z, c128);
        let at_top = self.test(Op::FOrdEqual, z, c128);
        let tail = if self.width == 64 { self.fd(OVERFLOW_TAIL_DOUBLE) } else { self.fc(OVERFLOW_TAIL) };
        let pl_tail = self.fop(Op::FAdd, p_l, tail);
        let zp = self.fop(Op::FSub, z, p_h);
        let rounds_over = self.test(Op::FOrdGreaterThan, pl_tail, zp);
        let rounds_over = self.and(at_top, rounds_over);
        let over = self.or(above, rounds_over);
        let below = self.test(Op::FOrdLessThan, z, c150);
        let at_bottom = self.test(Op::FOrdEqual, z, c150);
        let rounds_under = self.test(Op::FOrdLessThanEqual, p_l, zp);
        let rounds_under = self.and(at_bottom, rounds_under);
        let under = self.or(below, rounds_under);
        // 2^(p_h + p_l) = 2^n e^(z + w).
        let nf = self.gl(G::RoundEven, f, &[z]);
        let p_h = self.fop(Op::FSub, p_h, nf);
        let t = self.fop(Op::FAdd, p_l, p_h);
        let t = if self.width == 64 { self.leading(t) } else { self.masked(t, 0xffff_8000) };
        let (ln2, ln2_h, ln2_l) = (self.fw(LN2, LN2_DOUBLE), self.fw(LN2_PARTS[0], LN2_PARTS_DOUBLE[0]), self.fw(LN2_PARTS[1], LN2_PARTS_DOUBLE[1]));
        let uu = self.fop(Op::FMul, t, ln2_h);
        let d = self.fop(Op::FSub, t, p_h);
        let d = self.fop(Op::FSub, p_l, d);
        let a = self.fop(Op::FMul, d, ln2);
        let b = self.fop(Op::FMul, t, ln2_l);
        let v = self.fop(Op::FAdd, a, b);
        let zz = self.fop(Op::FAdd, uu, v);
        let d = self.fop(Op::FSub, zz, uu);
        let w = self.fop(Op::FSub, v, d);
        let t = self.fop(Op::FMul, zz, zz);
        let poly = self.horner(t, &P, &P_DOUBLE);
        let tp = self.fop(Op::FMul, t, poly);
        let t1 = self.fop(Op::FSub, zz, tp);
        let two = self.fd(2.0);
        let num = self.fop(Op::FMul, zz, t1);
        let den = self.fop(Op::FSub, t1, two);
        let q = self.fop(Op::FDiv, num, den);
        let zw = self.fop(Op::FMul, zz, w);
        let e = self.fop(Op::FAdd, w, zw);
        let r = self.fop(Op::FSub, q, e);
        let one = self.fd(1.0);
        let d = self.fop(Op::FSub, r, zz);
        let value = self.fop(Op::FSub, one, d);
        // Times 2^n in two steps, each a normal power of two.
        let (_, s1, s2) = self.halved_power_of_two(nf);
        let value = self.fop(Op::FMul, value, s1);
        let value = self.fop(Op::FMul, value, s2);
        let (inf, zero) = (self.fd(f64::INFINITY), self.fd(0.0));
        let value = self.pick_f(over, inf, value);
        let value = self.pick_f(under, zero, value);
        // |y| > 2^27 and ax not within 2^-19 of 1 (where |y log2 ax| > 150): 0 or infinity;
        // for doubles |y| > 2^31, ax not within 2^-20 of 1.
        let bits = self.top(ax);
        let (low, high) = (self.uw(0x3f7f_ffe0, 0x3fef_ffff), self.uw(0x3f80_0010, 0x3ff0_0000));
        let below_one = self.test(Op::ULessThan, bits, low);
        let above_one = self.test(Op::UGreaterThan, bits, high);
        let far = self.or(below_one, above_one);
        let far = self.and(huge, far);
        let grows = self.test(Op::FOrdGreaterThan, ax, one);
        let y_pos = self.test(Op::FOrdGreaterThan, yh, zero);
        let boolean = self.b.module.type_bool();
        let to_inf = self.b.op(Op::LogicalEqual, boolean, &[grows, y_pos]);
        let limit = self.pick_f(to_inf, inf, zero);
        self.pick_f(far, limit, value)
    }

    /// C99's `pow(x, yh + yl)` (`yl` only refines `yh`; its integer tests look at `yh`).
    fn pow(&mut self, x: Word, yh: Word, yl: Word) -> Word {
        let f = self.f();
        let boolean = self.b.module.type_bool();
        let ax = self.gl(G::FAbs, f, &[x]);
        let ay = self.gl(G::FAbs, f, &[yh]);
        let (zero, one, inf, nan) = (self.fd(0.0), self.fd(1.0), self.fd(f64::INFINITY), self.fd(f64::NAN));
        let x_zero = self.test(Op::FOrdEqual, ax, zero);
        let x_inf = self.test(Op::FOrdEqual, ax, inf);
        let y_zero = self.test(Op::FOrdEqual, ay, zero);
        let y_inf = self.test(Op::FOrdEqual, ay, inf);
        let x_nan = self.is_nan(x);
        let y_nan = self.is_nan(yh);
        // y's parity: odd where y is an integer and y/2 (exact) is not.
        let ty = self.gl(G::Trunc, f, &[ay]);
        let integral = self.test(Op::FOrdEqual, ty, ay);
        let half = self.fd(0.5);
        let halved = self.fop(Op::FMul, ay, half);
        let th = self.gl(G::Trunc, f, &[halved]);
        let odd_bit = self.test(Op::FOrdNotEqual, th, halved);
        let odd = self.and(integral, odd_bit);
        let xb = self.top(x);
        let sign_mask = self.uc(0x8000_0000);
        let xs = self.uop(Op::BitwiseAnd, xb, sign_mask);
        let zero_u = self.uc(0);
        let x_negative = self.test(Op::INotEqual, xs, zero_u);
        // The magnitude for finite, non-zero x and y.
        let x_special = self.or(x_zero, x_inf);
        let x_special = self.or(x_special, x_nan);
        let y_special = self.or(y_zero, y_inf);
        let y_special = self.or(y_special, y_nan);
        let cx = self.pick_f(x_special, one, ax);
        let cy = self.pick_f(y_special, one, yh);
        let cl = self.pick_f(y_special, zero, yl);
        let value = self.pow_magnitude(cx, cy, cl);
        // Zero and infinite x: 0 or infinity by y's sign.
        let y_neg = self.test(Op::FOrdLessThan, yh, zero);
        let big = self.b.op(Op::LogicalNotEqual, boolean, &[x_zero, y_neg]);
        let edge = self.pick_f(big, zero, inf);
        let value = self.pick_f(x_special, edge, value);
        // Infinite y: 1 for |x| = 1, else 0 or infinity by whether |x| and y grow together.
        let x_big = self.test(Op::FOrdGreaterThan, ax, one);
        let y_pos = self.test(Op::FOrdGreaterThan, yh, zero);
        let grows = self.b.op(Op::LogicalEqual, boolean, &[x_big, y_pos]);
        let limit = self.pick_f(grows, inf, zero);
        let x_one = self.test(Op::FOrdEqual, ax, one);
        let limit = self.pick_f(x_one, one, limit);
        let value = self.pick_f(y_inf, limit, value);
        // Negative x: odd integer powers negative, non-integer ones NaN.
        let negative = self.and(x_negative, odd);
        let minus = self.b.op(Op::FNegate, f, &[value]);
        let value = self.pick_f(negative, minus, value);
        let finite_y = self.b.op(Op::LogicalNot, boolean, &[y_inf]);
        let fraction = self.b.op(Op::LogicalNot, boolean, &[integral]);
        let fraction = self.and(fraction, finite_y);
        let below_zero = self.test(Op::FOrdLessThan, x, zero);
        let finite_x = self.b.op(Op::LogicalNot, boolean, &[x_inf]);
        let below_zero = self.and(below_zero, finite_x);
        let undefined = self.and(below_zero, fraction);
        let either_nan = self.or(x_nan, y_nan);
        let undefined = self.or(undefined, either_nan);
        let value = self.pick_f(undefined, nan, value);
        // x^0 and 1^y are 1, NaNs included.
        let x_is_one = self.test(Op::FOrdEqual, x, one);
        let unit = self.or(y_zero, x_is_one);
        self.pick_f(unit, one, value)
    }

    /// `powr(x, y)`: `pow(|x|, y)` for `x >= 0`, NaN for negative `x`, NaNs, `0^0`, `inf^0`
    /// and `1^inf`.
    fn powr(&mut self, pow: Word, x: Word, y: Word) -> Word {
        let f = self.f();
        let ax = self.gl(G::FAbs, f, &[x]);
        let zero = self.fd(0.0);
        let v = self.call(pow, &[ax, y, zero]);
        let (one, inf, nan) = (self.fd(1.0), self.fd(f64::INFINITY), self.fd(f64::NAN));
        let ay = self.gl(G::FAbs, f, &[y]);
        let negative = self.test(Op::FOrdLessThan, x, zero);
        let x_nan = self.is_nan(x);
        let y_nan = self.is_nan(y);
        let y_zero = self.test(Op::FOrdEqual, ay, zero);
        let x_edge = self.test(Op::FOrdEqual, ax, zero);
        let x_inf = self.test(Op::FOrdEqual, x, inf);
        let x_edge = self.or(x_edge, x_inf);
        let zero_power = self.and(x_edge, y_zero);
        let x_one = self.test(Op::FOrdEqual, x, one);
        let y_inf = self.test(Op::FOrdEqual, ay, inf);
        let one_inf = self.and(x_one, y_inf);
        let bad = self.or(negative, x_nan);
        let bad = self.or(bad, y_nan);
        let bad = self.or(bad, zero_power);
        let bad = self.or(bad, one_inf);
        self.pick_f(bad, nan, v)
    }

    /// `single` for floats, `double` for doubles.
    fn of_width_pow(&self, single: f64, double: f64) -> f64 {
        if self.width == 64 {
            double
        } else {
            single
        }
    }

    /// `k` (a 32-bit integer) as `(hi, lo)` floats whose sum is exact.
    fn integer_parts(&mut self, k: Word) -> (Word, Word) {
        let f = self.f();
        let (high_mask, low_mask) = (self.uc(0xffff_ff00), self.uc(0xff));
        let high = self.uop(Op::BitwiseAnd, k, high_mask);
        let low = self.uop(Op::BitwiseAnd, k, low_mask);
        let hi = self.b.op(Op::ConvertSToF, f, &[high]);
        let lo = self.b.op(Op::ConvertSToF, f, &[low]);
        (hi, lo)
    }

    /// `pown(x, k)`: `pow(x, k)` with the sign from `k`'s parity (exact for every `k`).
    fn pown(&mut self, pow: Word, x: Word, k: Word) -> Word {
        let (hi, lo) = self.integer_parts(k);
        let f = self.f();
        let exact = self.b.op(Op::ConvertSToF, f, &[k]);
        // Exact below 2^24 (every 32-bit integer is exact in a double).
        let limit = self.fd(self.of_width_pow(16_777_216.0, 4_294_967_296.0));
        let ak = self.gl(G::FAbs, f, &[exact]);
        let small = self.test(Op::FOrdLessThan, ak, limit);
        let zero = self.fd(0.0);
        let yh = self.pick_f(small, exact, hi);
        let yl = self.pick_f(small, zero, lo);
        let v = self.call(pow, &[x, yh, yl]);
        let av = self.gl(G::FAbs, f, &[v]);
        let c1 = self.uc(1);
        let low = self.uop(Op::BitwiseAnd, k, c1);
        let odd = self.test(Op::IEqual, low, c1);
        let signed = self.copysign(av, x);
        self.pick_f(odd, signed, av)
    }

    /// `rootn(x, k)`: `|x|^(1/k)` (1/k in two parts), the sign of `x` for odd `k`; NaN for
    /// `k = 0` and even roots of negatives.
    fn rootn(&mut self, pow: Word, x: Word, k: Word) -> Word {
        let f = self.f();
        let kf = self.b.op(Op::ConvertSToF, f, &[k]);
        let one = self.fd(1.0);
        let yh = self.fop(Op::FDiv, one, kf);
        // 1 - k yh exactly for |k| < 2^12 (2^21 for doubles: yh's halves times k are exact),
        // then over k.
        let a = self.leading(yh);
        let b = self.fop(Op::FSub, yh, a);
        let ka = self.fop(Op::FMul, kf, a);
        let kb = self.fop(Op::FMul, kf, b);
        let e = self.fop(Op::FSub, one, ka);
        let e = self.fop(Op::FSub, e, kb);
        let yl = self.fop(Op::FDiv, e, kf);
        let ak = self.gl(G::FAbs, f, &[kf]);
        let limit = self.fd(self.of_width_pow(4096.0, 2_097_152.0));
        let small = self.test(Op::FOrdLessThan, ak, limit);
        let zero = self.fd(0.0);
        let yl = self.pick_f(small, yl, zero);
        let ax = self.gl(G::FAbs, f, &[x]);
        let v = self.call(pow, &[ax, yh, yl]);
        let c1 = self.uc(1);
        let low = self.uop(Op::BitwiseAnd, k, c1);
        let odd = self.test(Op::IEqual, low, c1);
        let signed = self.copysign(v, x);
        let v = self.pick_f(odd, signed, v);
        let zero_u = self.uc(0);
        let k_zero = self.test(Op::IEqual, k, zero_u);
        let negative = self.test(Op::FOrdLessThan, x, zero);
        let boolean = self.b.module.type_bool();
        let even = self.b.op(Op::LogicalNot, boolean, &[odd]);
        let bad = self.and(negative, even);
        let bad = self.or(bad, k_zero);
        let x_nan = self.is_nan(x);
        let bad = self.or(bad, x_nan);
        let nan = self.fd(f64::NAN);
        self.pick_f(bad, nan, v)
    }

    /// `hypot(x, y)`: `sqrt(x^2 + y^2)` scaled by the larger's power of two; infinity where
    /// either is infinite, else NaN where either is NaN.
    fn hypot(&mut self, x: Word, y: Word) -> Word {
        let (f, u) = (self.f(), self.u());
        let ax = self.gl(G::FAbs, f, &[x]);
        let ay = self.gl(G::FAbs, f, &[y]);
        let a = self.gl(G::NMax, f, &[ax, ay]);
        let b = self.gl(G::NMin, f, &[ax, ay]);
        let bits = self.top(a);
        let c23 = self.uw(23, 20);
        let biased = self.uop(Op::ShiftRightLogical, bits, c23);
        let (low, high) = (self.uc(1), self.uw(253, 2045));
        let biased = self.gl(G::UClamp, u, &[biased, low, high]);
        let bias = self.uw(127, 1023);
        let e = self.uop(Op::ISub, biased, bias);
        let zero_u = self.uc(0);
        let minus_e = self.uop(Op::ISub, zero_u, e);
        let down = self.power_of_two(minus_e);
        let back = self.power_of_two(e);
        let a = self.fop(Op::FMul, a, down);
        let b = self.fop(Op::FMul, b, down);
        let aa = self.fop(Op::FMul, a, a);
        let bb = self.fop(Op::FMul, b, b);
        let sum = self.fop(Op::FAdd, aa, bb);
        let root = self.gl(G::Sqrt, f, &[sum]);
        let value = self.fop(Op::FMul, root, back);
        let nan = self.fd(f64::NAN);
        let x_nan = self.is_nan(x);
        let y_nan = self.is_nan(y);
        let either_nan = self.or(x_nan, y_nan);
        let value = self.pick_f(either_nan, nan, value);
        let inf = self.fd(f64::INFINITY);
        let x_inf = self.test(Op::FOrdEqual, ax, inf);
        let y_inf = self.test(Op::FOrdEqual, ay, inf);
        let either_inf = self.or(x_inf, y_inf);
        self.pick_f(either_inf, inf, value)
    }
}
