//! Conversions to floating point with a rounding mode: `OpFConvert`, `OpConvertSToF` and
//! `OpConvertUToF` decorated `FPRoundingMode` (OpenCL C's `convert_half_rtz(float)`,
//! `convert_float_rtp(int)`, `convert_float_rtn(long)`, ...), and the value `vstore_half_r`
//! and its vector forms store.
//!
//! Vulkan lets a driver round its conversions as it likes and allows the decoration only on a
//! conversion stored straight to 16-bit memory, so the rounded value is computed:
//! - **Float to a narrower float** from the integer bits of the source: the magnitude truncated
//!   to the target's precision (target subnormals included; past the largest finite value, that
//!   value), then one unit up where the mode rounds away from zero for the value's sign and the
//!   dropped bits are not zero (RTE: above half, or half with an odd result); infinities stay,
//!   NaNs stay NaN (quiet). The bits become a half through `UnpackHalf2x16` and a conversion of
//!   that exactly representable value, so the result does not depend on the driver's rounding.
//! - **Integer to float**: the driver's conversion of the magnitude, which is one of the two
//!   floats around it, is decoded back to an integer and compared with the magnitude exactly,
//!   then moved one unit toward or away from zero as the mode and the sign ask. To halves the
//!   integer goes through f32, rounded in the same direction both times (directed roundings
//!   compose where one format's values contain the other's). Conversions that are exact (an
//!   `int` to `double`, a `short` to `float`) and integer conversions rounding to nearest even
//!   are left to the driver.
//!
//! Widening float conversions are exact and keep no rounding.

use super::Lower;
use crate::error::Result;
use crate::ir::Inst;
use spirv::{FPRoundingMode, GlslStd450Op as G, Op, Word};

/// (exponent bits, fraction bits, bias) of an IEEE binary format of `width` bits.
fn format(width: u32) -> (u32, u32, u64) {
    match width {
        16 => (5, 10, 15),
        64 => (11, 52, 1023),
        _ => (8, 23, 127),
    }
}

impl Lower<'_, '_> {
    /// `inst` (a float-producing conversion of `x` to `ty`, decorated `mode`) rounded as `mode`
    /// says; `None` where the conversion is exact or rounds to nearest even from an integer, so
    /// that the driver's own conversion serves.
    pub(super) fn rounded_conversion(&mut self, inst: &Inst, x: Word, mode: FPRoundingMode) -> Result<Option<Word>> {
        let ty = inst.ty()?;
        let from = self.types.type_of(x).unwrap_or(0);
        let (_, n, fw, from_float) = self.shape(from);
        let (_, _, tw, to_float) = self.shape(ty);
        if !to_float || self.types.float(self.shape(ty).0).is_some_and(|(_, encoding)| encoding.is_some()) {
            return Err(self.unsupported(inst, &format!("{:?} with rounding mode {mode:?} to this type", inst.op().unwrap_or(Op::Nop))));
        }
        if from_float {
            if fw <= tw {
                return Ok(None);
            }
            return Ok(Some(self.narrowed_float(x, fw, tw, n, mode)));
        }
        let signed = inst.is(Op::ConvertSToF);
        let magnitude_bits = fw - u32::from(signed);
        let (_, fraction, _) = format(tw);
        if magnitude_bits <= fraction + 1 || mode == FPRoundingMode::RTE {
            return Ok(None);
        }
        if fw == 64 && n > 1 {
            // Element by element: word pairs of 64-bit integers (`narrow-kernel-int64`) are
            // scalars.
            let (from_scalar, ..) = self.shape(from);
            let mut parts = Vec::new();
            for k in 0..n {
                let element = self.b.composite_extract(from_scalar, x, k);
                parts.push(self.rounded_integer(element, signed, 64, tw, 1, mode));
            }
            return Ok(Some(self.op(Op::CompositeConstruct, ty, &parts)));
        }
        Ok(Some(self.rounded_integer(x, signed, fw, tw, n, mode)))
    }

    /// Integer `x` (`fw` bits, `n` components) converted to a float of `tw` bits rounded as
    /// `mode` (directed) says.
    fn rounded_integer(&mut self, x: Word, signed: bool, fw: u32, tw: u32, n: u32, mode: FPRoundingMode) -> Word {
        let wide = if fw < 32 {
            let u32_ty = self.uint(32, n);
            if signed {
                self.op(Op::SConvert, u32_ty, &[x])
            } else {
                self.op(Op::UConvert, u32_ty, &[x])
            }
        } else {
            x
        };
        let iw = fw.max(32);
        if tw == 16 {
            let f = self.integer_to_float(wide, signed, iw, 32, n, mode);
            self.narrowed_float(f, 32, 16, n, mode)
        } else {
            self.integer_to_float(wide, signed, iw, tw, n, mode)
        }
    }

