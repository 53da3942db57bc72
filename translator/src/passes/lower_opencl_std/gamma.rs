//! `tgamma` of halves, floats and doubles to OpenCL's accuracy (16 units in the last place),
//! which `GLSL.std.450` does not have. The helper `matbridge.tgamma_f32` (`_f64` for doubles)
//! follows musl's `tgamma`, the Lanczos approximation with `g = 6.0246800407767296` and
//! Godfrey's rational sum of 13 terms:
//!
//! - `Gamma(x) = S(x) e^-y y^(x - 1/2)` with `y = x + g - 1/2` (its rounding error `dy`
//!   carried as `r dy (g + 1/2) / y`) and `S` evaluated in `x` below 8 and in `1/x` above (both
//!   computed, one selected); `y^(x - 1/2)` is `y^((x - 1/2)/2)` squared, so the product only
//!   overflows where `Gamma` does. `exp` is `exponentials.rs`' helper, the power `powers.rs`'.
//! - Negative `x`: `Gamma(x) = -pi / (x sin(pi x) Gamma(-x))` (`-x` is exact), `sin(pi x)` on
//!   `|x|` reduced exactly modulo 2 and folded into [0, 1/2] before the product with pi, through
//!   `trigonometry.rs`' (or `double_trigonometry.rs`') sine.
//! - Positive integers to 23 are the exact factorials (a function-scope table); zeros and
//!   arguments below 2^-25 (2^-54 for doubles) give `1/x`; negative integers and `-inf` NaN,
//!   `+inf` itself; past the overflow (36, 172) infinity, and below -42 (-184) a zero with the
//!   sign of `Gamma` there.
//!
//! Halves are computed as floats. Every float operation is `NoContraction`.
//! `tests/opencl_kernels.rs`, `gamma_to_opencl_accuracy`, holds the results to OpenCL's bound.

use super::scalar::Scalar;
use super::Lower;
use crate::ir::Operand;
use spirv::{GlslStd450Op as G, Op, OpenclStd100Op as CL, Word};

/// `g - 1/2` (exactly 5.524680040776729583740234375).
const GMHALF: f64 = 5.524_680_040_776_73;
/// Godfrey's numerator coefficients (musl's `Snum`), constant term first.
const SNUM: [f64; 13] = [
    23_531_376_880.410_76,
    42_919_803_642.649_1,
    35_711_959_237.355_67,
    17_921_034_426.037_21,
    6_039_542_586.352_028,
    1_439_720_407.311_721_6,
    248_874_557.862_054_16,
    31_426_415.585_400_194,
    2_876_370.628_935_372_4,
    186_056.265_395_223_48,
    8_071.672_002_365_816,
    210.824_277_751_579_35,
    2.506_628_274_631_000_3,
];
/// The denominator's coefficients (`(x + 1)(x + 2)...(x + 11)` expanded), constant first.
const SDEN: [f64; 13] = [0.0, 39_916_800.0, 120_543_840.0, 150_917_976.0, 105_258_076.0, 45_995_730.0, 13_339_535.0, 2_637_558.0, 357_423.0, 32_670.0, 1_925.0, 66.0, 1.0];

impl Lower<'_, '_> {
    /// `tgamma` of `x` (a half, float or double scalar or vector of type `ty`); `None` for
    /// other types.
    pub(super) fn precise_gamma(&mut self, ty: Word, x: Word) -> Option<Word> {
        let width = self.helper_width(ty)?;
        let exp = self.unary_helper(width, "exp", |s, x| s.exponential(CL::exp, x));
        let pow = self.pow_helper(width);
        let sincos = if width == 64 { self.double_sincos_helper() } else { self.sincos_helper() };
        let helper = self.unary_helper(width, "tgamma", |s, x| s.tgamma(exp, pow, sincos, x));
        Some(self.per_component(ty, x, helper))
    }
}

