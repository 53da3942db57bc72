//! `OpenCL.std` functions with no `GLSL.std.450` twin that become plain code: the ones with a
//! pointer result (`fract`, `modf`, `sincos`, `frexp`, `remquo`, whose remainder, and
//! `remainder`'s, `exact_remainder.rs` computes), exponent access (`ilogb`, `logb`), integer
//! powers and roots of doubles (`pown`, `rootn`; `powers.rs` has floats and halves),
//! `maxmag`/`minmag`, `nextafter`, the `pi` trigonometry (`sinpi`,
//! `cospi`, `tanpi`; `asinpi`, `acospi`, `atanpi`, `atan2pi` and `atan2` of doubles, on the x
//! axis as C99 says, `inverse_trigonometry.rs` having floats and halves), `erf`/`erfc`,
//! `upsample` and `mad_sat`.
//!
//! Edge values follow the OpenCL C specification (infinities, NaNs, signed zeros, `FP_ILOGB0`
//! and `FP_ILOGBNAN`); accuracy is otherwise what the device's own `GLSL.std.450` functions
//! give.
//! `sinpi`/`cospi`/`tanpi` reduce their argument exactly before multiplying by pi, so integers
//! and half-integers give exact zeros with OpenCL's signs (`sinpi(n)` the sign of `n`,
//! `tanpi(n)` of `n` for even `n` and of `-n` for odd), ones and (`tanpi`) signed infinities;
//! their sines and tangents are `trigonometry.rs`'s and `double_trigonometry.rs`', to OpenCL's
//! accuracy. `erf`/`erfc` use a rational approximation with a
//! relative error below 1.2e-7 (Numerical Recipes' `erfcc`: `t exp(P(t) - z^2)`, the
//! exponential split at `z`'s 12 leading bits so that no rounding of `z^2` enters it, through
//! `exponentials.rs`' `exp`) and a series below 0.5 for floats and halves; doubles are
//! `double_error_function.rs`'. `mad_sat` is exact for 8- to 64-bit integers.

use super::Lower;
use crate::error::{Error, Result};
use crate::ir::Inst;
use spirv::{GlslStd450Op as G, Op, OpenclStd100Op as CL, Word};

/// The functions this file lowers.
pub(super) fn handles(op: CL) -> bool {
    use CL::*;
    matches!(
        op,
        fract
            | modf
            | sincos
            | frexp
            | ilogb
            | logb
            | pown
            | rootn
            | maxmag
            | minmag
            | remainder
            | remquo
            | nextafter
            | sinpi
            | cospi
            | tanpi
            | asinpi
            | acospi
            | atanpi
            | atan2
            | atan2pi
            | erf
            | erfc
            | s_upsample
            | u_upsample
            | s_mad_sat
            | u_mad_sat
    )
}

/// (INT_MIN, INT_MAX): OpenCL C's `FP_ILOGB0` and `FP_ILOGBNAN`.
const FP_ILOGB0: i64 = i32::MIN as i64;
const FP_ILOGBNAN: i64 = i32::MAX as i64;

