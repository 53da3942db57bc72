//! Doubles. `GLSL.std.450`'s trigonometric, hyperbolic, exponential and power functions take
//! only 16- and 32-bit floats; every `OpenCL.std` function of doubles that would become one has
//! a double helper instead (`exponentials.rs`, `hyperbolic.rs`, `powers.rs`,
//! `double_trigonometry.rs`, `inverse_trigonometry.rs`, `double_error_function.rs`,
//! `gamma.rs`), and [`narrow_only`] guards the rest: translation refuses by name rather than
//! write a module Vulkan rejects. `half_` and `native_` forms of doubles are the plain
//! functions, and `nan` builds its quiet NaN from the payload for every width.

use super::Lower;
use spirv::{GlslStd450Op as G, Op, OpenclStd100Op as CL, Word};

/// Whether `GLSL.std.450` instruction `g` takes only 16- and 32-bit floats.
pub(super) fn narrow_only(g: G) -> bool {
    use G::*;
    matches!(g, Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh | Atan2 | Pow | Exp | Log | Exp2 | Log2)
}

/// The plain function of a `half_` or `native_` form whose lowering for floats is a 32-bit
/// `GLSL.std.450` instruction.
pub(super) fn plain(op: CL) -> Option<CL> {
    use CL::*;
    Some(match op {
        half_cos | native_cos => cos,
        half_sin | native_sin => sin,
        half_tan | native_tan => tan,
        half_exp | native_exp => exp,
        half_exp2 | native_exp2 => exp2,
        half_exp10 | native_exp10 => exp10,
        half_log | native_log => log,
        half_log2 | native_log2 => log2,
        half_log10 | native_log10 => log10,
        half_powr | native_powr => powr,
        _ => return None,
    })
}

impl Lower<'_, '_> {
    /// `nan(code)`: the quiet NaN of `ty`'s width carrying `code` (an unsigned integer of the
    /// same width, its bits below the quiet bit kept).
    pub(super) fn nan_with_payload(&mut self, ty: Word, code: Word) -> Word {
        let (_, _, width, _) = self.shape(ty);
        let it = self.uint_like(ty);
        let (quiet, payload) = match width {
            16 => (0x7e00i64, 0x01ffi64),
            64 => (0x7ff8_0000_0000_0000, 0x0007_ffff_ffff_ffff),
            _ => (0x7fc0_0000, 0x003f_ffff),
        };
        let mask = self.splat_i(it, payload);
        let kept = self.op(Op::BitwiseAnd, it, &[code, mask]);
        let quiet = self.splat_i(it, quiet);
        let bits = self.op(Op::BitwiseOr, it, &[kept, quiet]);
        self.b.bitcast(ty, bits)
    }
}