    /// The unsigned integer type of `width` bits and `n` components.
    fn uint(&mut self, width: u32, n: u32) -> Word {
        let s = self.b.module.type_int(width, false);
        if n == 1 {
            s
        } else {
            self.b.module.type_vector(s, n)
        }
    }

    fn float_ty(&mut self, width: u32, n: u32) -> Word {
        let s = self.b.module.type_float(width);
        if n == 1 {
            s
        } else {
            self.b.module.type_vector(s, n)
        }
    }

    /// The unsigned constant `v` of `width` bits in each of `n` components.
    fn ucon(&mut self, width: u32, n: u32, v: u64) -> Word {
        let s = self.b.module.type_int(width, false);
        let c = self.b.module.constant_int(s, width, false, v);
        if n == 1 {
            c
        } else {
            let ty = self.uint(width, n);
            self.splat(ty, c, n)
        }
    }

    fn bool_con(&mut self, n: u32, v: bool) -> Word {
        let c = self.b.module.constant_bool(v);
        if n == 1 {
            c
        } else {
            let ty = self.bool_ty(n);
            self.splat(ty, c, n)
        }
    }

    /// Float `x` (`fw` bits, `n` components) rounded to a float of `tw < fw` bits.
    pub(super) fn narrowed_float(&mut self, x: Word, fw: u32, tw: u32, n: u32, mode: FPRoundingMode) -> Word {
        let (se, sm, sb) = format(fw);
        let (te, tm, tb) = format(tw);
        let u = self.uint(fw, n);
        let bt = self.bool_ty(n);
        let c = |me: &mut Self, v: u64| me.ucon(fw, n, v);
        let bits = self.b.bitcast(u, x);
        let sign_bit = c(self, 1 << (fw - 1));
        let sign = self.op(Op::BitwiseAnd, u, &[bits, sign_bit]);
        let zero = c(self, 0);
        let negative = self.op(Op::INotEqual, bt, &[sign, zero]);
        let abs_mask = c(self, (1 << (fw - 1)) - 1);
        let abs = self.op(Op::BitwiseAnd, u, &[bits, abs_mask]);
        let sm_c = c(self, u64::from(sm));
        let exponent = self.op(Op::ShiftRightLogical, u, &[abs, sm_c]);
        let fraction_mask = c(self, (1 << sm) - 1);
        let fraction = self.op(Op::BitwiseAnd, u, &[abs, fraction_mask]);
        // Normal results: exponents rebias, the fraction drops `sm - tm` bits.
        let dropped = sm - tm;
        let rebias = c(self, sb - tb);
        let e_t = self.op(Op::ISub, u, &[exponent, rebias]);
        let tm_c = c(self, u64::from(tm));
        let e_field = self.op(Op::ShiftLeftLogical, u, &[e_t, tm_c]);
        let dropped_c = c(self, u64::from(dropped));
        let kept = self.op(Op::ShiftRightLogical, u, &[fraction, dropped_c]);
        let normal = self.op(Op::BitwiseOr, u, &[e_field, kept]);
        let rem_mask = c(self, (1 << dropped) - 1);
        let normal_rem = self.op(Op::BitwiseAnd, u, &[fraction, rem_mask]);
        let normal_half = c(self, 1 << (dropped - 1));
        // Subnormal results: the significand shifted to units of the target's smallest
        // subnormal, by at most `fw - 1` bits (every bit dropped).
        let one = c(self, 1);
        let is_zero_exp = self.op(Op::IEqual, bt, &[exponent, zero]);
        let e1 = self.b.select(u, is_zero_exp, one, exponent);
        let implicit_bit = c(self, 1 << sm);
        let implicit = self.b.select(u, is_zero_exp, zero, implicit_bit);
        let significand = self.op(Op::BitwiseOr, u, &[fraction, implicit]);
        let base = c(self, (1 + sb + u64::from(sm)) - tb - u64::from(tm));
        let raw_shift = self.op(Op::ISub, u, &[base, e1]);
        let max_shift = c(self, u64::from(fw - 1));
        let too_far = self.op(Op::UGreaterThan, bt, &[raw_shift, max_shift]);
        let shift = self.b.select(u, too_far, max_shift, raw_shift);
        let sub = self.op(Op::ShiftRightLogical, u, &[significand, shift]);
        let unit = self.op(Op::ShiftLeftLogical, u, &[one, shift]);
        let sub_mask = self.op(Op::ISub, u, &[unit, one]);
        let sub_rem = self.op(Op::BitwiseAnd, u, &[significand, sub_mask]);
        let sub_half = self.op(Op::ShiftRightLogical, u, &[unit, one]);
        let lowest_normal = c(self, sb - tb + 1);
        let is_sub = self.op(Op::ULessThan, bt, &[exponent, lowest_normal]);
        let truncated = self.b.select(u, is_sub, sub, normal);
        let rem = self.b.select(u, is_sub, sub_rem, normal_rem);
        let half = self.b.select(u, is_sub, sub_half, normal_half);
        // Past the largest finite value (infinities and NaNs too, replaced below).
        let highest_normal = c(self, sb - tb + (1 << te) - 2);
        let over = self.op(Op::UGreaterThan, bt, &[exponent, highest_normal]);
        let max_finite = c(self, (((1 << te) - 2) << tm) | ((1 << tm) - 1));
        let truncated = self.b.select(u, over, max_finite, truncated);
        let nonzero_rem = self.op(Op::INotEqual, bt, &[rem, zero]);
        let inexact = self.op(Op::LogicalOr, bt, &[nonzero_rem, over]);
        let up = match mode {
            FPRoundingMode::RTZ => self.bool_con(n, false),
            FPRoundingMode::RTP => {
                let positive = self.op(Op::LogicalNot, bt, &[negative]);
                self.op(Op::LogicalAnd, bt, &[inexact, positive])
            }
            FPRoundingMode::RTN => self.op(Op::LogicalAnd, bt, &[inexact, negative]),
            _ => {
                let above = self.op(Op::UGreaterThan, bt, &[rem, half]);
                let tie = self.op(Op::IEqual, bt, &[rem, half]);
                let low = self.op(Op::BitwiseAnd, u, &[truncated, one]);
                let odd = self.op(Op::INotEqual, bt, &[low, zero]);
                let tie_odd = self.op(Op::LogicalAnd, bt, &[tie, odd]);
                let away = self.op(Op::LogicalOr, bt, &[above, tie_odd]);
                self.op(Op::LogicalOr, bt, &[away, over])
            }
        };
        let step = self.b.select(u, up, one, zero);
        let magnitude = self.op(Op::IAdd, u, &[truncated, step]);
        // Infinities stay, NaNs become the target's quiet NaN.
        let all_ones = c(self, (1 << se) - 1);
        let special = self.op(Op::IEqual, bt, &[exponent, all_ones]);
        let nonzero_fraction = self.op(Op::INotEqual, bt, &[fraction, zero]);
        let nan = self.op(Op::LogicalAnd, bt, &[special, nonzero_fraction]);
        let inf_bits = c(self, ((1 << te) - 1) << tm);
        let nan_bits = c(self, (((1 << te) - 1) << tm) | (1 << (tm - 1)));
        let special_bits = self.b.select(u, nan, nan_bits, inf_bits);
        let magnitude = self.b.select(u, special, special_bits, magnitude);
        let target_sign = c(self, 1 << (tw - 1));
        let sign_t = self.b.select(u, negative, target_sign, zero);
        let result = self.op(Op::BitwiseOr, u, &[magnitude, sign_t]);
        let result = if fw == 32 {
            result
        } else {
            let u32_ty = self.uint(32, n);
            self.op(Op::UConvert, u32_ty, &[result])
        };
        if tw == 32 {
            let f = self.float_ty(32, n);
            return self.b.bitcast(f, result);
        }
        // Halves: each component's bits unpacked to the f32 of the same value, converted.
        let f32_ty = self.b.module.type_float(32);
        let f16_ty = self.b.module.type_float(16);
        let u32_s = self.b.module.type_int(32, false);
        let v2 = self.b.module.type_vector(f32_ty, 2);
        let mut parts = Vec::new();
        for k in 0..n {
            let word = if n == 1 { result } else { self.b.composite_extract(u32_s, result, k) };
            let pair = self.gl(G::UnpackHalf2x16, v2, &[word]);
            let value = self.b.composite_extract(f32_ty, pair, 0);
            parts.push(self.op(Op::FConvert, f16_ty, &[value]));
        }
        if n == 1 {
            parts[0]
        } else {
            let ty = self.float_ty(16, n);
            self.op(Op::CompositeConstruct, ty, &parts)
        }
    }

