//! `expm1`, `log1p` and the hyperbolic functions and their inverses (`sinh`, `cosh`, `tanh`,
//! `asinh`, `acosh`, `atanh`) of floats and halves to OpenCL's accuracy (3 units for `expm1`, 2
//! for `log1p`, 4 for `sinh`, `cosh`, `asinh`, `acosh`, 5 for `tanh`, `atanh`). Drivers compute
//! the `GLSL.std.450` hyperbolics from `Exp` as textbook formulas: lavapipe's `tanh(1e-30)` was
//! 3e-8, `sinh` and `cosh` overflowed from 88.7 (they are finite to 89.4), SwiftShader's
//! `tanh(1e30)` was NaN; `expm1` and `log1p` lowered as `exp(x) - 1` and `log(1 + x)` lost every
//! digit near zero. Each is a helper `matbridge.<name>_f32` in fdlibm's schemes:
//!
//! - `expm1`: `x = k ln 2 + r` (`exponentials.rs`' reduction; `r = x` for `k = 0`), `e^r - 1 =
//!   r + r^2 (1/2 + r/6 + ... + r^7/9!)`, then `2^k (p + 1 - 2^-k)` for `k` in [-1, 24] (exact
//!   `1 - 2^-k`) and `2^k (p + 1) - 1` beyond; `x` itself below 2^-25.
//! - `log1p`: `u = 1 + x` rounded, its error `c = x - (u - 1)` (or `1 - (u - x)` from 2 up)
//!   relative to `u`, and `exponentials.rs`' `log u` with `c / u` added to its small part; `x`
//!   itself below 2^-25.
//! - `sinh`: `x` below 2^-12; `(t + t/(t + 1))/2` with `t = expm1|x|` below 9 (`2t - t^2/(t +
//!   1)` below 1); `e^|x| / 2` beyond, computed as `exp` with `k - 1`, so finite to 89.4.
//! - `cosh`: `1 + t^2 / (2 (1 + t))` with `t = expm1|x|` below ln2/2; `e/2 + 1/(2e)` below 9;
//!   `e^|x| / 2` beyond.
//! - `tanh`: `x` below 2^-12; `-t/(t + 2)` with `t = expm1(-2|x|)` below 1; `1 - 2/(t + 2)` with
//!   `t = expm1(2|x|)` below 9; 1 beyond.
//! - `asinh`: `x` below 2^-12; `log1p(|x| + x^2/(1 + sqrt(1 + x^2)))` to 2; `log(2|x| + 1/(sqrt(x^2
//!   + 1) + |x|))` to 2^28; `log|x| + ln 2` beyond.
//! - `acosh`: `log1p(t + sqrt(2t + t^2))` with `t = x - 1` to 2; `log(2x - 1/(x + sqrt(x^2 -
//!   1)))` to 2^28; `log x + ln 2` beyond; NaN below 1.
//! - `atanh`: `x` below 2^-12; `log1p(2|x| + 2x^2/(1 - |x|)) / 2` below 1/2; `log1p(2|x|/(1 -
//!   |x|)) / 2` to 1; infinite at 1, NaN beyond.
//!
//! Odd functions take `x`'s sign last, so `-0` stays `-0`; NaNs stay NaN. `tests/
//! opencl_kernels.rs` (`hyperbolics_to_opencl_accuracy`) holds the devices to OpenCL's bounds.
//! Doubles (`matbridge.<name>_f64`) use the same formulas with double thresholds (`x` below
//! 2^-28, `e^|x|/2` from 22, `expm1`'s series to degree 17).

use super::scalar::Scalar;
use super::Lower;
use spirv::{GlslStd450Op as G, Op, OpenclStd100Op as CL, Word};

/// `1/2!` .. `1/9!`, `expm1`'s polynomial past `r`.
const INVERSE_FACTORIALS: [f32; 8] = [1.0 / 2.0, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0, 1.0 / 5040.0, 1.0 / 40320.0, 1.0 / 362_880.0];
/// Below these `sinh`, `tanh`, `asinh` and `atanh` are `x` (their next terms are under half a
/// unit of it): floats, doubles.
const TINY: (f64, f64) = (1.0 / 4096.0, 1.0 / 268_435_456.0);
/// `expm1` and `log1p` are `x` below these.
const NEGLIGIBLE: (f64, f64) = (2.980_232_238_769_531_2e-8, 5.551_115_123_125_783e-17);
/// From here `e^-2x` no longer matters beside `e^x` for `sinh`, `cosh` and `tanh`.
const LARGE: (f64, f64) = (9.0, 22.0);

