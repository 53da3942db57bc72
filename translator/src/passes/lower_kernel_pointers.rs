//! `LowerKernelPointers`: a kernel's pointer arithmetic in the forms Vulkan accepts.
//!
//! Rewrite, for modules that `lower-kernel-interface` turned into compute shaders:
//! - **Buffer pointers** (`PhysicalStorageBuffer`, formerly global, generic and constant): every
//!   such pointer type gets an `ArrayStride` of its pointee's size (pointer arithmetic through
//!   `OpPtrAccessChain` needs one), arrays and structs reached through them get OpenCL C's layout
//!   (`ArrayStride`, member `Offset`s), loads, stores and atomics get the `Aligned` memory operand
//!   (the pointee's alignment where the producer gave none), and casts to and from `Generic`
//!   become plain copies or bitcasts.
//! - **Generic pointers into local or private memory** (OpenCL 2.0's atomics and other
//!   built-ins take generic pointers): a generic pointer cast from a local or private one, and
//!   every pointer derived from it through bitcasts, access chains, copies, and phis and selects
//!   whose operands all come from the same memory, take that memory's class back, so that they
//!   are lowered as below; casting one back to its own class is a copy.
//! - **Local and private memory** (`Workgroup`, `Function`, `Private`): Vulkan has no pointer
//!   arithmetic there and no pointers in phis or selects. Every variable that is used through
//!   more than a plain load or store is flattened to an array of its scalar leaves in OpenCL C's
//!   layout (a `float3` spans four, structs their padded size; padding a producer spelled out as
//!   bytes stays padding), of the leaves' type, or of an integer of their size where a struct
//!   mixes types of one size (floats and ints), or of the smallest leaf's size where sizes
//!   differ (a char beside a float: the float spans four bytes, read and written as a vector of
//!   them bitcast). Every pointer derived from it becomes an index
//!   (a `uint` in leaf units): access chains (struct members at their offsets), pointer access
//!   chains, byte offsets, bitcasts between types with leaves of the same size, phis, selects
//!   and copies compute indices; loads, stores and atomics become access chains of the variable
//!   at the index, vectors, arrays and structs one leaf at a time (bitcast where the leaf's type
//!   differs). Initializers are flattened alike. `OpConvertPtrToU` of such a pointer (LLVM's
//!   vectorizer compares addresses to check that two ranges do not overlap) gives an address:
//!   the variable's own 16 MiB window plus the byte offset, so that comparisons and differences
//!   within a variable are exact and variables never overlap. Cooperative-matrix loads and
//!   stores (DPC++'s joint matrices from local accessors) go through an access chain of the
//!   variable at the index, their Stride scaled from the pointee's elements to leaves. Variables
//!   holding one cooperative matrix stay as they are: access chains to its elements are Vulkan's
//!   own.
//!
//! Preconditions: `lower-kernel-interface` ran. Errors name the instruction: generic pointers
//! into local or private memory whose origin is not known where they are used (loaded from
//! memory, or joined with pointers into other memory), variables there holding pointers, or
//! numbers more than eight times as wide as the smallest, atomics on a member of another
//! type than the variable's leaves, cooperative matrices in private memory or through pointers
//! to parts of leaves, phis or selects of pointers into different variables (which
//! `merge-joined-variables` makes one where it can), and any other use of such a pointer.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::kernel::size_align;
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{Decoration, MemoryAccess, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

pub struct LowerKernelPointers;

impl Pass for LowerKernelPointers {
    fn name(&self) -> &'static str {
        "lower-kernel-pointers"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        // Kernel modules only: the interface pass names its push-constant struct.
        if !crate::kernel::is_lowered_kernel(module) {
            return Ok(outcome);
        }
        logical_pointers_from_integers(module)?;
        infer_generic_origins(module, &mut outcome)?;
        lower_generic_casts(module, &mut outcome)?;
        in_bounds_to_plain(module, &mut outcome);
        bitcasts_to_member_chains(module, &mut outcome);
        flatten_logical(module, &mut outcome)?;
        remove_unused_globals(module);
        // The pointers into local and private memory that became roots and offsets are gone,
        // and their names (a `__local` parameter's) with them.
        module.forget_undefined();
        lay_out_buffers(module, &mut outcome);
        module.rebuild_entry_interfaces();
        Ok(outcome)
    }
}

/// Integers reinterpreted as pointers into local, private or function memory, and such pointers
/// bit cast to integers: Vulkan's pointers there are logical, with no address to convert.
/// (`OpConvertPtrToU`, which LLVM's vectorizer writes to check whether two ranges overlap, gets
/// an address below.)
fn logical_pointers_from_integers(module: &Module) -> Result<()> {
    let types = Types::new(module);
    let logical = |t: Word| types.pointer(t).is_some_and(|(class, _)| is_logical(class));
    let integer = |t: Word| types.int(t).is_some();
    for inst in module.all_insts().filter(|i| matches!(i.op(), Some(Op::Bitcast | Op::ConvertUToPtr))) {
        let (Some(result), Some(operand)) = (inst.result_type, inst.operands.first().and_then(Operand::id).and_then(|v| types.type_of(v))) else { continue };
        if (logical(result) && integer(operand)) || (integer(result) && logical(operand)) {
            return Err(Error::Invalid { site: module.site(inst), message: "converts between an integer and a pointer into local, private or function memory, which has no address in Vulkan".into() });
        }
    }
    Ok(())
}

fn is_logical(class: u32) -> bool {
    class == StorageClass::Workgroup as u32 || class == StorageClass::Function as u32 || class == StorageClass::Private as u32
}

