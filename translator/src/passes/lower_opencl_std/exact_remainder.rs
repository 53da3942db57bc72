//! `fmod`, `remainder` and `remquo` of halves, floats and doubles, exactly, as OpenCL asks (0
//! units in the last place). `OpFRem` is `x - y trunc(x / y)` by Vulkan's definition, and
//! `x - y rint(x / y)` is no better: both go wrong once the quotient passes the significand
//! (`fmod(1e18, 3.25)` gave 0, not 1; `remainder(1e18, 3.25)` 0, not 1), and a rounded `x / y`
//! can land on the wrong side of a half-way quotient. The shared reduction reduces `r = |x|` by
//! the largest `|y| 2^k` not above it until `r < |y|`: `|y| 2^k` (`Ldexp` on `Frexp`'s
//! exponents, halved where it passes `r`) lies in `[r/2, r]`, so each subtraction is exact
//! (Sterbenz) and takes at least one bit off `r`; a loop of at most the exponent difference
//! plus one turns (capped at 300 for floats, 2,200 for doubles). Each turn's `k` is one bit of
//! the quotient `trunc(|x / y|)`, whose seven low bits `remquo` keeps.
//!
//! - `fmod` (helper `matbridge.fmod_f32`, `_f64`) is that `r` with `x`'s sign.
//! - `remainder` and `remquo` (helper `matbridge.remquo_f32`, `_f64`, returning the remainder
//!   and the quotient's bits as a vector of two) round the quotient to nearest, ties to even:
//!   where `2r > |y|`, or `2r = |y|` and the quotient is odd, `r - |y|` (exact: `r` lies in
//!   `[|y|/2, |y|)`) and the quotient plus one. The remainder has `x`'s sign applied (a zero
//!   keeps it); `remquo`'s quotient is the rounded one's seven low bits with the sign of `x /
//!   y`, as OpenCL C says.
//!
//! A zero, NaN `y`, or an infinite or NaN `x`, gives NaN (a quotient of 0); a finite `x` over
//! an infinite `y` is `x` (a quotient of 0). Halves are computed as floats (exact there, and
//! representable as halves).

use super::scalar::Scalar;
use super::Lower;
use crate::ir::builder::Builder;
use spirv::{GlslStd450Op as G, Op, Word};

impl Lower<'_, '_> {
    /// `fmod(x, y)` of halves, floats or doubles (`ty` scalar or vector); `None` for other types.
    pub(super) fn exact_fmod(&mut self, ty: Word, x: Word, y: Word) -> Option<Word> {
        let width = self.helper_width(ty)?;
        let fty = self.b.module.type_float(width);
        let helper = self.helper_of_width(width, &format!("matbridge.fmod_f{width}"), fty, &[fty, fty], |s, p| s.fmod(p[0], p[1]));
        Some(self.per_component_of(ty, &[x, y], helper))
    }

    /// `remainder(x, y)` of halves, floats or doubles (`ty` scalar or vector), and `remquo`'s
    /// quotient (its seven low bits with the sign of `x / y`) as values of `ty`; `None` for
    /// other types.
    pub(super) fn exact_remainder(&mut self, ty: Word, x: Word, y: Word) -> Option<(Word, Word)> {
        let width = self.helper_width(ty)?;
        let fty = self.b.module.type_float(width);
        let v2 = self.b.module.type_vector(fty, 2);
        let helper = self.helper_of_width(width, &format!("matbridge.remquo_f{width}"), v2, &[fty, fty], |s, p| s.remquo(p[0], p[1]));
        let [r, q] = self.per_component_parts(ty, &[x, y], helper, 2)[..] else { return None };
        Some((r, q))
    }
}

impl Scalar<'_, '_> {
    /// `fmod`'s helper's value (see the module comment).
    fn fmod(&mut self, x: Word, y: Word) -> Word {
        let f = self.f();
        let ax = self.gl(G::FAbs, f, &[x]);
        let ay = self.gl(G::FAbs, f, &[y]);
        let (r, _) = self.reduce(ax, ay, false);
        let v = self.copysign(r, x);
        let (bad, keep) = self.special_operands(y, ax, ay);
        let nan = self.fd(f64::NAN);
        let v = self.pick_f(bad, nan, v);
        self.pick_f(keep, x, v)
    }