impl Lower<'_, '_> {
    /// `op` of `x` (a float or half scalar or vector of type `ty`) to OpenCL's accuracy, or
    /// `None` for other types.
    pub(super) fn precise_hyperbolic(&mut self, op: CL, ty: Word, x: Word) -> Option<Word> {
        let width = self.helper_width(ty)?;
        let expm1 = self.unary_helper(width, "expm1", |s, x| s.expm1(x));
        let log = self.unary_helper(width, "log", |s, x| s.logarithm(CL::log, x));
        let log1p = self.unary_helper(width, "log1p", |s, x| s.log1p(x));
        let exp = self.unary_helper(width, "exp", |s, x| s.exponential(CL::exp, x));
        let helper = match op {
            CL::expm1 => expm1,
            CL::log1p => log1p,
            CL::sinh => self.unary_helper(width, "sinh", |s, x| s.sinh(expm1, x)),
            CL::cosh => self.unary_helper(width, "cosh", |s, x| s.cosh(expm1, exp, x)),
            CL::tanh => self.unary_helper(width, "tanh", |s, x| s.tanh(expm1, x)),
            CL::asinh => self.unary_helper(width, "asinh", |s, x| s.asinh(log, log1p, x)),
            CL::acosh => self.unary_helper(width, "acosh", |s, x| s.acosh(log, log1p, x)),
            CL::atanh => self.unary_helper(width, "atanh", |s, x| s.atanh(log1p, x)),
            _ => return None,
        };
        Some(self.per_component(ty, x, helper))
    }
}

impl Scalar<'_, '_> {
    /// `v`, the value of an odd function at `|x|`, with `x`'s sign; a NaN `x` itself.
    fn odd_result(&mut self, v: Word, x: Word) -> Word {
        let v = self.copysign(v, x);
        self.nan_stays(x, v)
    }

    /// `v`, or `x` where `x` is NaN.
    fn nan_stays(&mut self, x: Word, v: Word) -> Word {
        let boolean = self.b.module.type_bool();
        let nan = self.b.op(Op::IsNan, boolean, &[x]);
        self.pick_f(nan, x, v)
    }

    /// `single` for floats, `double` for doubles.
    fn of_width(&self, single: f64, double: f64) -> f64 {
        if self.width == 64 {
            double
        } else {
            single
        }
    }

    fn below(&mut self, a: Word, limit: f64) -> Word {
        let c = self.fd(limit);
        self.test(Op::FOrdLessThan, a, c)
    }

    /// `e^x - 1`.
    fn expm1(&mut self, x: Word) -> Word {
        let (f, u) = (self.f(), self.u());
        let (low, high) = (self.fd(self.of_width(-30.0, -40.0)), self.fd(self.of_width(89.0, 710.0)));
        let clamped = self.gl(G::FClamp, f, &[x, low, high]);
        let (r, k) = self.exp_reduce(clamped);
        let coefficients: Vec<Word> = if self.width == 64 { self.inverse_factorials(17) } else { INVERSE_FACTORIALS.iter().rev().map(|c| self.fc(*c)).collect() };
        let mut q = coefficients[0];
        for c in &coefficients[1..] {
            let t = self.fop(Op::FMul, q, r);
            q = self.fop(Op::FAdd, *c, t);
        }
        let rr = self.fop(Op::FMul, r, r);
        let t = self.fop(Op::FMul, rr, q);
        let p = self.fop(Op::FAdd, r, t);
        let (ki, s1, s2) = self.halved_power_of_two(k);
        // k in [-1, 24]: 2^k (p + (1 - 2^-k)).
        let zero_u = self.uc(0);
        let minus_k = self.uop(Op::ISub, zero_u, ki);
        let last: u32 = if self.width == 64 { 53 } else { 24 };
        let (lo, hi) = (self.uc(last.wrapping_neg()), self.uc(1));
        let near = self.gl(G::SClamp, u, &[minus_k, lo, hi]);
        let inverse = self.power_of_two(near);
        let one = self.fd(1.0);
        let offset = self.fop(Op::FSub, one, inverse);
        let a = self.fop(Op::FAdd, p, offset);
        let a = self.fop(Op::FMul, a, s1);
        let a = self.fop(Op::FMul, a, s2);
        // Beyond: 2^k (p + 1) - 1.
        let b = self.fop(Op::FAdd, p, one);
        let b = self.fop(Op::FMul, b, s1);
        let b = self.fop(Op::FMul, b, s2);
        let b = self.fop(Op::FSub, b, one);
        let (first, last) = (self.uc(1u32.wrapping_neg()), self.uc(last));
        let from = self.test(Op::SGreaterThanEqual, ki, first);
        let to = self.test(Op::SLessThanEqual, ki, last);
        let boolean = self.b.module.type_bool();
        let in_range = self.b.op(Op::LogicalAnd, boolean, &[from, to]);
        let value = self.pick_f(in_range, a, b);
        let k_zero = self.test(Op::IEqual, ki, zero_u);
        let value = self.pick_f(k_zero, p, value);
        // Below 2^-25 (and zeros of either sign): x.
        let a = self.gl(G::FAbs, f, &[x]);
        let tiny = self.below(a, self.of_width(NEGLIGIBLE.0, NEGLIGIBLE.1));
        let value = self.pick_f(tiny, x, value);
        let limit = self.fd(self.of_width(88.722_84, 709.782_712_893_384));
        let over = self.test(Op::FOrdGreaterThan, x, limit);
        let inf = self.fd(f64::INFINITY);
        let value = self.pick_f(over, inf, value);
        let nan = self.b.op(Op::IsNan, boolean, &[x]);
        self.pick_f(nan, x, value)
    }

