//! Whole-matrix semantics of the cooperative/joint matrix opcodes:
//! `OpCooperativeMatrixMulAddNV` (signedness from the component types),
//! `OpCooperativeMatrixMulAddKHR` (signedness and saturation from Cooperative Matrix Operands),
//! SPV_INTEL_joint_matrix's `OpJointMatrix{,SU,US,UU}MadINTEL` with its component-type
//! interpretations, the RowMajor / ColumnMajor / Packed (VNNI) memory layouts, and
//! `OpJointMatrixWorkItemLengthINTEL` / `OpJointMatrixGetElementCoordINTEL` for the layout
//! matbridge uses when it emulates joint matrices: element `e` of the row-major flattening
//! belongs to invocation `e % S` at slot `e / S`.

use super::elements::{Elem, Value};
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum MatrixError {
    #[error("{0}")]
    Shape(String),
}

/// A matrix of raw element bits, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    pub rows: u32,
    pub cols: u32,
    pub elem: Elem,
    pub data: Vec<u64>,
}

impl Matrix {
    pub fn get(&self, r: u32, c: u32) -> Value {
        self.elem.decode(self.data[(r * self.cols + c) as usize])
    }
}

/// KHR Cooperative Matrix Operands.
pub mod khr {
    use spirv::CooperativeMatrixOperands as O;
    pub const A_SIGNED: u32 = O::MATRIX_A_SIGNED_COMPONENTS_KHR.bits();
    pub const B_SIGNED: u32 = O::MATRIX_B_SIGNED_COMPONENTS_KHR.bits();
    pub const C_SIGNED: u32 = O::MATRIX_C_SIGNED_COMPONENTS_KHR.bits();
    pub const RESULT_SIGNED: u32 = O::MATRIX_RESULT_SIGNED_COMPONENTS_KHR.bits();
    pub const SATURATING: u32 = O::SATURATING_ACCUMULATION_KHR.bits();
}

fn with_sign(e: Elem, signed: bool) -> Elem {
    match e {
        Elem::Int { bits, .. } => Elem::Int { bits, signed },
        other => other,
    }
}

/// `Result = A * B + C`, exact for integers (then wrapped, or saturated when `saturate`), rounded
/// once for floats.
pub fn mul_add(a: &Matrix, b: &Matrix, c: &Matrix, result: Elem, saturate: bool) -> Result<Matrix, MatrixError> {
    if a.cols != b.rows || a.rows != c.rows || b.cols != c.cols {
        return Err(MatrixError::Shape(format!("{}x{} * {}x{} + {}x{} does not compose", a.rows, a.cols, b.rows, b.cols, c.rows, c.cols)));
    }
    let mut data = Vec::with_capacity((c.rows * c.cols) as usize);
    for r in 0..c.rows {
        for col in 0..c.cols {
            let v = if result.is_float() {
                Value::Float((0..a.cols).map(|p| a.get(r, p).as_f64() * b.get(p, col).as_f64()).sum::<f64>() + c.get(r, col).as_f64())
            } else {
                let int = |v: Value| match v {
                    Value::Int(i) => i,
                    Value::Float(f) => f as i128,
                };
                let s: i128 = (0..a.cols).map(|p| int(a.get(r, p)) * int(b.get(p, col))).sum::<i128>() + int(c.get(r, col));
                match (saturate, result) {
                    (true, Elem::Int { bits, signed: true }) => Value::Int(s.clamp(-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)),
                    (true, Elem::Int { bits, signed: false }) => Value::Int(s.clamp(0, (1i128 << bits) - 1)),
                    _ => Value::Int(s),
                }
            };
            data.push(result.encode(v));
        }
    }
    Ok(Matrix { rows: c.rows, cols: c.cols, elem: result, data })
}

/// `OpCooperativeMatrixMulAddNV`: element types carry their signedness.
pub fn mul_add_nv(a: &Matrix, b: &Matrix, c: &Matrix, result: Elem) -> Result<Matrix, MatrixError> {
    mul_add(a, b, c, result, false)
}

