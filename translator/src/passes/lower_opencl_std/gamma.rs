//! `tgamma`, `lgamma` and `lgamma_r` of halves, floats and doubles, which `GLSL.std.450` does
//! not have.
//!
//! `tgamma` (OpenCL: 16 units in the last place): the helper `matbridge.tgamma_f32` (`_f64`
//! for doubles) follows musl's `tgamma`, the Lanczos approximation with `g =
//! 6.0246800407767296` and Godfrey's rational sum of 13 terms:
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
//! `lgamma` (OpenCL sets no bound) and `lgamma_r` (which also stores Gamma's sign as an `int`):
//! the helper `matbridge.lgamma_f32` (`_f64`) returns `(lgamma x, sign)` in fdlibm's `lgamma_r`
//! scheme, every range computed and one selected: below 2, `-log x` (to 0.9) plus one of three
//! fits by where `x` lies (around 1 or 2, around Gamma's minimum 1.4616, near 0, 1 and 2); on
//! [2, 8) a fit on the fraction plus the log of the product of the shifts; to 2^58 Stirling's
//! series in `1/x`; beyond `x (log x - 1)`; exact zeros at 1 and 2. Negative `x` by reflection,
//! `log(pi / |x sin(pi x)|) - lgamma(|x|)` (so near its zeros on the negative axis the error is
//! absolute, about 2^-20 for floats), infinite at the poles; below 2^-70 `-log|x|`. Floats
//! take fdlibm's double coefficients rounded.
//!
//! Halves are computed as floats. Every float operation is `NoContraction`.
//! `tests/opencl_kernels.rs` (`gamma_to_opencl_accuracy`, `double_transcendentals_to_opencl_accuracy`)
//! holds the results to OpenCL's bound.

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

/// `1.0`'s bits: the leading coefficient of the denominators.
const ONE: u64 = 0x3ff0_0000_0000_0000;
/// fdlibm's `lgamma_r` coefficients: around the minimum `tc` of Gamma (`A` even and odd),
/// around `tc` in three interleaved parts (`T`), `U/V` near 1 and 2, `S/R` on [2, 3), the
/// Stirling tail `W`.
const A_EVEN: [u64; 6] = [0x3fb3_c467_e37d_b0c8, 0x3fb1_3e00_1a55_62a7, 0x3f7e_404f_b68f_efe8, 0x3f53_8a94_116f_3f5d, 0x3f2c_f2ec_ed10_e54d, 0x3efa_7074_428c_fa52];
const A_ODD: [u64; 6] = [0x3fd4_a34c_c4a6_0fad, 0x3f95_1322_ac92_547b, 0x3f67_add8_ccb7_926b, 0x3f40_b6c6_89b9_9c00, 0x3f1c_5088_987d_fb07, 0x3f07_858e_90a4_5837];
const T: [[u64; 5]; 3] = [
    [0x3fde_f72b_c8ee_38a2, 0xbfa0_c9a8_df35_b713, 0x3f78_fce0_e370_e344, 0xbf56_fe8e_bf2d_1af1, 0x3f34_af6d_6c0e_bbf7],
    [0xbfc2_e427_8dc6_c509, 0x3f92_66e7_970a_f9ec, 0xbf6e_2eff_b3e9_14d7, 0x3f4c_df0c_ef61_a8e9, 0xbf34_7f24_ecc3_8c38],
    [0x3fb0_8b42_94d5_419b, 0xbf85_1f9f_ba91_ec6a, 0x3f62_82d3_2e15_c915, 0xbf41_a610_9c73_e0ec, 0x3f35_fd3e_e8c2_d3f4],
];
const U: [u64; 6] = [0xbfb3_c467_e37d_b0c8, 0x3fe4_401e_8b00_5dff, 0x3ff7_475c_d119_bd6f, 0x3fef_4976_44ea_8450, 0x3fcd_4eae_f601_0924, 0x3f8b_678b_bf2b_ab09];
const V: [u64; 6] = [ONE, 0x4003_a5d7_c2bd_619c, 0x4001_0725_a42b_18f5, 0x3fe8_9dfb_e450_50af, 0x3fba_ae55_d653_7c88, 0x3f6a_5abb_57d0_cf61];
const S: [u64; 7] = [0xbfb3_c467_e37d_b0c8, 0x3fcb_848b_36e2_0878, 0x3fd4_d98f_4f13_9f59, 0x3fc2_bb9c_bee5_f2f7, 0x3f9b_481c_7e93_9961, 0x3f5e_26b6_7368_f239, 0x3f00_bfec_dd17_e945];
const R: [u64; 7] = [ONE, 0x3ff6_45a7_62c4_ab74, 0x3fe7_1a18_93d3_dcdc, 0x3fc6_01ed_ccfb_df27, 0x3f93_17ea_742e_d475, 0x3f49_7dda_ca41_a95b, 0x3ede_baf7_a5b3_8140];
const W: [u64; 7] = [0x3fda_cfe3_90c9_7d69, 0x3fb5_5555_5555_553b, 0xbf66_c16c_16b0_2e5c, 0x3f4a_019f_98cf_38b6, 0xbf43_80cb_8c0f_e741, 0x3f4b_67ba_4cda_d5d1, 0xbf5a_b89d_0b9e_43e4];
/// Gamma's minimum `tc`, `lgamma(tc)` and the rest of `lgamma(tc)` below it.
const TC: u64 = 0x3ff7_62d8_6356_be3f;
const TF: u64 = 0xbfbf_19b9_bcc3_8a42;
const TT: u64 = 0xbc50_c7ca_a48a_971f;