impl Scalar<'_, '_> {
    /// `sin(pi a)` for `a >= 0`: `a` modulo 2 (exact), folded into [0, 1/2] (exactly), times
    /// pi, through the sine helper `sincos` (returning `(sin, cos, tan)`).
    fn sin_pi(&mut self, sincos: Word, a: Word) -> Word {
        let f = self.f();
        let half = self.fd(0.5);
        let (one, two) = (self.fd(1.0), self.fd(2.0));
        let h = self.fop(Op::FMul, a, half);
        let whole = self.gl(G::Floor, f, &[h]);
        let t = self.fop(Op::FSub, h, whole);
        let r = self.fop(Op::FMul, t, two);
        // sin(pi r) = -sin(pi (r - 1)) past 1, and sin(pi r) = sin(pi (1 - r)) past 1/2.
        let past_one = self.test(Op::FOrdGreaterThan, r, one);
        let less_one = self.fop(Op::FSub, r, one);
        let r = self.pick_f(past_one, less_one, r);
        let past_half = self.test(Op::FOrdGreaterThan, r, half);
        let rest = self.fop(Op::FSub, one, r);
        let r = self.pick_f(past_half, rest, r);
        let pi = self.fd(std::f64::consts::PI);
        let arg = self.fop(Op::FMul, r, pi);
        let v3 = self.b.module.type_vector(f, 3);
        let all = self.b.emit(Op::FunctionCall, v3, vec![Operand::Id(sincos), Operand::Id(arg)]);
        let s = self.b.composite_extract(f, all, 0);
        let neg = self.b.op(Op::FNegate, f, &[s]);
        self.pick_f(past_one, neg, s)
    }

    /// Godfrey's `S(a)`: in `a` below 8, in `1/a` above.
    fn lanczos_sum(&mut self, a: Word) -> Word {
        let zero = self.fd(0.0);
        let one = self.fd(1.0);
        let inverse = self.fop(Op::FDiv, one, a);
        let (mut num, mut den) = (zero, zero);
        let (mut num_inv, mut den_inv) = (zero, zero);
        for i in (0..13).rev() {
            let (n, d) = (self.fd(SNUM[i]), self.fd(SDEN[i]));
            let t = self.fop(Op::FMul, num, a);
            num = self.fop(Op::FAdd, t, n);
            let t = self.fop(Op::FMul, den, a);
            den = self.fop(Op::FAdd, t, d);
            let (n, d) = (self.fd(SNUM[12 - i]), self.fd(SDEN[12 - i]));
            let t = self.fop(Op::FMul, num_inv, inverse);
            num_inv = self.fop(Op::FAdd, t, n);
            let t = self.fop(Op::FMul, den_inv, inverse);
            den_inv = self.fop(Op::FAdd, t, d);
        }
        let small = self.fop(Op::FDiv, num, den);
        let large = self.fop(Op::FDiv, num_inv, den_inv);
        let eight = self.fd(8.0);
        let below = self.test(Op::FOrdLessThan, a, eight);
        self.pick_f(below, small, large)
    }

    /// A function-scope table of `values` (of the emitter's width) read at `index` (an
    /// unsigned integer below `values.len()`).
    fn table_value(&mut self, values: &[f64], index: Word) -> Word {
        let (f, u) = (self.f(), self.u());
        let length = self.uc(values.len() as u32);
        let array = self.b.module.type_array(f, length);
        let words: Vec<Word> = values.iter().map(|v| self.fd(*v)).collect();
        let init = self.b.module.constant_composite(array, &words);
        let table = self.b.function_variable_with(array, Some(init));
        let ptr = self.b.module.type_pointer(spirv::StorageClass::Function, f);
        let last = self.uc(values.len() as u32 - 1);
        let index = self.gl(G::UMin, u, &[index, last]);
        let at = self.b.access_chain(ptr, table, &[index]);
        self.b.load(f, at)
    }

