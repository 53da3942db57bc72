//! `erf` and `erfc` of doubles to OpenCL's accuracy (16 units in the last place), which
//! `GLSL.std.450` has for no width and `special.rs` computes in f32 for floats and halves. One
//! helper, `matbridge.erf_f64`, returns `(erf x, erfc x)` in fdlibm's `s_erf.c` scheme, every
//! range computed and the one `|x|` falls in selected:
//!
//! - below 0.84375: `erf = x + x P(x^2)/Q(x^2)`; `erfc = 1 - erf` below 1/4 and `1/2 - (x -
//!   1/2 + x P/Q)` above, where `1 - erf` would cancel;
//! - to 1.25: `s = |x| - 1`, `erf = erx + P(s)/Q(s)` and `erfc = (1 - erx) - P/Q`, `erx` the
//!   first 24 bits of `erf(1)`;
//! - beyond: `s = 1/x^2`, `erfc = exp(-z^2 - 0.5625) exp((z - x)(z + x) + R(s)/S(s)) / |x|`
//!   with `z` the first 21 bits of `|x|` (so `z^2` is exact), `R/S` one of two fits split at
//!   1/0.35, through `exponentials.rs`' double `exp`; `erf = 1 - erfc`, 1 from 6 up and `erfc`
//!   0 from 28 up.
//!
//! Negative `x`: `erf` is odd (`-0` stays `-0`), `erfc(x) = 2 - erfc(|x|)` from 0.84375 up.
//! Infinities give `+-1` and `0` or `2`; NaNs stay NaN. Every float operation is
//! `NoContraction`. `tests/opencl_kernels.rs`, `double_transcendentals_to_opencl_accuracy`,
//! holds the results to OpenCL's bound against the `libm` crate.

use super::scalar::Scalar;
use super::Lower;
use spirv::{GlslStd450Op as G, Op, OpenclStd100Op as CL, Word};

const NAME: &str = "matbridge.erf_f64";
/// `1.0`'s bits: the leading coefficient of the denominators.
const ONE: u64 = 0x3ff0_0000_0000_0000;
/// `erf(1)`'s first 24 bits.
const ERX: u64 = 0x3feb_0ac1_6000_0000;
/// Below 0.84375: `P(z)` and `Q(z)` of `x^2`.
const PP: [u64; 5] = [0x3fc0_6eba_8214_db68, 0xbfd4_cd7d_691c_b913, 0xbf9d_2a51_dbd7_194f, 0xbf77_a291_2366_68e4, 0xbef8_ead6_1200_16ac];
const QQ: [u64; 6] = [ONE, 0x3fd9_7779_cdda_dc09, 0x3fb0_a54c_5536_ceba, 0x3f74_d022_c4d3_6b0f, 0x3f21_5dc9_221c_1a10, 0xbed0_9c43_42a2_6120];
/// To 1.25: `P(s)` and `Q(s)` of `|x| - 1`.
const PA: [u64; 7] = [0xbf63_59b8_bef7_7538, 0x3fda_8d00_ad92_b34d, 0xbfd7_d240_fbb8_c3f1, 0x3fd4_5fca_8051_20e4, 0xbfbc_6398_3d3e_28ec, 0x3fa2_2a36_5997_95eb, 0xbf61_bf38_0a96_073f];
const QA: [u64; 7] = [ONE, 0x3fbb_3e66_18ee_e323, 0x3fe1_4af0_92eb_6f33, 0x3fb2_635c_d99f_e9a7, 0x3fc0_2660_e763_351f, 0x3f8b_edc2_6b51_dd1c, 0x3f88_8b54_5735_151d];
/// To 1/0.35: `R(s)` and `S(s)` of `1/x^2`.
const RA: [u64; 8] =
    [0xbf84_3412_600d_6435, 0xbfe6_3416_e4ba_7360, 0xc025_1e04_41b0_e726, 0xc04f_300a_e4cb_a38d, 0xc064_4cb1_8428_2266, 0xc067_135c_ebcc_abb2, 0xc054_5265_57e4_d2f2, 0xc023_a0ef_c69a_c25c];
const SA: [u64; 9] =
    [ONE, 0x4033_a6b9_bd70_7687, 0x4061_350c_526a_e721, 0x407b_290d_d58a_1a71, 0x4084_2b19_21ec_2868, 0x407a_d021_5770_0314, 0x405b_28a3_ee48_ae2c, 0x401a_47ef_8e48_4a93, 0xbfae_eff2_ee74_9a62];
/// From 1/0.35.
const RB: [u64; 7] = [0xbf84_3412_39e8_6f4a, 0xbfe9_93ba_70c2_85de, 0xc031_c209_555f_995a, 0xc064_145d_43c5_ed98, 0xc083_ec88_1375_f228, 0xc090_0461_6a2e_5992, 0xc07e_384e_9bdc_383f];
const SB: [u64; 8] = [ONE, 0x403e_568b_261d_5190, 0x4074_5cae_221b_9f0a, 0x4098_02eb_189d_5118, 0x40a8_ffb7_688c_246a, 0x40a3_f219_cedf_3be6, 0x407d_a874_e79f_e763, 0xc036_70e2_4271_2d62];

impl Lower<'_, '_> {
    /// `erf` (`CL::erf`) or `erfc` of `x`, a double scalar or vector of type `ty`.
    pub(super) fn double_erf(&mut self, op: CL, ty: Word, x: Word) -> Word {
        let exp = self.unary_helper(64, "exp", |s, x| s.exponential(CL::exp, x));
        let scalar = self.shape(ty).0;
        let v2 = self.b.module.type_vector(scalar, 2);
        let helper = self.helper_of_width(64, NAME, v2, &[scalar], |s, p| s.erf_erfc(exp, p[0]));
        let parts = self.per_component_parts(ty, &[x], helper, 2);
        parts[usize::from(op != CL::erf)]
    }
}

