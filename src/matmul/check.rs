//! Cross-checking a result against the CPU reference, with per-dtype tolerances.
//!
//! The reference for element (i, j) is `alpha * sum_p a_ip * b_pj + beta * c_ij` computed in f64
//! from the inputs. A result passes when, for every checked element,
//!
//! `|got - ref| <= (k + 2) * (u_acc * scale + eta_acc) + u_out * |ref| + eta_out`, with
//! `scale = |alpha| * sum_p |a_ip * b_pj| + |beta * c_ij|`,
//!
//! where `u_acc` is the unit roundoff of the accumulator (2^-24 for f32, 2^-11 for f16) and
//! `u_out` that of the output type (2^-24 f32, 2^-11 f16, 2^-8 bf16). The `eta` terms bound the
//! absolute error of results below the normal range: `eta_acc` is the accumulator's smallest
//! normal number (Vulkan lets drivers flush subnormal intermediates to zero), `eta_out` half the
//! output type's smallest subnormal (the output is rounded, not flushed). This is the classic
//! worst-case bound for a k-term recursive sum with underflow (any summation order satisfies
//! it), so a correct kernel cannot fail it and a wrong element or index fails it. Integer results
//! must be exact (wrap-around in 32 bits included).
//!
//! Small problems (up to 2^18 outputs) are checked in full; larger ones on a seeded sample of
//! whole rows and columns plus the four corners.

use super::{AccType, DType, HostData, MatmulDesc, Resolved};
use crate::error::{Error, Result};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde::Serialize;

/// The outcome of a check.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CheckReport {
    pub max_abs_error: f64,
    pub max_rel_error: f64,
    /// Largest ratio of an element's error to its allowed bound (<= 1 passes).
    pub worst_ratio: f64,
    pub checked: usize,
    pub pass: bool,
}

/// The floating-point terms of the bound for one type: its unit roundoff, its smallest normal
/// number and its smallest subnormal (all 0 for integers).
fn float_terms(bits_mantissa: i32, min_exp: i32) -> (f64, f64, f64) {
    (2f64.powi(-bits_mantissa - 1), 2f64.powi(min_exp), 2f64.powi(min_exp - bits_mantissa))
}

/// The bound's terms: (u_acc, eta_acc) for the accumulator (unit roundoff, smallest normal) and
/// (u_out, eta_out) for the output (unit roundoff, half the smallest subnormal).
pub fn error_terms(desc: &MatmulDesc) -> ((f64, f64), (f64, f64)) {
    let acc = match desc.acc {
        AccType::F32 => float_terms(23, -126),
        AccType::F16 => float_terms(10, -14),
        AccType::S32 => (0.0, 0.0, 0.0),
    };
    let out = match desc.out {
        DType::F32 => float_terms(23, -126),
        DType::F16 => float_terms(10, -14),
        DType::Bf16 => float_terms(7, -126),
        _ => (0.0, 0.0, 0.0),
    };
    ((acc.0, acc.1), (out.0, out.2 / 2.0))
}

/// Compares `got` (C after the matmul) with the reference computed from `a`, `b` and `c_before`.
pub fn check(desc: &MatmulDesc, a: &HostData, b: &HostData, c_before: &HostData, got: &HostData, seed: u64) -> Result<CheckReport> {
    check_resolved(desc, &desc.resolve()?, a, b, c_before, got, seed)
}