impl Lower<'_, '_> {
    /// `op` with arguments `args` (ids only) as a value of type `ty`.
    pub(super) fn special(&mut self, inst: &Inst, op: CL, ty: Word, args: &[Word]) -> Result<Word> {
        let a = |k: usize| args.get(k).copied().ok_or_else(|| Error::Invalid { site: Box::default(), message: format!("OpenCL.std {op:?} lacks operand {k}") });
        let (_, n, w, _) = self.shape(ty);
        use CL::*;
        Ok(match op {
            fract => {
                let x = a(0)?;
                let fl = self.gl(G::Floor, ty, &[x]);
                self.b.store(a(1)?, fl);
                let d = self.op(Op::FSub, ty, &[x, fl]);
                let below_one = self.splat_f(ty, 1.0 - 2f64.powi(-(mantissa_bits(w) as i32)));
                let m = self.gl(G::NMin, ty, &[d, below_one]);
                let zero = self.splat_f(ty, 0.0);
                let signed_zero = self.copysign(ty, zero, x);
                let inf = self.is(Op::IsInf, x, n);
                let r = self.b.select(ty, inf, signed_zero, m);
                let is_nan = self.is(Op::IsNan, x, n);
                self.b.select(ty, is_nan, x, r)
            }
            modf => {
                let x = a(0)?;
                let t = self.gl(G::Trunc, ty, &[x]);
                self.b.store(a(1)?, t);
                let d = self.op(Op::FSub, ty, &[x, t]);
                let zero = self.splat_f(ty, 0.0);
                let inf = self.is(Op::IsInf, x, n);
                let d = self.b.select(ty, inf, zero, d);
                self.copysign(ty, d, x)
            }
            sincos if self.precise_math_serves(ty) => {
                let (s, c, _) = self.precise_sin_cos_tan(ty, a(0)?);
                self.b.store(a(1)?, c);
                s
            }
            sincos => {
                let x = a(0)?;
                let c = self.gl(G::Cos, ty, &[x]);
                self.b.store(a(1)?, c);
                self.gl(G::Sin, ty, &[x])
            }
            frexp => {
                let x = a(0)?;
                let (m, e) = self.frexp(ty, x);
                self.b.store(a(1)?, e);
                m
            }
            ilogb => {
                let x = a(0)?;
                let fty = self.types.type_of(x).unwrap_or(ty);
                let (_, e) = self.frexp(fty, x);
                let ety = self.int32(n);
                let one = self.splat_i(ety, 1);
                let r = self.op(Op::ISub, ety, &[e, one]);
                let zero = self.splat_f(fty, 0.0);
                let bt = self.bool_ty(n);
                let is0 = self.op(Op::FOrdEqual, bt, &[x, zero]);
                let min = self.splat_i(ety, FP_ILOGB0);
                let r = self.b.select(ety, is0, min, r);
                let inf = self.is(Op::IsInf, x, n);
                let is_nan = self.is(Op::IsNan, x, n);
                let odd = self.op(Op::LogicalOr, bt, &[inf, is_nan]);
                let max = self.splat_i(ety, FP_ILOGBNAN);
                let r = self.b.select(ety, odd, max, r);
                if ety == ty {
                    r
                } else {
                    self.b.bitcast(ty, r)
                }
            }
            logb => {
                let x = a(0)?;
                let (_, e) = self.frexp(ty, x);
                let ety = self.int32(n);
                let one = self.splat_i(ety, 1);
                let e1 = self.op(Op::ISub, ety, &[e, one]);
                let r = self.op(Op::ConvertSToF, ty, &[e1]);
                let zero = self.splat_f(ty, 0.0);
                let bt = self.bool_ty(n);
                let is0 = self.op(Op::FOrdEqual, bt, &[x, zero]);
                let ninf = self.splat_f(ty, f64::NEG_INFINITY);
                let r = self.b.select(ty, is0, ninf, r);
                let inf = self.is(Op::IsInf, x, n);
                let ax = self.gl(G::FAbs, ty, &[x]);
                let r = self.b.select(ty, inf, ax, r);
                let is_nan = self.is(Op::IsNan, x, n);
                self.b.select(ty, is_nan, x, r)
            }
            pown | rootn => self.integer_power(op == rootn, ty, a(0)?, a(1)?, n),
            maxmag | minmag => {
                let (x, y) = (a(0)?, a(1)?);
                let ax = self.gl(G::FAbs, ty, &[x]);
                let ay = self.gl(G::FAbs, ty, &[y]);
                let bt = self.bool_ty(n);
                let (cmp, tie) = if op == maxmag { (Op::FOrdGreaterThan, G::NMax) } else { (Op::FOrdLessThan, G::NMin) };
                let x_wins = self.op(cmp, bt, &[ax, ay]);
                let y_wins = self.op(cmp, bt, &[ay, ax]);
                let t = self.gl(tie, ty, &[x, y]);
                let r = self.b.select(ty, y_wins, y, t);
                self.b.select(ty, x_wins, x, r)
            }
            remainder | remquo => {
                let Some((r, q)) = self.exact_remainder(ty, a(0)?, a(1)?) else {
                    return Err(self.unsupported(inst, &format!("OpenCL.std {op:?} of a float type other than IEEE halves, floats and doubles")));
                };
                if op == remquo {
                    let ety = self.int32(n);
                    let qi = self.op(Op::ConvertFToS, ety, &[q]);
                    self.b.store(a(2)?, qi);
                }
                r
            }
            nextafter => {
                let (x, y) = (a(0)?, a(1)?);
                let it = self.uint_like(ty);
                let xb = self.b.bitcast(it, x);
                let yb = self.b.bitcast(it, y);
                let sign_mask = self.splat_i(it, 1i64 << (w - 1));
                let one = self.splat_i(it, 1);
                let ones = self.splat_i(it, -1);
                let bt = self.bool_ty(n);
                // Away from zero when moving toward y increases |x|: bits + 1, else bits - 1.
                let lt = self.op(Op::FOrdLessThan, bt, &[x, y]);
                let zero = self.splat_f(ty, 0.0);
                let pos = self.op(Op::FOrdGreaterThan, bt, &[x, zero]);
                let up = self.op(Op::LogicalEqual, bt, &[lt, pos]);
                let delta = self.b.select(it, up, one, ones);
                let nb = self.op(Op::IAdd, it, &[xb, delta]);
                let r = self.b.bitcast(ty, nb);
                // From zero: the smallest subnormal with y's sign.
                let ysign = self.op(Op::BitwiseAnd, it, &[yb, sign_mask]);
                let tiny = self.op(Op::BitwiseOr, it, &[ysign, one]);
                let tiny = self.b.bitcast(ty, tiny);
                let is0 = self.op(Op::FOrdEqual, bt, &[x, zero]);
                let r = self.b.select(ty, is0, tiny, r);
                let same = self.op(Op::FOrdEqual, bt, &[x, y]);
                let r = self.b.select(ty, same, y, r);
                let xn = self.is(Op::IsNan, x, n);
                let yn = self.is(Op::IsNan, y, n);
                let is_nan = self.op(Op::LogicalOr, bt, &[xn, yn]);
                let sum = self.op(Op::FAdd, ty, &[x, y]);
                self.b.select(ty, is_nan, sum, r)
            }
            sinpi | cospi => {
                // r = x - 2 * rint(x / 2), exact, in [-1, 1].
                let x = a(0)?;
                let half = self.splat_f(ty, 0.5);
                let two = self.splat_f(ty, 2.0);
                let h = self.op(Op::FMul, ty, &[x, half]);
                let t = self.gl(G::RoundEven, ty, &[h]);
                let t2 = self.op(Op::FMul, ty, &[t, two]);
                let r = self.op(Op::FSub, ty, &[x, t2]);
                let ar = self.gl(G::FAbs, ty, &[r]);
                let pi = self.splat_f(ty, std::f64::consts::PI);
                if op == sinpi {
                    // sin(pi r) = sin(pi (sign(r) - r)) folds |r| > 1/2 into [-1/2, 1/2].
                    let bt = self.bool_ty(n);
                    let big = self.op(Op::FOrdGreaterThan, bt, &[ar, half]);
                    let s = self.gl(G::FSign, ty, &[r]);
                    let folded = self.op(Op::FSub, ty, &[s, r]);
                    let rr = self.b.select(ty, big, folded, r);
                    let arg = self.op(Op::FMul, ty, &[rr, pi]);
                    let v = self.sin_or_tan(G::Sin, ty, arg);
                    // Integers give a zero of x's sign.
                    let zero = self.splat_f(ty, 0.0);
                    let is0 = self.op(Op::FOrdEqual, bt, &[v, zero]);
                    let signed_zero = self.copysign(ty, zero, x);
                    self.b.select(ty, is0, signed_zero, v)
                } else {
                    // cos(pi r) = sin(pi (1/2 - |r|)).
                    let q = self.op(Op::FSub, ty, &[half, ar]);
                    let arg = self.op(Op::FMul, ty, &[q, pi]);
                    self.sin_or_tan(G::Sin, ty, arg)
                }
            }
            tanpi => {
                let x = a(0)?;
                let t = self.gl(G::RoundEven, ty, &[x]);
                let r = self.op(Op::FSub, ty, &[x, t]);
                let pi = self.splat_f(ty, std::f64::consts::PI);
                let bt = self.bool_ty(n);
                let v = if self.precise_math_serves(ty) {
                    // Past a quarter, the cotangent of the exact distance to the pole:
                    // rounding pi r there would cost tens of units.
                    let ar = self.gl(G::FAbs, ty, &[r]);
                    let (quarter, half) = (self.splat_f(ty, 0.25), self.splat_f(ty, 0.5));
                    let near = self.op(Op::FOrdGreaterThan, bt, &[ar, quarter]);
                    let rest = self.op(Op::FSub, ty, &[half, ar]);
                    let turn = self.b.select(ty, near, rest, r);
                    let arg = self.op(Op::FMul, ty, &[turn, pi]);
                    let (s, c, t) = self.precise_sin_cos_tan(ty, arg);
                    let cot = self.op(Op::FDiv, ty, &[c, s]);
                    let cot = self.copysign(ty, cot, r);
                    self.b.select(ty, near, cot, t)
                } else {
                    let arg = self.op(Op::FMul, ty, &[r, pi]);
                    self.gl(G::Tan, ty, &[arg])
                };
                // Integers n give a zero of n's sign for even n, of the other for odd n.
                let zero = self.splat_f(ty, 0.0);
                let is0 = self.op(Op::FOrdEqual, bt, &[r, zero]);
                let half = self.splat_f(ty, 0.5);
                let half_t = self.op(Op::FMul, ty, &[t, half]);
                let whole = self.gl(G::Floor, ty, &[half_t]);
                let odd = self.op(Op::FUnordNotEqual, bt, &[half_t, whole]);
                let minus_x = self.op(Op::FNegate, ty, &[x]);
                let toward = self.b.select(ty, odd, minus_x, x);
                let signed_zero = self.copysign(ty, zero, toward);
                let v = self.b.select(ty, is0, signed_zero, v);
                // n + 1/2: an infinity, positive for even n (`r` is +1/2 then: rint rounds to
                // even), negative for odd n.
                let ar = self.gl(G::FAbs, ty, &[r]);
                let pole = self.op(Op::FOrdEqual, bt, &[ar, half]);
                let inf = self.splat_f(ty, f64::INFINITY);
                let signed_inf = self.copysign(ty, inf, r);
                let v = self.b.select(ty, pole, signed_inf, v);
                // Infinities and NaNs: NaN (NVIDIA's driver took `inf - rint(inf)` for a zero
                // above).
                let ax = self.gl(G::FAbs, ty, &[x]);
                let finite = self.op(Op::FOrdLessThan, bt, &[ax, inf]);
                let not_a_number = self.splat_f(ty, f64::NAN);
                self.b.select(ty, finite, v, not_a_number)
            }
            atan2 => self.atan2(ty, a(0)?, a(1)?, n),
            asinpi | acospi | atanpi | atan2pi => {
                let v = match op {
                    asinpi => self.gl(G::Asin, ty, &[a(0)?]),
                    acospi => self.gl(G::Acos, ty, &[a(0)?]),
                    atanpi => self.gl(G::Atan, ty, &[a(0)?]),
                    _ => self.atan2(ty, a(0)?, a(1)?, n),
                };
                let k = self.splat_f(ty, std::f64::consts::FRAC_1_PI);
                self.op(Op::FMul, ty, &[v, k])
            }
            erf | erfc => {
                if w == 64 {
                    return Ok(self.double_erf(op, ty, a(0)?));
                }
                let x = a(0)?;
                let fty = self.float32(n);
                let x32 = if w == 32 { x } else { self.op(Op::FConvert, fty, &[x]) };
                let v = if op == erf { self.erf32(fty, x32, n) } else { self.erfc32(fty, x32, n) };
                if w == 32 {
                    v
                } else {
                    self.op(Op::FConvert, ty, &[v])
                }
            }
            s_upsample | u_upsample => {
                let (hi, lo) = (a(0)?, a(1)?);
                let hiw = self.op(if op == s_upsample { Op::SConvert } else { Op::UConvert }, ty, &[hi]);
                let low = self.op(Op::UConvert, ty, &[lo]);
                let sh = self.splat_i(ty, i64::from(w / 2));
                let h = self.op(Op::ShiftLeftLogical, ty, &[hiw, sh]);
                self.op(Op::BitwiseOr, ty, &[h, low])
            }
            s_mad_sat | u_mad_sat => self.mad_sat(inst, op == s_mad_sat, ty, a(0)?, a(1)?, a(2)?, n, w)?,
            other => return Err(self.unsupported(inst, &format!("OpenCL.std {other:?}"))),
        })
    }

