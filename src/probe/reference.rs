//! Probe operands with edge values, their bytes in each component type and layout, the CPU
//! result of `D = A * B + C`, and the comparison that names the first wrong element.

use super::kernel::Layouts;
use matbridge_translator::profile::{ComponentType, CoopMatShape};
use rand::{Rng, SeedableRng};
use std::fmt;

/// Logical operand values, row-major: A is M x K, B is K x N, C is M x N.
#[derive(Clone, Debug)]
pub struct Operands {
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    pub c: Vec<f64>,
}

/// The range of an integer component type.
fn int_range(t: ComponentType) -> (i128, i128) {
    let bits = t.bits();
    if t.is_signed_integer() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// A value of type `t` for an operand of a product of `k` terms: small multiples of 1/8 for
/// floats (exact in bf16 too), the whole range for 8- and 16-bit integers, moderate values for
/// wider integers.
fn value(rng: &mut impl Rng, t: ComponentType) -> f64 {
    if t.is_integer() {
        let (lo, hi) = int_range(t);
        let (lo, hi) = if t.bits() > 16 { (lo.max(-100_000), hi.min(100_000)) } else { (lo, hi) };
        rng.random_range(lo..=hi) as f64
    } else {
        rng.random_range(-32i32..=32) as f64 / 8.0
    }
}

/// Operands for `shape`: random values, and edges: A's first row at its type's largest value,
/// its second at its smallest, B's first column at its largest, C's first row near the result
/// type's limits where the result saturates.
pub fn operands(shape: &CoopMatShape, seed: u64) -> Operands {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let (m, n, k) = (shape.m as usize, shape.n as usize, shape.k as usize);
    let mut a: Vec<f64> = (0..m * k).map(|_| value(&mut rng, shape.a)).collect();
    let mut b: Vec<f64> = (0..k * n).map(|_| value(&mut rng, shape.b)).collect();
    let mut c: Vec<f64> = (0..m * n).map(|_| value(&mut rng, shape.c)).collect();
    let edges = |t: ComponentType| -> (f64, f64) {
        if t.is_integer() && t.bits() <= 16 {
            let (lo, hi) = int_range(t);
            (hi as f64, lo as f64)
        } else if t.is_integer() {
            (1000.0, if t.is_signed_integer() { -1000.0 } else { 0.0 })
        } else {
            // Large enough to matter, small enough that K products fit f16.
            (16.0, -0.0)
        }
    };
    let (a_hi, a_lo) = edges(shape.a);
    a[..k].fill(a_hi);
    if m > 1 {
        a[k..2 * k].fill(a_lo);
    }
    let (b_hi, _) = edges(shape.b);
    for row in 0..k {
        b[row * n] = b_hi;
    }
    if shape.saturating && shape.result.is_integer() {
        let (lo, hi) = int_range(shape.result);
        let (clo, chi) = int_range(shape.c);
        for (j, v) in c[..n].iter_mut().enumerate() {
            *v = match j % 3 {
                0 => (hi - 50).min(chi) as f64,
                1 => (lo + 50).max(clo) as f64,
                _ => 0.0,
            };
        }
    }
    Operands { a, b, c }
}

/// `values` (row-major `rows` x `cols`) in `layout` order, as the bytes of type `t`.
pub fn bytes(values: &[f64], rows: usize, cols: usize, layout: Layouts, t: ComponentType) -> Vec<u8> {
    let ordered: Vec<f64> = match layout {
        Layouts::RowMajor => values.to_vec(),
        Layouts::ColumnMajor => (0..cols).flat_map(|j| (0..rows).map(move |i| values[i * cols + j])).collect(),
    };
    let mut out = Vec::with_capacity(ordered.len() * t.bits() as usize / 8);
    for v in ordered {
        use ComponentType::*;
        match t {
            F16 => out.extend(half::f16::from_f64(v).to_le_bytes()),
            Bf16 => out.extend(half::bf16::from_f64(v).to_le_bytes()),
            F32 => out.extend((v as f32).to_le_bytes()),
            F64 => out.extend(v.to_le_bytes()),
            S8 | U8 => out.push(v as i128 as u8),
            S16 | U16 => out.extend((v as i128 as u16).to_le_bytes()),
            S32 | U32 => out.extend((v as i128 as u32).to_le_bytes()),
            S64 | U64 => out.extend((v as i128 as u64).to_le_bytes()),
            E4m3 | E5m2 => out.push(0),
        }
    }
    // Storage buffers are read in words: pad to one.
    out.resize(out.len().next_multiple_of(4), 0);
    out
}

/// The values of type `t` in `bytes`.
pub fn values(bytes: &[u8], t: ComponentType, count: usize) -> Vec<f64> {
    bytes.chunks_exact(t.bits() as usize / 8).take(count).map(|c| crate::elements::decode(t, c)).collect()
}

/// The operand values as the device sees them (rounded to their types).
fn rounded(values: &[f64], t: ComponentType) -> Vec<f64> {
    self::values(&bytes(values, values.len(), 1, Layouts::RowMajor, t), t, values.len())
}

/// A wrong element of D, with the inputs that produce it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Mismatch {
    pub layouts: &'static str,
    pub row: usize,
    pub col: usize,
    pub got: f64,
    pub expected: f64,
    pub a_row: Vec<f64>,
    pub b_col: Vec<f64>,
    pub c: f64,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let short = |v: &[f64]| -> String {
            let head: Vec<String> = v.iter().take(8).map(|x| format!("{x}")).collect();
            format!("[{}{}]", head.join(", "), if v.len() > 8 { ", ..." } else { "" })
        };
        write!(f, "{} operands: D[{}][{}] = {}, expected {} (A row {}, B column {}, C {})", self.layouts, self.row, self.col, self.got, self.expected, short(&self.a_row), short(&self.b_col), self.c)
    }
}