/// [`check`] with `desc` resolved as `r`.
pub(crate) fn check_resolved(desc: &MatmulDesc, r: &Resolved, a: &HostData, b: &HostData, c_before: &HostData, got: &HostData, seed: u64) -> Result<CheckReport> {
    if got.len() < r.c.len {
        return Err(Error::SizeMismatch { operand: "C (result)", expected: r.c.len, given: got.len() });
    }
    let (m, n, k) = (desc.m, desc.n, desc.k);
    let mut cells: Vec<(usize, usize, usize)> = Vec::new();
    let total = m * n * desc.batch;
    if total <= 1 << 18 {
        for bt in 0..desc.batch {
            for i in 0..m {
                for j in 0..n {
                    cells.push((bt, i, j));
                }
            }
        }
    } else {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let lines = (((1usize << 26) / (k.max(1) * (m + n))).clamp(2, 16)).min(m.min(n));
        for _ in 0..lines {
            let bt = rng.random_range(0..desc.batch);
            let i = rng.random_range(0..m);
            let j = rng.random_range(0..n);
            cells.extend((0..n).map(|jj| (bt, i, jj)));
            cells.extend((0..m).map(|ii| (bt, ii, j)));
        }
        let last = desc.batch - 1;
        cells.extend([(0, 0, 0), (last, m - 1, n - 1), (0, 0, n - 1), (last, m - 1, 0)]);
    }
    let ((u_acc, eta_acc), (u_out, eta_out)) = error_terms(desc);
    let integer = desc.dtype.is_integer();
    let (alpha, beta) = (desc.alpha as f64, desc.beta as f64);
    let errors: Vec<(f64, f64, f64)> = cells
        .par_iter()
        .map(|&(bt, i, j)| {
            let ci = bt * r.c.batch + i * r.c.row + j * r.c.col;
            let got_v = got.get(ci);
            if integer {
                let mut s: i32 = 0;
                for p in 0..k {
                    let x = a.get(bt * r.a.batch + i * r.a.row + p * r.a.col) as i32;
                    let y = b.get(bt * r.b.batch + p * r.b.row + j * r.b.col) as i32;
                    s = s.wrapping_add(x.wrapping_mul(y));
                }
                let want = (alpha as i32).wrapping_mul(s).wrapping_add((beta as i32).wrapping_mul(c_before.get(ci) as i32));
                let err = (got_v - want as f64).abs();
                return (err, err / (want as f64).abs().max(1.0), if err == 0.0 { 0.0 } else { f64::INFINITY });
            }
            let (mut s, mut scale) = (0.0f64, 0.0f64);
            for p in 0..k {
                let x = a.get(bt * r.a.batch + i * r.a.row + p * r.a.col);
                let y = b.get(bt * r.b.batch + p * r.b.row + j * r.b.col);
                s += x * y;
                scale += (x * y).abs();
            }
            let cb = if beta == 0.0 { 0.0 } else { c_before.get(ci) };
            let want = alpha * s + beta * cb;
            let scale = alpha.abs() * scale + (beta * cb).abs();
            let bound = (k as f64 + 2.0) * (u_acc * scale + eta_acc) + u_out * want.abs() + eta_out + f64::MIN_POSITIVE;
            let err = if got_v.is_nan() != want.is_nan() { f64::INFINITY } else { (got_v - want).abs() };
            (err, err / want.abs().max(1e-30), err / bound)
        })
        .collect();
    let mut report = CheckReport { max_abs_error: 0.0, max_rel_error: 0.0, worst_ratio: 0.0, checked: cells.len(), pass: true };
    for (abs, rel, ratio) in errors {
        report.max_abs_error = report.max_abs_error.max(abs);
        report.max_rel_error = report.max_rel_error.max(rel);
        report.worst_ratio = report.worst_ratio.max(ratio);
    }
    report.pass = report.worst_ratio <= 1.0;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::cpu;

    #[test]
    fn error_terms_are_the_types_roundoffs_and_underflows() {
        let mut desc = MatmulDesc::new(1, 1, 1, DType::F16);
        desc.out = DType::F16;
        assert_eq!(error_terms(&desc), ((2f64.powi(-24), 2f64.powi(-126)), (2f64.powi(-11), 2f64.powi(-25))));
        desc.acc = AccType::F16;
        desc.out = DType::Bf16;
        assert_eq!(error_terms(&desc), ((2f64.powi(-11), 2f64.powi(-14)), (2f64.powi(-8), 2f64.powi(-134))));
    }

    #[test]
    fn cpu_results_pass_and_a_wrong_element_fails() {
        for dtype in [DType::F32, DType::F16, DType::Bf16, DType::S8] {
            let desc = MatmulDesc::new(33, 17, 65, dtype);
            let r = desc.resolve().unwrap();
            let vals = |len: usize, s: usize| -> Vec<f32> { (0..len).map(|i| ((i * 13 + s) % 9) as f32 - 4.0).collect() };
            let a = HostData::from_f32(dtype, &vals(r.a.len, 1));
            let b = HostData::from_f32(dtype, &vals(r.b.len, 2));
            let c0 = HostData::from_f32(desc.out, &vals(r.c.len, 3));
            let mut c = c0.clone();
            cpu::matmul(&desc, &a, &b, &mut c).unwrap();
            let rep = check(&desc, &a, &b, &c0, &c, 1).unwrap();
            assert!(rep.pass, "{dtype}: {rep:?}");
            assert_eq!(rep.checked, 33 * 17);
            let mut wrong = c.to_f32();
            wrong[40] += 1.0;
            let wrong = HostData::from_f32(desc.out, &wrong);
            assert!(!check(&desc, &a, &b, &c0, &wrong, 1).unwrap().pass, "{dtype}");
        }
    }
}
