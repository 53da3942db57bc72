//! `WidenBitInstructions`: `OpBitCount` and `OpBitReverse` on integers other than 32 bits wide
//! become 32-bit ones, as Vulkan requires (without `maintenance9`) and OpenCL's `popcount` of a
//! `long`, `short` or `char` is written.
//!
//! A 64-bit value is counted or reversed as its two words (`count(lo) + count(hi)`, `rev(lo) << 32
//! | rev(hi)`); an 8- or 16-bit one zero-extended to a word (reversed, then shifted down). Scalars
//! and vectors alike; the result keeps its type.
//!
//! Preconditions: none. Applies to every target; changes only modules with such instructions.
//! Runs before the passes that narrow or widen integer types, which then see 32-bit ones.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Op, Word};

pub struct WidenBitInstructions;

impl Pass for WidenBitInstructions {
    fn name(&self) -> &'static str {
        "widen-bit-instructions"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        // (component width, count) of an integer scalar or vector type.
        let shape = |t: Word| {
            let (c, n) = types.vector(t).unwrap_or((t, 1));
            types.int(c).map(|(w, s)| (w, s, n))
        };
        let odd =
            |i: &Inst| matches!(i.op(), Some(Op::BitCount | Op::BitReverse)) && i.operands.first().and_then(Operand::id).and_then(|v| types.type_of(v)).and_then(shape).is_some_and(|(w, ..)| w != 32);
        if !module.functions.iter().flat_map(|f| f.insts()).any(odd) {
            return Ok(outcome);
        }
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
                let mut out = Vec::with_capacity(insts.len());
                for inst in insts {
                    let operand = inst.operands.first().and_then(Operand::id).unwrap_or_default();
                    let (Some(ty), Some(source), true) = (inst.result_type, types.type_of(operand), odd(&inst)) else {
                        out.push(inst);
                        continue;
                    };
                    let Some((width, signed, n)) = shape(source) else {
                        out.push(inst);
                        continue;
                    };
                    let origin = inst.origin;
                    let uint = module.type_int(32, false);
                    let words = if n > 1 { module.type_vector(uint, n) } else { uint };
                    let splat = |module: &mut Module, ty: Word, scalar: Word| if n > 1 { module.intern(Op::ConstantComposite, Some(ty), vec![Operand::Id(scalar); n as usize]) } else { scalar };
                    let unsigned = |module: &mut Module, w: u32| {
                        let u = module.type_int(w, false);
                        if n > 1 {
                            module.type_vector(u, n)
                        } else {
                            u
                        }
                    };
                    let (rw, ..) = shape(ty).unwrap_or((32, signed, n));
                    let thirty_two = module.constant_u32(32);
                    let by32 = splat(module, words, thirty_two);
                    let op = inst.op().unwrap_or(Op::BitCount);
                    let word_result = if width == 64 {
                        let lo = emit(module, &mut out, origin, Op::UConvert, words, &[operand]);
                        let high = emit(module, &mut out, origin, Op::ShiftRightLogical, source, &[operand, by32]);
                        let hi = emit(module, &mut out, origin, Op::UConvert, words, &[high]);
                        let (a, b) = (emit(module, &mut out, origin, op, words, &[lo]), emit(module, &mut out, origin, op, words, &[hi]));
                        if op == Op::BitCount {
                            emit(module, &mut out, origin, Op::IAdd, words, &[a, b])
                        } else {
                            // The reversed low word is the high word of the result.
                            let wide = unsigned(module, 64);
                            let (a, b) = (emit(module, &mut out, origin, Op::UConvert, wide, &[a]), emit(module, &mut out, origin, Op::UConvert, wide, &[b]));
                            let a = emit(module, &mut out, origin, Op::ShiftLeftLogical, wide, &[a, by32]);
                            let r = emit(module, &mut out, origin, Op::BitwiseOr, wide, &[a, b]);
                            out.push(Inst::new(Op::Bitcast, Some(ty), inst.result_id, vec![Operand::Id(r)]).from_origin(origin));
                            outcome.count(inst.opcode);
                            continue;
                        }
                    } else {
                        let x = emit(module, &mut out, origin, Op::UConvert, words, &[operand]);
                        let y = emit(module, &mut out, origin, op, words, &[x]);
                        if op == Op::BitReverse {
                            let by = module.constant_u32(32 - width.min(32));
                            let by = splat(module, words, by);
                            emit(module, &mut out, origin, Op::ShiftRightLogical, words, &[y, by])
                        } else {
                            y
                        }
                    };
                    // Back to the result's type: its width, then its signedness.
                    let w = if rw == 32 {
                        word_result
                    } else {
                        let narrow = unsigned(module, rw);
                        emit(module, &mut out, origin, Op::UConvert, narrow, &[word_result])
                    };
                    out.push(Inst::new(Op::Bitcast, Some(ty), inst.result_id, vec![Operand::Id(w)]).from_origin(origin));
                    outcome.count(inst.opcode);
                }
                module.functions[f].blocks[b].insts = out;
            }
        }
        outcome.changed = true;
        Ok(outcome)
    }
}

/// Appends `op` with result type `ty` on id operands `args` to `out`; returns its result.
fn emit(module: &mut Module, out: &mut Vec<Inst>, origin: Option<crate::ir::Origin>, op: Op, ty: Word, args: &[Word]) -> Word {
    let id = module.alloc_id();
    out.push(Inst::new(op, Some(ty), Some(id), args.iter().map(|a| Operand::Id(*a)).collect()).from_origin(origin));
    id
}
