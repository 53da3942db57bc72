//! `NarrowKernelInt64`: a lowered kernel's 64-bit integers become 32-bit ones, for devices
//! without `shaderInt64` (SwiftShader).
//!
//! OpenCL's `size_t` is 64-bit in `spir64` modules, so nearly every kernel computes indices in
//! 64 bits although its values fit in 32. Values that need all 64 bits (read from or written to
//! buffers, bit cast, shifted by 32 or more, meeting constants wider than 32 bits) are held as
//! pairs of 32-bit words first, with everything they meet (`pairs.rs`). Then every other
//! `OpTypeInt 64` becomes 32 bits wide: 64-bit constants, spec constants and `OpSwitch` literals
//! keep their low word (an error names one whose value does not fit, sign- or zero-extended);
//! conversions that no longer change the width become copies or bitcasts, and wrap decorations
//! on narrowed results go; buffer layouts (`ArrayStride`, `Offset`) are recomputed (to what they
//! were: structs with 64-bit members in buffer memory are refused, below) and types that became
//! identical merge. A narrowed scalar kernel argument keeps its 64-bit width in the recorded
//! interface (`arg<k>.u64`), so launches still pass 8 bytes and the runtime checks that the
//! value fits; one held as a pair takes all 8 bytes.
//!
//! Instructions whose meaning needs 64 bits and that pairs do not cover are errors naming them:
//! pointer <-> integer conversions (bitcasts too), extended multiplies of 64-bit values, and
//! accesses through buffer pointers to structs or arrays holding 64-bit integers, whose layout is
//! the host's. `(x << 32) >> k`, the extension of a low word LLVM writes, folds where `x` is
//! narrowed.
//!
//! Preconditions: the module is a lowered kernel (`lower-kernel-interface` and
//! `lower-kernel-pointers` ran). Applies where the target lacks `shader_int64`.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::HashSet;

mod pairs;
mod vectors;

pub struct NarrowKernelInt64;