/// `OpCooperativeMatrixMulAddKHR`: integer signedness and saturation come from `operands`
/// (components are unsigned unless flagged).
pub fn mul_add_khr(a: &Matrix, b: &Matrix, c: &Matrix, result: Elem, operands: u32) -> Result<Matrix, MatrixError> {
    let a = Matrix { elem: with_sign(a.elem, operands & khr::A_SIGNED != 0), ..a.clone() };
    let b = Matrix { elem: with_sign(b.elem, operands & khr::B_SIGNED != 0), ..b.clone() };
    let c = Matrix { elem: with_sign(c.elem, operands & khr::C_SIGNED != 0), ..c.clone() };
    mul_add(&a, &b, &c, with_sign(result, operands & khr::RESULT_SIGNED != 0), operands & khr::SATURATING != 0)
}

/// Which joint-matrix multiply-add.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JointMad {
    /// `OpJointMatrixMadINTEL`: signedness from the component types.
    Mad,
    /// A signed, B unsigned.
    SU,
    /// A unsigned, B signed.
    US,
    /// Both unsigned.
    UU,
}

/// SPV_INTEL_joint_matrix Component Type Interpretation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpretation {
    None,
    Tf32,
    Bfloat16,
    PackedInt2,
    PackedInt4,
}

/// Applies an interpretation to a matrix along its K dimension (`along_cols` for A, rows for B):
/// packed integers become `width / n` elements each, lower bits first.
pub fn interpret(m: &Matrix, interp: Interpretation, along_cols: bool) -> Matrix {
    match interp {
        Interpretation::None => m.clone(),
        Interpretation::Tf32 => Matrix { elem: Elem::Tf32, ..m.clone() },
        Interpretation::Bfloat16 => Matrix { elem: Elem::Bf16, ..m.clone() },
        Interpretation::PackedInt2 | Interpretation::PackedInt4 => {
            let sub = if interp == Interpretation::PackedInt2 { 2 } else { 4 };
            let (signed, width) = match m.elem {
                Elem::Int { bits, signed } => (signed, bits),
                _ => (true, 32),
            };
            let f = width / sub;
            let (rows, cols) = if along_cols { (m.rows, m.cols * f) } else { (m.rows * f, m.cols) };
            let mut data = vec![0u64; (rows * cols) as usize];
            for r in 0..rows {
                for c in 0..cols {
                    let (sr, sc, e) = if along_cols { (r, c / f, c % f) } else { (r / f, c, r % f) };
                    data[(r * cols + c) as usize] = (m.data[(sr * m.cols + sc) as usize] >> (e * sub)) & ((1 << sub) - 1);
                }
            }
            Matrix { rows, cols, elem: Elem::Int { bits: sub, signed }, data }
        }
    }
}

/// The joint-matrix multiply-adds.
pub fn joint_mad(kind: JointMad, a: &Matrix, b: &Matrix, c: &Matrix, result: Elem) -> Result<Matrix, MatrixError> {
    let (sa, sb) = match kind {
        JointMad::Mad => return mul_add(a, b, c, result, false),
        JointMad::SU => (true, false),
        JointMad::US => (false, true),
        JointMad::UU => (false, false),
    };
    let a = Matrix { elem: with_sign(a.elem, sa), ..a.clone() };
    let b = Matrix { elem: with_sign(b.elem, sb), ..b.clone() };
    mul_add(&a, &b, c, result, false)
}

/// Joint matrix memory layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    RowMajor,
    ColumnMajor,
    /// VNNI: `4 / element bytes` consecutive rows of a column are adjacent in memory.
    Packed,
}