    /// `copysign(mag, sign)` on the bits.
    pub(super) fn copysign(&mut self, ty: Word, mag: Word, sign: Word) -> Word {
        let (_, _, w, _) = self.shape(ty);
        let it = self.uint_like(ty);
        let xb = self.b.bitcast(it, mag);
        let yb = self.b.bitcast(it, sign);
        let sign_bit = self.splat_i(it, 1i64 << (w - 1));
        // All bits but the sign (`i64::MAX` for doubles, where `1 << 63` is `i64::MIN`).
        let mag_mask = self.splat_i(it, ((1u64 << (w - 1)) - 1) as i64);
        let m = self.op(Op::BitwiseAnd, it, &[xb, mag_mask]);
        let sb = self.op(Op::BitwiseAnd, it, &[yb, sign_bit]);
        let r = self.op(Op::BitwiseOr, it, &[m, sb]);
        self.b.bitcast(ty, r)
    }

    /// The unsigned integer type of `ty`'s shape.
    pub(super) fn uint_like(&mut self, ty: Word) -> Word {
        let (_, n, w, _) = self.shape(ty);
        let u = self.b.module.type_int(w, false);
        self.vector_of(u, n)
    }

    pub(super) fn int32(&mut self, n: u32) -> Word {
        let i = self.b.module.type_int(32, false);
        self.vector_of(i, n)
    }