    /// `log(1 + x)`.
    fn log1p(&mut self, x: Word) -> Word {
        let one = self.fd(1.0);
        let u = self.fop(Op::FAdd, one, x);
        // 1 + x = u (1 + c/u): the sum's rounding error.
        let two = self.fd(2.0);
        let big = self.test(Op::FOrdGreaterThanEqual, u, two);
        let d = self.fop(Op::FSub, u, x);
        let c_big = self.fop(Op::FSub, one, d);
        let d = self.fop(Op::FSub, u, one);
        let c_small = self.fop(Op::FSub, x, d);
        let c = self.pick_f(big, c_big, c_small);
        let c = self.fop(Op::FDiv, c, u);
        let moderate = self.below(u, self.of_width(3.3e7, 1.8e16));
        let zero = self.fd(0.0);
        let c = self.pick_f(moderate, c, zero);
        let value = self.logarithm_corrected(CL::log, u, Some(c));
        // Below 2^-25 (and zeros of either sign): x.
        let f = self.f();
        let a = self.gl(G::FAbs, f, &[x]);
        let tiny = self.below(a, self.of_width(NEGLIGIBLE.0, NEGLIGIBLE.1));
        let value = self.pick_f(tiny, x, value);
        let boolean = self.b.module.type_bool();
        let nan = self.b.op(Op::IsNan, boolean, &[x]);
        let value = self.pick_f(nan, x, value);
        // 1 + x rounds to 0 only at -1 (x's ulp there is 2^-24): -infinity; below, NaN.
        let minus_one = self.fd(-1.0);
        let pole = self.test(Op::FOrdEqual, x, minus_one);
        let minus_inf = self.fd(f64::NEG_INFINITY);
        let value = self.pick_f(pole, minus_inf, value);
        let outside = self.test(Op::FOrdLessThan, x, minus_one);
        let nan_c = self.fd(f64::NAN);
        self.pick_f(outside, nan_c, value)
    }

    /// `e^a / 2` for `a >= 0` (finite to 89.4).
    fn exp_half(&mut self, a: Word) -> Word {
        let f = self.f();
        let limit = self.fd(self.of_width(89.5, 710.5));
        let clamped = self.gl(G::FMin, f, &[a, limit]);
        let (r, k) = self.exp_reduce(clamped);
        let one = self.fd(1.0);
        let k = self.fop(Op::FSub, k, one);
        let value = self.exp_core(r, k);
        let over = self.test(Op::FOrdGreaterThan, a, limit);
        let inf = self.fd(f64::INFINITY);
        self.pick_f(over, inf, value)
    }