/// Generic pointers (buffer pointers by now) that come from a cast of a local or private pointer
/// take that class back, with every pointer derived from them; their casts become bitcasts or
/// copies.
fn infer_generic_origins(module: &mut Module, outcome: &mut Outcome) -> Result<()> {
    let types = Types::new(module);
    let class_of_value = |v: Word| types.type_of(v).and_then(|t| types.pointer(t)).map(|(c, _)| c);
    let mut origin: HashMap<Word, u32> = HashMap::new();
    for inst in module.functions.iter().flat_map(|f| f.insts()).filter(|i| i.is(Op::PtrCastToGeneric)) {
        if let (Some(r), Some(class)) = (inst.result_id, inst.id(0).ok().and_then(class_of_value).filter(|c| is_logical(*c))) {
            origin.insert(r, class);
        }
    }
    if origin.is_empty() {
        return Ok(());
    }
    let derived = [Op::Bitcast, Op::AccessChain, Op::InBoundsAccessChain, Op::PtrAccessChain, Op::InBoundsPtrAccessChain, Op::CopyObject];
    let psb = StorageClass::PhysicalStorageBuffer as u32;
    // Function variables holding generic pointers (unoptimized producers spill every pointer
    // parameter to one), used only by loads and stores: variable -> the values stored to it.
    let mut pointer_vars: HashMap<Word, Vec<Word>> = HashMap::new();
    for f in &module.functions {
        let candidates: HashSet<Word> = f
            .blocks
            .iter()
            .flat_map(|b| &b.insts)
            .filter(|i| i.is(Op::Variable) && i.operands.len() == 1)
            .filter(|i| i.result_type.and_then(|t| types.pointer(t)).and_then(|(_, pointee)| types.pointer(pointee)).is_some_and(|(c, _)| c == psb))
            .filter_map(|i| i.result_id)
            .collect();
        let mut escaped = HashSet::new();
        for inst in f.insts() {
            match inst.op() {
                Some(Op::Store) if inst.id(0).is_ok_and(|v| candidates.contains(&v)) => {
                    pointer_vars.entry(inst.id(0)?).or_default().extend(inst.id(1));
                    escaped.extend(inst.id(1).ok().filter(|v| candidates.contains(v)));
                }
                Some(Op::Load) => {}
                _ => escaped.extend(inst.operands.iter().filter_map(Operand::id).filter(|v| candidates.contains(v))),
            }
        }
        pointer_vars.retain(|v, _| !escaped.contains(v));
    }
    let mut var_origin: HashMap<Word, u32> = HashMap::new();
    loop {
        let mut changed = false;
        for (var, stored) in &pointer_vars {
            if var_origin.contains_key(var) {
                continue;
            }
            if let Some(c) = stored.first().and_then(|v| origin.get(v)).copied().filter(|c| stored.iter().all(|v| origin.get(v) == Some(c))) {
                var_origin.insert(*var, c);
                changed = true;
            }
        }
        for inst in module.functions.iter().flat_map(|f| f.insts()) {
            if inst.is(Op::Load) {
                if let (Some(r), Some(c)) = (inst.result_id, inst.id(0).ok().and_then(|v| var_origin.get(&v))) {
                    if origin.insert(r, *c).is_none() {
                        changed = true;
                    }
                }
                continue;
            }
            let (Some(op), Some(r), Some(ty)) = (inst.op(), inst.result_id, inst.result_type) else { continue };
            if origin.contains_key(&r) || types.pointer(ty).map(|(c, _)| c) != Some(psb) {
                continue;
            }
            let sources: Vec<Word> = match op {
                _ if derived.contains(&op) => inst.id(0).into_iter().collect(),
                Op::Phi => inst.operands.iter().step_by(2).filter_map(Operand::id).collect(),
                Op::Select => [1, 2].iter().filter_map(|k| inst.id(*k).ok()).collect(),
                _ => continue,
            };
            let classes: Vec<Option<u32>> = sources.iter().map(|s| origin.get(s).copied()).collect();
            if let Some(Some(c)) = classes.first() {
                if classes.iter().all(|x| *x == Some(*c)) {
                    origin.insert(r, *c);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut retype: Vec<(Word, u32, Word)> = Vec::new();
    for inst in module.functions.iter().flat_map(|f| f.insts()) {
        if let (Some(r), Some(ty)) = (inst.result_id, inst.result_type) {
            if let (Some(class), Some((_, pointee))) = (origin.get(&r), types.pointer(ty)) {
                retype.push((r, *class, pointee));
            }
        }
    }
    let mut new_types: HashMap<Word, Word> = retype.into_iter().map(|(r, class, pointee)| (r, module.type_pointer(StorageClass::from_u32(class).unwrap_or(StorageClass::Function), pointee))).collect();
    // The pointer variables now hold pointers of their values' class.
    for (var, class) in &var_origin {
        let var_ty = module.functions.iter().flat_map(|f| f.insts()).find(|i| i.result_id == Some(*var)).and_then(|i| i.result_type);
        let Some(held) = var_ty.and_then(|t| types.pointer(t)).and_then(|(_, p)| types.pointer(p)).map(|(_, pointee)| pointee) else { continue };
        let class = StorageClass::from_u32(*class).unwrap_or(StorageClass::Function);
        let inner = module.type_pointer(class, held);
        new_types.insert(*var, module.type_pointer(StorageClass::Function, inner));
    }
    for f in &mut module.functions {
        for b in &mut f.blocks {
            for inst in &mut b.insts {
                let Some(op) = inst.op() else { continue };
                if let Some(ty) = inst.result_id.and_then(|r| new_types.get(&r)) {
                    inst.result_type = Some(*ty);
                    if op == Op::PtrCastToGeneric {
                        let same = inst.id(0).ok().and_then(|s| types.type_of(s)) == Some(*ty);
                        *inst = Inst::new(if same { Op::CopyObject } else { Op::Bitcast }, Some(*ty), inst.result_id, vec![inst.operands[0].clone()]).from_origin(inst.origin);
                        outcome.count(op as u32);
                    }
                } else if matches!(op, Op::GenericCastToPtr | Op::GenericCastToPtrExplicit) {
                    // Back to the class it came from: a copy or a bitcast; to another class it
                    // would be null in OpenCL, which Vulkan cannot express (left to fail below).
                    let (Ok(src), Ok(ty)) = (inst.id(0), inst.ty()) else { continue };
                    let Some(from) = new_types.get(&src) else { continue };
                    if types.pointer(ty).map(|(c, _)| c) == origin.get(&src).copied() {
                        let same = *from == ty;
                        *inst = Inst::new(if same { Op::CopyObject } else { Op::Bitcast }, Some(ty), inst.result_id, vec![Operand::Id(src)]).from_origin(inst.origin);
                        outcome.count(op as u32);
                    }
                }
            }
        }
    }
    Ok(())
}

/// Generic casts between buffer pointers become copies (same type) or bitcasts.
fn lower_generic_casts(module: &mut Module, outcome: &mut Outcome) -> Result<()> {
    let types = Types::new(module);
    let casts = [Op::PtrCastToGeneric, Op::GenericCastToPtr, Op::GenericCastToPtrExplicit];
    let mut errors = None;
    for f in &mut module.functions {
        for b in &mut f.blocks {
            for inst in &mut b.insts {
                let Some(op) = inst.op().filter(|o| casts.contains(o)) else { continue };
                let (Ok(src), Ok(ty)) = (inst.id(0), inst.ty()) else { continue };
                let from = types.type_of(src).and_then(|t| types.pointer(t));
                let to = types.pointer(ty);
                match (from, to) {
                    (Some((a, _)), Some((b, _))) if a == b && !is_logical(a) => {
                        let same = types.type_of(src) == Some(ty);
                        *inst = Inst::new(if same { Op::CopyObject } else { Op::Bitcast }, Some(ty), inst.result_id, vec![Operand::Id(src)]).from_origin(inst.origin);
                        outcome.count(op as u32);
                    }
                    _ => {
                        errors.get_or_insert(inst.clone());
                    }
                }
            }
        }
    }
    if let Some(inst) = errors {
        return Err(Error::Invalid {
            site: module.site(&inst),
            message: "casts a pointer into local or private memory to or from the generic address space (generic pointers are lowered only for global memory)".into(),
        });
    }
    Ok(())
}

/// `OpInBoundsPtrAccessChain` (Addresses only) -> `OpPtrAccessChain` (also
/// PhysicalStorageBufferAddresses); the in-bounds promise is only an optimization hint.
fn in_bounds_to_plain(module: &mut Module, outcome: &mut Outcome) {
    for f in &mut module.functions {
        for b in &mut f.blocks {
            for inst in b.insts.iter_mut().filter(|i| i.is(Op::InBoundsPtrAccessChain)) {
                inst.opcode = Op::PtrAccessChain as u32;
                outcome.count(Op::InBoundsPtrAccessChain as u32);
            }
        }
    }
}

/// The chain of zero indices from aggregate `from` down to type `to` (struct member 0, array
/// element 0), if `to` sits at offset 0 of `from`.
pub(crate) fn zero_chain(types: &Types, from: Word, to: impl Fn(Word) -> bool) -> Option<usize> {
    let mut ty = from;
    let mut depth = 0;
    while !to(ty) {
        let d = types.defs.get(&ty)?;
        ty = match d.op()? {
            Op::TypeStruct | Op::TypeArray | Op::TypeRuntimeArray => d.id(0).ok()?,
            _ => return None,
        };
        depth += 1;
    }
    Some(depth)
}

/// A bitcast of a buffer pointer to an aggregate into a pointer to its first member becomes an
/// access chain: it says the same, and SwiftShader crashes compiling the bitcast.
fn bitcasts_to_member_chains(module: &mut Module, outcome: &mut Outcome) {
    let types = Types::new(module);
    let psb = StorageClass::PhysicalStorageBuffer as u32;
    let zero = module.constant_u32(0);
    for f in &mut module.functions {
        for b in &mut f.blocks {
            for inst in b.insts.iter_mut().filter(|i| i.is(Op::Bitcast)) {
                let (Some(src), Some(ty)) = (inst.operands.first().and_then(Operand::id), inst.result_type) else { continue };
                let (Some((c1, from)), Some((c2, to))) = (types.type_of(src).and_then(|t| types.pointer(t)), types.pointer(ty)) else { continue };
                if c1 != psb || c2 != psb || from == to {
                    continue;
                }
                if let Some(depth) = zero_chain(&types, from, |t| t == to).filter(|d| *d > 0) {
                    let mut ops = vec![Operand::Id(src)];
                    ops.extend(std::iter::repeat_n(Operand::Id(zero), depth));
                    *inst = Inst::new(Op::AccessChain, Some(ty), inst.result_id, ops).from_origin(inst.origin);
                    outcome.count(Op::Bitcast as u32);
                }
            }
        }
    }
}

/// Buffer pointer types: ArrayStride, layouts of what they point to, Aligned accesses. An access
/// whose `Aligned` is below the largest scalar it moves (a packed struct's member) keeps it:
/// raising the value would promise an alignment the data may not have, and
/// `split-underaligned-accesses` splits the access instead.
pub(crate) fn lay_out_buffers(module: &mut Module, outcome: &mut Outcome) {
    let types = Types::new(module);
    let psb = StorageClass::PhysicalStorageBuffer as u32;
    let mut laid_out: HashSet<Word> = HashSet::new();
    let pointers: Vec<(Word, Word)> = module.globals().iter().filter(|g| g.is(Op::TypePointer) && g.word_opt(0) == Some(psb)).filter_map(|g| Some((g.result_id?, g.id(1).ok()?))).collect();
    for (ptr, pointee) in &pointers {
        if let Some((size, _)) = size_align(&types, *pointee) {
            if module.decoration(*ptr, Decoration::ArrayStride).is_none() {
                module.decorate(*ptr, Decoration::ArrayStride, &[size]);
            }
        }
        // A packed struct without a Vulkan layout is addressed in bytes instead
        // (`split-underaligned-accesses`).
        if !crate::passes::split_underaligned_accesses::without_layout(&types, *pointee, 0) {
            lay_out(module, &types, *pointee, &mut laid_out);
        }
    }
    // Aligned memory operands on buffer accesses (those aligned below their scalars are left
    // to `split-underaligned-accesses`).
    let ptr_types: HashMap<Word, Word> = pointers.into_iter().collect();
    for f in &mut module.functions {
        for b in &mut f.blocks {
            for inst in &mut b.insts {
                let (ptr_at, mem_at) = match inst.op() {
                    Some(Op::Load) => (0, 1),
                    Some(Op::Store) => (0, 2),
                    _ => continue,
                };
                let Some(pointee) = inst.operands.get(ptr_at).and_then(Operand::id).and_then(|p| types.type_of(p)).and_then(|t| ptr_types.get(&t)) else { continue };
                let mask = inst.operands.get(mem_at).and_then(Operand::word).unwrap_or(0);
                if mask & MemoryAccess::ALIGNED.bits() != 0 {
                    continue;
                }
                let align = size_align(&types, *pointee).map_or(4, |s| s.1);
                let mut ops: Vec<Operand> = inst.operands[..mem_at.min(inst.operands.len())].to_vec();
                ops.push(Operand::Enum(OperandKind::MemoryAccess, mask | MemoryAccess::ALIGNED.bits()));
                // Aligned's literal comes right after the mask, before later parameters.
                let rest: Vec<Operand> = inst.operands.iter().skip(mem_at + 1).cloned().collect();
                let aligned_first = mask & (MemoryAccess::VOLATILE.bits() | MemoryAccess::NONTEMPORAL.bits()) == mask;
                if aligned_first {
                    ops.push(Operand::Literal(align));
                    ops.extend(rest);
                } else {
                    ops.extend(rest);
                    ops.push(Operand::Literal(align));
                }
                inst.operands = ops;
                outcome.count(inst.opcode);
            }
        }
    }
}

/// OpenCL C layout decorations on arrays and structs reachable from a buffer pointer.
fn lay_out(module: &mut Module, types: &Types, ty: Word, done: &mut HashSet<Word>) {
    if !done.insert(ty) {
        return;
    }
    let Some(def) = types.defs.get(&ty).cloned() else { return };
    match def.op() {
        Some(Op::TypeArray | Op::TypeRuntimeArray) => {
            let Ok(e) = def.id(0) else { return };
            if let Some((s, _)) = size_align(types, e) {
                module.decorate(ty, Decoration::ArrayStride, &[s]);
            }
            lay_out(module, types, e, done);
        }
        Some(Op::TypeStruct) => {
            let Some(offsets) = crate::kernel::member_offsets(types, ty) else { return };
            for ((m, member), offset) in def.operands.iter().filter_map(Operand::id).enumerate().zip(offsets) {
                let has =
                    module.annotations.iter().any(|x| x.is(Op::MemberDecorate) && x.word_opt(0) == Some(ty) && x.word_opt(1) == Some(m as u32) && x.word_opt(2) == Some(Decoration::Offset as u32));
                if !has {
                    module.annotations.push(Inst::new(
                        Op::MemberDecorate,
                        None,
                        None,
                        vec![Operand::Id(ty), Operand::Literal(m as u32), Operand::decoration(Decoration::Offset), Operand::Literal(offset)],
                    ));
                }
                lay_out(module, types, member, done);
            }
        }
        _ => {}
    }
}

/// The arrays and structs of type `ty` and those it holds (not through pointers).
fn composites_within(types: &Types, ty: Word, out: &mut HashSet<Word>) {
    let Some(def) = types.defs.get(&ty) else { return };
    match def.op() {
        Some(Op::TypeArray | Op::TypeRuntimeArray) if out.insert(ty) => {
            if let Ok(e) = def.id(0) {
                composites_within(types, e, out);
            }
        }
        Some(Op::TypeStruct) if out.insert(ty) => {
            for m in def.operands.iter().filter_map(Operand::id) {
                composites_within(types, m, out);
            }
        }
        _ => {}
    }
}

/// A flattened variable: its leaf type and the storage class.
#[derive(Clone, Copy)]
struct Root {
    leaf: Word,
    class: u32,
    /// The leaf's size in bytes: indices count units of it.
    unit: u32,
}

/// A pointer into a flattened variable: the variable, the index (in leaves) and the pointee.
#[derive(Clone, Copy)]
struct Derived {
    root: Word,
    index: Word,
    pointee: Word,
}

/// The scalar leaves of `ty` (numbers in arrays, vectors and structs), in layout order; `None`
/// for anything else inside (pointers, booleans, runtime arrays).
fn scalar_leaves(types: &Types, ty: Word, out: &mut Vec<Word>) -> Option<()> {
    let d = types.defs.get(&ty)?;
    match d.op()? {
        Op::TypeInt | Op::TypeFloat => out.push(ty),
        Op::TypeVector => out.push(types.vector(ty)?.0),
        Op::TypeArray => scalar_leaves(types, d.id(0).ok()?, out)?,
        Op::TypeStruct => {
            for (k, m) in d.operands.iter().filter_map(Operand::id).enumerate() {
                if !is_padding(types, ty, k) {
                    scalar_leaves(types, m, out)?;
                }
            }
        }
        _ => return None,
    }
    Some(())
}

/// Whether member `k` of struct `ty` is padding a producer spelled out (clang's `[12 x i8]`
/// after a `float4` and a `float`): an array of bytes without which the other members' offsets
/// and the struct's size stay the same.
fn is_padding(types: &Types, ty: Word, k: usize) -> bool {
    let Some(d) = types.defs.get(&ty).filter(|d| d.is(Op::TypeStruct)) else { return false };
    let members: Vec<Word> = d.operands.iter().filter_map(Operand::id).collect();
    let bytes = members.get(k).and_then(|m| types.defs.get(m)).filter(|a| a.is(Op::TypeArray)).and_then(|a| a.id(0).ok()).and_then(|e| types.int(e)).is_some_and(|(w, _)| w == 8);
    if !bytes {
        return false;
    }
    let layout = |skip: Option<usize>| -> Option<(Vec<u32>, u32)> {
        let (mut offset, mut align, mut offsets) = (0u32, 1u32, Vec::new());
        for (i, m) in members.iter().enumerate() {
            if Some(i) == skip {
                continue;
            }
            let (s, a) = size_align(types, *m)?;
            offset = offset.next_multiple_of(a);
            offsets.push(offset);
            offset += s;
            align = align.max(a);
        }
        Some((offsets, offset.next_multiple_of(align)))
    };
    match (layout(None), layout(Some(k))) {
        (Some((mut with, size)), Some((without, size2))) => {
            with.remove(k);
            with == without && size == size2
        }
        _ => false,
    }
}

/// The element type a variable of type `ty` is flattened to and its size: the leaves' common
/// type, or an integer of their common size where types differ (a struct of floats and ints);
/// `None` where sizes differ or `ty` holds other than numbers.
fn flat_leaf(module: &mut Module, types: &Types, ty: Word) -> Option<(Word, u32)> {
    let mut all = Vec::new();
    scalar_leaves(types, ty, &mut all)?;
    let first = *all.first()?;
    let sizes: Vec<u32> = all.iter().map(|l| size_align(types, *l).map(|s| s.0)).collect::<Option<_>>()?;
    // Numbers of different sizes (a char beside a float): leaves of the smallest, the wider
    // numbers spanning several.
    let unit = *sizes.iter().min()?;
    if !sizes.iter().all(|s| *s == unit || wide_parts(*s, unit).is_some()) {
        return None;
    }
    if all.iter().all(|l| *l == first) {
        Some((first, unit))
    } else {
        Some((module.type_int(unit * 8, false), unit))
    }
}

/// Whether every scalar leaf of `ty` is `unit` bytes or spans two, four or eight such units.
fn fits_units(types: &Types, ty: Word, unit: u32) -> bool {
    let mut all = Vec::new();
    scalar_leaves(types, ty, &mut all).is_some() && all.iter().all(|l| size_align(types, *l).is_some_and(|(s, _)| s == unit || wide_parts(s, unit).is_some()))
}

/// The size in bytes of every scalar leaf of `ty`; `None` where it has none, or leaves of
/// different sizes.
fn leaf_size(types: &Types, ty: Word) -> Option<u32> {
    let mut all = Vec::new();
    scalar_leaves(types, ty, &mut all)?;
    let unit = size_align(types, *all.first()?)?.0;
    all.iter().all(|l| size_align(types, *l).map(|s| s.0) == Some(unit)).then_some(unit)
}

/// Whether every scalar leaf of `ty` is one byte (a byte view, as LLVM writes offsets).
fn is_byte_view(types: &Types, ty: Word) -> bool {
    leaf_size(types, ty) == Some(1)
}

/// `index + k` (in leaf units).
fn index_plus(bl: &mut Builder<'_>, index: Word, k: u32) -> Word {
    if k == 0 {
        return index;
    }
    let uint = bl.module.type_int(32, false);
    let c = bl.module.constant_u32(k);
    bl.iadd(uint, index, c)
}

/// The units of `unit` bytes that `ty` spans in OpenCL C's layout (a `float3` spans four
/// floats, a struct its padded size).
fn span(types: &Types, ty: Word, unit: u32) -> Option<u32> {
    let (size, _) = size_align(types, ty)?;
    size.is_multiple_of(unit).then_some(size / unit)
}

/// The offset, in units of `unit` bytes, of member `k` of struct `ty` in OpenCL C's layout.
fn member_offset(types: &Types, ty: Word, k: u32, unit: u32) -> Option<u32> {
    let offset = *crate::kernel::member_offsets(types, ty)?.get(k as usize)?;
    offset.is_multiple_of(unit).then_some(offset / unit)
}

/// Variables of local and private memory used through anything but plain loads and stores are
/// flattened; pointers into them become indices.
fn flatten_logical(module: &mut Module, outcome: &mut Outcome) -> Result<()> {
    let types = Types::new(module);
    // Every variable of a logical class, module scope and function scope.
    let mut vars: Vec<Inst> = module.globals().iter().filter(|g| g.is(Op::Variable)).cloned().collect();
    vars.extend(module.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| b.insts.iter().filter(|i| i.is(Op::Variable)).cloned())));
    let plain_uses: HashSet<Word> = {
        // Ids used other than as the pointer of a load or store.
        let mut other = HashSet::new();
        for inst in module.all_insts() {
            let skip_first = matches!(inst.op(), Some(Op::Load | Op::Store));
            for (k, id) in inst.operands.iter().enumerate().filter_map(|(k, o)| o.id().map(|i| (k, i))) {
                if !(skip_first && k == 0) {
                    other.insert(id);
                }
            }
        }
        other
    };
    // Arrays and structs that buffer memory holds get OpenCL C's layout (`lay_out_buffers`: the
    // pointees of buffer pointers that have a Vulkan layout, and what they hold), which Vulkan
    // forbids in a variable's type: a variable holding one is flattened too, even where it is
    // only loaded and stored whole.
    let mut in_buffers: HashSet<Word> = HashSet::new();
    let psb = StorageClass::PhysicalStorageBuffer as u32;
    for pointee in module.globals().iter().filter(|g| g.is(Op::TypePointer) && g.word_opt(0) == Some(psb)).filter_map(|g| g.id(1).ok()) {
        if !crate::passes::split_underaligned_accesses::without_layout(&types, pointee, 0) {
            composites_within(&types, pointee, &mut in_buffers);
        }
    }
    let mut roots: HashMap<Word, Root> = HashMap::new();
    for v in &vars {
        let (Some(id), Some(ptr)) = (v.result_id, v.result_type) else { continue };
        let Some((class, pointee)) = types.pointer(ptr) else { continue };
        // A cooperative matrix's elements are reached by access chains Vulkan takes as they are.
        let matrix = types.defs.get(&pointee).is_some_and(|d| d.is(Op::TypeCooperativeMatrixKHR));
        let mut held = HashSet::new();
        composites_within(&types, pointee, &mut held);
        let laid_out = held.iter().any(|t| in_buffers.contains(t));
        if !is_logical(class) || !(plain_uses.contains(&id) || laid_out) || matrix {
            continue;
        }
        // A local-memory argument's spec-constant length: its element decides.
        let sized = types.defs.get(&pointee).filter(|d| d.is(Op::TypeArray) && d.id(1).ok().and_then(|l| types.const_u32(l)).is_none()).and_then(|d| d.id(0).ok()).unwrap_or(pointee);
        let Some((leaf, unit)) = flat_leaf(module, &types, sized) else {
            return Err(Error::Invalid {
                site: module.site(v),
                message: "a variable of local or private memory used through pointers holds other than numbers, or numbers more than eight times as wide as the smallest (not lowered yet)".into(),
            });
        };
        roots.insert(id, Root { leaf, class, unit });
    }
    if roots.is_empty() {
        return Ok(());
    }
    // Retype every root to a flat array of its leaves.
    let uint = module.type_int(32, false);
    let mut new_types: HashMap<Word, Word> = HashMap::new();
    let mut root_ids: Vec<Word> = roots.keys().copied().collect();
    root_ids.sort_unstable();
    for id in &root_ids {
        let root = &roots[id];
        let var = vars.iter().find(|v| v.result_id == Some(*id)).cloned().unwrap_or_else(|| Inst::new(Op::Nop, None, None, vec![]));
        let (_, pointee) = types.pointer(var.result_type.unwrap_or(0)).unwrap_or((0, 0));
        let length = match span(&types, pointee, root.unit) {
            Some(n) => module.constant_u32(n),
            None => {
                // A spec-constant length (a local-memory argument): elements of a fixed number
                // of units, the length scaled by it.
                let d = types.defs.get(&pointee).filter(|d| d.is(Op::TypeArray));
                let per_element = d.and_then(|d| d.id(0).ok()).and_then(|e| span(&types, e, root.unit));
                match (d.and_then(|d| d.id(1).ok()), per_element) {
                    (Some(len), Some(1)) => len,
                    (Some(len), Some(n)) => {
                        let n = module.constant_u32(n);
                        let scaled = module.alloc_id();
                        let ops = vec![Operand::Literal(Op::IMul as u32), Operand::Id(len), Operand::Id(n)];
                        module.add_global(Inst::new(Op::SpecConstantOp, Some(uint), Some(scaled), ops))
                    }
                    _ => return Err(Error::Invalid { site: module.site(&var), message: "local memory sized at launch whose elements have no fixed size in its units".into() }),
                }
            }
        };
        let array = module.type_array(root.leaf, length);
        let class = StorageClass::from_u32(root.class).unwrap_or(StorageClass::Function);
        new_types.insert(*id, module.type_pointer(class, array));
    }
    // Flattened initializers.
    let initializers: Vec<(Word, Word)> = vars.iter().filter(|v| v.result_id.is_some_and(|r| roots.contains_key(&r))).filter_map(|v| Some((v.result_id?, v.operands.get(1)?.id()?))).collect();
    let mut flat_init: HashMap<Word, Word> = HashMap::new();
    let mut leaf_initializers: HashMap<Word, Vec<Word>> = HashMap::new();
    for (var, init) in initializers {
        let mut parts = Vec::new();
        let root = roots[&var];
        // The flattened initializer is one composite constant, which one instruction of at most
        // 65535 words must hold.
        let leaves = types.type_of(init).and_then(|t| span(&types, t, root.unit));
        if leaves.is_some_and(|n| n > MAX_INITIALIZER_LEAVES) {
            let site = vars.iter().find(|v| v.result_id == Some(var)).map(|v| module.site(v)).unwrap_or_default();
            let message = format!("the initializer %{init} of this variable spans {} elements, more than the {MAX_INITIALIZER_LEAVES} one constant can hold", leaves.unwrap_or_default());
            return Err(Error::Invalid { site, message });
        }
        if flatten_constant(module, &types, init, root, &mut parts).is_none() {
            let site = vars.iter().find(|v| v.result_id == Some(var)).map(|v| module.site(v)).unwrap_or_default();
            return Err(Error::Invalid { site, message: format!("the initializer %{init} of this variable is not a constant of numbers") });
        }
        let leaf = root.leaf;
        leaf_initializers.insert(var, parts.clone());
        let n = module.constant_u32(parts.len() as u32);
        let array = module.type_array(leaf, n);
        flat_init.insert(var, module.constant_composite(array, &parts));
    }
    let retype = |inst: &mut Inst| {
        if let Some(id) = inst.result_id {
            if let Some(t) = new_types.get(&id) {
                inst.result_type = Some(*t);
                if let Some(init) = flat_init.get(&id) {
                    inst.operands.truncate(1);
                    inst.operands.push(Operand::Id(*init));
                }
            }
        }
    };
    for g in module.globals_mut() {
        if g.is(Op::Variable) {
            retype(g);
        }
    }
    for f in &mut module.functions {
        for b in &mut f.blocks {
            for i in &mut b.insts {
                if i.is(Op::Variable) {
                    retype(i);
                }
            }
        }
    }
    // Derived pointers, function by function.
    let zero = module.constant_u32(0);
    for fi in 0..module.functions.len() {
        // Fixed point: which results are pointers into roots, and their index ids.
        let mut derived: HashMap<Word, Derived> = HashMap::new();
        for id in roots.keys() {
            let var = vars.iter().find(|v| v.result_id == Some(*id));
            let pointee = var.and_then(|v| types.pointer(v.result_type.unwrap_or(0))).map_or(0, |p| p.1);
            derived.insert(*id, Derived { root: *id, index: zero, pointee });
        }
        let derives =
            |op: Option<Op>| matches!(op, Some(Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain | Op::Bitcast | Op::CopyObject | Op::Phi | Op::Select));
        // Function variables that hold pointers into local or private memory (what unoptimized
        // producers write for pointer locals): they come to hold indices.
        let pointer_vars: HashSet<Word> = module.functions[fi]
            .blocks
            .iter()
            .flat_map(|b| &b.insts)
            .filter(|i| i.is(Op::Variable))
            .filter(|i| i.result_type.and_then(|t| types.pointer(t)).and_then(|(_, pointee)| types.pointer(pointee)).is_some_and(|(c, _)| is_logical(c)))
            .filter_map(|i| i.result_id)
            .collect();
        let mut var_roots: HashMap<Word, Word> = HashMap::new();
        loop {
            let mut grew = false;
            for inst in module.functions[fi].blocks.iter().flat_map(|b| &b.insts) {
                if inst.is(Op::Store) {
                    let (Some(var), Some(value)) = (inst.operands.first().and_then(Operand::id), inst.operands.get(1).and_then(Operand::id)) else { continue };
                    if let (true, Some(d)) = (pointer_vars.contains(&var), derived.get(&value)) {
                        if var_roots.insert(var, d.root).is_none() {
                            grew = true;
                        }
                    }
                    continue;
                }
                let Some(r) = inst.result_id else { continue };
                if inst.is(Op::Load) && !derived.contains_key(&r) {
                    if let Some(root) = inst.operands.first().and_then(Operand::id).and_then(|v| var_roots.get(&v)) {
                        let pointee = inst.result_type.and_then(|t| types.pointer(t)).map_or(0, |p| p.1);
                        derived.insert(r, Derived { root: *root, index: 0, pointee });
                        grew = true;
                    }
                    continue;
                }
                if derived.contains_key(&r) || !derives(inst.op()) {
                    continue;
                }
                let from: Vec<Word> = match inst.op() {
                    Some(Op::Phi) => inst.operands.iter().step_by(2).filter_map(Operand::id).collect(),
                    Some(Op::Select) => inst.operands.iter().skip(1).filter_map(Operand::id).collect(),
                    _ => inst.operands.first().and_then(Operand::id).into_iter().collect(),
                };
                if let Some(src) = from.iter().find_map(|f| derived.get(f)) {
                    let pointee = inst.result_type.and_then(|t| types.pointer(t)).map_or(0, |p| p.1);
                    derived.insert(r, Derived { root: src.root, index: 0, pointee });
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        // A pointer variable nothing stores a known pointer into: what a load from it gives
        // points nowhere a flattened variable can say.
        let unknown = module.functions[fi]
            .blocks
            .iter()
            .flat_map(|b| &b.insts)
            .find(|i| i.is(Op::Load) && i.operands.first().and_then(Operand::id).is_some_and(|v| pointer_vars.contains(&v) && !var_roots.contains_key(&v)));
        if let Some(load) = unknown {
            return Err(Error::Invalid { site: module.site(load), message: "loads a pointer into local or private memory from a variable that holds no known one (nothing stores one there)".into() });
        }
        let uses_any = module.functions[fi].blocks.iter().flat_map(|b| &b.insts).any(|i| i.operands.iter().any(|o| o.id().is_some_and(|id| derived.contains_key(&id))));
        if !uses_any {
            continue;
        }
        // Index ids for derived values (phis may name them before they are defined).
        let mut ids: Vec<Word> = derived.keys().copied().filter(|k| !roots.contains_key(k)).collect();
        ids.sort_unstable();
        for id in ids {
            let idx = module.alloc_id();
            if let Some(d) = derived.get_mut(&id) {
                d.index = idx;
            }
        }
        rewrite_function(module, fi, &types, &roots, &derived, &var_roots, &leaf_initializers, uint, outcome)?;
    }
    Ok(())
}

/// The most elements a flattened initializer may have: the constituents of one
/// `OpConstantComposite` of at most 65535 words.
const MAX_INITIALIZER_LEAVES: u32 = 65532;

/// Flattens a constant (arrays, vectors, structs; null and undefined ones too) into constants
/// of `root`'s leaf in OpenCL C's layout: padding is zero, leaves of another type of the same
/// size are the same bits.
fn flatten_constant(module: &mut Module, types: &Types, id: Word, root: Root, out: &mut Vec<Word>) -> Option<()> {
    let def = module.globals().iter().find(|g| g.result_id == Some(id))?.clone();
    let ty = def.result_type?;
    let start = out.len();
    let tdef = types.defs.get(&ty)?.clone();
    match (def.op()?, tdef.op()?) {
        (Op::ConstantNull | Op::Undef, _) => {
            let zero = module.constant_null(root.leaf);
            out.extend(std::iter::repeat_n(zero, span(types, ty, root.unit)? as usize));
        }
        (Op::ConstantComposite, Op::TypeStruct) => {
            for (k, p) in def.operands.iter().filter_map(Operand::id).enumerate() {
                if is_padding(types, ty, k) {
                    continue;
                }
                let at = start + member_offset(types, ty, k as u32, root.unit)? as usize;
                let zero = module.constant_null(root.leaf);
                out.resize(at, zero);
                flatten_constant(module, types, p, root, out)?;
            }
        }
        (Op::ConstantComposite, _) => {
            let element = tdef.id(0).ok()?;
            let per = span(types, element, root.unit)? as usize;
            for (k, p) in def.operands.iter().filter_map(Operand::id).enumerate() {
                let zero = module.constant_null(root.leaf);
                out.resize(start + k * per, zero);
                flatten_constant(module, types, p, root, out)?;
            }
        }
        (Op::Constant, _) if ty == root.leaf => out.push(id),
        (Op::Constant, _) => {
            // The same bits as leaves: one of the leaf type, or several where the constant is
            // wider (its little-endian bytes in leaf-sized pieces).
            let bytes: Vec<u8> = def.operands.iter().filter_map(Operand::word).flat_map(u32::to_le_bytes).collect();
            let size = size_align(types, ty)?.0 as usize;
            let unit = root.unit as usize;
            if size < unit || !size.is_multiple_of(unit) || bytes.len() < size {
                return None;
            }
            for piece in bytes[..size].chunks(unit) {
                let mut raw = [0u8; 8];
                raw[..unit].copy_from_slice(piece);
                let value = u64::from_le_bytes(raw);
                let words = if unit > 4 { vec![Operand::Literal(value as u32), Operand::Literal((value >> 32) as u32)] } else { vec![Operand::Literal(value as u32)] };
                out.push(module.intern(Op::Constant, Some(root.leaf), words));
            }
        }
        _ => return None,
    }
    // Trailing padding (a float3's fourth unit, a struct's tail).
    let zero = module.constant_null(root.leaf);
    out.resize(start + span(types, ty, root.unit)? as usize, zero);
    Some(())
}

#[allow(clippy::too_many_arguments)]
fn rewrite_function(
    module: &mut Module,
    fi: usize,
    types: &Types,
    roots: &HashMap<Word, Root>,
    derived: &HashMap<Word, Derived>,
    var_roots: &HashMap<Word, Word>,
    initializers: &HashMap<Word, Vec<Word>>,
    uint: Word,
    outcome: &mut Outcome,
) -> Result<()> {
    let index_var = module.type_pointer(StorageClass::Function, uint);
    // Indices known at translation time (a cast of a variable itself), for copies from tables.
    let mut constant_index: HashMap<Word, u32> = HashMap::new();
    for b in 0..module.functions[fi].blocks.len() {
        let body = std::mem::take(&mut module.functions[fi].blocks[b].insts);
        for mut inst in body {
            // Variables holding pointers hold their indices.
            let var_operand = inst.operands.first().and_then(Operand::id).filter(|v| var_roots.contains_key(v));
            if inst.is(Op::Variable) && inst.result_id.is_some_and(|r| var_roots.contains_key(&r)) {
                inst.result_type = Some(index_var);
                module.functions[fi].blocks[b].insts.push(inst);
                continue;
            }
            if let (Some(var), true) = (var_operand, inst.is(Op::Store) || inst.is(Op::Load)) {
                let bad = |m: &str| Error::Invalid { site: module.site(&inst), message: m.to_string() };
                let moved = if inst.is(Op::Store) {
                    let value = inst.id(1)?;
                    let d = derived.get(&value).ok_or_else(|| bad("stores a pointer that is not into local or private memory where such pointers are kept"))?;
                    if Some(&d.root) != var_roots.get(&var) {
                        return Err(bad("stores pointers into two different local or private variables in one pointer variable"));
                    }
                    Inst::new(Op::Store, None, None, vec![Operand::Id(var), Operand::Id(d.index)])
                } else {
                    let d = inst.result_id.and_then(|r| derived.get(&r)).ok_or_else(|| bad("loads a pointer variable"))?;
                    Inst::new(Op::Load, Some(uint), Some(d.index), vec![Operand::Id(var)])
                };
                module.functions[fi].blocks[b].insts.push(moved.from_origin(inst.origin));
                outcome.count(inst.opcode);
                continue;
            }
            let result_derived = inst.result_id.and_then(|r| derived.get(&r)).filter(|_| !inst.is(Op::Variable));
            let uses_derived = inst.operands.iter().filter_map(Operand::id).any(|id| derived.contains_key(&id));
            if result_derived.is_none() && !uses_derived {
                module.functions[fi].blocks[b].insts.push(inst);
                continue;
            }
            if inst.is(Op::Variable) {
                module.functions[fi].blocks[b].insts.push(inst);
                continue;
            }
            outcome.count(inst.opcode);
            let index = module.functions[fi].blocks[b].insts.len();
            let mut bl = Builder::new(module, Cursor { function: fi, block: b, index }).with_origin(inst.origin);
            let bad = |bl: &Builder<'_>, m: &str| Error::Invalid { site: bl.module.site(&inst), message: m.to_string() };
            let to_u32 = |bl: &mut Builder<'_>, v: Word| -> Word {
                match types.type_of(v).and_then(|t| types.int(t)) {
                    Some((32, false)) => v,
                    Some((32, true)) => bl.bitcast(uint, v),
                    Some(_) => bl.op(Op::UConvert, uint, &[v]),
                    None => v,
                }
            };
            match inst.op() {
                Some(Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain) => {
                    let Some(d) = result_derived else { return Err(bad(&bl, "derives a pointer from local memory in an unsupported way")) };
                    let base = *derived.get(&inst.id(0)?).ok_or_else(|| bad(&bl, "derives a pointer from one that is not into local or private memory"))?;
                    let mut acc = base.index;
                    let mut ty = base.pointee;
                    let mut idxs: Vec<Word> = inst.operands.iter().skip(1).filter_map(Operand::id).collect();
                    let is_ptr_chain = matches!(inst.op(), Some(Op::PtrAccessChain | Op::InBoundsPtrAccessChain));
                    // A byte view of wider elements (LLVM writes `p[1]` as `p + 4` bytes):
                    // steps in bytes, which must add up to whole elements.
                    let element_bytes = roots[&base.root].unit;
                    let byte_view = is_byte_view(types, ty) && element_bytes > 1;
                    if byte_view && idxs.len() != usize::from(is_ptr_chain) {
                        return Err(bad(&bl, "indexes into a byte view of local or private memory"));
                    }
                    if is_ptr_chain {
                        let elem = idxs.remove(0);
                        let e = to_u32(&mut bl, elem);
                        let scaled = if byte_view {
                            match types.const_u32(elem) {
                                Some(c) if c % element_bytes == 0 => bl.module.constant_u32(c / element_bytes),
                                Some(_) => return Err(bad(&bl, "offsets a pointer into local or private memory by part of an element")),
                                None => {
                                    let c = bl.module.constant_u32(element_bytes);
                                    bl.op(Op::UDiv, uint, &[e, c])
                                }
                            }
                        } else {
                            let n = span(types, ty, element_bytes).ok_or_else(|| bad(&bl, "steps over an element without a fixed size in whole elements of its variable"))?;
                            if n == 1 {
                                e
                            } else {
                                let c = bl.module.constant_u32(n);
                                bl.imul(uint, e, c)
                            }
                        };
                        acc = bl.iadd(uint, acc, scaled);
                    }
                    for i in idxs {
                        let def = types.defs.get(&ty).ok_or_else(|| bad(&bl, "indexes into an unknown type"))?;
                        let (next, stride) = match def.op() {
                            Some(Op::TypeArray | Op::TypeRuntimeArray) => {
                                let e = def.id(0)?;
                                (e, span(types, e, element_bytes).ok_or_else(|| bad(&bl, "indexes an array of elements without a fixed size"))?)
                            }
                            Some(Op::TypeVector) => (def.id(0)?, 1),
                            Some(Op::TypeStruct) => {
                                // A member: its offset, a constant.
                                let k = types.const_u32(i).ok_or_else(|| bad(&bl, "selects a struct member with an index that is not a constant"))?;
                                let member = def.operands.get(k as usize).and_then(Operand::id).ok_or_else(|| bad(&bl, "selects a struct member that does not exist"))?;
                                let offset = member_offset(types, ty, k, element_bytes).ok_or_else(|| bad(&bl, "selects a struct member at an offset that is not a whole element of its variable"))?;
                                let c = bl.module.constant_u32(offset);
                                acc = bl.iadd(uint, acc, c);
                                ty = member;
                                continue;
                            }
                            _ => return Err(bad(&bl, "indexes into a type that is not an array, vector or struct")),
                        };
                        let iv = to_u32(&mut bl, i);
                        let scaled = if stride == 1 {
                            iv
                        } else {
                            let c = bl.module.constant_u32(stride);
                            bl.imul(uint, iv, c)
                        };
                        acc = bl.iadd(uint, acc, scaled);
                        ty = next;
                    }
                    bl.insert(Inst::new(Op::CopyObject, Some(uint), Some(d.index), vec![Operand::Id(acc)]));
                }
                Some(Op::Bitcast | Op::CopyObject) => {
                    let Some(d) = result_derived else { return Err(bad(&bl, "turns a pointer into local memory into a number")) };
                    let base = *derived.get(&inst.id(0)?).ok_or_else(|| bad(&bl, "casts a pointer that is not into local or private memory"))?;
                    let unit = roots[&base.root].unit;
                    // A byte view (what producers make for lifetime markers and memcpy) keeps
                    // the index; accesses through it fail below.
                    if !(is_byte_view(types, d.pointee) || fits_units(types, d.pointee, unit)) {
                        return Err(bad(&bl, "casts a pointer into local or private memory to a pointer to elements of another size (not lowered yet)"));
                    }
                    bl.insert(Inst::new(Op::CopyObject, Some(uint), Some(d.index), vec![Operand::Id(base.index)]));
                    if let Some(c) = types.const_u32(base.index).or_else(|| constant_index.get(&base.index).copied()) {
                        constant_index.insert(d.index, c);
                    }
                }
                Some(Op::Phi) => {
                    let Some(d) = result_derived else { return Err(bad(&bl, "mixes pointers")) };
                    let mut ops = Vec::new();
                    for pair in inst.operands.chunks(2) {
                        let v = pair[0].id().unwrap_or(0);
                        let src = derived.get(&v).ok_or_else(|| bad(&bl, "merges a pointer into local memory with another kind of pointer"))?;
                        if src.root != d.root {
                            return Err(bad(&bl, "merges pointers into two different local or private variables"));
                        }
                        ops.push(Operand::Id(src.index));
                        ops.push(pair[1].clone());
                    }
                    bl.insert(Inst::new(Op::Phi, Some(uint), Some(d.index), ops));
                }
                Some(Op::Select) => {
                    let Some(d) = result_derived else { return Err(bad(&bl, "mixes pointers")) };
                    let [c, x, y] = inst.ids::<3>()?;
                    let (dx, dy) = (derived.get(&x), derived.get(&y));
                    match (dx, dy) {
                        (Some(a), Some(bb)) if a.root == bb.root => {
                            bl.insert(Inst::new(Op::Select, Some(uint), Some(d.index), vec![Operand::Id(c), Operand::Id(a.index), Operand::Id(bb.index)]));
                        }
                        _ => return Err(bad(&bl, "selects between pointers into different variables")),
                    }
                }
                Some(Op::Load) => {
                    let p = *derived.get(&inst.id(0)?).ok_or_else(|| bad(&bl, "loads a pointer into local or private memory from memory (pointers there are not lowered)"))?;
                    let ty = inst.ty()?;
                    let v = load_leaves(&mut bl, types, roots[&p.root], p.root, p.index, ty)
                        .ok_or_else(|| bad(&bl, "loads a value that is not made of numbers of its variable's element size from local or private memory"))?;
                    bl.insert(Inst::new(Op::CopyObject, Some(ty), inst.result_id, vec![Operand::Id(v)]));
                }
                Some(Op::Store) => {
                    let p = *derived.get(&inst.id(0)?).ok_or_else(|| bad(&bl, "stores a pointer into local or private memory to memory (pointers there are not lowered)"))?;
                    let value = inst.id(1)?;
                    let ty = types.type_of(value).unwrap_or(0);
                    store_leaves(&mut bl, types, roots[&p.root], p.root, p.index, ty, value)
                        .ok_or_else(|| bad(&bl, "stores a value that is not made of numbers of its variable's element size to local or private memory"))?;
                }
                Some(op) if is_atomic(op) => {
                    let p = *derived.get(&inst.id(0)?).ok_or_else(|| bad(&bl, "an atomic on a value that is a pointer into local memory"))?;
                    let root = roots[&p.root];
                    if inst.result_type.is_some_and(|t| t != root.leaf) || (inst.is(Op::AtomicStore) && inst.id(3).ok().and_then(|v| types.type_of(v)) != Some(root.leaf)) {
                        return Err(bad(&bl, "an atomic on a member whose type is not its variable's element type (a float in a struct of ints)"));
                    }
                    let class = StorageClass::from_u32(root.class).unwrap_or(StorageClass::Workgroup);
                    let ptr_ty = bl.module.type_pointer(class, root.leaf);
                    let chain = bl.access_chain(ptr_ty, p.root, &[p.index]);
                    let mut c = inst.clone();
                    c.operands[0] = Operand::Id(chain);
                    bl.insert(c);
                }
                Some(Op::CooperativeMatrixLoadKHR | Op::CooperativeMatrixStoreKHR) => {
                    // Through an access chain to the leaf at the index, as Vulkan loads matrices
                    // from arrays: the Stride, which counts the pointee's elements, scaled to
                    // leaves.
                    let p = *derived.get(&inst.id(0)?).ok_or_else(|| bad(&bl, "loads or stores a cooperative matrix through a pointer into local memory of unknown origin"))?;
                    let root = roots[&p.root];
                    if root.class != StorageClass::Workgroup as u32 {
                        return Err(bad(&bl, "loads or stores a cooperative matrix in private memory (Vulkan has them in workgroup and buffer memory only)"));
                    }
                    let bytes = size_align(types, p.pointee).map(|(size, _)| size).filter(|s| *s > 0 && s % root.unit == 0);
                    let ratio = bytes.ok_or_else(|| bad(&bl, "loads or stores a cooperative matrix through a pointer to elements that are not whole elements of its variable"))? / root.unit;
                    let ptr_ty = bl.module.type_pointer(StorageClass::Workgroup, root.leaf);
                    let chain = bl.access_chain(ptr_ty, p.root, &[p.index]);
                    let mut c = inst.clone();
                    c.operands[0] = Operand::Id(chain);
                    let stride_at = if inst.is(Op::CooperativeMatrixLoadKHR) { 2 } else { 3 };
                    if let (true, Some(stride)) = (ratio > 1, c.operands.get(stride_at).and_then(Operand::id)) {
                        let ty = types.type_of(stride).ok_or_else(|| bad(&bl, "has a Stride without a type"))?;
                        let (width, signed) = types.int(ty).ok_or_else(|| bad(&bl, "has a Stride that is not an integer"))?;
                        let factor = bl.module.constant_int(ty, width, signed, u64::from(ratio));
                        c.operands[stride_at] = Operand::Id(bl.imul(ty, stride, factor));
                    }
                    bl.insert(c);
                }
                Some(Op::ConvertPtrToU) => {
                    // An address: each variable its own 16 MiB window (its rank among the
                    // flattened variables), the byte offset within it. Exact for differences
                    // and comparisons within a variable; variables never overlap.
                    let p = *derived.get(&inst.id(0)?).ok_or_else(|| bad(&bl, "converts a pointer that is not into local or private memory"))?;
                    let rank = roots.keys().filter(|r| **r < p.root).count() as u32;
                    let unit = bl.module.constant_u32(roots[&p.root].unit);
                    let bytes = bl.imul(uint, p.index, unit);
                    let base = bl.module.constant_u32((rank + 1) << 24);
                    let address = bl.iadd(uint, bytes, base);
                    let ty = inst.ty()?;
                    let op = if types.int(ty).is_some_and(|(w, _)| w == 32) { Op::CopyObject } else { Op::UConvert };
                    bl.insert(Inst::new(op, Some(ty), inst.result_id, vec![Operand::Id(address)]));
                }
                Some(Op::LifetimeStart | Op::LifetimeStop) => {}
                Some(Op::CopyMemorySized | Op::CopyMemory) => {
                    copy_memory(&mut bl, types, roots, derived, initializers, &constant_index, &inst).map_err(|m| bad(&bl, &m))?;
                }
                _ => return Err(bad(&bl, "uses a pointer into local or private memory in a way that is not lowered")),
            }
        }
    }
    Ok(())
}

/// `OpCopyMemorySized`/`OpCopyMemory` between flattened variables: element by element where
/// both have leaves of one size, or, from a constant table (an initialized private variable,
/// LLVM's memcpy initializer of a private array), as the table's bytes reinterpreted as the
/// destination's leaves, stored as constants. Between a flattened variable and buffer memory
/// (a struct copied from a buffer or from an argument passed by value, at -O0): leaf by leaf,
/// through a buffer pointer to the leaves.
fn copy_memory(
    bl: &mut Builder<'_>,
    types: &Types,
    roots: &HashMap<Word, Root>,
    derived: &HashMap<Word, Derived>,
    initializers: &HashMap<Word, Vec<Word>>,
    constant_index: &HashMap<Word, u32>,
    inst: &Inst,
) -> std::result::Result<(), String> {
    let uint = bl.module.type_int(32, false);
    let buffer = |v: Word| types.type_of(v).and_then(|t| types.pointer(t)).is_some_and(|(c, _)| c == StorageClass::PhysicalStorageBuffer as u32);
    let (dst_id, src_id) = (inst.id(0).map_err(|e| e.to_string())?, inst.id(1).map_err(|e| e.to_string())?);
    match (derived.get(&dst_id), derived.get(&src_id)) {
        (Some(flat), None) if buffer(src_id) => return copy_with_buffer(bl, types, roots, *flat, src_id, inst, false),
        (None, Some(flat)) if buffer(dst_id) => return copy_with_buffer(bl, types, roots, *flat, dst_id, inst, true),
        _ => {}
    }
    let dst = *inst.id(0).ok().and_then(|d| derived.get(&d)).ok_or("copies memory to a pointer that is not into local or private memory")?;
    let src_id = inst.id(1).map_err(|e| e.to_string())?;
    let dst_root = roots[&dst.root];
    let dst_leaf_bytes = dst_root.unit;
    let bytes = if inst.is(Op::CopyMemorySized) {
        let size = inst.id(2).map_err(|e| e.to_string())?;
        types.const_u32(size).ok_or("copies a number of bytes that is not a constant")?
    } else {
        let pointee = types.type_of(src_id).and_then(|t| types.pointer(t)).map(|p| p.1).ok_or("copies from a value that is not a pointer")?;
        size_align(types, pointee).map(|s| s.0).ok_or("copies a type without a size")?
    };
    if bytes % dst_leaf_bytes != 0 {
        return Err(format!("copies {bytes} bytes, not a whole number of {dst_leaf_bytes}-byte elements"));
    }
    let count = bytes / dst_leaf_bytes;
    let dst_class = StorageClass::from_u32(dst_root.class).unwrap_or(StorageClass::Function);
    let dst_ptr = bl.module.type_pointer(dst_class, dst_root.leaf);
    let src = derived.get(&src_id).copied().ok_or("copies memory from a pointer that is not into local or private memory")?;
    let src_root = roots[&src.root];
    let src_leaf_bytes = src_root.unit;
    if src_leaf_bytes == dst_leaf_bytes {
        let src_class = StorageClass::from_u32(src_root.class).unwrap_or(StorageClass::Function);
        let src_ptr = bl.module.type_pointer(src_class, src_root.leaf);
        for k in 0..count {
            let kc = bl.module.constant_u32(k);
            let si = bl.iadd(uint, src.index, kc);
            let di = bl.iadd(uint, dst.index, kc);
            let sp = bl.access_chain(src_ptr, src.root, &[si]);
            let v = bl.load(src_root.leaf, sp);
            let v = if src_root.leaf == dst_root.leaf { v } else { bl.bitcast(dst_root.leaf, v) };
            let dp = bl.access_chain(dst_ptr, dst.root, &[di]);
            bl.store(dp, v);
        }
        return Ok(());
    }
    // From a constant table of other leaves: its bytes, reinterpreted.
    let table = initializers.get(&src.root).ok_or("copies between local or private variables of different element sizes")?;
    let start =
        types.const_u32(src.index).or_else(|| constant_index.get(&src.index).copied()).ok_or("copies from a constant table at an offset that is not a constant")? as usize * src_leaf_bytes as usize;
    let mut table_bytes = Vec::new();
    for leaf in table {
        let words: Vec<Word> = match bl.module.globals().iter().find(|g| g.result_id == Some(*leaf)) {
            Some(g) if g.is(Op::ConstantNull) => vec![0; src_leaf_bytes.div_ceil(4) as usize],
            Some(g) if g.is(Op::Constant) => g.operands.iter().filter_map(Operand::word).collect(),
            _ => return Err("copies from a table whose elements are not plain constants".into()),
        };
        let mut b: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        b.truncate(src_leaf_bytes as usize);
        table_bytes.extend(b);
    }
    let (dst_width, _) = (dst_leaf_bytes * 8, ());
    for k in 0..count as usize {
        let at = start + k * dst_leaf_bytes as usize;
        let chunk = table_bytes.get(at..at + dst_leaf_bytes as usize).ok_or("copies past the end of a constant table")?;
        let mut raw = [0u8; 8];
        raw[..chunk.len()].copy_from_slice(chunk);
        let value = u64::from_le_bytes(raw);
        let words: Vec<Operand> = if dst_width > 32 { vec![Operand::Literal(value as u32), Operand::Literal((value >> 32) as u32)] } else { vec![Operand::Literal(value as u32)] };
        let c = bl.module.intern(Op::Constant, Some(dst_root.leaf), words);
        let kc = bl.module.constant_u32(k as u32);
        let di = bl.iadd(uint, dst.index, kc);
        let dp = bl.access_chain(dst_ptr, dst.root, &[di]);
        bl.store(dp, c);
    }
    Ok(())
}

/// A memory copy between flattened variable `flat` and buffer pointer `buffer` (into the buffer
/// where `to_buffer`): the copy's bytes as the variable's leaves, one by one, through a buffer
/// pointer to leaves at the copy's alignment (`split-underaligned-accesses` splits them where
/// that is below the leaves' size).
fn copy_with_buffer(bl: &mut Builder<'_>, types: &Types, roots: &HashMap<Word, Root>, flat: Derived, buffer: Word, inst: &Inst, to_buffer: bool) -> std::result::Result<(), String> {
    let root = roots[&flat.root];
    let bytes = if inst.is(Op::CopyMemorySized) {
        types.const_u32(inst.id(2).map_err(|e| e.to_string())?).ok_or("copies a number of bytes that is not a constant")?
    } else {
        let pointee = types.type_of(inst.id(1).map_err(|e| e.to_string())?).and_then(|t| types.pointer(t)).map(|p| p.1).ok_or("copies from a value that is not a pointer")?;
        size_align(types, pointee).map(|s| s.0).ok_or("copies a type without a size")?
    };
    if !bytes.is_multiple_of(root.unit) {
        return Err(format!("copies {bytes} bytes, not a whole number of {}-byte elements", root.unit));
    }
    // The copy's own alignment: the literal after an `Aligned` mask among its memory operands.
    let first_mask = if inst.is(Op::CopyMemorySized) { 3 } else { 2 };
    let align = match (inst.operands.get(first_mask), inst.operands.get(first_mask + 1)) {
        (Some(Operand::Enum(_, mask)), Some(Operand::Literal(a))) if mask & MemoryAccess::ALIGNED.bits() != 0 => (*a).min(root.unit),
        _ => root.unit,
    };
    let uint = bl.module.type_int(32, false);
    let leaf_ptr = crate::passes::byte_offsets::strided_pointer(bl.module, root.leaf, root.unit);
    let base = if types.type_of(buffer) == Some(leaf_ptr) { buffer } else { bl.bitcast(leaf_ptr, buffer) };
    let class = StorageClass::from_u32(root.class).unwrap_or(StorageClass::Function);
    let var_ptr = bl.module.type_pointer(class, root.leaf);
    let aligned = || vec![Operand::Enum(OperandKind::MemoryAccess, MemoryAccess::ALIGNED.bits()), Operand::Literal(align)];
    for k in 0..bytes / root.unit {
        let kc = bl.module.constant_u32(k);
        let at = if k == 0 { base } else { bl.emit(Op::PtrAccessChain, leaf_ptr, vec![Operand::Id(base), Operand::Id(kc)]) };
        let index = bl.iadd(uint, flat.index, kc);
        let leaf = bl.access_chain(var_ptr, flat.root, &[index]);
        if to_buffer {
            let v = bl.load(root.leaf, leaf);
            let mut ops = vec![Operand::Id(at), Operand::Id(v)];
            ops.extend(aligned());
            bl.emit_void(Op::Store, ops);
        } else {
            let mut ops = vec![Operand::Id(at)];
            ops.extend(aligned());
            let v = bl.emit(Op::Load, root.leaf, ops);
            bl.store(leaf, v);
        }
    }
    Ok(())
}

/// Removes private and workgroup variables nothing uses any more, then the types and constants
/// nothing uses (a constant table replaced by stores must not keep an 8-bit type alive, nor a
/// lowered `printf` a double).
fn remove_unused_globals(module: &mut Module) {
    // Named or decorated globals stay: names carry the kernel interface, decorations
    // built-ins.
    let kept: HashSet<Word> = module.debug_names.iter().filter(|n| n.is(Op::Name)).chain(module.annotations.iter()).filter_map(|a| a.operands.first().and_then(Operand::id)).collect();
    module.remove_unused_globals(|g| {
        if g.result_id.is_none_or(|id| kept.contains(&id)) {
            return false;
        }
        match g.op() {
            Some(Op::Variable) => matches!(StorageClass::from_u32(g.word_opt(0).unwrap_or(u32::MAX)), Some(StorageClass::Private | StorageClass::Workgroup)),
            Some(Op::Constant | Op::ConstantComposite | Op::ConstantNull | Op::ConstantTrue | Op::ConstantFalse) => true,
            // Number types too: a double only a lowered `printf` promoted to must not
            // require Float64.
            Some(Op::TypeArray | Op::TypePointer | Op::TypeInt | Op::TypeFloat) => true,
            _ => false,
        }
    });
}

pub(crate) fn is_atomic(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        AtomicLoad
            | AtomicStore
            | AtomicExchange
            | AtomicCompareExchange
            | AtomicIIncrement
            | AtomicIDecrement
            | AtomicIAdd
            | AtomicISub
            | AtomicSMin
            | AtomicUMin
            | AtomicSMax
            | AtomicUMax
            | AtomicAnd
            | AtomicOr
            | AtomicXor
            | AtomicFAddEXT
            | AtomicFMinEXT
            | AtomicFMaxEXT
    )
}

/// A pointer to the leaf at `index` of flattened variable `var`, for a number of type `ty`;
/// `None` where `ty` is not of the leaf's size.
fn leaf_pointer(bl: &mut Builder<'_>, types: &Types, root: Root, var: Word, index: Word, ty: Word) -> Option<Word> {
    if size_align(types, ty)?.0 != root.unit {
        return None;
    }
    let class = StorageClass::from_u32(root.class)?;
    let ptr_ty = bl.module.type_pointer(class, root.leaf);
    Some(bl.access_chain(ptr_ty, var, &[index]))
}

/// How many leaves of `unit` bytes a number of `size` bytes spans when it is wider than them
/// (two or four: a struct of two floats copied as one `long`, as LLVM copies small structs).
fn wide_parts(size: u32, unit: u32) -> Option<u32> {
    (size > unit && size.is_multiple_of(unit)).then_some(size / unit).filter(|m| matches!(m, 2 | 4) || (*m == 8 && unit == 1))
}

/// The number of type `ty` at `index` made of the leaves it spans, when it is wider than them:
/// the leaves as unsigned integers of their size, gathered in a vector and bitcast.
fn load_wide(bl: &mut Builder<'_>, types: &Types, root: Root, var: Word, index: Word, ty: Word) -> Option<Word> {
    let m = wide_parts(size_align(types, ty)?.0, root.unit)?;
    let part = bl.module.type_int(root.unit * 8, false);
    let class = StorageClass::from_u32(root.class)?;
    let ptr_ty = bl.module.type_pointer(class, root.leaf);
    let parts: Vec<Word> = (0..m)
        .map(|k| {
            let i = index_plus(bl, index, k);
            let chain = bl.access_chain(ptr_ty, var, &[i]);
            let v = bl.load(root.leaf, chain);
            if root.leaf == part {
                v
            } else {
                bl.bitcast(part, v)
            }
        })
        .collect();
    if m == 8 {
        // Bytes of a 64-bit number: two words of four, then the pair.
        let (bytes4, uint) = (bl.module.type_vector(part, 4), bl.module.type_int(32, false));
        let words: Vec<Word> = parts
            .chunks(4)
            .map(|c| {
                let v = bl.op(Op::CompositeConstruct, bytes4, c);
                bl.bitcast(uint, v)
            })
            .collect();
        let uvec2 = bl.module.type_vector(uint, 2);
        let pair = bl.op(Op::CompositeConstruct, uvec2, &words);
        return Some(bl.bitcast(ty, pair));
    }
    let vector = bl.module.type_vector(part, m);
    let gathered = bl.op(Op::CompositeConstruct, vector, &parts);
    Some(bl.bitcast(ty, gathered))
}

/// Stores `value`, a number of type `ty` wider than the leaves, over the leaves it spans (the
/// inverse of [`load_wide`]).
fn store_wide(bl: &mut Builder<'_>, types: &Types, root: Root, var: Word, index: Word, ty: Word, value: Word) -> Option<()> {
    let m = wide_parts(size_align(types, ty)?.0, root.unit)?;
    let part = bl.module.type_int(root.unit * 8, false);
    let class = StorageClass::from_u32(root.class)?;
    let ptr_ty = bl.module.type_pointer(class, root.leaf);
    let parts: Vec<Word> = if m == 8 {
        let (bytes4, uint) = (bl.module.type_vector(part, 4), bl.module.type_int(32, false));
        let uvec2 = bl.module.type_vector(uint, 2);
        let pair = bl.bitcast(uvec2, value);
        (0..2)
            .flat_map(|w| {
                let word = bl.composite_extract(uint, pair, w);
                let bytes = bl.bitcast(bytes4, word);
                (0..4).map(|k| bl.composite_extract(part, bytes, k)).collect::<Vec<_>>()
            })
            .collect()
    } else {
        let vector = bl.module.type_vector(part, m);
        let all = bl.bitcast(vector, value);
        (0..m).map(|k| bl.composite_extract(part, all, k)).collect()
    };
    for (k, v) in (0..m).zip(parts) {
        let v = if root.leaf == part { v } else { bl.bitcast(root.leaf, v) };
        let i = index_plus(bl, index, k);
        let chain = bl.access_chain(ptr_ty, var, &[i]);
        bl.store(chain, v);
    }
    Some(())
}

/// The value of type `ty` at `index` of flattened variable `var`: numbers of the variable's
/// element size (bitcast where their type differs) or of two or four of them, and vectors,
/// arrays and structs of them in OpenCL C's layout.
fn load_leaves(bl: &mut Builder<'_>, types: &Types, root: Root, var: Word, index: Word, ty: Word) -> Option<Word> {
    let d = types.defs.get(&ty)?;
    let parts: Vec<Word> = match d.op()? {
        Op::TypeInt | Op::TypeFloat if size_align(types, ty)?.0 > root.unit => return load_wide(bl, types, root, var, index, ty),
        Op::TypeInt | Op::TypeFloat => {
            let chain = leaf_pointer(bl, types, root, var, index, ty)?;
            let v = bl.load(root.leaf, chain);
            return Some(if ty == root.leaf { v } else { bl.bitcast(ty, v) });
        }
        Op::TypeVector => {
            let (c, n) = types.vector(ty)?;
            let per = span(types, c, root.unit)?;
            (0..n)
                .map(|k| {
                    let i = index_plus(bl, index, k * per);
                    load_leaves(bl, types, root, var, i, c)
                })
                .collect::<Option<_>>()?
        }
        Op::TypeArray => {
            let e = d.id(0).ok()?;
            let (n, per) = (types.const_u32(d.id(1).ok()?)?, span(types, e, root.unit)?);
            (0..n)
                .map(|k| {
                    let i = index_plus(bl, index, k * per);
                    load_leaves(bl, types, root, var, i, e)
                })
                .collect::<Option<_>>()?
        }
        Op::TypeStruct => {
            let members: Vec<Word> = d.operands.iter().filter_map(Operand::id).collect();
            members
                .iter()
                .enumerate()
                .map(|(k, m)| {
                    if is_padding(types, ty, k) {
                        return Some(bl.module.constant_null(*m));
                    }
                    let i = index_plus(bl, index, member_offset(types, ty, k as u32, root.unit)?);
                    load_leaves(bl, types, root, var, i, *m)
                })
                .collect::<Option<_>>()?
        }
        _ => return None,
    };
    Some(bl.op(Op::CompositeConstruct, ty, &parts))
}

/// Stores `value` of type `ty` at `index` of flattened variable `var` (the layout of
/// [`load_leaves`]).
fn store_leaves(bl: &mut Builder<'_>, types: &Types, root: Root, var: Word, index: Word, ty: Word, value: Word) -> Option<()> {
    let d = types.defs.get(&ty)?;
    let parts: Vec<(Word, u32)> = match d.op()? {
        Op::TypeInt | Op::TypeFloat if size_align(types, ty)?.0 > root.unit => return store_wide(bl, types, root, var, index, ty, value),
        Op::TypeInt | Op::TypeFloat => {
            let chain = leaf_pointer(bl, types, root, var, index, ty)?;
            let v = if ty == root.leaf { value } else { bl.bitcast(root.leaf, value) };
            bl.store(chain, v);
            return Some(());
        }
        Op::TypeVector => {
            let (c, n) = types.vector(ty)?;
            let per = span(types, c, root.unit)?;
            (0..n).map(|k| (c, k * per)).collect()
        }
        Op::TypeArray => {
            let e = d.id(0).ok()?;
            let (n, per) = (types.const_u32(d.id(1).ok()?)?, span(types, e, root.unit)?);
            (0..n).map(|k| (e, k * per)).collect()
        }
        Op::TypeStruct => {
            let members: Vec<Word> = d.operands.iter().filter_map(Operand::id).collect();
            members.iter().enumerate().map(|(k, m)| Some((*m, member_offset(types, ty, k as u32, root.unit)?))).collect::<Option<_>>()?
        }
        _ => return None,
    };
    for (k, (part_ty, offset)) in parts.into_iter().enumerate() {
        if d.is(Op::TypeStruct) && is_padding(types, ty, k) {
            continue;
        }
        let part = bl.composite_extract(part_ty, value, k as u32);
        let i = index_plus(bl, index, offset);
        store_leaves(bl, types, root, var, i, part_ty, part)?;
    }
    Some(())
}