    fn float32(&mut self, n: u32) -> Word {
        let f = self.b.module.type_float(32);
        self.vector_of(f, n)
    }

    fn vector_of(&mut self, scalar: Word, n: u32) -> Word {
        if n > 1 {
            self.b.module.type_vector(scalar, n)
        } else {
            scalar
        }
    }

    /// `IsNan` / `IsInf` of `x` (n components).
    fn is(&mut self, test: Op, x: Word, n: u32) -> Word {
        let bt = self.bool_ty(n);
        self.op(test, bt, &[x])
    }

    /// (mantissa in [0.5, 1), 32-bit exponent) of `x`, with OpenCL's values for infinities and
    /// NaNs (the value itself, exponent 0). Half values go through f32.
    fn frexp(&mut self, ty: Word, x: Word) -> (Word, Word) {
        let (_, n, w, _) = self.shape(ty);
        let ety = self.int32(n);
        let (fty, xf) = if w == 16 {
            let f = self.float32(n);
            (f, self.op(Op::FConvert, f, &[x]))
        } else {
            (ty, x)
        };
        let pair = self.b.module.type_struct(&[fty, ety]);
        let s = self.gl(G::FrexpStruct, pair, &[xf]);
        let m = self.b.composite_extract(fty, s, 0);
        let e = self.b.composite_extract(ety, s, 1);
        let m = if w == 16 { self.op(Op::FConvert, ty, &[m]) } else { m };
        let bt = self.bool_ty(n);
        let inf = self.is(Op::IsInf, x, n);
        let is_nan = self.is(Op::IsNan, x, n);
        let odd = self.op(Op::LogicalOr, bt, &[inf, is_nan]);
        let m = self.b.select(ty, odd, x, m);
        let zero = self.splat_i(ety, 0);
        let e = self.b.select(ety, odd, zero, e);
        (m, e)
    }