    /// `sinh x`.
    fn sinh(&mut self, expm1: Word, x: Word) -> Word {
        let f = self.f();
        let a = self.gl(G::FAbs, f, &[x]);
        let t = self.call(expm1, &[a]);
        let one = self.fd(1.0);
        let t1 = self.fop(Op::FAdd, t, one);
        // Below 1: 2t - t^2/(t + 1); to 9: t + t/(t + 1).
        let tt = self.fop(Op::FMul, t, t);
        let q = self.fop(Op::FDiv, tt, t1);
        let two_t = self.fop(Op::FAdd, t, t);
        let small = self.fop(Op::FSub, two_t, q);
        let q = self.fop(Op::FDiv, t, t1);
        let medium = self.fop(Op::FAdd, t, q);
        let below_one = self.below(a, 1.0);
        let v = self.pick_f(below_one, small, medium);
        let half = self.fd(0.5);
        let v = self.fop(Op::FMul, v, half);
        let large = self.exp_half(a);
        let below_nine = self.below(a, self.of_width(LARGE.0, LARGE.1));
        let v = self.pick_f(below_nine, v, large);
        let tiny = self.below(a, self.of_width(TINY.0, TINY.1));
        let v = self.pick_f(tiny, a, v);
        self.odd_result(v, x)
    }

    /// `cosh x`.
    fn cosh(&mut self, expm1: Word, exp: Word, x: Word) -> Word {
        let f = self.f();
        let a = self.gl(G::FAbs, f, &[x]);
        let t = self.call(expm1, &[a]);
        let one = self.fd(1.0);
        let w = self.fop(Op::FAdd, one, t);
        let ww = self.fop(Op::FAdd, w, w);
        let tt = self.fop(Op::FMul, t, t);
        let q = self.fop(Op::FDiv, tt, ww);
        let small = self.fop(Op::FAdd, one, q);
        let e = self.call(exp, &[a]);
        let half = self.fd(0.5);
        let he = self.fop(Op::FMul, half, e);
        let inv = self.fop(Op::FDiv, half, e);
        let medium = self.fop(Op::FAdd, he, inv);
        let large = self.exp_half(a);
        let below_nine = self.below(a, self.of_width(LARGE.0, LARGE.1));
        let v = self.pick_f(below_nine, medium, large);
        let near = self.below(a, 0.346_573_6);
        let v = self.pick_f(near, small, v);
        self.nan_stays(x, v)
    }

    /// `tanh x`.
    fn tanh(&mut self, expm1: Word, x: Word) -> Word {
        let f = self.f();
        let a = self.gl(G::FAbs, f, &[x]);
        let two_a = self.fop(Op::FAdd, a, a);
        // One expm1 and one quotient: below 1, t = expm1(-2a) and -t/(t + 2); above,
        // t = expm1(2a) and 1 - 2/(t + 2).
        let below_one = self.below(a, 1.0);
        let minus = self.b.op(Op::FNegate, f, &[two_a]);
        let cap = self.fd(self.of_width(20.0, 45.0));
        let capped = self.gl(G::FMin, f, &[two_a, cap]);
        let arg = self.pick_f(below_one, minus, capped);
        let t = self.call(expm1, &[arg]);
        let two = self.fd(2.0);
        let d = self.fop(Op::FAdd, t, two);
        let num = self.pick_f(below_one, t, two);
        let q = self.fop(Op::FDiv, num, d);
        let small = self.b.op(Op::FNegate, f, &[q]);
        let one = self.fd(1.0);
        let medium = self.fop(Op::FSub, one, q);
        let below_nine = self.below(a, self.of_width(LARGE.0, LARGE.1));
        let v = self.pick_f(below_nine, medium, one);
        let v = self.pick_f(below_one, small, v);
        let tiny = self.below(a, self.of_width(TINY.0, TINY.1));
        let v = self.pick_f(tiny, a, v);
        self.odd_result(v, x)
    }

    /// `log arg` below 2^28, `log a + ln 2` (`log 2a`, which may overflow) from there: one call
    /// of `log` on the argument that serves.
    fn log_or_twice(&mut self, log: Word, arg: Word, a: Word) -> Word {
        let below_huge = self.below(a, 268_435_456.0);
        let chosen = self.pick_f(below_huge, arg, a);
        let l = self.call(log, &[chosen]);
        let ln2 = self.fd(std::f64::consts::LN_2);
        let twice = self.fop(Op::FAdd, l, ln2);
        self.pick_f(below_huge, l, twice)
    }

