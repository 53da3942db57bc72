//! The CPU path: the fallback when there is no GPU, built on the `gemm` crate.
//!
//! Floating-point inputs are widened to f32 (exact for f16 and bf16) and multiplied by `gemm`'s
//! f32 kernel with f32 accumulation, then rounded once to the output type. Integer inputs are
//! widened to i32 and accumulated in wrapping i32 arithmetic, as the GPU kernels do.

use super::{DType, HostData, MatmulDesc, Resolved};
use crate::error::{Error, Result};
use rayon::prelude::*;

/// Computes `desc` on the CPU, updating `c` in place.
pub fn matmul(desc: &MatmulDesc, a: &HostData, b: &HostData, c: &mut HostData) -> Result<()> {
    let r = desc.resolve()?;
    for (operand, expected, data, len) in [("A", desc.dtype, a, r.a.len), ("B", desc.dtype, b, r.b.len), ("C", desc.out, &*c, r.c.len)] {
        if data.dtype != expected {
            return Err(Error::DTypeMismatch { operand, expected, given: data.dtype });
        }
        if data.len() < len {
            return Err(Error::SizeMismatch { operand, expected: len, given: data.len() });
        }
    }
    matmul_resolved(desc, &r, a, b, c)
}

/// [`matmul`] with `desc` resolved as `r` and the operands' types and sizes checked by the
/// caller.
pub(crate) fn matmul_resolved(desc: &MatmulDesc, r: &Resolved, a: &HostData, b: &HostData, c: &mut HostData) -> Result<()> {
    let r = *r;
    if desc.m == 0 || desc.n == 0 || desc.batch == 0 {
        return Ok(());
    }
    if desc.dtype.is_integer() {
        let out = int_matmul(desc, &r, &a.to_i32(), &b.to_i32(), c.to_i32());
        *c = HostData { dtype: DType::S32, bytes: bytemuck::cast_slice(&out).to_vec() };
    } else if desc.dtype == DType::F32 && desc.out == DType::F32 {
        // f32 in and out: work on the bytes in place when they are 4-byte aligned (no copies).
        let a32: std::borrow::Cow<'_, [f32]> = match bytemuck::try_cast_slice(&a.bytes) {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(_) => std::borrow::Cow::Owned(a.to_f32()),
        };
        let b32: std::borrow::Cow<'_, [f32]> = match bytemuck::try_cast_slice(&b.bytes) {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(_) => std::borrow::Cow::Owned(b.to_f32()),
        };
        match bytemuck::try_cast_slice_mut::<u8, f32>(&mut c.bytes) {
            Ok(c32) => f32_matmul(desc, &r, &a32, &b32, c32),
            Err(_) => {
                let mut cf = c.to_f32();
                f32_matmul(desc, &r, &a32, &b32, &mut cf);
                *c = HostData::from_f32(DType::F32, &cf);
            }
        }
    } else {
        let mut cf = c.to_f32();
        f32_matmul(desc, &r, &a.to_f32(), &b.to_f32(), &mut cf);
        *c = HostData::from_f32(desc.out, &cf);
    }
    Ok(())
}

/// f32 GEMM over strided, batched operands (lengths already checked).
pub fn f32_matmul(desc: &MatmulDesc, r: &Resolved, a: &[f32], b: &[f32], c: &mut [f32]) {
    let (m, n, k) = (desc.m, desc.n, desc.k);
    for batch in 0..desc.batch {
        let (oa, ob, oc) = (batch * r.a.batch, batch * r.b.batch, batch * r.c.batch);
        if k == 0 {
            for i in 0..m {
                for j in 0..n {
                    let e = &mut c[oc + i * r.c.row + j * r.c.col];
                    *e = if desc.beta == 0.0 { 0.0 } else { desc.beta * *e };
                }
            }
            continue;
        }
        // SAFETY: `resolve` and the length checks guarantee that every element addressed by
        // (offset + i*row + j*col) for i < rows, j < cols lies inside the slices; C's batches do
        // not overlap, and `c` is borrowed mutably for the call.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                c.as_mut_ptr().add(oc),
                r.c.col as isize,
                r.c.row as isize,
                desc.beta != 0.0,
                a.as_ptr().add(oa),
                r.a.col as isize,
                r.a.row as isize,
                b.as_ptr().add(ob),
                r.b.col as isize,
                r.b.row as isize,
                desc.beta,
                desc.alpha,
                false,
                false,
                false,
                gemm::Parallelism::Rayon(0),
            );
        }
    }
}