impl Pass for NarrowKernelInt64 {
    fn name(&self) -> &'static str {
        "narrow-kernel-int64"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        !target.shader_int64
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !crate::kernel::is_lowered_kernel(module) {
            return Ok(outcome);
        }
        let types = Types::new(module);
        let wide: HashSet<Word> = module.globals().iter().filter(|g| g.is(Op::TypeInt) && g.word_opt(0) == Some(64)).filter_map(|g| g.result_id).collect();
        if wide.is_empty() {
            return Ok(outcome);
        }
        let is_wide = |ty: Word| wide.contains(&ty) || types.vector(ty).is_some_and(|(c, _)| wide.contains(&c));
        let target = cx.target.name.clone();
        lower_pointer_comparisons(module, &types, &mut outcome);
        vectors::scalarize(module, &wide, &mut outcome);
        // Extension shifts fold where their values are narrowed, not where they are pairs.
        let types = Types::new(module);
        let shifts = extension_shifts(module, &types, &wide);
        let data = pairs::data_ids(module, &types, &wide, &shifts);
        fold_extension_shifts(module, shifts.into_iter().filter(|(r, _)| !data.ids.contains(r)).collect(), &mut outcome);
        pairs::emulate(module, &wide, &data, &target, &mut outcome)?;
        let types = Types::new(module);
        let value_wide = |v: Word| types.type_of(v).is_some_and(|t| wide.contains(&t) || types.vector(t).is_some_and(|(c, _)| wide.contains(&c)));
        check_instructions(module, &types, &is_wide, &value_wide, &target)?;
        check_buffer_data(module, &types, &is_wide, &target)?;
        // 32-bit arithmetic wraps where its 64-bit original did not: its wrap hints go.
        let narrowed: HashSet<Word> = module.all_insts().filter(|i| i.result_type.is_some_and(&is_wide)).filter_map(|i| i.result_id).collect();
        module.drop_wrap_decorations(|id| narrowed.contains(&id));
        // Argument names keep the 64-bit width.
        crate::kernel::mark_argument_members(module, |t| wide.contains(&t), |t| format!("{}64", if types.int(t).is_some_and(|i| i.1) { 'i' } else { 'u' }));
        // Constants and switch literals keep their low word (those that need all their bits
        // were used only where values are held as pairs).
        let mut used: HashSet<Word> = module.functions.iter().flat_map(|f| f.insts()).flat_map(|i| i.used_ids().collect::<Vec<_>>()).collect();
        loop {
            let more: Vec<Word> =
                module.globals().iter().filter(|g| g.result_id.is_some_and(|r| used.contains(&r))).flat_map(|g| g.used_ids().collect::<Vec<_>>()).filter(|v| !used.contains(v)).collect();
            if more.is_empty() {
                break;
            }
            used.extend(more);
        }
        let mut bad_constant = None;
        for g in module.globals_mut().iter_mut() {
            if matches!(g.op(), Some(Op::Constant | Op::SpecConstant)) && g.result_type.is_some_and(|t| wide.contains(&t)) {
                let lo = g.word_opt(0).unwrap_or(0);
                let hi = g.word_opt(1).unwrap_or(0);
                if !fits(lo, hi) && g.result_id.is_some_and(|r| used.contains(&r)) {
                    bad_constant.get_or_insert(g.clone());
                }
                g.operands.truncate(1);
                outcome.count(g.opcode);
            }
        }
        if let Some(c) = bad_constant {
            let v = (u64::from(c.word_opt(1).unwrap_or(0)) << 32) | u64::from(c.word_opt(0).unwrap_or(0));
            return Err(Error::Unsupported { site: module.site(&c), target, missing: format!("64-bit integers: the constant {v:#x} does not fit in 32 bits") });
        }
        for f in &mut module.functions {
            for b in &mut f.blocks {
                for inst in &mut b.insts {
                    if inst.is(Op::Switch) && inst.operands.first().and_then(Operand::id).is_some_and(value_wide) {
                        let mut ops = inst.operands[..2].to_vec();
                        for case in inst.operands[2..].chunks(3) {
                            let (lo, hi) = (case[0].word().unwrap_or(0), case[1].word().unwrap_or(0));
                            if !fits(lo, hi) {
                                return Err(Error::Invalid { site: Box::default(), message: format!("a switch case {:#x} does not fit in 32 bits", (u64::from(hi) << 32) | u64::from(lo)) });
                            }
                            ops.push(case[0].clone());
                            ops.push(case[2].clone());
                        }
                        inst.operands = ops;
                    }
                }
            }
        }
        // The types themselves.
        for g in module.globals_mut().iter_mut() {
            if g.result_id.is_some_and(|r| wide.contains(&r)) {
                g.operands[0] = Operand::Literal(32);
            }
        }
        // Arrays buffer pointers reach stay apart from the same arrays of private or local
        // memory: they are laid out again below, and those must stay without a layout.
        let reached = strip_buffer_layouts(module);
        module.merge_duplicate_types_apart(&reached);
        fix_conversions(module, &mut outcome);
        crate::passes::lower_kernel_pointers::lay_out_buffers(module, &mut outcome);
        module.merge_duplicate_types_apart(&reached);

        outcome.changed = true;
        Ok(outcome)
    }
}

