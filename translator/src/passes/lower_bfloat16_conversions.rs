//! `LowerBfloat16Conversions`: SPV_INTEL_bfloat16_conversion's `OpConvertFToBF16INTEL` and
//! `OpConvertBF16ToFINTEL` -> integer arithmetic on the float's bits.
//!
//! Intel's kernels carry bfloat16 values as 16-bit integers (`ushort`), converting with
//! `intel_convert_bfloat16_as_ushort` and `intel_convert_as_bfloat16_float`, which llvm-spirv
//! writes as these instructions; no Vulkan device has the extension. Rewrite, in place:
//! - f32 -> bf16 bits: round to nearest even on the bits, `(x + 0x7fff + ((x >> 16) & 1)) >> 16`
//!   (infinities stay, the largest values round to them, subnormals round like any other
//!   value), a NaN keeps its sign and top mantissa bits and is made quiet (`| 0x40`);
//! - bf16 bits -> f32: the bits shifted to the top of a word, exact.
//!
//! Scalars and vectors alike; the 16-bit results and operands go to `legalize-narrow-types`
//! where the target has no 16-bit integers. Preconditions: none. The capability and extension go
//! with the last instruction.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Capability, Op, Word};

pub struct LowerBfloat16Conversions;

impl Pass for LowerBfloat16Conversions {
    fn name(&self) -> &'static str {
        "lower-bfloat16-conversions"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        for fi in 0..module.functions.len() {
            for bi in 0..module.functions[fi].blocks.len() {
                let body = std::mem::take(&mut module.functions[fi].blocks[bi].insts);
                for inst in body {
                    let op = inst.op();
                    if !matches!(op, Some(Op::ConvertFToBF16INTEL | Op::ConvertBF16ToFINTEL)) {
                        module.functions[fi].blocks[bi].insts.push(inst);
                        continue;
                    }
                    let (ty, x) = (inst.ty()?, inst.id(0)?);
                    let n = types.vector(ty).map_or(1, |v| v.1);
                    let to = op == Some(Op::ConvertFToBF16INTEL);
                    let (float, int) = if to { (types.type_of(x).unwrap_or(0), ty) } else { (ty, types.type_of(x).unwrap_or(0)) };
                    let comp = |t: Word| types.vector(t).map_or(t, |v| v.0);
                    if types.float(comp(float)) != Some((32, None)) || types.int(comp(int)).map(|i| i.0) != Some(16) {
                        return Err(Error::Invalid { site: module.site(&inst), message: "a bfloat16 conversion of a type other than float and 16-bit integer scalars and vectors".into() });
                    }
                    let index = module.functions[fi].blocks[bi].insts.len();
                    let mut b = Builder::new(module, Cursor { function: fi, block: bi, index }).with_origin(inst.origin);
                    let v = if to { to_bf16(&mut b, ty, n, x) } else { from_bf16(&mut b, ty, n, x) };
                    b.insert(Inst::new(Op::CopyObject, Some(ty), inst.result_id, vec![Operand::Id(v)]));
                    outcome.count(inst.opcode);
                }
            }
        }
        if outcome.changed {
            module.capabilities.retain(|c| c.word_opt(0) != Some(Capability::BFloat16ConversionINTEL as u32));
            module.extensions.retain(|e| e.string(0).as_deref() != Some("SPV_INTEL_bfloat16_conversion"));
        }
        Ok(outcome)
    }
}

/// `value` as a constant of `uint` or of a vector of `n` of them.
fn splat(b: &mut Builder<'_>, n: u32, value: u32) -> Word {
    let c = b.module.constant_u32(value);
    if n == 1 {
        return c;
    }
    let uint = b.module.type_int(32, false);
    let ty = b.module.type_vector(uint, n);
    b.module.constant_composite(ty, &vec![c; n as usize])
}

fn words(b: &mut Builder<'_>, n: u32) -> Word {
    let uint = b.module.type_int(32, false);
    if n == 1 {
        uint
    } else {
        b.module.type_vector(uint, n)
    }
}

/// The bf16 bits (of 16-bit integer type `ty`) nearest to float `x`.
pub(crate) fn to_bf16(b: &mut Builder<'_>, ty: Word, n: u32, x: Word) -> Word {
    let wty = words(b, n);
    let boolean = b.module.type_bool();
    let bty = if n == 1 { boolean } else { b.module.type_vector(boolean, n) };
    let bits = b.bitcast(wty, x);
    let (sixteen, one, half, quiet) = (splat(b, n, 16), splat(b, n, 1), splat(b, n, 0x7fff), splat(b, n, 0x40));
    let high = b.op(Op::ShiftRightLogical, wty, &[bits, sixteen]);
    let odd = b.op(Op::BitwiseAnd, wty, &[high, one]);
    let bias = b.iadd(wty, half, odd);
    let sum = b.iadd(wty, bits, bias);
    let rounded = b.op(Op::ShiftRightLogical, wty, &[sum, sixteen]);
    let nan = b.op(Op::BitwiseOr, wty, &[high, quiet]);
    let is_nan = b.op(Op::IsNan, bty, &[x]);
    let r = b.select(wty, is_nan, nan, rounded);
    b.op(Op::UConvert, ty, &[r])
}

/// The float (of type `ty`) whose bf16 bits are the 16-bit integer `x`.
fn from_bf16(b: &mut Builder<'_>, ty: Word, n: u32, x: Word) -> Word {
    let wty = words(b, n);
    let wide = b.op(Op::UConvert, wty, &[x]);
    let sixteen = splat(b, n, 16);
    let bits = b.op(Op::ShiftLeftLogical, wty, &[wide, sixteen]);
    b.bitcast(ty, bits)
}