/// Index (in elements) of element (r, c) in memory with `stride`, for `elem_bits`-wide elements.
pub fn memory_index(layout: Layout, stride: u64, elem_bits: u32, r: u32, c: u32) -> u64 {
    match layout {
        Layout::RowMajor => r as u64 * stride + c as u64,
        Layout::ColumnMajor => c as u64 * stride + r as u64,
        Layout::Packed => {
            let v = (32 / elem_bits).max(1) as u64;
            (r as u64 / v) * stride + c as u64 * v + r as u64 % v
        }
    }
}

/// `OpJointMatrixLoadINTEL` from a slice of raw elements.
pub fn load(mem: &[u64], rows: u32, cols: u32, elem: Elem, layout: Layout, stride: u64) -> Result<Matrix, MatrixError> {
    let mut data = Vec::with_capacity((rows * cols) as usize);
    for r in 0..rows {
        for c in 0..cols {
            let i = memory_index(layout, stride, elem.bits(), r, c) as usize;
            data.push(*mem.get(i).ok_or_else(|| MatrixError::Shape(format!("element ({r},{c}) at index {i} is past the {} elements given", mem.len())))?);
        }
    }
    Ok(Matrix { rows, cols, elem, data })
}

/// `OpJointMatrixStoreINTEL` into a slice of raw elements.
pub fn store(m: &Matrix, mem: &mut [u64], layout: Layout, stride: u64) -> Result<(), MatrixError> {
    for r in 0..m.rows {
        for c in 0..m.cols {
            let i = memory_index(layout, stride, m.elem.bits(), r, c) as usize;
            let len = mem.len();
            *mem.get_mut(i).ok_or_else(|| MatrixError::Shape(format!("element ({r},{c}) at index {i} is past the {len} elements given")))? = m.data[(r * m.cols + c) as usize];
        }
    }
    Ok(())
}

/// `OpJointMatrixWorkItemLengthINTEL` for invocation `inv` of `subgroup` in matbridge's layout.
pub fn work_item_length(rows: u32, cols: u32, subgroup: u32, inv: u32) -> u32 {
    let total = rows * cols;
    total / subgroup + u32::from(inv < total % subgroup)
}

