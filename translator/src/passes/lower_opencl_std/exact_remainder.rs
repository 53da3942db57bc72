//! `fmod` of halves, floats and doubles, exactly, as OpenCL asks (0 units in the last place).
//! `OpFRem` is `x - y trunc(x / y)` by Vulkan's definition, which goes wrong once the quotient
//! passes the significand (`fmod(1e18, 3.25)` gave 0, not 1). The helper
//! `matbridge.fmod_f32` (`_f64`) reduces `r = |x|` by the largest `|y| 2^k` not above it
//! until `r < |y|`: `|y| 2^k` (`Ldexp` on `Frexp`'s exponents, halved where it passes `r`) lies
//! in `[r/2, r]`, so each subtraction is exact (Sterbenz) and takes at least one bit off `r`;
//! a loop of at most the exponent difference plus one turns (capped at 300 for floats, 2,200
//! for doubles). The result has `x`'s sign; a zero, infinite or NaN `y`, or an infinite or NaN
//! `x`, gives NaN, and a finite `x` over an infinite `y` is `x`. Halves are computed as floats
//! (exact there, and representable as halves).

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
}

impl Scalar<'_, '_> {
    /// The helper's value (see the module comment).
    fn fmod(&mut self, x: Word, y: Word) -> Word {
        let (f, u) = (self.f(), self.u());
        let glsl = self.glsl;
        let width = self.width;
        let ax = self.gl(G::FAbs, f, &[x]);
        let ay = self.gl(G::FAbs, f, &[y]);
        let r_var = self.b.function_variable(f);
        self.b.store(r_var, ax);
        let turns = self.b.function_variable(u);
        let zero_u = self.uc(0);
        self.b.store(turns, zero_u);
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
            s.b.op(Op::LogicalNot, boolean, &[go])
        });
        let r = self.b.load(f, r_var);
        let v = self.copysign(r, x);
        // NaN for a zero, infinite or NaN y or an infinite or NaN x; x for an infinite y.
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
        let nan = self.fd(f64::NAN);
        let v = self.pick_f(bad, nan, v);
        let keep = self.b.op(Op::LogicalAnd, boolean, &[y_infinite, x_finite]);
        self.pick_f(keep, x, v)
    }
}