/// The CPU result of `D = A * B + C` (row-major) for the operands as the device sees them,
/// with each element's tolerance: zero for integer results (wrapping, or saturating where the
/// shape says), the accumulation's rounding for floats.
pub fn expected(shape: &CoopMatShape, ops: &Operands) -> Vec<(f64, f64)> {
    let (m, n, k) = (shape.m as usize, shape.n as usize, shape.k as usize);
    let (a, b, c) = (rounded(&ops.a, shape.a), rounded(&ops.b, shape.b), rounded(&ops.c, shape.c));
    let unit = match shape.result {
        ComponentType::F16 => 2f64.powi(-11),
        ComponentType::Bf16 => 2f64.powi(-8),
        ComponentType::F32 => 2f64.powi(-24),
        _ => 2f64.powi(-53),
    };
    let mut out = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            if shape.result.is_integer() {
                let sum: i128 = (0..k).map(|p| a[i * k + p] as i128 * b[p * n + j] as i128).sum::<i128>() + c[i * n + j] as i128;
                let (lo, hi) = int_range(shape.result);
                let v = if shape.saturating {
                    sum.clamp(lo, hi)
                } else {
                    let bits = shape.result.bits();
                    let wrapped = sum.rem_euclid(1i128 << bits);
                    if shape.result.is_signed_integer() && wrapped > hi {
                        wrapped - (1i128 << bits)
                    } else {
                        wrapped
                    }
                };
                out.push((v as f64, 0.0));
            } else {
                let terms = (0..k).map(|p| a[i * k + p] * b[p * n + j]);
                let magnitude: f64 = terms.clone().map(f64::abs).sum::<f64>() + c[i * n + j].abs();
                out.push((terms.sum::<f64>() + c[i * n + j], (k as f64 + 2.0) * unit * magnitude));
            }
        }
    }
    out
}

/// Compares D (row-major, as the device wrote it) with [`expected`]; the first element out of
/// tolerance is returned with its inputs.
pub fn check(shape: &CoopMatShape, ops: &Operands, layouts: Layouts, d: &[f64]) -> Result<(), Box<Mismatch>> {
    let (n, k) = (shape.n as usize, shape.k as usize);
    for (at, (want, tolerance)) in expected(shape, ops).into_iter().enumerate() {
        let got = d.get(at).copied().unwrap_or(f64::NAN);
        // NaN compares false: a NaN result is wrong.
        let close = (got - want).abs() <= tolerance;
        if !close {
            let (i, j) = (at / n, at % n);
            let (a, b, c) = (rounded(&ops.a, shape.a), rounded(&ops.b, shape.b), rounded(&ops.c, shape.c));
            return Err(Box::new(Mismatch {
                layouts: layouts.name(),
                row: i,
                col: j,
                got,
                expected: want,
                a_row: a[i * k..(i + 1) * k].to_vec(),
                b_col: (0..k).map(|p| b[p * n + j]).collect(),
                c: c[at],
            }));
        }
    }
    Ok(())
}