impl Scalar<'_, '_> {
    /// The helper's value: `dvec2(erf x, erfc x)` (see the module comment).
    fn erf_erfc(&mut self, exp: Word, x: Word) -> Word {
        let f = self.f();
        let ax = self.gl(G::FAbs, f, &[x]);
        let zero = self.fd(0.0);
        let negative = self.test(Op::FOrdLessThan, x, zero);
        let (one, half) = (self.fd(1.0), self.fd(0.5));
        // Below 0.84375.
        let z = self.fop(Op::FMul, x, x);
        let p = self.horner_of_bits(z, &PP);
        let q = self.horner_of_bits(z, &QQ);
        let y = self.fop(Op::FDiv, p, q);
        let xy = self.fop(Op::FMul, x, y);
        let erf_small = self.fop(Op::FAdd, x, xy);
        let erfc_near_zero = self.fop(Op::FSub, one, erf_small);
        let shifted = self.fop(Op::FSub, x, half);
        let shifted = self.fop(Op::FAdd, shifted, xy);
        let erfc_quarter_up = self.fop(Op::FSub, half, shifted);
        let quarter = self.fd(0.25);
        let below_quarter = self.test(Op::FOrdLessThan, x, quarter);
        let erfc_small = self.pick_f(below_quarter, erfc_near_zero, erfc_quarter_up);
        // To 1.25.
        let s = self.fop(Op::FSub, ax, one);
        let p = self.horner_of_bits(s, &PA);
        let q = self.horner_of_bits(s, &QA);
        let pq = self.fop(Op::FDiv, p, q);
        let erx = self.fd(f64::from_bits(ERX));
        let erf_mid = self.fop(Op::FAdd, erx, pq);
        let one_less = self.fd(1.0 - f64::from_bits(ERX));
        let erfc_mid = self.fop(Op::FSub, one_less, pq);
        // Beyond.
        let square = self.fop(Op::FMul, ax, ax);
        let t = self.fop(Op::FDiv, one, square);
        let (ra, sa) = (self.horner_of_bits(t, &RA), self.horner_of_bits(t, &SA));
        let (rb, sb) = (self.horner_of_bits(t, &RB), self.horner_of_bits(t, &SB));
        let split = self.fd(1.0 / 0.35);
        let near = self.test(Op::FOrdLessThan, ax, split);
        let r = self.pick_f(near, ra, rb);
        let big_s = self.pick_f(near, sa, sb);
        let high = self.high_word(ax);
        let zt = self.double_of_high_word(high);
        let zz = self.fop(Op::FMul, zt, zt);
        let neg_zz = self.b.op(Op::FNegate, f, &[zz]);
        let offset = self.fd(0.5625);
        let first = self.fop(Op::FSub, neg_zz, offset);
        let first = self.call(exp, &[first]);
        let difference = self.fop(Op::FSub, zt, ax);
        let sum = self.fop(Op::FAdd, zt, ax);
        let correction = self.fop(Op::FMul, difference, sum);
        let rs = self.fop(Op::FDiv, r, big_s);
        let correction = self.fop(Op::FAdd, correction, rs);
        let second = self.call(exp, &[correction]);
        let product = self.fop(Op::FMul, first, second);
        let erfc_tail = self.fop(Op::FDiv, product, ax);
        let far = self.fd(28.0);
        let underflows = self.test(Op::FOrdGreaterThanEqual, ax, far);
        let erfc_tail = self.pick_f(underflows, zero, erfc_tail);
        let erf_tail = self.fop(Op::FSub, one, erfc_tail);
        let six = self.fd(6.0);
        let whole = self.test(Op::FOrdGreaterThanEqual, ax, six);
        let erf_tail = self.pick_f(whole, one, erf_tail);
        // Selected by range, then signed.
        let limit = self.fd(1.25);
        let mid = self.test(Op::FOrdLessThan, ax, limit);
        let erf_abs = self.pick_f(mid, erf_mid, erf_tail);
        let erfc_abs = self.pick_f(mid, erfc_mid, erfc_tail);
        let neg_erf = self.b.op(Op::FNegate, f, &[erf_abs]);
        let erf_signed = self.pick_f(negative, neg_erf, erf_abs);
        let two = self.fd(2.0);
        let reflected = self.fop(Op::FSub, two, erfc_abs);
        let erfc_signed = self.pick_f(negative, reflected, erfc_abs);
        let small_limit = self.fd(0.84375);
        let small = self.test(Op::FOrdLessThan, ax, small_limit);
        let erf = self.pick_f(small, erf_small, erf_signed);
        let erfc = self.pick_f(small, erfc_small, erfc_signed);
        // Infinities: the limits (the tail's products are NaN there).
        let infinity = self.fd(f64::INFINITY);
        let infinite = self.test(Op::FOrdEqual, ax, infinity);
        let minus_one = self.fd(-1.0);
        let erf_limit = self.pick_f(negative, minus_one, one);
        let erfc_limit = self.pick_f(negative, two, zero);
        let erf = self.pick_f(infinite, erf_limit, erf);
        let erfc = self.pick_f(infinite, erfc_limit, erfc);
        let v2 = self.b.module.type_vector(f, 2);
        self.b.op(Op::CompositeConstruct, v2, &[erf, erfc])
    }
}
