//! `LowerIntegerDot`: SPV_KHR_integer_dot_product -> plain integer arithmetic.
//!
//! Rewrite: each `OpSDot`, `OpUDot`, `OpSUDot` and their `AccSat` forms becomes, in place:
//! per component, an extract (`OpCompositeExtract` for vectors, `OpBitField{S,U}Extract` of byte
//! `i` for the packed 4x8 form), a sign or zero extension to the result width
//! (`OpSConvert`/`OpUConvert`, or `OpBitcast` when only signedness differs), `OpIMul`, and an
//! `OpIAdd` chain — which is the low N bits of the exact dot product, as the spec defines. The
//! AccSat forms then add the accumulator with saturation: unsigned by `OpULessThan` on the
//! wrapped sum, signed by the sign-overflow test `((acc ^ s) & (d ^ s)) < 0`, selecting the type's
//! minimum or maximum.
//!
//! Preconditions: a valid module. Leaves: no dot-product instructions; the DotProduct*
//! capabilities and the extension are removed by the final step. Runs when the target lacks
//! `integer_dot_product`.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::module::{cap, op, Inst, Module};
use crate::pipeline::{Changes, Pass, PassStats};
use crate::profile::DeviceCaps;

pub struct LowerIntegerDot;

#[derive(Clone, Copy, PartialEq)]
enum Sign {
    Signed,
    Unsigned,
}

struct Emitter<'a> {
    module: &'a mut Module,
    out: Vec<Inst>,
    /// `OpConstant %uint` ids of 8, 0, 8, 16, 24 (count and byte offsets), made on first use.
    byte_consts: Option<(u32, [u32; 4])>,
}

impl Emitter<'_> {
    fn byte_consts(&mut self) -> (u32, [u32; 4]) {
        if let Some(c) = self.byte_consts {
            return c;
        }
        let c8 = self.module.const_u32(8);
        let offsets = [0, 8, 16, 24].map(|o| self.module.const_u32(o));
        self.byte_consts = Some((c8, offsets));
        (c8, offsets)
    }
}

impl Emitter<'_> {
    fn emit(&mut self, op: u32, ty: u32, args: &[u32]) -> u32 {
        let id = self.module.alloc_id();
        let mut operands = vec![ty, id];
        operands.extend_from_slice(args);
        self.out.push(Inst::new(op, operands));
        id
    }
}

impl Pass for LowerIntegerDot {
    fn name(&self) -> &'static str {
        "lower-integer-dot"
    }

    fn run(&self, module: &mut Module, _target: &DeviceCaps, changes: &mut Changes, stats: &mut PassStats) -> Result<()> {
        if !(op::SDOT..=op::SUDOT_ACC_SAT).any(|o| module.uses_opcode(o)) {
            return Ok(());
        }
        let types = Types::new(module);
        let start = module.functions_start();
        let body = module.insts.split_off(start);
        // Globals added while lowering land at the end of `module.insts`, i.e. before the body.
        let mut em = Emitter { module, out: Vec::with_capacity(body.len()), byte_consts: None };
        for inst in body {
            if !(op::SDOT..=op::SUDOT_ACC_SAT).contains(&inst.op) {
                em.out.push(inst);
                continue;
            }
            stats.count(inst.op);
            lower_one(&mut em, &types, &inst)?;
        }
        let Emitter { module, out, .. } = em;
        module.insts.extend(out);
        changes.remove_capabilities.extend([cap::DOT_PRODUCT, cap::DOT_PRODUCT_INPUT_ALL, cap::DOT_PRODUCT_INPUT_4X8_BIT, cap::DOT_PRODUCT_INPUT_4X8_BIT_PACKED]);
        changes.remove_extensions.push("SPV_KHR_integer_dot_product".into());
        Ok(())
    }
}

