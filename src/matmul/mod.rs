//! The matmul API: `C = alpha * op(A) * op(B) + beta * C`, batched and strided, for f32, f16,
//! bf16, s8 and u8 inputs, on the GPU (cooperative matrices where the device lists the shape,
//! tiled kernels elsewhere) or on the CPU.

pub mod api;
pub mod batch;
pub mod check;
mod coop;
mod coop_wide;
pub mod cpu;
mod family;
mod gpu;
pub mod options;
pub mod peak;
mod plan;
mod planner;
pub mod repack;
pub mod tensor;
mod tiled;
mod tune;

use crate::error::{Error, Result};
use half::{bf16, f16};
use matbridge_translator::profile::ComponentType;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Element types of matmul inputs and outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    F32,
    F16,
    Bf16,
    S8,
    U8,
    S32,
}

impl DType {
    pub fn size(self) -> usize {
        match self {
            DType::F32 | DType::S32 => 4,
            DType::F16 | DType::Bf16 => 2,
            DType::S8 | DType::U8 => 1,
        }
    }
    pub fn is_integer(self) -> bool {
        matches!(self, DType::S8 | DType::U8 | DType::S32)
    }
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
            DType::S8 => "s8",
            DType::U8 => "u8",
            DType::S32 => "s32",
        }
    }
    pub fn parse(s: &str) -> Option<DType> {
        Some(match s.to_ascii_lowercase().as_str() {
            "f32" => DType::F32,
            "f16" => DType::F16,
            "bf16" => DType::Bf16,
            "s8" | "i8" => DType::S8,
            "u8" => DType::U8,
            "s32" | "i32" => DType::S32,
            _ => return None,
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Accumulation type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccType {
    F32,
    F16,
    S32,
}

impl AccType {
    pub fn name(self) -> &'static str {
        match self {
            AccType::F32 => "f32",
            AccType::F16 => "f16",
            AccType::S32 => "s32",
        }
    }
    pub fn parse(s: &str) -> Option<AccType> {
        Some(match s.to_ascii_lowercase().as_str() {
            "f32" => AccType::F32,
            "f16" => AccType::F16,
            "s32" | "i32" => AccType::S32,
            _ => return None,
        })
    }
    /// The natural accumulator for an input type.
    pub fn default_for(dtype: DType) -> AccType {
        if dtype.is_integer() {
            AccType::S32
        } else {
            AccType::F32
        }
    }
}

/// Host element types the API accepts.
pub trait Element: bytemuck::Pod + Send + Sync + 'static {
    const DTYPE: DType;
    fn to_f64(self) -> f64;
}

macro_rules! element {
    ($t:ty, $d:expr, $conv:expr) => {
        impl Element for $t {
            const DTYPE: DType = $d;
            fn to_f64(self) -> f64 {
                let f: fn($t) -> f64 = $conv;
                f(self)
            }
        }
    };
}
element!(f32, DType::F32, |x| x as f64);
element!(f16, DType::F16, |x| x.to_f64());
element!(bf16, DType::Bf16, |x| x.to_f64());
element!(i8, DType::S8, |x| x as f64);
element!(u8, DType::U8, |x| x as f64);
element!(i32, DType::S32, |x| x as f64);

/// Element order of a stored matrix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    #[default]
    RowMajor,
    ColumnMajor,
}

/// How one operand is stored: layout, transpose (op(X) = X^T), leading dimension and batch
/// stride in elements (defaults: packed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Operand {
    pub layout: Layout,
    pub transpose: bool,
    pub ld: Option<usize>,
    pub batch_stride: Option<usize>,
}

/// Resolved addressing of op(X): element (i, j) of batch b is at
/// `b * batch + i * row + j * col`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strides {
    pub row: usize,
    pub col: usize,
    pub batch: usize,
    /// Elements the buffer must hold.
    pub len: usize,
}

impl Operand {
    pub fn row_major() -> Self {
        Operand::default()
    }
    pub fn column_major() -> Self {
        Operand { layout: Layout::ColumnMajor, ..Default::default() }
    }
    pub fn transposed(mut self) -> Self {
        self.transpose = !self.transpose;
        self
    }

    /// Strides of op(X) with shape rows x cols over `batch` matrices.
    pub fn strides(&self, name: &'static str, rows: usize, cols: usize, batch: usize) -> Result<Strides> {
        let (srows, scols) = if self.transpose { (cols, rows) } else { (rows, cols) };
        let min_ld = match self.layout {
            Layout::RowMajor => scols,
            Layout::ColumnMajor => srows,
        }
        .max(1);
        let ld = self.ld.unwrap_or(min_ld);
        if ld < min_ld {
            return Err(Error::LeadingDimension { operand: name, given: ld, min: min_ld });
        }
        let (srs, scs) = match self.layout {
            Layout::RowMajor => (ld, 1),
            Layout::ColumnMajor => (1, ld),
        };
        let (row, col) = if self.transpose { (scs, srs) } else { (srs, scs) };
        let matrix_len = match self.layout {
            Layout::RowMajor => ld * srows.saturating_sub(1) + scols,
            Layout::ColumnMajor => ld * scols.saturating_sub(1) + srows,
        };
        let batch_stride = self.batch_stride.unwrap_or(match self.layout {
            Layout::RowMajor => ld * srows,
            Layout::ColumnMajor => ld * scols,
        });
        let len = if rows == 0 || cols == 0 || batch == 0 { 0 } else { batch_stride * (batch - 1) + matrix_len };
        Ok(Strides { row, col, batch: batch_stride, len })
    }
}

