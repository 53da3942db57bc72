//! `OpSubgroupMatrixMultiplyAccumulateINTEL` (SPV_INTEL_subgroup_matrix_multiply_accumulate).
//!
//! The subgroup computes `Result(M x N) = A(M x K) * B(K x N) + C(M x N)` where M is the number
//! of Result components, N the subgroup size and K the `K Dim` operand. Each invocation passes
//! its part of each operand as a vector of *containers* (the operand's SPIR-V component type);
//! the Matrix Multiply Accumulate Operands say how containers hold *elements* (packed int8/int4,
//! f16, bf16, tf32) and their signedness. The layouts, from the spec's "Mapping Matrix Data to
//! Invocations":
//! - A: invocation `i`, component `j`, element `e` of the container holds row
//!   `j * f + i / (K / epc)` and column `(i % (K / epc)) * epc + e`, where `epc` is elements per
//!   container and `f = N * epc / K` (N = K: one column each; N < K: several columns packed per
//!   container, lower columns in lower bits; N > K: every f-th row). Rows >= M are ignored.
//! - B: invocation `i` holds column `i`; component `j` element `e` is row `j * epc + e` (VNNI
//!   packing for elements of 16 bits or fewer in 32-bit containers).
//! - C and Result: invocation `i` holds column `i`; component `r` is row `r`.
//!
//! Integer products and sums are exact, then wrap to the result width. Floating-point products
//! and sums are computed exactly in f64 and rounded once to the result type (the spec leaves the
//! precision and order implementation-defined; comparisons use tolerances).

use super::elements::{Elem, Value};
use thiserror::Error;

/// Matrix Multiply Accumulate Operands.
pub mod operands {
    use spirv::MatrixMultiplyAccumulateOperands as M;
    pub const A_SIGNED: u32 = M::MATRIX_A_SIGNED_COMPONENTS_INTEL.bits();
    pub const B_SIGNED: u32 = M::MATRIX_B_SIGNED_COMPONENTS_INTEL.bits();
    pub const C_BFLOAT16: u32 = M::MATRIX_CB_FLOAT16_INTEL.bits();
    pub const RESULT_BFLOAT16: u32 = M::MATRIX_RESULT_B_FLOAT16_INTEL.bits();
    pub const A_PACKED_INT8: u32 = M::MATRIX_A_PACKED_INT8_INTEL.bits();
    pub const B_PACKED_INT8: u32 = M::MATRIX_B_PACKED_INT8_INTEL.bits();
    pub const A_PACKED_INT4: u32 = M::MATRIX_A_PACKED_INT4_INTEL.bits();
    pub const B_PACKED_INT4: u32 = M::MATRIX_B_PACKED_INT4_INTEL.bits();
    pub const A_TF32: u32 = M::MATRIX_ATF32INTEL.bits();
    pub const B_TF32: u32 = M::MATRIX_BTF32INTEL.bits();
    pub const A_PACKED_F16: u32 = M::MATRIX_A_PACKED_FLOAT16_INTEL.bits();
    pub const B_PACKED_F16: u32 = M::MATRIX_B_PACKED_FLOAT16_INTEL.bits();
    pub const A_PACKED_BF16: u32 = M::MATRIX_A_PACKED_B_FLOAT16_INTEL.bits();
    pub const B_PACKED_BF16: u32 = M::MATRIX_B_PACKED_B_FLOAT16_INTEL.bits();
}

#[derive(Debug, Error, PartialEq)]
pub enum DpasError {
    #[error("{0}")]
    Shape(String),
}

/// The SPIR-V component type of an operand (the container).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    Int(u32),
    Float(u32),
}

impl Container {
    pub fn bits(self) -> u32 {
        match self {
            Container::Int(b) | Container::Float(b) => b,
        }
    }
}

/// The element type an operand's containers hold, from the operands mask.
pub fn element_of(container: Container, mask: u32, a: bool) -> Elem {
    use operands::*;
    let (signed, p8, p4, tf32, pf16, pbf16) =
        if a { (A_SIGNED, A_PACKED_INT8, A_PACKED_INT4, A_TF32, A_PACKED_F16, A_PACKED_BF16) } else { (B_SIGNED, B_PACKED_INT8, B_PACKED_INT4, B_TF32, B_PACKED_F16, B_PACKED_BF16) };
    let s = mask & signed != 0;
    if mask & p8 != 0 {
        Elem::Int { bits: 8, signed: s }
    } else if mask & p4 != 0 {
        Elem::Int { bits: 4, signed: s }
    } else if mask & tf32 != 0 {
        Elem::Tf32
    } else if mask & pf16 != 0 {
        Elem::F16
    } else if mask & pbf16 != 0 {
        Elem::Bf16
    } else {
        match container {
            Container::Int(bits) => Elem::Int { bits, signed: s },
            Container::Float(16) => Elem::F16,
            Container::Float(64) => Elem::F64,
            Container::Float(_) => Elem::F32,
        }
    }
}

