//! `LowerIntegerDot`: SPV_KHR_integer_dot_product -> plain integer arithmetic.
//!
//! Rewrite: each `OpSDot`, `OpUDot`, `OpSUDot` and their `AccSat` forms becomes, in place:
//! per component, an extract (`OpCompositeExtract` for vectors, `OpBitField{S,U}Extract` of byte
//! `i` for the packed 4x8 form), a sign or zero extension to the result width (`OpSConvert`, or
//! `OpUConvert` to the unsigned type of that width, as `OpUConvert` requires, followed by an
//! `OpBitcast` when the result type is signed; only an `OpBitcast` when only signedness
//! differs), `OpIMul`, and an `OpIAdd` chain — which is the low N bits of the exact dot product,
//! as the spec defines. The AccSat forms then add the accumulator with saturation: unsigned by
//! `OpULessThan` on the wrapped sum, signed by the sign-overflow test `((acc ^ s) & (d ^ s)) < 0`,
//! selecting the type's minimum or maximum. The original result id is kept (an `OpCopyObject`
//! of the value), so every use and debug name still refers to it.
//!
//! Preconditions: a valid module. Leaves: no dot-product instructions; the requirement step
//! drops the DotProduct* capabilities and the extension and keeps `Int8` where 8-bit vectors
//! remain. Applies where the target lacks `integer_dot_product`.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Op, Word};

pub struct LowerIntegerDot;

#[derive(Clone, Copy, PartialEq)]
enum Sign {
    Signed,
    Unsigned,
}

fn is_dot(inst: &Inst) -> bool {
    (Op::SDot as u32..=Op::SUDotAccSat as u32).contains(&inst.opcode)
}

impl Pass for LowerIntegerDot {
    fn name(&self) -> &'static str {
        "lower-integer-dot"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        !target.integer_dot_product
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.functions.iter().flat_map(|f| &f.blocks).flat_map(|b| &b.insts).any(is_dot) {
            return Ok(outcome);
        }
        let types = Types::new(module);
        let mut bytes = None;
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                if !module.functions[f].blocks[b].insts.iter().any(is_dot) {
                    continue;
                }
                // Rebuilt front to back, so the builder always appends.
                let body = std::mem::take(&mut module.functions[f].blocks[b].insts);
                for inst in body {
                    if !is_dot(&inst) {
                        module.functions[f].blocks[b].insts.push(inst);
                        continue;
                    }
                    outcome.count(inst.opcode);
                    let index = module.functions[f].blocks[b].insts.len();
                    let mut builder = Builder::new(module, Cursor { function: f, block: b, index }).with_origin(inst.origin);
                    lower_one(&mut builder, &types, &mut bytes, &inst)?;
                }
            }
        }
        Ok(outcome)
    }
}

/// An error naming `inst` for operands the lowering cannot take.
fn invalid(b: &Builder<'_>, inst: &Inst, message: String) -> Error {
    Error::Invalid { site: b.module.site(inst), message }
}