/// Integer GEMM with wrapping i32 accumulation.
fn int_matmul(desc: &MatmulDesc, r: &Resolved, a: &[i32], b: &[i32], mut c: Vec<i32>) -> Vec<i32> {
    let (m, n, k) = (desc.m, desc.n, desc.k);
    let (alpha, beta) = (desc.alpha as i32, desc.beta as i32);
    for batch in 0..desc.batch {
        let (oa, ob, oc) = (batch * r.a.batch, batch * r.b.batch, batch * r.c.batch);
        // Pack op(A) as m x k rows and op(B) as n x k rows so that every dot product is contiguous.
        let pa: Vec<i32> = (0..m * k).map(|x| a[oa + (x / k.max(1)) * r.a.row + (x % k.max(1)) * r.a.col]).collect();
        let pb: Vec<i32> = (0..n * k).map(|x| b[ob + (x % k.max(1)) * r.b.row + (x / k.max(1)) * r.b.col]).collect();
        let rows: Vec<Vec<i32>> = (0..m)
            .into_par_iter()
            .map(|i| {
                let ra = &pa[i * k..(i + 1) * k];
                (0..n).map(|j| ra.iter().zip(&pb[j * k..(j + 1) * k]).fold(0i32, |s, (x, y)| s.wrapping_add(x.wrapping_mul(*y)))).collect()
            })
            .collect();
        for (i, row) in rows.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                let e = &mut c[oc + i * r.c.row + j * r.c.col];
                *e = alpha.wrapping_mul(*v).wrapping_add(beta.wrapping_mul(*e));
            }
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::{Layout, Operand};

    fn naive(desc: &MatmulDesc, a: &HostData, b: &HostData, c: &HostData) -> Vec<f64> {
        let r = desc.resolve().unwrap();
        let mut out: Vec<f64> = (0..c.len()).map(|i| c.get(i)).collect();
        for bt in 0..desc.batch {
            for i in 0..desc.m {
                for j in 0..desc.n {
                    let mut s = 0.0;
                    for p in 0..desc.k {
                        s += a.get(bt * r.a.batch + i * r.a.row + p * r.a.col) * b.get(bt * r.b.batch + p * r.b.row + j * r.b.col);
                    }
                    let e = &mut out[bt * r.c.batch + i * r.c.row + j * r.c.col];
                    *e = desc.alpha as f64 * s + desc.beta as f64 * *e;
                }
            }
        }
        out
    }

    #[test]
    fn every_layout_and_transpose_matches_a_triple_loop() {
        let (m, n, k, batch) = (5, 7, 9, 3);
        for dtype in [DType::F32, DType::F16, DType::Bf16, DType::S8, DType::U8] {
            for (la, ta, lb, tb, lc) in [
                (Layout::RowMajor, false, Layout::RowMajor, false, Layout::RowMajor),
                (Layout::ColumnMajor, true, Layout::RowMajor, true, Layout::ColumnMajor),
                (Layout::RowMajor, true, Layout::ColumnMajor, false, Layout::RowMajor),
                (Layout::ColumnMajor, false, Layout::ColumnMajor, true, Layout::ColumnMajor),
            ] {
                let mut desc = MatmulDesc::new(m, n, k, dtype);
                desc.batch = batch;
                desc.a = Operand { layout: la, transpose: ta, ld: Some(12), batch_stride: None };
                desc.b = Operand { layout: lb, transpose: tb, ld: None, batch_stride: Some(100) };
                desc.c = Operand { layout: lc, transpose: false, ld: Some(11), batch_stride: None };
                desc.alpha = 2.0;
                desc.beta = -1.0;
                let r = desc.resolve().unwrap();
                let vals = |len: usize, seed: usize| -> Vec<f32> { (0..len).map(|i| ((i * 7 + seed) % 11) as f32 - if dtype == DType::U8 { 0.0 } else { 5.0 }).collect() };
                let a = HostData::from_f32(dtype, &vals(r.a.len, 1));
                let b = HostData::from_f32(dtype, &vals(r.b.len, 2));
                let mut c = HostData::from_f32(desc.out, &vals(r.c.len, 3));
                let expected = naive(&desc, &a, &b, &c);
                matmul(&desc, &a, &b, &mut c).unwrap();
                for (i, e) in expected.iter().enumerate() {
                    assert_eq!(c.get(i), *e, "{dtype} {la:?}{ta} {lb:?}{tb} {lc:?} at {i}");
                }
            }
        }
    }

    #[test]
    fn shape_and_dtype_errors_name_the_operand() {
        let desc = MatmulDesc::new(4, 4, 4, DType::F32);
        let a = HostData::from_f32(DType::F32, &[0.0; 15]);
        let b = HostData::from_f32(DType::F32, &[0.0; 16]);
        let mut c = HostData::from_f32(DType::F32, &[0.0; 16]);
        let err = matmul(&desc, &a, &b, &mut c).unwrap_err().to_string();
        assert_eq!(err, "operand A: expected 16 elements, given 15");
        let b16 = HostData::from_f32(DType::F16, &[0.0; 16]);
        let a = HostData::from_f32(DType::F32, &[0.0; 16]);
        let err = matmul(&desc, &a, &b16, &mut c).unwrap_err().to_string();
        assert_eq!(err, "operand B: expected dtype f32, given f16");
        let mut bad = desc.clone();
        bad.acc = crate::matmul::AccType::S32;
        assert!(bad.resolve().unwrap_err().to_string().contains("accumulate in f32 or f16"));
    }
}