/// (invocation, component, bit offset) of A's element (row, col).
pub fn a_location(k: u32, n: u32, epc: u32, elem_bits: u32, row: u32, col: u32) -> (u32, u32, u32) {
    let inv_per_row = (k / epc).max(1);
    let f = (n / inv_per_row).max(1);
    let inv = (row % f) * inv_per_row + col / epc;
    (inv, row / f, (col % epc) * elem_bits)
}

/// (invocation, component, bit offset) of B's element (row, col).
pub fn b_location(epc: u32, elem_bits: u32, row: u32, col: u32) -> (u32, u32, u32) {
    (col, row / epc, (row % epc) * elem_bits)
}

/// One operand: per invocation, its components as raw bits.
#[derive(Clone, Debug, PartialEq)]
pub struct Operand {
    pub container: Container,
    pub data: Vec<Vec<u64>>,
}

/// Everything the instruction reads.
#[derive(Clone, Debug)]
pub struct Dpas {
    /// Result component count.
    pub m: u32,
    pub k: u32,
    pub result: Container,
    pub operands: u32,
    pub a: Operand,
    pub b: Operand,
    pub c: Operand,
}

fn bits(raw: u64, offset: u32, width: u32) -> u64 {
    let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
    (raw >> offset) & mask
}

impl Dpas {
    /// Subgroup size N.
    pub fn n(&self) -> u32 {
        self.b.data.len() as u32
    }

    fn elems(&self) -> (Elem, Elem, Elem, Elem) {
        let ea = element_of(self.a.container, self.operands, true);
        let eb = element_of(self.b.container, self.operands, false);
        let c_elem = |c: Container, bf: bool| match (c, bf) {
            (_, true) => Elem::Bf16,
            (Container::Int(b), _) => Elem::Int { bits: b, signed: true },
            (Container::Float(16), _) => Elem::F16,
            (Container::Float(64), _) => Elem::F64,
            (Container::Float(_), _) => Elem::F32,
        };
        let ec = c_elem(self.c.container, self.operands & operands::C_BFLOAT16 != 0);
        let er = c_elem(self.result, self.operands & operands::RESULT_BFLOAT16 != 0);
        (ea, eb, ec, er)
    }

    fn check(&self) -> Result<(Elem, Elem, Elem, Elem), DpasError> {
        let n = self.n();
        let bad = |m: String| Err(DpasError::Shape(m));
        if !n.is_power_of_two() || n > 64 {
            return bad(format!("subgroup size {n} is not a power of two up to 64"));
        }
        if self.a.data.len() as u32 != n || self.c.data.len() as u32 != n {
            return bad("A, B and C must have one entry per invocation".into());
        }
        let (ea, eb, ec, er) = self.elems();
        let epc_a = self.a.container.bits() / ea.bits();
        let epc_b = self.b.container.bits() / eb.bits();
        if epc_a == 0 || epc_b == 0 {
            return bad("an element is wider than its container".into());
        }
        if !self.k.is_multiple_of(epc_a) || (self.k / epc_a > n) {
            return bad(format!("K = {} does not fit {} invocations with {} elements per A container", self.k, n, epc_a));
        }
        if !self.k.is_multiple_of(epc_b) {
            return bad(format!("K = {} is not a multiple of {} B elements per container", self.k, epc_b));
        }
        if ea.is_float() != eb.is_float() || ea.is_float() != er.is_float() || ec.is_float() != er.is_float() {
            return bad("A, B, C and Result must all be integer or all floating-point".into());
        }
        let f = n / (self.k / epc_a);
        let a_comps = self.m.div_ceil(f) as usize;
        if self.a.data.iter().any(|v| v.len() < a_comps) {
            return bad(format!("A needs {a_comps} components per invocation"));
        }
        if self.b.data.iter().any(|v| v.len() < (self.k / epc_b) as usize) {
            return bad(format!("B needs {} components per invocation", self.k / epc_b));
        }
        if self.c.data.iter().any(|v| v.len() < self.m as usize) {
            return bad(format!("C needs {} components per invocation", self.m));
        }
        Ok((ea, eb, ec, er))
    }