    /// `pown(x, k)` (x^k) or `rootn(x, k)` (x^(1/k)) for integer `k`: |x| to the power, the
    /// sign_mask of x for odd k, and the C99 values at zero, k = 0 and negative x.
    fn integer_power(&mut self, root: bool, ty: Word, x: Word, k: Word, n: u32) -> Word {
        let kty = self.types.type_of(k).unwrap_or(0);
        let bt = self.bool_ty(n);
        let kf = self.op(Op::ConvertSToF, ty, &[k]);
        let e = if root {
            let one = self.splat_f(ty, 1.0);
            self.op(Op::FDiv, ty, &[one, kf])
        } else {
            kf
        };
        let ax = self.gl(G::FAbs, ty, &[x]);
        let p = self.gl(G::Pow, ty, &[ax, e]);
        // 0 to a negative power is infinite (GLSL leaves it undefined).
        let zero = self.splat_f(ty, 0.0);
        let is0 = self.op(Op::FOrdEqual, bt, &[x, zero]);
        let kz = self.splat_i(kty, 0);
        let kneg = self.op(Op::SLessThan, bt, &[k, kz]);
        let inf_case = self.op(Op::LogicalAnd, bt, &[is0, kneg]);
        let inf = self.splat_f(ty, f64::INFINITY);
        let p = self.b.select(ty, inf_case, inf, p);
        let one_i = self.splat_i(kty, 1);
        let low = self.op(Op::BitwiseAnd, kty, &[k, one_i]);
        let odd = self.op(Op::INotEqual, bt, &[low, kz]);
        let signed = self.copysign(ty, p, x);
        let p = self.b.select(ty, odd, signed, p);
        let k0 = self.op(Op::IEqual, bt, &[k, kz]);
        if root {
            // rootn(x, 0) and even roots of negative numbers are NaN.
            let neg = self.op(Op::FOrdLessThan, bt, &[x, zero]);
            let even = self.op(Op::LogicalNot, bt, &[odd]);
            let bad = self.op(Op::LogicalAnd, bt, &[neg, even]);
            let bad = self.op(Op::LogicalOr, bt, &[bad, k0]);
            let is_nan = self.splat_f(ty, f64::NAN);
            self.b.select(ty, bad, is_nan, p)
        } else {
            let one = self.splat_f(ty, 1.0);
            self.b.select(ty, k0, one, p)
        }
    }

