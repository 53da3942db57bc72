//! Which `OpenCL.std` functions of doubles have a lowering. `GLSL.std.450`'s trigonometric,
//! hyperbolic, exponential and power functions take only 16- and 32-bit floats: the
//! exponentials, logarithms, `expm1`, `log1p`, the hyperbolic functions and their inverses, the
//! powers (`pow`, `powr`, `pown`, `rootn`, `cbrt`), the trigonometric functions and their
//! inverses, `erf`, `erfc` and `tgamma` of doubles are `exponentials.rs`', `hyperbolic.rs`',
//! `powers.rs`', `double_trigonometry.rs`', `inverse_trigonometry.rs`',
//! `double_error_function.rs`' and `gamma.rs`' double helpers; `lgamma` has none yet, and
//! translation refuses it by name instead of writing a module Vulkan rejects. `nan` builds its quiet NaN from the payload for every
//! width.

use super::Lower;
use spirv::{Op, OpenclStd100Op as CL, Word};

/// Whether `op` of doubles has a lowering.
pub(super) fn serves(op: CL) -> bool {
    use CL::*;
    !matches!(op, lgamma | lgamma_r)
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