/// Buffer addresses without 64-bit integers: `OpConvertPtrToU` becomes the address's low word
/// (the pointer bitcast to a `uvec2`), which keeps differences of pointers into one buffer exact;
/// comparisons of two such addresses compare both words.
fn lower_pointer_comparisons(module: &mut Module, types: &Types, outcome: &mut Outcome) {
    let uint = module.type_int(32, false);
    let uvec2 = module.type_vector(uint, 2);
    let boolean = module.type_bool();
    for f in 0..module.functions.len() {
        // Converted pointer -> (pointer) in this function.
        let mut converted: std::collections::HashMap<Word, Word> = std::collections::HashMap::new();
        for inst in module.functions[f].blocks.iter().flat_map(|b| &b.insts) {
            if inst.is(Op::ConvertPtrToU) && inst.result_type.and_then(|t| types.int(t)).is_some_and(|i| i.0 == 64) {
                if let (Some(r), Some(p)) = (inst.result_id, inst.operands.first().and_then(Operand::id)) {
                    converted.insert(r, p);
                }
            }
        }
        if converted.is_empty() {
            continue;
        }
        for b in 0..module.functions[f].blocks.len() {
            let body = std::mem::take(&mut module.functions[f].blocks[b].insts);
            let mut out = Vec::with_capacity(body.len());
            for inst in body {
                let emit = |op: Op, ty: Word, ops: Vec<Operand>, module: &mut Module, out: &mut Vec<Inst>| -> Word {
                    let id = module.alloc_id();
                    out.push(Inst::new(op, Some(ty), Some(id), ops).from_origin(inst.origin));
                    id
                };
                if let (Some(r), true) = (inst.result_id, inst.is(Op::ConvertPtrToU)) {
                    if let Some(p) = converted.get(&r) {
                        let words = emit(Op::Bitcast, uvec2, vec![Operand::Id(*p)], module, &mut out);
                        let wide = inst.result_type.unwrap_or(uint);
                        // The low word, still typed as the 64-bit integer (narrowed later).
                        let lo = emit(Op::CompositeExtract, uint, vec![Operand::Id(words), Operand::Literal(0)], module, &mut out);
                        out.push(Inst::new(Op::UConvert, Some(wide), Some(r), vec![Operand::Id(lo)]).from_origin(inst.origin));
                        outcome.count(Op::ConvertPtrToU as u32);
                        continue;
                    }
                }
                let compare = matches!(inst.op(), Some(Op::ULessThan | Op::ULessThanEqual | Op::UGreaterThan | Op::UGreaterThanEqual | Op::IEqual | Op::INotEqual));
                let pair = (inst.operands.first().and_then(Operand::id), inst.operands.get(1).and_then(Operand::id));
                if let (true, (Some(x), Some(y))) = (compare, pair) {
                    if let (Some(px), Some(py)) = (converted.get(&x), converted.get(&y)) {
                        // (hi, lo) lexicographically.
                        let wx = emit(Op::Bitcast, uvec2, vec![Operand::Id(*px)], module, &mut out);
                        let wy = emit(Op::Bitcast, uvec2, vec![Operand::Id(*py)], module, &mut out);
                        let part = |k: u32, w: Word, module: &mut Module, out: &mut Vec<Inst>| emit(Op::CompositeExtract, uint, vec![Operand::Id(w), Operand::Literal(k)], module, out);
                        let (xl, xh) = (part(0, wx, module, &mut out), part(1, wx, module, &mut out));
                        let (yl, yh) = (part(0, wy, module, &mut out), part(1, wy, module, &mut out));
                        let op = inst.op().unwrap_or(Op::IEqual);
                        let lo = emit(op, boolean, vec![Operand::Id(xl), Operand::Id(yl)], module, &mut out);
                        let heq = emit(Op::IEqual, boolean, vec![Operand::Id(xh), Operand::Id(yh)], module, &mut out);
                        let result = match op {
                            Op::IEqual => Inst::new(Op::LogicalAnd, Some(boolean), inst.result_id, vec![Operand::Id(heq), Operand::Id(lo)]),
                            Op::INotEqual => {
                                let hne = emit(Op::LogicalNot, boolean, vec![Operand::Id(heq)], module, &mut out);
                                Inst::new(Op::LogicalOr, Some(boolean), inst.result_id, vec![Operand::Id(hne), Operand::Id(lo)])
                            }
                            _ => {
                                let strict = match op {
                                    Op::ULessThan | Op::ULessThanEqual => Op::ULessThan,
                                    _ => Op::UGreaterThan,
                                };
                                let hi = emit(strict, boolean, vec![Operand::Id(xh), Operand::Id(yh)], module, &mut out);
                                let tie = emit(Op::LogicalAnd, boolean, vec![Operand::Id(heq), Operand::Id(lo)], module, &mut out);
                                Inst::new(Op::LogicalOr, Some(boolean), inst.result_id, vec![Operand::Id(hi), Operand::Id(tie)])
                            }
                        };
                        out.push(result.from_origin(inst.origin));
                        outcome.count(inst.opcode);
                        continue;
                    }
                }
                out.push(inst);
            }
            module.functions[f].blocks[b].insts = out;
        }
    }
}