    /// `asinh x`.
    fn asinh(&mut self, log: Word, log1p: Word, x: Word) -> Word {
        let f = self.f();
        let a = self.gl(G::FAbs, f, &[x]);
        let one = self.fd(1.0);
        let cap = self.fd(1.0e18);
        let ac = self.gl(G::FMin, f, &[a, cap]);
        let aa = self.fop(Op::FMul, ac, ac);
        let aa1 = self.fop(Op::FAdd, aa, one);
        let root = self.gl(G::Sqrt, f, &[aa1]);
        // Below 2: log1p(a + a^2 / (1 + sqrt(1 + a^2))).
        let d = self.fop(Op::FAdd, one, root);
        let q = self.fop(Op::FDiv, aa, d);
        let arg = self.fop(Op::FAdd, a, q);
        let small = self.call(log1p, &[arg]);
        // To 2^28: log(2a + 1 / (sqrt(a^2 + 1) + a)).
        let d = self.fop(Op::FAdd, root, a);
        let q = self.fop(Op::FDiv, one, d);
        let two_a = self.fop(Op::FAdd, ac, ac);
        let arg = self.fop(Op::FAdd, two_a, q);
        let v = self.log_or_twice(log, arg, a);
        let below_two = self.below(a, 2.0);
        let v = self.pick_f(below_two, small, v);
        let tiny = self.below(a, self.of_width(TINY.0, TINY.1));
        let v = self.pick_f(tiny, a, v);
        self.odd_result(v, x)
    }

    /// `acosh x`.
    fn acosh(&mut self, log: Word, log1p: Word, x: Word) -> Word {
        let f = self.f();
        let one = self.fd(1.0);
        let cap = self.fd(1.0e18);
        let xc = self.gl(G::FMin, f, &[x, cap]);
        // To 2: log1p(t + sqrt(2t + t^2)), t = x - 1.
        let t = self.fop(Op::FSub, xc, one);
        let two_t = self.fop(Op::FAdd, t, t);
        let tt = self.fop(Op::FMul, t, t);
        let s = self.fop(Op::FAdd, two_t, tt);
        let root = self.gl(G::Sqrt, f, &[s]);
        let arg = self.fop(Op::FAdd, t, root);
        let small = self.call(log1p, &[arg]);
        // To 2^28: log(2x - 1 / (x + sqrt(x^2 - 1))).
        let xx = self.fop(Op::FMul, xc, xc);
        let s = self.fop(Op::FSub, xx, one);
        let root = self.gl(G::Sqrt, f, &[s]);
        let d = self.fop(Op::FAdd, xc, root);
        let q = self.fop(Op::FDiv, one, d);
        let two_x = self.fop(Op::FAdd, xc, xc);
        let arg = self.fop(Op::FSub, two_x, q);
        let v = self.log_or_twice(log, arg, x);
        let below_two = self.below(x, 2.0);
        let v = self.pick_f(below_two, small, v);
        let outside = self.below(x, 1.0);
        let nan = self.fd(f64::NAN);
        let v = self.pick_f(outside, nan, v);
        self.nan_stays(x, v)
    }

    /// `atanh x`.
    fn atanh(&mut self, log1p: Word, x: Word) -> Word {
        let f = self.f();
        let a = self.gl(G::FAbs, f, &[x]);
        let one = self.fd(1.0);
        let rest = self.fop(Op::FSub, one, a);
        let two_a = self.fop(Op::FAdd, a, a);
        // Below 1/2: log1p(2a + 2a^2 / (1 - a)) / 2; to 1: log1p(2a / (1 - a)) / 2. One
        // quotient and one log1p, on the operands that serve.
        let below_half = self.below(a, 0.5);
        let p = self.fop(Op::FMul, two_a, a);
        let num = self.pick_f(below_half, p, two_a);
        let q = self.fop(Op::FDiv, num, rest);
        let sum = self.fop(Op::FAdd, two_a, q);
        let arg = self.pick_f(below_half, sum, q);
        let v = self.call(log1p, &[arg]);
        let half = self.fd(0.5);
        let v = self.fop(Op::FMul, v, half);
        let tiny = self.below(a, self.of_width(TINY.0, TINY.1));
        let v = self.pick_f(tiny, a, v);
        let pole = self.test(Op::FOrdEqual, a, one);
        let inf = self.fd(f64::INFINITY);
        let v = self.pick_f(pole, inf, v);
        let outside = self.test(Op::FOrdGreaterThan, a, one);
        let nan = self.fd(f64::NAN);
        let v = self.pick_f(outside, nan, v);
        let v = self.copysign(v, x);
        self.nan_stays(x, v)
    }
}