    /// `atan2(y, x)` with C99's values on the x axis (±0 for x > 0, ±pi for x < 0, the sign
    /// of y), which GLSL leaves to the device (SwiftShader gives 0 for y = ±0, x < 0).
    fn atan2(&mut self, ty: Word, y: Word, x: Word, n: u32) -> Word {
        let v = self.gl(G::Atan2, ty, &[y, x]);
        let bt = self.bool_ty(n);
        let zero = self.splat_f(ty, 0.0);
        let on_axis = self.op(Op::FOrdEqual, bt, &[y, zero]);
        let left = self.op(Op::FOrdLessThan, bt, &[x, zero]);
        let right = self.op(Op::FOrdGreaterThan, bt, &[x, zero]);
        let pi = self.splat_f(ty, std::f64::consts::PI);
        let signed_pi = self.copysign(ty, pi, y);
        let l = self.op(Op::LogicalAnd, bt, &[on_axis, left]);
        let v = self.b.select(ty, l, signed_pi, v);
        let r = self.op(Op::LogicalAnd, bt, &[on_axis, right]);
        self.b.select(ty, r, y, v)
    }

    /// erfc(|x|) for f32 `x`: t exp(-z^2 + P(t)), t = 1 / (1 + z / 2), relative error < 1.2e-7.
    fn erfc_abs(&mut self, fty: Word, z: Word) -> Word {
        const C: [f64; 10] = [-1.265_512_23, 1.000_023_68, 0.374_091_96, 0.096_784_18, -0.186_288_06, 0.278_868_07, -1.135_203_98, 1.488_515_87, -0.822_152_23, 0.170_872_77];
        let one = self.splat_f(fty, 1.0);
        let half = self.splat_f(fty, 0.5);
        let hz = self.op(Op::FMul, fty, &[z, half]);
        let den = self.op(Op::FAdd, fty, &[one, hz]);
        let t = self.op(Op::FDiv, fty, &[one, den]);
        let mut p = self.splat_f(fty, C[9]);
        for c in C[..9].iter().rev() {
            let k = self.splat_f(fty, *c);
            p = self.gl(G::Fma, fty, &[t, p, k]);
        }
        // exp(P - z^2) as exp(-zh^2) exp(P - zl (2 zh + zl)) with z = zh + zl, zh of 12 bits:
        // zh^2 is exact, so neither exponential's argument carries a rounding error of z^2
        // (at z = 9 that alone is 60 units).
        let limit = self.splat_f(fty, 10.5);
        let z = self.gl(G::NMin, fty, &[z, limit]);
        let it = self.uint_like(fty);
        let bits = self.b.bitcast(it, z);
        let mask = self.splat_i(it, 0xffff_f000);
        let high = self.op(Op::BitwiseAnd, it, &[bits, mask]);
        let zh = self.b.bitcast(fty, high);
        let zl = self.op(Op::FSub, fty, &[z, zh]);
        let hh = self.op(Op::FMul, fty, &[zh, zh]);
        let minus_hh = self.op(Op::FNegate, fty, &[hh]);
        let two_zh = self.op(Op::FAdd, fty, &[zh, zh]);
        let s = self.op(Op::FAdd, fty, &[two_zh, zl]);
        let ls = self.op(Op::FMul, fty, &[zl, s]);
        let small = self.op(Op::FSub, fty, &[p, ls]);
        let f32_ty = self.b.module.type_float(32);
        let exp = self.scalar_helper("matbridge.exp_f32", f32_ty, |s, x| s.exponential(CL::exp, x));
        let e1 = self.per_component(fty, minus_hh, exp);
        let e2 = self.per_component(fty, small, exp);
        let e = self.op(Op::FMul, fty, &[e1, e2]);
        self.op(Op::FMul, fty, &[t, e])
    }