/// `(x << 32) >> k` on 64 bits, `k` a constant up to 32 (LLVM's sign or zero extension of the
/// low word, times `2^(32 - k)` where it folded a multiply into the shift: `(long)i * 4` is
/// `(x << 32) >> 30`), is `x << (32 - k)` once the value is 32 bits wide: the left shift becomes
/// a copy and the right shifts left shifts, where the left shift feeds only such shifts.
fn extension_shifts(module: &Module, types: &Types, wide: &HashSet<Word>) -> std::collections::HashMap<Word, Word> {
    let amount = |inst: &Inst| inst.operands.get(1).and_then(Operand::id).and_then(|v| types.const_u32(v));
    let mut left: std::collections::HashMap<Word, Word> = std::collections::HashMap::new();
    let mut uses: std::collections::HashMap<Word, (usize, usize)> = std::collections::HashMap::new();
    for inst in module.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| b.insts.iter())) {
        if inst.is(Op::ShiftLeftLogical) && inst.result_type.is_some_and(|t| wide.contains(&t)) && amount(inst) == Some(32) {
            if let (Some(r), Some(x)) = (inst.result_id, inst.operands.first().and_then(Operand::id)) {
                left.insert(r, x);
            }
        }
    }
    for inst in module.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| b.insts.iter())) {
        let right = matches!(inst.op(), Some(Op::ShiftRightArithmetic | Op::ShiftRightLogical)) && amount(inst).is_some_and(|k| k <= 32);
        for (k, id) in inst.operands.iter().enumerate().filter_map(|(k, o)| o.id().map(|i| (k, i))) {
            if left.contains_key(&id) {
                let e = uses.entry(id).or_default();
                e.0 += 1;
                if right && k == 0 {
                    e.1 += 1;
                }
            }
        }
    }
    left.into_iter().filter(|(r, _)| uses.get(r).is_some_and(|(all, shifts)| all == shifts)).collect()
}

/// Folds the extension shifts `folded` (left shift -> its operand) found by [`extension_shifts`].
fn fold_extension_shifts(module: &mut Module, folded: std::collections::HashMap<Word, Word>, outcome: &mut Outcome) {
    let types = Types::new(module);
    let amount = |inst: &Inst| inst.operands.get(1).and_then(Operand::id).and_then(|v| types.const_u32(v));
    if folded.is_empty() {
        return;
    }
    for f in 0..module.functions.len() {
        for b in 0..module.functions[f].blocks.len() {
            for i in 0..module.functions[f].blocks[b].insts.len() {
                let inst = &module.functions[f].blocks[b].insts[i];
                let (op, ty, result, origin) = (inst.op(), inst.result_type, inst.result_id, inst.origin);
                let replacement = match op {
                    Some(Op::ShiftLeftLogical) => result.and_then(|r| folded.get(&r)).map(|x| (*x, 32)),
                    Some(Op::ShiftRightArithmetic | Op::ShiftRightLogical) => inst.operands.first().and_then(Operand::id).and_then(|x| folded.get(&x)).zip(amount(inst)).map(|(x, k)| (*x, k)),
                    _ => None,
                };
                let Some((x, k)) = replacement else { continue };
                let new = if k == 32 {
                    Inst::new(Op::CopyObject, ty, result, vec![Operand::Id(x)])
                } else {
                    let by = module.intern(Op::Constant, ty, vec![Operand::Literal(32 - k), Operand::Literal(0)]);
                    Inst::new(Op::ShiftLeftLogical, ty, result, vec![Operand::Id(x), Operand::Id(by)])
                };
                module.functions[f].blocks[b].insts[i] = new.from_origin(origin);
                outcome.count(Op::ShiftLeftLogical as u32);
            }
        }
    }
}