    /// A's element (row, col) as raw bits.
    pub fn a_element(&self, row: u32, col: u32) -> u64 {
        let ea = element_of(self.a.container, self.operands, true);
        let epc = self.a.container.bits() / ea.bits();
        let (inv, comp, off) = a_location(self.k, self.n(), epc, ea.bits(), row, col);
        bits(self.a.data[inv as usize][comp as usize], off, ea.bits())
    }

    /// B's element (row, col) as raw bits.
    pub fn b_element(&self, row: u32, col: u32) -> u64 {
        let eb = element_of(self.b.container, self.operands, false);
        let epc = self.b.container.bits() / eb.bits();
        let (inv, comp, off) = b_location(epc, eb.bits(), row, col);
        bits(self.b.data[inv as usize][comp as usize], off, eb.bits())
    }

    /// Executes the instruction: the Result each invocation receives (M components each).
    pub fn run(&self) -> Result<Vec<Vec<u64>>, DpasError> {
        let (ea, eb, ec, er) = self.check()?;
        let n = self.n();
        let mut out = vec![vec![0u64; self.m as usize]; n as usize];
        for col in 0..n {
            for row in 0..self.m {
                let c = ec.decode(self.c.data[col as usize][row as usize]);
                let v = if er.is_float() {
                    let s: f64 = (0..self.k).map(|p| ea.decode(self.a_element(row, p)).as_f64() * eb.decode(self.b_element(p, col)).as_f64()).sum();
                    Value::Float(s + c.as_f64())
                } else {
                    let s: i128 = (0..self.k)
                        .map(|p| match (ea.decode(self.a_element(row, p)), eb.decode(self.b_element(p, col))) {
                            (Value::Int(x), Value::Int(y)) => x * y,
                            _ => 0,
                        })
                        .sum();
                    let c = match c {
                        Value::Int(i) => i,
                        Value::Float(f) => f as i128,
                    };
                    Value::Int(s + c)
                };
                out[col as usize][row as usize] = er.encode(v);
            }
        }
        Ok(out)
    }
}

/// Builds the per-invocation A operand from a row-major M x K matrix of raw elements.
pub fn pack_a(matrix: &[u64], m: u32, k: u32, n: u32, container: Container, elem_bits: u32) -> Vec<Vec<u64>> {
    let epc = container.bits() / elem_bits;
    let f = (n / (k / epc).max(1)).max(1);
    let mut data = vec![vec![0u64; m.div_ceil(f) as usize]; n as usize];
    for r in 0..m {
        for c in 0..k {
            let (inv, comp, off) = a_location(k, n, epc, elem_bits, r, c);
            let mask = if elem_bits == 64 { u64::MAX } else { (1u64 << elem_bits) - 1 };
            data[inv as usize][comp as usize] |= (matrix[(r * k + c) as usize] & mask) << off;
        }
    }
    data
}

/// Builds the per-invocation B operand from a row-major K x N matrix of raw elements.
pub fn pack_b(matrix: &[u64], k: u32, n: u32, container: Container, elem_bits: u32) -> Vec<Vec<u64>> {
    let epc = container.bits() / elem_bits;
    let mut data = vec![vec![0u64; (k / epc) as usize]; n as usize];
    for r in 0..k {
        for c in 0..n {
            let (inv, comp, off) = b_location(epc, elem_bits, r, c);
            let mask = if elem_bits == 64 { u64::MAX } else { (1u64 << elem_bits) - 1 };
            data[inv as usize][comp as usize] |= (matrix[(r * n + c) as usize] & mask) << off;
        }
    }
    data
}

/// Builds C (or reads Result) per invocation from a row-major M x N matrix.
pub fn pack_c(matrix: &[u64], m: u32, n: u32) -> Vec<Vec<u64>> {
    (0..n).map(|c| (0..m).map(|r| matrix[(r * n + c) as usize]).collect()).collect()
}

/// Intel's sub-group-32 form of a sub-group-16 operand (what Intel's compiler runs DPAS with at
/// sub-group size 32, the hardware's N staying 16): invocation `l`, component `c` holds
/// component `2c + l / 16` of invocation `l % 16`; `comps` components each (missing ones 0).
pub fn to_subgroup32(data16: &[Vec<u64>], comps: usize) -> Vec<Vec<u64>> {
    (0..32).map(|l| (0..comps).map(|c| data16.get(l % 16).and_then(|v| v.get(2 * c + l / 16)).copied().unwrap_or(0)).collect()).collect()
}