/// `OpJointMatrixGetElementCoordINTEL`: (row, column) of slot `index` of invocation `inv`.
pub fn element_coord(cols: u32, subgroup: u32, inv: u32, index: u32) -> (u32, u32) {
    let e = index * subgroup + inv;
    (e / cols, e % cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int_matrix(rows: u32, cols: u32, bits: u32, signed: bool, f: impl Fn(u32, u32) -> i64) -> Matrix {
        let data = (0..rows).flat_map(|r| (0..cols).map(move |c| (r, c))).map(|(r, c)| super::super::integer_dot::wrap(f(r, c) as i128, bits)).collect();
        Matrix { rows, cols, elem: Elem::Int { bits, signed }, data }
    }

    #[test]
    fn khr_signedness_comes_from_operands_and_saturation_clamps() {
        let a = int_matrix(2, 4, 8, false, |_, _| -1); // 0xff
        let b = int_matrix(4, 2, 8, false, |_, _| 2);
        let c = int_matrix(2, 2, 32, false, |_, _| 0);
        let r32 = Elem::Int { bits: 32, signed: false };
        // Unsigned by default: 255 * 2 * 4.
        assert_eq!(mul_add_khr(&a, &b, &c, r32, 0).unwrap().data[0], 2040);
        // A signed: -1 * 2 * 4 = -8.
        assert_eq!(mul_add_khr(&a, &b, &c, r32, khr::A_SIGNED | khr::RESULT_SIGNED).unwrap().data[0] as u32 as i32, -8);
        // Saturating signed accumulation at i32::MAX.
        let c_max = int_matrix(2, 2, 32, true, |_, _| i32::MAX as i64);
        let sat = mul_add_khr(&a, &b, &c_max, r32, khr::C_SIGNED | khr::RESULT_SIGNED | khr::SATURATING).unwrap();
        assert_eq!(sat.data[0] as u32 as i32, i32::MAX);
        let wrap = mul_add_khr(&a, &b, &c_max, r32, khr::C_SIGNED | khr::RESULT_SIGNED).unwrap();
        assert_eq!(wrap.data[0] as u32 as i32, i32::MAX.wrapping_add(2040));
        // NV: the types decide.
        let sa = int_matrix(2, 4, 8, true, |_, _| -1);
        assert_eq!(mul_add_nv(&sa, &b, &c, Elem::Int { bits: 32, signed: true }).unwrap().data[0] as u32 as i32, -8);
    }

    #[test]
    fn joint_mad_variants_and_packed_int4() {
        let a = int_matrix(1, 2, 8, true, |_, c| if c == 0 { -2 } else { 3 });
        let b = int_matrix(2, 1, 8, true, |r, _| if r == 0 { -1 } else { 1 });
        let c = int_matrix(1, 1, 32, true, |_, _| 0);
        let r = Elem::Int { bits: 32, signed: true };
        let v = |k| joint_mad(k, &a, &b, &c, r).unwrap().data[0] as u32 as i32;
        assert_eq!(v(JointMad::Mad), 2 + 3);
        assert_eq!(v(JointMad::SU), -2 * 255 + 3);
        assert_eq!(v(JointMad::US), -254 + 3);
        assert_eq!(v(JointMad::UU), 254 * 255 + 3);
        // PackedInt4 along K: a 1x1 16-bit A holds 4 columns.
        let a = Matrix { rows: 1, cols: 1, elem: Elem::Int { bits: 16, signed: true }, data: vec![0x7f18] }; // 8, 1, -1, 7
        let ai = interpret(&a, Interpretation::PackedInt4, true);
        assert_eq!((ai.rows, ai.cols), (1, 4));
        assert_eq!((0..4).map(|c| ai.get(0, c)).collect::<Vec<_>>(), [-8, 1, -1, 7].map(Value::Int).to_vec());
    }

    #[test]
    fn layouts_round_trip_and_packed_is_vnni() {
        let m = int_matrix(4, 3, 8, false, |r, c| (r * 16 + c) as i64);
        for (layout, stride) in [(Layout::RowMajor, 5u64), (Layout::ColumnMajor, 6), (Layout::Packed, 16)] {
            let mut mem = vec![0u64; 64];
            store(&m, &mut mem, layout, stride).unwrap();
            assert_eq!(load(&mem, 4, 3, m.elem, layout, stride).unwrap(), m, "{layout:?}");
        }
        // VNNI for bytes: rows 0..3 of column 1 are adjacent at indices 4..8.
        assert_eq!((0..4).map(|r| memory_index(Layout::Packed, 12, 8, r, 1)).collect::<Vec<_>>(), vec![4, 5, 6, 7]);
        assert!(load(&[0; 4], 4, 3, m.elem, Layout::RowMajor, 3).is_err());
    }

    #[test]
    fn work_item_coordinates_cover_every_element_once() {
        for (rows, cols, s) in [(8u32, 16u32, 16u32), (3, 5, 4), (16, 16, 32)] {
            let mut seen = vec![false; (rows * cols) as usize];
            for inv in 0..s {
                for i in 0..work_item_length(rows, cols, s, inv) {
                    let (r, c) = element_coord(cols, s, inv, i);
                    assert!(r < rows && c < cols);
                    assert!(!std::mem::replace(&mut seen[(r * cols + c) as usize], true));
                }
            }
            assert!(seen.iter().all(|x| *x));
        }
    }

    #[test]
    fn floats_round_once() {
        let f = |v: f32| Matrix { rows: 1, cols: 1, elem: Elem::F16, data: vec![half::f16::from_f32(v).to_bits() as u64] };
        let c = Matrix { rows: 1, cols: 1, elem: Elem::F32, data: vec![0.25f32.to_bits() as u64] };
        let r = mul_add(&f(1.5), &f(-2.0), &c, Elem::F32, false).unwrap();
        assert_eq!(f32::from_bits(r.data[0] as u32), -2.75);
    }
}