/// Lowers one dot product at the builder's cursor.
/// `bytes` holds the `%uint` constants 8 (the byte width) and 0, 8, 16, 24 (byte offsets) once
/// the packed form first needs them.
fn lower_one(b: &mut Builder<'_>, types: &Types, bytes: &mut Option<(Word, [Word; 4])>, inst: &Inst) -> Result<()> {
    let op = inst.op();
    let acc_sat = matches!(op, Some(Op::SDotAccSat | Op::UDotAccSat | Op::SUDotAccSat));
    let (s1, s2) = match op {
        Some(Op::SDot | Op::SDotAccSat) => (Sign::Signed, Sign::Signed),
        Some(Op::UDot | Op::UDotAccSat) => (Sign::Unsigned, Sign::Unsigned),
        _ => (Sign::Signed, Sign::Unsigned),
    };
    let result_ty = inst.ty()?;
    let result = inst.result()?;
    let [v1, v2] = inst.ids()?;
    let acc = if acc_sat { Some(inst.id(2)?) } else { None };
    let packed = inst.operands.iter().any(|o| matches!(o, Operand::Enum(rspirv::grammar::OperandKind::PackedVectorFormat, _)));
    let Some((n, result_signed)) = types.int(result_ty) else { return Err(invalid(b, inst, format!("result type %{result_ty} is not an integer type"))) };
    let (Some(in_ty), Some(in_ty2)) = (types.type_of(v1), types.type_of(v2)) else { return Err(invalid(b, inst, "an operand has no known type".into())) };
    // spirv-val does not compare the accumulator's type with the result type.
    if let Some(acc) = acc {
        let acc_ty = types.type_of(acc);
        if acc_ty != Some(result_ty) {
            let found = acc_ty.map_or("no known type".to_string(), |t| format!("type %{t}"));
            return Err(invalid(b, inst, format!("accumulator %{acc} has {found}, not the result type %{result_ty}")));
        }
    }

    // Per-component values, already extended to the result type.
    let mut terms: Vec<(Word, Word)> = Vec::new();
    if let Some((comp_ty, count)) = types.vector(in_ty) {
        let Some((w, _)) = types.int(comp_ty) else { return Err(invalid(b, inst, "vector components are not integers".into())) };
        let Some((comp_ty2, _)) = types.vector(in_ty2) else { return Err(invalid(b, inst, "operands differ in shape".into())) };
        if w > n {
            return Err(invalid(b, inst, format!("component width {w} exceeds the result width {n}")));
        }
        for i in 0..count {
            let a = b.composite_extract(comp_ty, v1, i);
            let c = b.composite_extract(comp_ty2, v2, i);
            let a = extend(b, a, comp_ty, w, s1, result_ty, n, result_signed);
            let c = extend(b, c, comp_ty2, w, s2, result_ty, n, result_signed);
            terms.push((a, c));
        }
    } else if let (Some((32, _)), Some((32, _))) = (types.int(in_ty), types.int(in_ty2)) {
        if !packed {
            return Err(invalid(b, inst, "scalar operands need Packed Vector Format PackedVectorFormat4x8Bit".into()));
        }
        let (c8, offsets) = *bytes.get_or_insert_with(|| (b.module.constant_u32(8), [0, 8, 16, 24].map(|o| b.module.constant_u32(o))));
        for offset in offsets {
            let extract = |s| if s == Sign::Signed { Op::BitFieldSExtract } else { Op::BitFieldUExtract };
            let a = b.op(extract(s1), in_ty, &[v1, offset, c8]);
            let c = b.op(extract(s2), in_ty2, &[v2, offset, c8]);
            // The extracts are already extended to 32 bits; only width or signedness may differ.
            let a = extend(b, a, in_ty, 32, s1, result_ty, n, result_signed);
            let c = extend(b, c, in_ty2, 32, s2, result_ty, n, result_signed);
            terms.push((a, c));
        }
    } else {
        return Err(invalid(b, inst, format!("operand types %{in_ty} and %{in_ty2} are neither integer vectors nor 32-bit integers")));
    }

    let mut sum = None;
    for (x, y) in terms {
        let p = b.imul(result_ty, x, y);
        sum = Some(match sum {
            None => p,
            Some(s) => b.iadd(result_ty, s, p),
        });
    }
    let Some(dot) = sum else { return Err(invalid(b, inst, "empty vectors".into())) };
    let value = match acc {
        None => dot,
        Some(acc) => {
            let bool_ty = b.module.type_bool();
            let s = b.iadd(result_ty, acc, dot);
            if op == Some(Op::UDotAccSat) {
                let max = b.module.constant_int(result_ty, n, result_signed, u64::MAX);
                let overflow = b.op(Op::ULessThan, bool_ty, &[s, acc]);
                b.select(result_ty, overflow, max, s)
            } else {
                let zero = b.module.constant_int(result_ty, n, result_signed, 0);
                let min = b.module.constant_int(result_ty, n, result_signed, 1u64 << (n - 1));
                let max = b.module.constant_int(result_ty, n, result_signed, (1u64 << (n - 1)) - 1);
                let x1 = b.op(Op::BitwiseXor, result_ty, &[acc, s]);
                let x2 = b.op(Op::BitwiseXor, result_ty, &[dot, s]);
                let both = b.op(Op::BitwiseAnd, result_ty, &[x1, x2]);
                let overflow = b.op(Op::SLessThan, bool_ty, &[both, zero]);
                let negative = b.op(Op::SLessThan, bool_ty, &[acc, zero]);
                let sat = b.select(result_ty, negative, min, max);
                b.select(result_ty, overflow, sat, s)
            }
        }
    };
    b.insert(Inst::new(Op::CopyObject, Some(result_ty), Some(result), vec![Operand::Id(value)]));
    Ok(())
}

/// Sign- or zero-extends `value` (of integer type `ty`, width `w`) to `result_ty` (width `n`).
#[allow(clippy::too_many_arguments)] // a value, its type and width, and the target type's
fn extend(b: &mut Builder<'_>, value: Word, ty: Word, w: u32, sign: Sign, result_ty: Word, n: u32, result_signed: bool) -> Word {
    if w == n {
        // Same width: at most the signedness differs.
        return if ty == result_ty { value } else { b.bitcast(result_ty, value) };
    }
    // Narrowing (packed extracts are 32 bits wide) or widening: the conversion's signedness
    // decides how widening fills the high bits; narrowing just truncates. OpUConvert needs an
    // unsigned result type.
    if sign == Sign::Signed {
        return b.op(Op::SConvert, result_ty, &[value]);
    }
    if !result_signed {
        return b.op(Op::UConvert, result_ty, &[value]);
    }
    let unsigned = b.module.type_int(n, false);
    let wide = b.op(Op::UConvert, unsigned, &[value]);
    b.bitcast(result_ty, wide)
}