    /// `remquo`'s helper's value: the vector of the remainder and the quotient's bits (see the
    /// module comment).
    fn remquo(&mut self, x: Word, y: Word) -> Word {
        let f = self.f();
        let ax = self.gl(G::FAbs, f, &[x]);
        let ay = self.gl(G::FAbs, f, &[y]);
        let (r, q) = self.reduce(ax, ay, true);
        // Round the quotient to nearest, ties to even. 2r is exact (or infinite, past |y|).
        let twice = self.fop(Op::FAdd, r, r);
        let above = self.test(Op::FOrdGreaterThan, twice, ay);
        let tie = self.test(Op::FOrdEqual, twice, ay);
        let one_u = self.uc(1);
        let low = self.uop(Op::BitwiseAnd, q, one_u);
        let odd = self.test(Op::IEqual, low, one_u);
        let boolean = self.b.module.type_bool();
        let odd_tie = self.b.op(Op::LogicalAnd, boolean, &[tie, odd]);
        let up = self.b.op(Op::LogicalOr, boolean, &[above, odd_tie]);
        let below = self.fop(Op::FSub, r, ay);
        let r = self.pick_f(up, below, r);
        let q_up = self.uop(Op::IAdd, q, one_u);
        let q = self.pick_u(up, q_up, q);
        let seven_bits = self.uc(127);
        let q = self.uop(Op::BitwiseAnd, q, seven_bits);
        // x's sign on the remainder, x / y's on the quotient.
        let one = self.fd(1.0);
        let zero = self.fd(0.0);
        let x_sign = self.copysign(one, x);
        let x_negative = self.test(Op::FOrdLessThan, x_sign, zero);
        let minus_r = self.b.op(Op::FNegate, f, &[r]);
        let v = self.pick_f(x_negative, minus_r, r);
        let y_sign = self.copysign(one, y);
        let y_negative = self.test(Op::FOrdLessThan, y_sign, zero);
        let quotient_negative = self.b.op(Op::LogicalNotEqual, boolean, &[x_negative, y_negative]);
        let qf = self.b.op(Op::ConvertUToF, f, &[q]);
        let minus_qf = self.b.op(Op::FNegate, f, &[qf]);
        let qf = self.pick_f(quotient_negative, minus_qf, qf);
        let (bad, keep) = self.special_operands(y, ax, ay);
        let odd_operands = self.b.op(Op::LogicalOr, boolean, &[bad, keep]);
        let nan = self.fd(f64::NAN);
        let v = self.pick_f(bad, nan, v);
        let v = self.pick_f(keep, x, v);
        let qf = self.pick_f(odd_operands, zero, qf);
        let v2 = self.b.module.type_vector(f, 2);
        self.b.op(Op::CompositeConstruct, v2, &[v, qf])
    }