/// Whether bitcast `inst` is between a pointer and an integer (of any width: an address is 64
/// bits wide even where its integers become 32).
fn pointer_and_integer(types: &Types, inst: &Inst) -> bool {
    let pointer = |t: Word| types.pointer(t).is_some();
    let integer = |t: Word| types.int(t).is_some();
    let (Some(result), Some(operand)) = (inst.result_type, inst.operands.first().and_then(Operand::id).and_then(|v| types.type_of(v))) else { return false };
    (pointer(result) && integer(operand)) || (integer(result) && pointer(operand))
}

/// Whether a 64-bit value (lo, hi) is its low word sign- or zero-extended.
pub(super) fn fits(lo: u32, hi: u32) -> bool {
    hi == 0 || (hi == u32::MAX && lo & 0x8000_0000 != 0)
}

fn check_instructions(module: &Module, types: &Types, is_wide: &dyn Fn(Word) -> bool, value_wide: &dyn Fn(Word) -> bool, target: &str) -> Result<()> {
    for inst in module.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| b.insts.iter())) {
        let wide_result = inst.result_type.is_some_and(is_wide);
        let wide_operand = inst.operands.iter().filter_map(Operand::id).any(value_wide);
        let why = match inst.op() {
            Some(Op::ConvertPtrToU | Op::ConvertUToPtr) if wide_result || wide_operand => Some("converts between a pointer and a 64-bit integer"),
            Some(Op::UMulExtended | Op::SMulExtended) if wide_operand => Some("multiplies 64-bit integers into a 128-bit result"),
            Some(Op::Bitcast) if wide_result != wide_operand => Some("reinterprets the bits of a 64-bit integer"),
            Some(Op::Bitcast) if pointer_and_integer(types, inst) => Some("reinterprets an integer as a pointer or a pointer as an integer"),
            Some(Op::ShiftLeftLogical | Op::ShiftRightLogical | Op::ShiftRightArithmetic) if wide_result => {
                let amount = inst.operands.get(1).and_then(Operand::id).and_then(|a| types.const_u32(a));
                amount.filter(|a| *a >= 32).map(|_| "shifts a 64-bit integer by 32 or more")
            }
            _ => None,
        };
        if let Some(why) = why {
            return Err(Error::Unsupported { site: module.site(inst), target: target.to_string(), missing: format!("64-bit integers: the instruction {why}") });
        }
    }
    Ok(())
}

/// Types buffer pointer types reach: the pointers, their pointees and what those hold (struct
/// members, array elements, pointees of pointers in them).
fn buffer_reach(types: &Types, pointers: impl IntoIterator<Item = Word>) -> HashSet<Word> {
    let mut reach: HashSet<Word> = HashSet::new();
    let mut work: Vec<Word> = pointers.into_iter().collect();
    while let Some(t) = work.pop() {
        if !reach.insert(t) {
            continue;
        }
        if let Some(d) = types.defs.get(&t) {
            if matches!(d.op(), Some(Op::TypePointer | Op::TypeArray | Op::TypeRuntimeArray | Op::TypeStruct)) {
                work.extend(d.operands.iter().filter_map(Operand::id).filter(|i| types.defs.contains_key(i)));
            }
        }
    }
    reach
}