    /// The helper's value (see the module comment).
    fn tgamma(&mut self, exp: Word, pow: Word, sincos: Word, x: Word) -> Word {
        let (f, u) = (self.f(), self.u());
        let double = self.width == 64;
        let ax = self.gl(G::FAbs, f, &[x]);
        let zero = self.fd(0.0);
        let negative = self.test(Op::FOrdLessThan, x, zero);
        // y = |x| + g - 1/2 and its rounding error.
        let gmhalf = self.fd(GMHALF);
        let y = self.fop(Op::FAdd, ax, gmhalf);
        let above = self.test(Op::FOrdGreaterThan, ax, gmhalf);
        let big = self.pick_f(above, ax, gmhalf);
        let other = self.pick_f(above, gmhalf, ax);
        let dy = self.fop(Op::FSub, y, big);
        let dy = self.fop(Op::FSub, dy, other);
        let half = self.fd(0.5);
        let z = self.fop(Op::FSub, ax, half);
        let s = self.lanczos_sum(ax);
        let neg_y = self.b.op(Op::FNegate, f, &[y]);
        let e = self.call(exp, &[neg_y]);
        let r = self.fop(Op::FMul, s, e);
        // Negative x: -pi / (sin(pi |x|) |x| r).
        let sp = self.sin_pi(sincos, ax);
        let d = self.fop(Op::FMul, sp, ax);
        let d = self.fop(Op::FMul, d, r);
        let minus_pi = self.fd(-std::f64::consts::PI);
        let reflected = self.fop(Op::FDiv, minus_pi, d);
        let r = self.pick_f(negative, reflected, r);
        let neg_dy = self.b.op(Op::FNegate, f, &[dy]);
        let dy = self.pick_f(negative, neg_dy, dy);
        let neg_z = self.b.op(Op::FNegate, f, &[z]);
        let z = self.pick_f(negative, neg_z, z);
        // r (1 + dy (g + 1/2) / y) y^(z/2) y^(z/2).
        let g = self.fd(GMHALF + 0.5);
        let c = self.fop(Op::FMul, dy, g);
        let c = self.fop(Op::FMul, c, r);
        let c = self.fop(Op::FDiv, c, y);
        let r = self.fop(Op::FAdd, r, c);
        let hz = self.fop(Op::FMul, half, z);
        let p = self.call(pow, &[y, hz, zero]);
        let v = self.fop(Op::FMul, r, p);
        let v = self.fop(Op::FMul, v, p);
        // Exact factorials for positive integers to 23.
        let whole = self.gl(G::Floor, f, &[x]);
        let integer = self.test(Op::FOrdEqual, x, whole);
        let factorials: Vec<f64> = (0..23)
            .scan(1.0f64, |acc, k| {
                let v = *acc;
                *acc *= f64::from(k + 1);
                Some(if double { v } else { f64::from(v as f32) })
            })
            .collect();
        let twenty_three = self.fd(23.0);
        let one = self.fd(1.0);
        let in_table = self.test(Op::FOrdLessThanEqual, x, twenty_three);
        let clamped = self.gl(G::FClamp, f, &[x, one, twenty_three]);
        let index = self.b.op(Op::ConvertFToU, u, &[clamped]);
        let one_u = self.uc(1);
        let index = self.uop(Op::ISub, index, one_u);
        let factorial = self.table_value(&factorials, index);
        let boolean = self.b.module.type_bool();
        let exact = self.b.op(Op::LogicalAnd, boolean, &[integer, in_table]);
        let positive = self.test(Op::FOrdGreaterThan, x, zero);
        let exact = self.b.op(Op::LogicalAnd, boolean, &[exact, positive]);
        let v = self.pick_f(exact, factorial, v);
        // Overflow, underflow (a zero with Gamma's sign: negative where floor(x) is odd).
        let (overflow, underflow) = if double { (172.0, 184.0) } else { (36.0, 42.0) };
        let over = self.fd(overflow);
        let too_big = self.test(Op::FOrdGreaterThanEqual, x, over);
        let infinity = self.fd(f64::INFINITY);
        let v = self.pick_f(too_big, infinity, v);
        let under = self.fd(-underflow);
        let too_small = self.test(Op::FOrdLessThanEqual, x, under);
        let half_floor = self.fop(Op::FMul, whole, half);
        let half_x = self.fop(Op::FMul, x, half);
        let floor_half = self.gl(G::Floor, f, &[half_x]);
        let even = self.test(Op::FOrdEqual, half_floor, floor_half);
        let minus_zero = self.fd(-0.0);
        let signed_zero = self.pick_f(even, zero, minus_zero);
        let v = self.pick_f(too_small, signed_zero, v);
        // Tiny arguments and zeros: 1/x; negative integers and -inf: NaN; +inf: itself.
        let tiny = self.fd(if double { 2f64.powi(-54) } else { 2f64.powi(-25) });
        let is_tiny = self.test(Op::FOrdLessThan, ax, tiny);
        let reciprocal = self.fop(Op::FDiv, one, x);
        let v = self.pick_f(is_tiny, reciprocal, v);
        let pole = self.b.op(Op::LogicalAnd, boolean, &[integer, negative]);
        let nan = self.fd(f64::NAN);
        let v = self.pick_f(pole, nan, v);
        let plus_infinity = self.test(Op::FOrdEqual, x, infinity);
        self.pick_f(plus_infinity, infinity, v)
    }
}