    /// Integer `x` (`iw` bits, 32 or 64, `n` components; `signed` as OpenCL's `int`) converted
    /// to a float of `tw` bits (32 or 64) rounded as `mode` says.
    fn integer_to_float(&mut self, x: Word, signed: bool, iw: u32, tw: u32, n: u32, mode: FPRoundingMode) -> Word {
        let (_, tm, tb) = format(tw);
        let ui = self.uint(iw, n);
        let ut = self.uint(tw, n);
        let ft = self.float_ty(tw, n);
        let bt = self.bool_ty(n);
        let zero_i = self.ucon(iw, n, 0);
        let (negative, magnitude) = if signed {
            let negative = self.op(Op::SLessThan, bt, &[x, zero_i]);
            let negated = self.op(Op::SNegate, ui, &[x]);
            let magnitude = self.b.select(ui, negative, negated, x);
            (Some(negative), magnitude)
        } else {
            (None, x)
        };
        let magnitude = self.b.bitcast(ui, magnitude);
        let rounded = self.op(Op::ConvertUToF, ft, &[magnitude]);
        let bits = self.b.bitcast(ut, rounded);
        // The float's integer value: significand shifted by its exponent.
        let tm_c = self.ucon(tw, n, u64::from(tm));
        let exponent = self.op(Op::ShiftRightLogical, ut, &[bits, tm_c]);
        let fraction_mask = self.ucon(tw, n, (1 << tm) - 1);
        let fraction = self.op(Op::BitwiseAnd, ut, &[bits, fraction_mask]);
        let implicit = self.ucon(tw, n, 1 << tm);
        let significand = self.op(Op::BitwiseOr, ut, &[fraction, implicit]);
        let significand = if tw == iw { significand } else { self.op(Op::UConvert, ui, &[significand]) };
        let point = self.ucon(tw, n, tb + u64::from(tm));
        let left = self.op(Op::ISub, ut, &[exponent, point]);
        let right = self.op(Op::ISub, ut, &[point, exponent]);
        let shifted_left = self.op(Op::ShiftLeftLogical, ui, &[significand, left]);
        let shifted_right = self.op(Op::ShiftRightLogical, ui, &[significand, right]);
        let integral = self.op(Op::UGreaterThanEqual, bt, &[exponent, point]);
        let value = self.b.select(ui, integral, shifted_left, shifted_right);
        // At 2^iw and above it exceeds every magnitude; below 1 it is zero, as the magnitude
        // is (a nonzero integer converts to at least 1).
        let limit = self.ucon(tw, n, tb + u64::from(iw));
        let beyond = self.op(Op::UGreaterThanEqual, bt, &[exponent, limit]);
        let below = self.op(Op::LogicalNot, bt, &[beyond]);
        let zero_t = self.ucon(tw, n, 0);
        let nonzero = self.op(Op::INotEqual, bt, &[exponent, zero_t]);
        let within = self.op(Op::LogicalAnd, bt, &[below, nonzero]);
        let value_greater = self.op(Op::UGreaterThan, bt, &[value, magnitude]);
        let greater_within = self.op(Op::LogicalAnd, bt, &[within, value_greater]);
        let greater = self.op(Op::LogicalOr, bt, &[beyond, greater_within]);
        let value_less = self.op(Op::ULessThan, bt, &[value, magnitude]);
        let less = self.op(Op::LogicalAnd, bt, &[within, value_less]);
        // Toward zero shrinks the magnitude; toward an infinity shrinks or grows it by sign.
        let yes = self.bool_con(n, true);
        let no = self.bool_con(n, false);
        let (shrink, grow) = match (mode, negative) {
            (FPRoundingMode::RTZ, _) => (yes, no),
            (FPRoundingMode::RTP, None) => (no, yes),
            (FPRoundingMode::RTN, None) => (yes, no),
            (FPRoundingMode::RTP, Some(neg)) => {
                let pos = self.op(Op::LogicalNot, bt, &[neg]);
                (neg, pos)
            }
            (_, Some(neg)) => {
                let pos = self.op(Op::LogicalNot, bt, &[neg]);
                (pos, neg)
            }
            _ => (yes, no),
        };
        let down = self.op(Op::LogicalAnd, bt, &[shrink, greater]);
        let up = self.op(Op::LogicalAnd, bt, &[grow, less]);
        let one = self.ucon(tw, n, 1);
        let minus_one = self.ucon(tw, n, u64::MAX >> (64 - tw));
        let grown = self.b.select(ut, up, one, zero_t);
        let step = self.b.select(ut, down, minus_one, grown);
        let bits = self.op(Op::IAdd, ut, &[bits, step]);
        let result = self.b.bitcast(ft, bits);
        match negative {
            Some(neg) => {
                let negated = self.op(Op::FNegate, ft, &[result]);
                self.b.select(ft, neg, negated, result)
            }
            None => result,
        }
    }
}