/// 64-bit integers in buffer memory (`__global long*`, a struct with a `long` member) are an
/// error naming the first instruction that reaches them: narrowed, they would take 4 bytes where
/// the host's data gives them 8, and every later element or member would be read at the wrong
/// offset.
fn check_buffer_data(module: &Module, types: &Types, is_wide: &dyn Fn(Word) -> bool, target: &str) -> Result<()> {
    let psb = StorageClass::PhysicalStorageBuffer as u32;
    let holds_wide: HashSet<Word> =
        module.globals().iter().filter(|g| g.is(Op::TypePointer) && g.word_opt(0) == Some(psb)).filter_map(|g| g.result_id).filter(|p| buffer_reach(types, [*p]).into_iter().any(is_wide)).collect();
    if holds_wide.is_empty() {
        return Ok(());
    }
    // Pointers may be loaded, copied and cast (data that needs all 64 bits is reached through
    // pointers cast to pairs); what reads, writes or steps through them is refused.
    let accesses = |i: &Inst| {
        let access = match i.op() {
            Some(Op::Load | Op::Store | Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain | Op::CopyMemory | Op::CopyMemorySized) => true,
            Some(op) => crate::passes::lower_kernel_pointers::is_atomic(op),
            None => false,
        };
        access
            && i.operands
                .iter()
                .take(if matches!(i.op(), Some(Op::CopyMemory | Op::CopyMemorySized)) { 2 } else { 1 })
                .filter_map(Operand::id)
                .any(|v| types.type_of(v).is_some_and(|t| holds_wide.contains(&t)))
    };
    let Some(first) = module.functions.iter().flat_map(|f| f.insts()).find(|i| accesses(i)) else { return Ok(()) };
    Err(Error::Unsupported {
        site: module.site(first),
        target: target.to_string(),
        missing: "64-bit integers: the kernel keeps 64-bit integers in buffer memory (a `long` or `size_t` array or struct member), whose layout narrowing would change".into(),
    })
}

/// Removes `ArrayStride` and member `Offset` decorations of everything buffer pointers reach
/// (the push-constant block keeps its offsets: they are the launch interface); returns what
/// they reach.
fn strip_buffer_layouts(module: &mut Module) -> HashSet<Word> {
    let types = Types::new(module);
    let psb = StorageClass::PhysicalStorageBuffer as u32;
    let reach = buffer_reach(&types, module.globals().iter().filter(|g| g.is(Op::TypePointer) && g.word_opt(0) == Some(psb)).filter_map(|g| g.result_id));
    let block: HashSet<Word> = module.annotations.iter().filter(|a| a.is(Op::Decorate) && a.word_opt(1) == Some(Decoration::Block as u32)).filter_map(|a| a.word_opt(0)).collect();
    module.annotations.retain(|a| {
        let Some(t) = a.word_opt(0) else { return true };
        if !reach.contains(&t) || block.contains(&t) {
            return true;
        }
        let stride = a.is(Op::Decorate) && a.word_opt(1) == Some(Decoration::ArrayStride as u32);
        let offset = a.is(Op::MemberDecorate) && a.word_opt(2) == Some(Decoration::Offset as u32);
        !(stride || offset)
    });
    // Arrays only: scalars and vectors may not have duplicates, and structs are never merged.
    reach.into_iter().filter(|t| types.defs.get(t).is_some_and(|d| d.is(Op::TypeArray) || d.is(Op::TypeRuntimeArray))).collect()
}

/// Width conversions between types that are now equally wide become copies or bitcasts.
fn fix_conversions(module: &mut Module, outcome: &mut Outcome) {
    let types = Types::new(module);
    let width = |t: Word| {
        let (c, _) = types.vector(t).unwrap_or((t, 1));
        types.int(c).map(|i| i.0)
    };
    for f in &mut module.functions {
        for b in &mut f.blocks {
            for inst in &mut b.insts {
                if !matches!(inst.op(), Some(Op::UConvert | Op::SConvert)) {
                    continue;
                }
                let (Some(rt), Some(src)) = (inst.result_type, inst.operands.first().and_then(Operand::id)) else { continue };
                let Some(st) = types.type_of(src) else { continue };
                if width(rt) == width(st) {
                    let op = if rt == st { Op::CopyObject } else { Op::Bitcast };
                    *inst = Inst::new(op, Some(rt), inst.result_id, vec![Operand::Id(src)]).from_origin(inst.origin);
                    outcome.count(Op::UConvert as u32);
                }
            }
        }
    }
}
