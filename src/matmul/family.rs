//! Cooperative-matrix kernel families: which built-in kernels compute a problem's input and
//! accumulator types, and how a plan describes their tiles. Shared by the general kernel
//! (`super::coop`), the wide-tile kernel (`super::coop_wide`) and the planner.

use super::gpu::Requests;
use super::{AccType, DType, MatmulDesc, MmaShape, Tile};
use matbridge_translator::profile::ComponentType as T;

/// Tile rows per rasterisation group (consecutive workgroups walk this many tile rows column by
/// column, so that they share A and B panels in L2).
pub(super) const GROUP_M: u32 = 8;

/// A kernel family: its name, the element and accumulator component types of its MMA, K of the
/// MMA shape and the elements per 16-byte vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Family {
    pub(super) name: &'static str,
    pub(super) ab: T,
    pub(super) acc: T,
    pub(super) k: u32,
    pub(super) vec: u32,
}

impl Family {
    /// The translator requests that make the family's kernels from the f16 modules: the
    /// retyping pass for bf16 inputs, else none.
    pub(super) fn requests(&self) -> Requests {
        if self.ab == T::Bf16 {
            &[matbridge_translator::Request::RetypeFloat16ToBFloat16]
        } else {
            &[]
        }
    }

    /// The family's MMA shape with `n` columns.
    pub(super) fn shape(&self, n: u32) -> MmaShape {
        MmaShape { m: 16, n, k: self.k, input: self.ab, acc: self.acc }
    }

    /// Whether operands are 8-bit (16 per vector).
    pub(super) fn eight_bit(&self) -> bool {
        self.vec == 16
    }
}

/// The family that computes `desc`'s input and accumulator types, if any.
pub(super) fn family_for(desc: &MatmulDesc) -> Option<Family> {
    let f = |name, ab, acc, k, vec| Some(Family { name, ab, acc, k, vec });
    match (desc.dtype, desc.acc) {
        (DType::F16, AccType::F32) => f("f16_f32", T::F16, T::F32, 16, 8),
        (DType::F16, AccType::F16) => f("f16_f16", T::F16, T::F16, 16, 8),
        // The f16 kernels with their 16-bit float type retyped to bf16 (the translator's
        // `retype-float16-to-bfloat16` pass).
        (DType::Bf16, AccType::F32) => f("f16_f32", T::Bf16, T::F32, 16, 8),
        (DType::S8, AccType::S32) => f("s8_s32", T::S8, T::S32, 32, 16),
        // u8 x u8 accumulates in u32, whose bits are the wrapped s32 result.
        (DType::U8, AccType::S32) => f("u8_s32", T::U8, T::U32, 32, 16),
        _ => None,
    }
}

/// The tile of a cooperative-matrix kernel: `kernel` built for configuration `config`, a
/// `tile` (M x N x K step) of C per workgroup split over `subgroups` (along M and N).
pub(super) fn coop_tile(kernel: &str, config: String, tile: [u32; 3], subgroups: [u32; 2], detail: String) -> Tile {
    let [m, n, k] = tile;
    Tile { kernel: kernel.to_string(), config: Some(config), m, n, k: Some(k), subgroups: Some(subgroups), per_invocation: None, detail }
}