/// The sub-group-16 operand of `comps16` components that Intel's sub-group-32 form `data32`
/// holds (the inverse of [`to_subgroup32`]).
pub fn from_subgroup32(data32: &[Vec<u64>], comps16: usize) -> Vec<Vec<u64>> {
    (0..16).map(|l| (0..comps16).map(|c| data32.get(l + 16 * (c % 2)).and_then(|v| v.get(c / 2)).copied().unwrap_or(0)).collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodes element (r, c) as a distinct tag r * 16 + c, as the spec's tables label them.
    fn tag(r: u32, c: u32) -> u64 {
        (r * 16 + c) as u64
    }

    #[test]
    fn spec_example_a_n_equals_k() {
        // M = 2, K = 4, N = 4, 32-bit elements: invocation i passes (0,i) and (1,i).
        let matrix: Vec<u64> = (0..2).flat_map(|r| (0..4).map(move |c| tag(r, c))).collect();
        let a = pack_a(&matrix, 2, 4, 4, Container::Int(32), 32);
        for i in 0..4 {
            assert_eq!(a[i as usize], vec![tag(0, i), tag(1, i)]);
        }
    }

    #[test]
    fn spec_example_a_n_less_than_k() {
        // M = 2, K = 8, N = 4, 8-bit elements in 16-bit containers: "0,1 | 0,0" and "1,1 | 1,0".
        let matrix: Vec<u64> = (0..2).flat_map(|r| (0..8).map(move |c| tag(r, c))).collect();
        let a = pack_a(&matrix, 2, 8, 4, Container::Int(16), 8);
        for i in 0..4u32 {
            let pair = |r| (tag(r, 2 * i + 1) << 8) | tag(r, 2 * i);
            assert_eq!(a[i as usize], vec![pair(0), pair(1)], "invocation {i}");
        }
    }

    #[test]
    fn spec_example_a_n_greater_than_k() {
        // M = 4, K = 2, N = 4: inv 0 -> (0,0),(2,0); inv 1 -> (0,1),(2,1); inv 2 -> (1,0),(3,0); inv 3 -> (1,1),(3,1).
        let matrix: Vec<u64> = (0..4).flat_map(|r| (0..2).map(move |c| tag(r, c))).collect();
        let a = pack_a(&matrix, 4, 2, 4, Container::Int(32), 32);
        assert_eq!(a[0], vec![tag(0, 0), tag(2, 0)]);
        assert_eq!(a[1], vec![tag(0, 1), tag(2, 1)]);
        assert_eq!(a[2], vec![tag(1, 0), tag(3, 0)]);
        assert_eq!(a[3], vec![tag(1, 1), tag(3, 1)]);
        // M = 1, K = 2, N = 4: invocations 0 and 1 pass (0,0) and (0,1); 2 and 3 are ignored.
        assert_eq!(a_location(2, 4, 1, 32, 0, 0), (0, 0, 0));
        assert_eq!(a_location(2, 4, 1, 32, 0, 1), (1, 0, 0));
    }

    #[test]
    fn spec_examples_b_packing() {
        // K = 8, N = 4, 8-bit: "3,i | 2,i | 1,i | 0,i" and "7,i | 6,i | 5,i | 4,i".
        let matrix: Vec<u64> = (0..8).flat_map(|r| (0..4).map(move |c| tag(r, c))).collect();
        let b = pack_b(&matrix, 8, 4, Container::Int(32), 8);
        for i in 0..4u32 {
            let w = |r0: u32| (0..4).fold(0u64, |acc, e| acc | tag(r0 + e, i) << (8 * e));
            assert_eq!(b[i as usize], vec![w(0), w(4)]);
        }
        // K = 4, N = 4, 16-bit: "1,i | 0,i" and "3,i | 2,i".
        let matrix: Vec<u64> = (0..4).flat_map(|r| (0..4).map(move |c| tag(r, c))).collect();
        let b = pack_b(&matrix, 4, 4, Container::Int(32), 16);
        for i in 0..4u32 {
            assert_eq!(b[i as usize], vec![tag(1, i) << 16 | tag(0, i), tag(3, i) << 16 | tag(2, i)]);
        }
        // K = 2, N = 4, 32-bit: (0,i) and (1,i).
        let matrix: Vec<u64> = (0..2).flat_map(|r| (0..4).map(move |c| tag(r, c))).collect();
        let b = pack_b(&matrix, 2, 4, Container::Int(32), 32);
        for i in 0..4u32 {
            assert_eq!(b[i as usize], vec![tag(0, i), tag(1, i)]);
        }
    }

    #[test]
    fn spec_examples_c_and_result() {
        // M = 2, N = 4: invocation i passes / receives (0,i) and (1,i).
        let matrix: Vec<u64> = (0..2).flat_map(|r| (0..4).map(move |c| tag(r, c))).collect();
        let c = pack_c(&matrix, 2, 4);
        for i in 0..4u32 {
            assert_eq!(c[i as usize], vec![tag(0, i), tag(1, i)]);
        }
    }

    fn naive_int(a: &[i64], b: &[i64], c: &[i64], m: usize, n: usize, k: usize) -> Vec<i64> {
        (0..m * n).map(|x| (0..k).map(|p| a[x / n * k + p] * b[p * n + x % n]).sum::<i64>() + c[x]).collect()
    }

    #[test]
    fn int8_dpas_matches_the_naive_product_for_every_a_case() {
        // (M, K, N, A container): N = K/4 packs, N < K, N > K cases for packed int8.
        for (m, k, n, a_bits) in [(8u32, 32u32, 8u32, 32u32), (8, 32, 16, 16), (4, 32, 32, 8), (1, 32, 16, 16), (8, 16, 16, 8)] {
            let ops = operands::A_SIGNED | operands::B_SIGNED | operands::A_PACKED_INT8 | operands::B_PACKED_INT8;
            let av: Vec<i64> = (0..m * k).map(|i| ((i * 37 + 11) % 256) as i64 - 128).collect();
            let bv: Vec<i64> = (0..k * n).map(|i| ((i * 53 + 7) % 256) as i64 - 128).collect();
            let cv: Vec<i64> = (0..m * n).map(|i| (i as i64) * 1000 - 5000).collect();
            let raw = |v: &[i64]| v.iter().map(|x| *x as u64 & 0xff).collect::<Vec<_>>();
            let d = Dpas {
                m,
                k,
                result: Container::Int(32),
                operands: ops,
                a: Operand { container: Container::Int(a_bits), data: pack_a(&raw(&av), m, k, n, Container::Int(a_bits), 8) },
                b: Operand { container: Container::Int(32), data: pack_b(&raw(&bv), k, n, Container::Int(32), 8) },
                c: Operand { container: Container::Int(32), data: pack_c(&cv.iter().map(|x| *x as u64 & 0xffff_ffff).collect::<Vec<_>>(), m, n) },
            };
            let got = d.run().unwrap();
            let want = naive_int(&av, &bv, &cv, m as usize, n as usize, k as usize);
            for r in 0..m as usize {
                for c in 0..n as usize {
                    assert_eq!(got[c][r] as u32 as i32 as i64, want[r * n as usize + c], "M{m} K{k} N{n} ({r},{c})");
                }
            }
        }
    }

    #[test]
    fn unsigned_and_int4_and_wraparound() {
        // u8 x u8 with a 16-bit result wraps at 16 bits.
        let (m, k, n) = (2u32, 32u32, 8u32);
        let av = vec![255u64; (m * k) as usize];
        let bv = vec![255u64; (k * n) as usize];
        let d = Dpas {
            m,
            k,
            result: Container::Int(16),
            operands: operands::A_PACKED_INT8 | operands::B_PACKED_INT8,
            a: Operand { container: Container::Int(32), data: pack_a(&av, m, k, n, Container::Int(32), 8) },
            b: Operand { container: Container::Int(32), data: pack_b(&bv, k, n, Container::Int(32), 8) },
            c: Operand { container: Container::Int(16), data: vec![vec![0; 2]; n as usize] },
        };
        assert_eq!(d.run().unwrap()[0][0], ((255 * 255 * 32) as u64) & 0xffff);
        // s4 x s4: -8 * 7 * 64 = -3584.
        let (m, k, n) = (1u32, 64u32, 8u32);
        let d = Dpas {
            m,
            k,
            result: Container::Int(32),
            operands: operands::A_SIGNED | operands::B_SIGNED | operands::A_PACKED_INT4 | operands::B_PACKED_INT4,
            a: Operand { container: Container::Int(32), data: pack_a(&vec![0x8; 64], m, k, n, Container::Int(32), 4) },
            b: Operand { container: Container::Int(32), data: pack_b(&vec![0x7; (k * n) as usize], k, n, Container::Int(32), 4) },
            c: Operand { container: Container::Int(32), data: vec![vec![0]; n as usize] },
        };
        assert_eq!(d.run().unwrap()[3][0] as u32 as i32, -3584);
    }

    #[test]
    fn float_interpretations_round_once() {
        use half::{bf16, f16};
        let (m, k, n) = (2u32, 16u32, 8u32);
        let av: Vec<f32> = (0..m * k).map(|i| (i % 5) as f32 * 0.5 - 1.0).collect();
        let bv: Vec<f32> = (0..k * n).map(|i| (i % 7) as f32 * 0.25 - 0.5).collect();
        let want = |r: u32, c: u32| -> f32 { (0..k).map(|p| av[(r * k + p) as usize] * bv[(p * n + c) as usize]).sum::<f32>() + 1.0 };
        // f16 A (16-bit containers, one per column pair... K = 2N: packed two per 32-bit container), f16 B (VNNI), f32 C.
        let ah: Vec<u64> = av.iter().map(|x| f16::from_f32(*x).to_bits() as u64).collect();
        let bh: Vec<u64> = bv.iter().map(|x| f16::from_f32(*x).to_bits() as u64).collect();
        let d = Dpas {
            m,
            k,
            result: Container::Float(32),
            operands: operands::A_PACKED_F16 | operands::B_PACKED_F16,
            a: Operand { container: Container::Int(32), data: pack_a(&ah, m, k, n, Container::Int(32), 16) },
            b: Operand { container: Container::Int(32), data: pack_b(&bh, k, n, Container::Int(32), 16) },
            c: Operand { container: Container::Float(32), data: vec![vec![1f32.to_bits() as u64; 2]; n as usize] },
        };
        let got = d.run().unwrap();
        assert_eq!(f32::from_bits(got[5][1] as u32), want(1, 5));
        // bf16 inputs, bf16 C and Result.
        let ab: Vec<u64> = av.iter().map(|x| bf16::from_f32(*x).to_bits() as u64).collect();
        let bb: Vec<u64> = bv.iter().map(|x| bf16::from_f32(*x).to_bits() as u64).collect();
        let one = bf16::from_f32(1.0).to_bits() as u64;
        let d = Dpas {
            m,
            k,
            result: Container::Int(16),
            operands: operands::A_PACKED_BF16 | operands::B_PACKED_BF16 | operands::C_BFLOAT16 | operands::RESULT_BFLOAT16,
            a: Operand { container: Container::Int(32), data: pack_a(&ab, m, k, n, Container::Int(32), 16) },
            b: Operand { container: Container::Int(32), data: pack_b(&bb, k, n, Container::Int(32), 16) },
            c: Operand { container: Container::Int(16), data: vec![vec![one; 2]; n as usize] },
        };
        let got = d.run().unwrap();
        assert_eq!(bf16::from_bits(got[2][0] as u16), bf16::from_f32(want(0, 2)));
        // tf32: the low 13 mantissa bits of A are ignored.
        let x = f32::from_bits(1.0f32.to_bits() | 0x1fff);
        assert_eq!(Elem::Tf32.decode(x.to_bits() as u64).as_f64(), 1.0);
    }

    #[test]
    fn intel_subgroup32_form_halves_each_invocation() {
        // Sub-group 16, 8 components: invocation i component c holds 100 i + c.
        let data16: Vec<Vec<u64>> = (0..16).map(|i| (0..8).map(|c| 100 * i + c).collect()).collect();
        let data32 = to_subgroup32(&data16, 4);
        // Invocations 0-15 hold the even components, 16-31 the odd ones.
        assert_eq!(data32[3], vec![300, 302, 304, 306]);
        assert_eq!(data32[19], vec![301, 303, 305, 307]);
        assert_eq!(from_subgroup32(&data32, 8), data16);
    }

    #[test]
    fn bad_shapes_are_errors() {
        let d = Dpas {
            m: 1,
            k: 64,
            result: Container::Int(32),
            operands: 0,
            a: Operand { container: Container::Int(32), data: vec![vec![0]; 4] },
            b: Operand { container: Container::Int(32), data: vec![vec![0; 64]; 4] },
            c: Operand { container: Container::Int(32), data: vec![vec![0]; 4] },
        };
        assert!(d.run().unwrap_err().to_string().contains("K = 64"));
    }
}