/// A matmul problem: `C[b] = alpha * op(A[b]) * op(B[b]) + beta * C[b]` for each batch b, with
/// op(A) of shape m x k, op(B) k x n and C m x n.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatmulDesc {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub batch: usize,
    /// Type of A and B.
    pub dtype: DType,
    pub acc: AccType,
    /// Type of C.
    pub out: DType,
    pub a: Operand,
    pub b: Operand,
    /// C's layout, leading dimension and batch stride (its `transpose` must be false).
    pub c: Operand,
    pub alpha: f32,
    pub beta: f32,
}

/// Resolved strides of the three operands.
#[derive(Clone, Copy, Debug)]
pub struct Resolved {
    pub a: Strides,
    pub b: Strides,
    pub c: Strides,
}

impl MatmulDesc {
    /// Row-major, packed, `C = A * B` with the natural accumulator and output type.
    pub fn new(m: usize, n: usize, k: usize, dtype: DType) -> MatmulDesc {
        let acc = AccType::default_for(dtype);
        let out = if dtype.is_integer() { DType::S32 } else { DType::F32 };
        MatmulDesc { m, n, k, batch: 1, dtype, acc, out, a: Operand::default(), b: Operand::default(), c: Operand::default(), alpha: 1.0, beta: 0.0 }
    }

    /// Checks types and shapes and resolves strides.
    pub fn resolve(&self) -> Result<Resolved> {
        let int_in = self.dtype.is_integer();
        if self.dtype == DType::S32 {
            return Err(Error::UnsupportedInput { dtype: self.dtype });
        }
        match (int_in, self.acc) {
            (true, AccType::S32) | (false, AccType::F32) | (false, AccType::F16) => {}
            (_, acc) => return Err(Error::Accumulator { dtype: self.dtype, acc }),
        }
        if self.acc == AccType::F16 && self.dtype != DType::F16 {
            return Err(Error::Accumulator { dtype: self.dtype, acc: self.acc });
        }
        match (int_in, self.out) {
            (true, DType::S32) | (false, DType::F32 | DType::F16 | DType::Bf16) => {}
            (_, out) => return Err(Error::Output { dtype: self.dtype, out }),
        }
        if int_in && (self.alpha.fract() != 0.0 || self.beta.fract() != 0.0) {
            return Err(Error::NonIntegralScale { alpha: self.alpha, beta: self.beta });
        }
        if self.c.transpose {
            return Err(Error::TransposedC);
        }
        let largest = self.m.max(self.n).max(self.k).max(self.batch);
        if largest > u32::MAX as usize / 2 {
            return Err(Error::DimensionTooLarge { given: largest });
        }
        let r = Resolved { a: self.a.strides("A", self.m, self.k, self.batch)?, b: self.b.strides("B", self.k, self.n, self.batch)?, c: self.c.strides("C", self.m, self.n, self.batch)? };
        if self.batch > 1 && r.c.batch < r.c.len.min(self.c.strides("C", self.m, self.n, 1)?.len) {
            return Err(Error::OverlappingBatches { stride: r.c.batch });
        }
        Ok(r)
    }

    /// Floating-point operations (2 * m * n * k per batch).
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64 * self.batch as f64
    }
}

/// Which implementation ran. Serialized flattened into its record: `"path"` is
/// `"cooperative_matrix"`, `"subgroup"`, `"cpu"` or `"empty"`, beside `"shape"` and `"tile"`
/// objects where they apply.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "path", rename_all = "snake_case")]
pub enum MatmulPath {
    CooperativeMatrix {
        shape: MmaShape,
        tile: Tile,
    },
    Subgroup {
        tile: Tile,
    },
    Cpu,
    /// Nothing to compute (M, N or the batch is zero).
    Empty,
}

impl fmt::Display for MatmulPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MatmulPath::CooperativeMatrix { shape, tile } => write!(f, "cooperative matrix {shape}, tile {tile}"),
            MatmulPath::Subgroup { tile } => write!(f, "subgroup tiled, tile {tile}"),
            MatmulPath::Cpu => f.write_str("cpu"),
            MatmulPath::Empty => f.write_str("nothing to compute"),
        }
    }
}