    /// `ax = |x|` reduced by multiples `|y| 2^k` of `ay = |y|` below `ay` (see the module
    /// comment), and, where `quotient`, the sum of the bits `2^k` up to `2^7` (so that its low
    /// seven bits are the quotient's); `uc(0)` otherwise.
    fn reduce(&mut self, ax: Word, ay: Word, quotient: bool) -> (Word, Word) {
        let (f, u) = (self.f(), self.u());
        let glsl = self.glsl;
        let width = self.width;
        let r_var = self.b.function_variable(f);
        self.b.store(r_var, ax);
        let turns = self.b.function_variable(u);
        let zero_u = self.uc(0);
        self.b.store(turns, zero_u);
        let q_var = quotient.then(|| {
            let q_var = self.b.function_variable(u);
            self.b.store(q_var, zero_u);
            q_var
        });
        let cap = self.uc(if width == 64 { 2200 } else { 300 });
        self.b.retry_loop(|b: &mut Builder<'_>| {
            let mut s = Scalar { b, glsl, width };
            let (f, u) = (s.f(), s.u());
            let r = s.b.load(f, r_var);
            let n = s.b.load(u, turns);
            let one_u = s.uc(1);
            let next = s.uop(Op::IAdd, n, one_u);
            s.b.store(turns, next);
            // Go on while |y| <= r, y is not zero, r is finite, and the cap is not reached.
            let zero = s.fd(0.0);
            let infinity = s.fd(f64::INFINITY);
            let above = s.test(Op::FOrdGreaterThanEqual, r, ay);
            let nonzero = s.test(Op::FOrdGreaterThan, ay, zero);
            let finite = s.test(Op::FOrdLessThan, r, infinity);
            let under_cap = s.test(Op::ULessThan, n, cap);
            let boolean = s.b.module.type_bool();
            let go = s.b.op(Op::LogicalAnd, boolean, &[above, nonzero]);
            let go = s.b.op(Op::LogicalAnd, boolean, &[go, finite]);
            let go = s.b.op(Op::LogicalAnd, boolean, &[go, under_cap]);
            // |y| 2^k with r's exponent, halved where it passes r.
            // The exponents as 32-bit words: k is not negative where it is used.
            let int = u;
            let parts = s.b.module.type_struct(&[f, int]);
            let fr = s.gl(G::FrexpStruct, parts, &[r]);
            let er = s.b.composite_extract(int, fr, 1);
            let fy = s.gl(G::FrexpStruct, parts, &[ay]);
            let ey = s.b.composite_extract(int, fy, 1);
            let k = s.b.op(Op::ISub, int, &[er, ey]);
            let ys = s.gl(G::Ldexp, f, &[ay, k]);
            let over = s.test(Op::FOrdGreaterThan, ys, r);
            let half = s.fd(0.5);
            let halved = s.fop(Op::FMul, ys, half);
            let ys = s.pick_f(over, halved, ys);
            let reduced = s.fop(Op::FSub, r, ys);
            let kept = s.pick_f(go, reduced, r);
            s.b.store(r_var, kept);
            if let Some(q_var) = q_var {
                // This turn's bit 2^k' (k' = k, or k - 1 where halved), as 2^min(k', 7): the
                // bits from 2^7 on fall out of the seven kept.
                let k_less = s.uop(Op::ISub, k, one_u);
                let k = s.pick_u(over, k_less, k);
                let seven = s.uc(7);
                let k = s.gl(G::UMin, u, &[k, seven]);
                let bit = s.uop(Op::ShiftLeftLogical, one_u, k);
                let bit = s.pick_u(go, bit, zero_u);
                let q = s.b.load(u, q_var);
                let q = s.uop(Op::IAdd, q, bit);
                s.b.store(q_var, q);
            }
            s.b.op(Op::LogicalNot, boolean, &[go])
        });
        let r = self.b.load(f, r_var);
        let q = match q_var {
            Some(q_var) => self.b.load(u, q_var),
            None => zero_u,
        };
        (r, q)
    }

    /// Whether `x`, `y` (of magnitudes `ax`, `ay`) give NaN (a zero or NaN `y`, an infinite
    /// or NaN `x`), and whether they give `x` (a finite `x`, an infinite `y`).
    fn special_operands(&mut self, y: Word, ax: Word, ay: Word) -> (Word, Word) {
        let zero = self.fd(0.0);
        let infinity = self.fd(f64::INFINITY);
        let y_zero = self.test(Op::FOrdEqual, ay, zero);
        let x_finite = self.test(Op::FOrdLessThan, ax, infinity);
        let y_infinite = self.test(Op::FOrdEqual, ay, infinity);
        let y_nan = self.is_nan(y);
        let boolean = self.b.module.type_bool();
        let bad = self.b.op(Op::LogicalOr, boolean, &[y_zero, y_nan]);
        let x_bad = self.b.op(Op::LogicalNot, boolean, &[x_finite]);
        let bad = self.b.op(Op::LogicalOr, boolean, &[bad, x_bad]);
        let keep = self.b.op(Op::LogicalAnd, boolean, &[y_infinite, x_finite]);
        (bad, keep)
    }
}