    fn erfc32(&mut self, fty: Word, x: Word, n: u32) -> Word {
        let z = self.gl(G::FAbs, fty, &[x]);
        let c = self.erfc_abs(fty, z);
        let two = self.splat_f(fty, 2.0);
        let other = self.op(Op::FSub, fty, &[two, c]);
        let zero = self.splat_f(fty, 0.0);
        let bt = self.bool_ty(n);
        let pos = self.op(Op::FOrdGreaterThanEqual, bt, &[x, zero]);
        let v = self.b.select(fty, pos, c, other);
        let is_nan = self.is(Op::IsNan, x, n);
        self.b.select(fty, is_nan, x, v)
    }

    fn erf32(&mut self, fty: Word, x: Word, n: u32) -> Word {
        // |x| < 1/2: 2/sqrt(pi) x sum_k (-x^2)^k / (k! (2k + 1)).
        const S: [f64; 8] = [1.0, -1.0 / 3.0, 1.0 / 10.0, -1.0 / 42.0, 1.0 / 216.0, -1.0 / 1320.0, 1.0 / 9360.0, -1.0 / 75600.0];
        let xx = self.op(Op::FMul, fty, &[x, x]);
        let mut p = self.splat_f(fty, S[7]);
        for c in S[..7].iter().rev() {
            let k = self.splat_f(fty, *c);
            p = self.gl(G::Fma, fty, &[xx, p, k]);
        }
        let k = self.splat_f(fty, std::f64::consts::FRAC_2_SQRT_PI);
        let kx = self.op(Op::FMul, fty, &[x, k]);
        let small = self.op(Op::FMul, fty, &[kx, p]);
        let z = self.gl(G::FAbs, fty, &[x]);
        let c = self.erfc_abs(fty, z);
        let one = self.splat_f(fty, 1.0);
        let big = self.op(Op::FSub, fty, &[one, c]);
        let big = self.copysign(fty, big, x);
        let half = self.splat_f(fty, 0.5);
        let bt = self.bool_ty(n);
        let is_small = self.op(Op::FOrdLessThan, bt, &[z, half]);
        let r = self.b.select(fty, is_small, small, big);
        let is_nan = self.is(Op::IsNan, x, n);
        self.b.select(fty, is_nan, x, r)
    }