/// The multiply-add shape a cooperative-matrix kernel is built on: M x N x K with its input and
/// accumulator component types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MmaShape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub input: ComponentType,
    pub acc: ComponentType,
}

impl fmt::Display for MmaShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}x{} {}->{}", self.m, self.n, self.k, self.input, self.acc)
    }
}

/// The workgroup tile of the kernel a matmul ran.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Tile {
    /// The built-in kernel (`matbridge_shaders`).
    pub kernel: String,
    /// The cooperative-matrix configuration label, which [`options::Strategy::CooperativeMatrix`]
    /// can pin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// Rows and columns of C per workgroup.
    pub m: u32,
    pub n: u32,
    /// K per step through workgroup memory (cooperative-matrix kernels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// Sub-groups along M and N (cooperative-matrix kernels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subgroups: Option<[u32; 2]>,
    /// Rows and columns of C per invocation (subgroup kernels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_invocation: Option<[u32; 2]>,
    /// How the kernel works, in words (stages and prefetching, loads, fixed values).
    pub detail: String,
}

impl fmt::Display for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (m, n) = (self.m, self.n);
        match (self.k, self.subgroups, self.per_invocation) {
            (Some(k), Some([wm, wn]), _) => write!(f, "{m}x{n}x{k} ({wm}x{wn} subgroups of {}x{}, {})", m / wm.max(1), n / wn.max(1), self.detail),
            (_, _, Some([rm, rn])) if self.detail.is_empty() => write!(f, "{m}x{n} ({rm}x{rn} per invocation)"),
            (_, _, Some([rm, rn])) => write!(f, "{m}x{n} ({rm}x{rn} per invocation, {})", self.detail),
            _ => write!(f, "{m}x{n} ({})", self.detail),
        }
    }
}

/// Serializes a duration as seconds (`f64`).
pub(crate) fn as_seconds<S: serde::Serializer>(d: &std::time::Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Host data of one operand: raw little-endian bytes and its dtype.
#[derive(Clone, Debug)]
pub struct HostData {
    pub dtype: DType,
    pub bytes: Vec<u8>,
}

impl HostData {
    pub fn from_slice<T: Element>(data: &[T]) -> HostData {
        HostData { dtype: T::DTYPE, bytes: bytemuck::cast_slice(data).to_vec() }
    }
    pub fn len(&self) -> usize {
        self.bytes.len() / self.dtype.size()
    }
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
    /// Element `i` as f64.
    pub fn get(&self, i: usize) -> f64 {
        let b = &self.bytes;
        match self.dtype {
            DType::F32 => f32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]) as f64,
            DType::S32 => i32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]) as f64,
            DType::F16 => f16::from_le_bytes([b[2 * i], b[2 * i + 1]]).to_f64(),
            DType::Bf16 => bf16::from_le_bytes([b[2 * i], b[2 * i + 1]]).to_f64(),
            DType::S8 => b[i] as i8 as f64,
            DType::U8 => b[i] as f64,
        }
    }
    /// All elements converted to f32 (exact for every input type but s32 beyond 2^24).
    pub fn to_f32(&self) -> Vec<f32> {
        match self.dtype {
            DType::F32 => bytemuck::pod_collect_to_vec(&self.bytes),
            DType::F16 => self.bytes.chunks_exact(2).map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32()).collect(),
            DType::Bf16 => self.bytes.chunks_exact(2).map(|c| bf16::from_le_bytes([c[0], c[1]]).to_f32()).collect(),
            _ => (0..self.len()).map(|i| self.get(i) as f32).collect(),
        }
    }
    /// All elements as i32 (integer types).
    pub fn to_i32(&self) -> Vec<i32> {
        match self.dtype {
            DType::S8 => self.bytes.iter().map(|b| *b as i8 as i32).collect(),
            DType::U8 => self.bytes.iter().map(|b| *b as i32).collect(),
            DType::S32 => bytemuck::pod_collect_to_vec(&self.bytes),
            _ => (0..self.len()).map(|i| self.get(i) as i32).collect(),
        }
    }
    /// Builds data of `dtype` from f32 values (rounding to nearest even).
    pub fn from_f32(dtype: DType, values: &[f32]) -> HostData {
        let bytes = match dtype {
            DType::F32 => bytemuck::cast_slice(values).to_vec(),
            DType::F16 => values.iter().flat_map(|v| f16::from_f32(*v).to_le_bytes()).collect(),
            DType::Bf16 => values.iter().flat_map(|v| bf16::from_f32(*v).to_le_bytes()).collect(),
            DType::S32 => values.iter().flat_map(|v| (*v as i32).to_le_bytes()).collect(),
            DType::S8 => values.iter().map(|v| *v as i8 as u8).collect(),
            DType::U8 => values.iter().map(|v| *v as u8).collect(),
        };
        HostData { dtype, bytes }
    }
}