impl Lower<'_, '_> {
    /// `lgamma` of `x` (a half, float or double scalar or vector of type `ty`), with the sign
    /// of Gamma as 32-bit integers (OpenCL's `int`, `intn`) stored through `sign` for
    /// `lgamma_r`; `None` for other types.
    pub(super) fn precise_log_gamma(&mut self, ty: Word, x: Word, sign: Option<Word>) -> Option<Word> {
        let width = self.helper_width(ty)?;
        let log = self.unary_helper(width, "log", |s, x| s.logarithm(CL::log, x));
        let sincos = if width == 64 { self.double_sincos_helper() } else { self.sincos_helper() };
        let fty = self.b.module.type_float(width);
        let v2 = self.b.module.type_vector(fty, 2);
        let helper = self.helper_of_width(width, &format!("matbridge.lgamma_f{width}"), v2, &[fty], |s, p| s.log_gamma(log, sincos, p[0]));
        let [value, sign_value] = self.per_component_parts(ty, &[x], helper, 2)[..] else { return None };
        if let Some(pointer) = sign {
            let (_, n, _, _) = self.shape(ty);
            let int = self.int32(n);
            let signs = self.op(Op::ConvertFToS, int, &[sign_value]);
            self.b.store(pointer, signs);
        }
        Some(value)
    }

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
    /// unsigned integer, clamped below `values.len()`).
    fn table_value(&mut self, values: &[f64], index: Word) -> Word {
        let (f, u) = (self.f(), self.u());
        let constants: Vec<Word> = values.iter().map(|v| self.fd(*v)).collect();
        let table = self.constant_table(f, &constants);
        let last = self.uc(values.len() as u32 - 1);
        let index = self.gl(G::UMin, u, &[index, last]);
        self.table_element(table, f, index)
    }