fn lower_one(em: &mut Emitter<'_>, types: &Types, inst: &Inst) -> Result<()> {
    let bad = |message: String| Error::Invalid { opcode: inst.name(), offset: inst.at(), message };
    let acc_sat = inst.op >= op::SDOT_ACC_SAT;
    let (s1, s2) = match inst.op {
        op::SDOT | op::SDOT_ACC_SAT => (Sign::Signed, Sign::Signed),
        op::UDOT | op::UDOT_ACC_SAT => (Sign::Unsigned, Sign::Unsigned),
        _ => (Sign::Signed, Sign::Unsigned),
    };
    let result_ty = inst.operand(0)?;
    let result = inst.operand(1)?;
    let v1 = inst.operand(2)?;
    let v2 = inst.operand(3)?;
    let acc = if acc_sat { Some(inst.operand(4)?) } else { None };
    let packed_format = inst.operands.get(if acc_sat { 5 } else { 4 }).copied();
    let (n, result_signed) = types.int(result_ty).ok_or_else(|| bad(format!("result type %{result_ty} is not an integer type")))?;
    let in_ty = types.type_of(v1).ok_or_else(|| bad(format!("operand %{v1} has no known type")))?;
    let in_ty2 = types.type_of(v2).ok_or_else(|| bad(format!("operand %{v2} has no known type")))?;

    // Per-component values, already extended to the result type.
    let mut terms: Vec<(u32, u32)> = Vec::new();
    if let Some((comp_ty, count)) = types.vector(in_ty) {
        let (w, _) = types.int(comp_ty).ok_or_else(|| bad("vector components are not integers".into()))?;
        let comp_ty2 = types.vector(in_ty2).map(|v| v.0).ok_or_else(|| bad("operands differ in shape".into()))?;
        if w > n {
            return Err(bad(format!("component width {w} exceeds the result width {n}")));
        }
        for i in 0..count {
            let a = em.emit(op::COMPOSITE_EXTRACT, comp_ty, &[v1, i]);
            let b = em.emit(op::COMPOSITE_EXTRACT, comp_ty2, &[v2, i]);
            let a = extend(em, a, comp_ty, w, s1, result_ty, n);
            let b = extend(em, b, comp_ty2, w, s2, result_ty, n);
            terms.push((a, b));
        }
    } else if let Some((32, _)) = types.int(in_ty) {
        if packed_format != Some(0) {
            return Err(bad("scalar operands need Packed Vector Format PackedVectorFormat4x8Bit".into()));
        }
        let (c8, offsets) = em.byte_consts();
        for &offset in offsets.iter() {
            let extract = |s| if s == Sign::Signed { op::BIT_FIELD_S_EXTRACT } else { op::BIT_FIELD_U_EXTRACT };
            let a = em.emit(extract(s1), in_ty, &[v1, offset, c8]);
            let b = em.emit(extract(s2), in_ty2, &[v2, offset, c8]);
            // The extracts are already extended to 32 bits; only width or signedness may differ.
            let a = extend(em, a, in_ty, 32, s1, result_ty, n);
            let b = extend(em, b, in_ty2, 32, s2, result_ty, n);
            terms.push((a, b));
        }
    } else {
        return Err(bad(format!("operand type %{in_ty} is neither an integer vector nor a 32-bit integer")));
    }

    let mut sum = None;
    for (a, b) in terms {
        let p = em.emit(op::I_MUL, result_ty, &[a, b]);
        sum = Some(match sum {
            None => p,
            Some(s) => em.emit(op::I_ADD, result_ty, &[s, p]),
        });
    }
    let dot = sum.ok_or_else(|| bad("empty vectors".into()))?;
    let value = match acc {
        None => dot,
        Some(acc) => {
            let bool_ty = em.module.type_bool();
            let s = em.emit(op::I_ADD, result_ty, &[acc, dot]);
            let unsigned_sat = inst.op == op::UDOT_ACC_SAT;
            if unsigned_sat {
                let max = em.module.const_int(result_ty, n, result_signed, u64::MAX);
                let overflow = em.emit(op::U_LESS_THAN, bool_ty, &[s, acc]);
                em.emit(op::SELECT, result_ty, &[overflow, max, s])
            } else {
                let zero = em.module.const_int(result_ty, n, result_signed, 0);
                let min = em.module.const_int(result_ty, n, result_signed, 1u64 << (n - 1));
                let max = em.module.const_int(result_ty, n, result_signed, (1u64 << (n - 1)) - 1);
                let x1 = em.emit(op::BITWISE_XOR, result_ty, &[acc, s]);
                let x2 = em.emit(op::BITWISE_XOR, result_ty, &[dot, s]);
                let both = em.emit(op::BITWISE_AND, result_ty, &[x1, x2]);
                let overflow = em.emit(op::S_LESS_THAN, bool_ty, &[both, zero]);
                let negative = em.emit(op::S_LESS_THAN, bool_ty, &[acc, zero]);
                let sat = em.emit(op::SELECT, result_ty, &[negative, min, max]);
                em.emit(op::SELECT, result_ty, &[overflow, sat, s])
            }
        }
    };
    // Keep the original result id so that every use (and any debug name) still refers to it.
    em.out.push(Inst::new(op::COPY_OBJECT, vec![result_ty, result, value]));
    Ok(())
}

/// Sign- or zero-extends `value` (of integer type `ty`, width `w`) to `result_ty` (width `n`).
fn extend(em: &mut Emitter<'_>, value: u32, ty: u32, w: u32, sign: Sign, result_ty: u32, n: u32) -> u32 {
    if w == n {
        // Same width: at most the signedness differs.
        return if ty == result_ty { value } else { em.emit(op::BITCAST, result_ty, &[value]) };
    }
    // Narrowing (packed extracts are 32 bits wide) or widening: the conversion's signedness
    // decides how widening fills the high bits; narrowing just truncates.
    let conv = if sign == Sign::Signed { op::S_CONVERT } else { op::U_CONVERT };
    em.emit(conv, result_ty, &[value])
}