    /// `mad_sat(a, b, c)`: a * b + c clamped to the type's range, exactly: 8- and 16-bit
    /// integers in 32 bits, 32-bit integers through the 64-bit product's two words.
    #[allow(clippy::too_many_arguments)]
    fn mad_sat(&mut self, inst: &Inst, signed: bool, ty: Word, a: Word, b: Word, c: Word, n: u32, w: u32) -> Result<Word> {
        let bt = self.bool_ty(n);
        // The unsigned maximum of 64 bits is all ones, -1 as an i64.
        let (min, max) = if signed { (i64::MIN >> (64 - w), i64::MAX >> (64 - w)) } else { (0, if w == 64 { -1 } else { (1i64 << w) - 1 }) };
        match w {
            8 | 16 => {
                let wide = self.int32(n);
                let conv = if signed { Op::SConvert } else { Op::UConvert };
                let (aw, bw, cw) = (self.op(conv, wide, &[a]), self.op(conv, wide, &[b]), self.op(conv, wide, &[c]));
                let m = self.op(Op::IMul, wide, &[aw, bw]);
                let s = self.op(Op::IAdd, wide, &[m, cw]);
                let lo = self.splat_i(wide, min);
                let hi = self.splat_i(wide, max);
                let cl = self.gl(if signed { G::SClamp } else { G::UClamp }, wide, &[s, lo, hi]);
                Ok(self.op(Op::UConvert, ty, &[cl]))
            }
            32 | 64 => {
                // The double-width product as two words (OpSMulExtended/OpUMulExtended; devices
                // without 64-bit integers get 64-bit ones from `narrow-kernel-int64`), plus c.
                let pair = self.b.module.type_struct(&[ty, ty]);
                let prod = self.op(if signed { Op::SMulExtended } else { Op::UMulExtended }, pair, &[a, b]);
                let lo = self.b.composite_extract(ty, prod, 0);
                let hi = self.b.composite_extract(ty, prod, 1);
                let s = self.op(Op::IAdd, ty, &[lo, c]);
                let carry = self.op(Op::ULessThan, bt, &[s, lo]);
                let one = self.splat_i(ty, 1);
                let zero = self.splat_i(ty, 0);
                let carry = self.b.select(ty, carry, one, zero);
                let hi = self.op(Op::IAdd, ty, &[hi, carry]);
                let maxv = self.splat_i(ty, max);
                if signed {
                    // c sign_mask-extends into the high word; the sum fits when the high word is
                    // the low word's sign_mask.
                    let top = self.splat_i(ty, i64::from(w) - 1);
                    let cs = self.op(Op::ShiftRightArithmetic, ty, &[c, top]);
                    let hi = self.op(Op::IAdd, ty, &[hi, cs]);
                    let ss = self.op(Op::ShiftRightArithmetic, ty, &[s, top]);
                    let fits = self.op(Op::IEqual, bt, &[hi, ss]);
                    let neg = self.op(Op::SLessThan, bt, &[hi, zero]);
                    let minv = self.splat_i(ty, min);
                    let sat = self.b.select(ty, neg, minv, maxv);
                    Ok(self.b.select(ty, fits, s, sat))
                } else {
                    let over = self.op(Op::INotEqual, bt, &[hi, zero]);
                    Ok(self.b.select(ty, over, maxv, s))
                }
            }
            _ => Err(self.unsupported(inst, &format!("OpenCL.std mad_sat of {w}-bit integers"))),
        }
    }
}

/// Bits after the binary point of a float of `width` bits.
fn mantissa_bits(width: u32) -> u32 {
    match width {
        16 => 11,
        64 => 53,
        _ => 24,
    }
}