    /// `lgamma`'s helper value, `(log |Gamma(x)|, sign of Gamma(x))`: fdlibm's `lgamma_r`
    /// with every range computed and one selected (see the module comment).
    fn log_gamma(&mut self, log: Word, sincos: Word, x: Word) -> Word {
        let f = self.f();
        let c = |s: &mut Self, bits: u64| s.fd(f64::from_bits(bits));
        let ax = self.gl(G::FAbs, f, &[x]);
        let zero = self.fd(0.0);
        let (one, two, half) = (self.fd(1.0), self.fd(2.0), self.fd(0.5));
        let negative = self.test(Op::FOrdLessThan, x, zero);
        let log_x = self.call(log, &[ax]);
        let minus_log_x = self.b.op(Op::FNegate, f, &[log_x]);
        // Negative x: nadj = log(pi / |x sin(pi x)|); Gamma is negative where sin(pi |x|) > 0.
        let t = self.sin_pi(sincos, ax);
        let sine_positive = self.test(Op::FOrdGreaterThan, t, zero);
        let at = self.gl(G::FAbs, f, &[t]);
        let pole = self.test(Op::FOrdEqual, t, zero);
        let tx = self.fop(Op::FMul, at, ax);
        let pi = self.fd(std::f64::consts::PI);
        let ratio = self.fop(Op::FDiv, pi, tx);
        let nadj = self.call(log, &[ratio]);
        // Below 2: y and one of three polynomials by where |x| lies.
        let lt = |s: &mut Self, v: f64| {
            let k = s.fd(v);
            s.test(Op::FOrdLessThan, ax, k)
        };
        let low = lt(self, 0.900_000_095_367_431_6);
        let tc = c(self, TC);
        let tc_less_one = self.fd(f64::from_bits(TC) - 1.0);
        // i = 0: y = 1 - x (low) or 2 - x, A(y).
        let from_one = self.fop(Op::FSub, one, ax);
        let from_two = self.fop(Op::FSub, two, ax);
        let y0 = self.pick_f(low, from_one, from_two);
        let z = self.fop(Op::FMul, y0, y0);
        let p1 = self.horner_of_bits(z, &A_EVEN);
        let p2 = self.horner_of_bits(z, &A_ODD);
        let p2 = self.fop(Op::FMul, z, p2);
        let p = self.fop(Op::FMul, y0, p1);
        let p = self.fop(Op::FAdd, p, p2);
        let hy = self.fop(Op::FMul, half, y0);
        let r0 = self.fop(Op::FSub, p, hy);
        // i = 1: y = x - tc (shifted by 1 when low), T(y).
        let shifted = self.fop(Op::FSub, ax, tc_less_one);
        let centred = self.fop(Op::FSub, ax, tc);
        let y1 = self.pick_f(low, shifted, centred);
        let z = self.fop(Op::FMul, y1, y1);
        let w = self.fop(Op::FMul, z, y1);
        let [q1, q2, q3] = T.map(|part| self.horner_of_bits(w, &part));
        let yq3 = self.fop(Op::FMul, y1, q3);
        let q = self.fop(Op::FAdd, q2, yq3);
        let wq = self.fop(Op::FMul, w, q);
        let tt = c(self, TT);
        let inner = self.fop(Op::FSub, tt, wq);
        let zq = self.fop(Op::FMul, z, q1);
        let p = self.fop(Op::FSub, zq, inner);
        let tf = c(self, TF);
        let r1 = self.fop(Op::FAdd, tf, p);
        // i = 2: y = x (low) or x - 1, U(y)/V(y).
        let less_one = self.fop(Op::FSub, ax, one);
        let y2 = self.pick_f(low, ax, less_one);
        let u = self.horner_of_bits(y2, &U);
        let u = self.fop(Op::FMul, y2, u);
        let v = self.horner_of_bits(y2, &V);
        let uv = self.fop(Op::FDiv, u, v);
        let hy = self.fop(Op::FMul, half, y2);
        let r2 = self.fop(Op::FSub, uv, hy);
        // fdlibm's cut points (high words 0x3fe76944, 0x3fcda661; 0x3ffbb4c3, 0x3ff3b4c4).
        let first = self.fd(0.731_599_807_739_257_8);
        let second = self.fd(0.231_639_981_269_836_43);
        let first_high = self.fd(1.731_631_278_991_699_2);
        let second_high = self.fd(1.231_632_232_666_015_6);
        let first = self.pick_f(low, first, first_high);
        let second = self.pick_f(low, second, second_high);
        let in_first = self.test(Op::FOrdGreaterThanEqual, ax, first);
        let in_second = self.test(Op::FOrdGreaterThanEqual, ax, second);
        let later = self.pick_f(in_second, r1, r2);
        let poly = self.pick_f(in_first, r0, later);
        let base = self.pick_f(low, minus_log_x, zero);
        let below_two = self.fop(Op::FAdd, base, poly);
        // [2, 8): i = floor(x), y = x - i, S(y)/R(y) + y/2, plus log((y + 2)...(y + i - 1)).
        let i = self.gl(G::Floor, f, &[ax]);
        let y = self.fop(Op::FSub, ax, i);
        let p = self.horner_of_bits(y, &S);
        let p = self.fop(Op::FMul, y, p);
        let q = self.horner_of_bits(y, &R);
        let pq = self.fop(Op::FDiv, p, q);
        let hy = self.fop(Op::FMul, half, y);
        let mut r = self.fop(Op::FAdd, hy, pq);
        let mut product = one;
        for k in 2..7 {
            let kk = self.fd(f64::from(k));
            let factor = self.fop(Op::FAdd, y, kk);
            let factor_used = self.test(Op::FOrdGreaterThan, i, kk);
            let factor = self.pick_f(factor_used, factor, one);
            product = self.fop(Op::FMul, product, factor);
        }
        let log_product = self.call(log, &[product]);
        r = self.fop(Op::FAdd, r, log_product);
        let two_to_eight = r;
        // [8, 2^58): (x - 1/2)(log x - 1) + W(1/x); beyond x (log x - 1).
        let inverse = self.fop(Op::FDiv, one, ax);
        let inverse_squared = self.fop(Op::FMul, inverse, inverse);
        let tail = self.horner_of_bits(inverse_squared, &W[1..]);
        let tail = self.fop(Op::FMul, inverse, tail);
        let w0 = c(self, W[0]);
        let tail = self.fop(Op::FAdd, w0, tail);
        let log_less_one = self.fop(Op::FSub, log_x, one);
        let x_less_half = self.fop(Op::FSub, ax, half);
        let stirling = self.fop(Op::FMul, x_less_half, log_less_one);
        let stirling = self.fop(Op::FAdd, stirling, tail);
        let huge = self.fop(Op::FMul, ax, log_less_one);
        // Selected by range.
        let big = lt(self, 2f64.powi(58));
        let large = self.pick_f(big, stirling, huge);
        let eight = lt(self, 8.0);
        let value = self.pick_f(eight, two_to_eight, large);
        let below = lt(self, 2.0);
        let value = self.pick_f(below, below_two, value);
        let is_one = self.test(Op::FOrdEqual, ax, one);
        let is_two = self.test(Op::FOrdEqual, ax, two);
        let boolean = self.b.module.type_bool();
        let exact = self.b.op(Op::LogicalOr, boolean, &[is_one, is_two]);
        let value = self.pick_f(exact, zero, value);
        // Negative x: nadj - lgamma(|x|), infinite at the poles.
        let reflected = self.fop(Op::FSub, nadj, value);
        let infinity = self.fd(f64::INFINITY);
        let reflected = self.pick_f(pole, infinity, reflected);
        let value = self.pick_f(negative, reflected, value);
        let minus_one = self.fd(-1.0);
        let gamma_negative = self.b.op(Op::LogicalAnd, boolean, &[negative, sine_positive]);
        let sign = self.pick_f(gamma_negative, minus_one, one);
        // Tiny |x|: -log|x|, Gamma with x's sign; infinities +inf, NaNs NaN.
        let tiny = lt(self, 2f64.powi(-70));
        let value = self.pick_f(tiny, minus_log_x, value);
        let tiny_sign = self.copysign(one, x);
        let sign = self.pick_f(tiny, tiny_sign, sign);
        let square = self.fop(Op::FMul, x, x);
        let finite = self.test(Op::FOrdLessThan, ax, infinity);
        let value = self.pick_f(finite, value, square);
        let v2 = self.b.module.type_vector(f, 2);
        self.b.op(Op::CompositeConstruct, v2, &[value, sign])
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
