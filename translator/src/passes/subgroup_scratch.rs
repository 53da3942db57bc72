//! Per-sub-group areas of workgroup memory, as the passes that stage cooperative matrices
//! through memory use them (`pad-cooperative-matrix`, `lower-cooperative-matrix2`): one
//! workgroup array per area, `NumSubgroups x` its elements, sized from the entry point's
//! workgroup size (specialization constants included) and the target's smallest sub-group;
//! loops that spread an area's elements over the lanes; and the barrier that makes the lanes
//! see one another's writes.

use crate::analysis::Types;
use crate::ir::builder::Builder;
use crate::ir::{Inst, Module, Operand};
use crate::kernel::size_align;
use crate::passes::tile_cooperative_matrix::stride_physical_pointer;
use crate::profile::{DeviceCaps, Workarounds};
use spirv::{BuiltIn, ExecutionMode, MemorySemantics, Op, Scope, StorageClass, Word};
use std::collections::{BTreeMap, HashMap};

/// Area type -> (workgroup array, elements per sub-group).
pub(crate) type AreasByType = HashMap<Word, (Word, u32)>;

/// How a pass's sub-groups go over their areas.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SubgroupScratch {
    /// Iterations over an area's elements count sub-groups of this size: the target's smallest,
    /// or a smaller one an entry point requires.
    min_subgroup: u32,
    workarounds: Workarounds,
    /// The areas belong to logical sub-groups that `virtualize-subgroup-size` will join from
    /// physical ones (see [`SubgroupScratch::for_logical_subgroups`]).
    joined: bool,
}

impl SubgroupScratch {
    /// One workgroup array for each of `areas` (component type, elements per sub-group), in
    /// order; `Err` says why not (the sentence continues "... needs 4096 bytes ...").
    pub(crate) fn new(module: &mut Module, types: &Types, target: &DeviceCaps, areas: &[(Word, u32)]) -> Result<(SubgroupScratch, Vec<Word>), String> {
        if module.entry_points.len() != 1 {
            return Err("needs one entry point to size its areas from, and the module has more".into());
        }
        let (dims, default) = workgroup_size(module, types).ok_or("needs a workgroup size to size its areas from, and the entry point has none")?;
        // Sub-groups an entry point requires smaller than the device's are split out of its own
        // (`virtualize-subgroup-size`): areas and loops count those.
        let physical = if target.min_subgroup_size > 0 { target.min_subgroup_size } else { target.subgroup_size }.max(1);
        let min_subgroup = crate::kernel::recorded_subgroup_sizes(module).iter().map(|(_, s)| *s).filter(|s| *s > 0).fold(physical, u32::min);
        let bytes: u64 = areas.iter().map(|(c, e)| u64::from(*e) * u64::from(default.div_ceil(min_subgroup)) * u64::from(component_bytes(types, *c))).sum();
        let used = workgroup_bytes(module, types);
        let limit = u64::from(target.limits.max_shared_memory_size);
        if limit > 0 && used + bytes > limit {
            return Err(format!("needs {bytes} bytes of workgroup memory beside the module's {used}, more than the target's {limit}"));
        }
        let subgroups = subgroups_per_workgroup(module, dims, min_subgroup);
        let arrays = areas.iter().map(|&(component, elements)| subgroup_areas(module, component, elements, subgroups)).collect();
        Ok((SubgroupScratch { min_subgroup, workarounds: target.workarounds, joined: false }, arrays))
    }

    /// One area for each area type of `largest` (its largest matrix's elements), by type.
    pub(crate) fn by_type(module: &mut Module, types: &Types, target: &DeviceCaps, largest: &BTreeMap<Word, u32>) -> Result<(SubgroupScratch, AreasByType), String> {
        let list: Vec<(Word, u32)> = largest.iter().map(|(t, n)| (*t, *n)).collect();
        let (scratch, arrays) = SubgroupScratch::new(module, types, target, &list)?;
        Ok((scratch, list.iter().zip(arrays).map(|((t, n), a)| (*t, (a, *n))).collect()))
    }

    /// For a pass that runs before `virtualize-subgroup-size`, whose areas belong to the
    /// module's logical sub-groups: where those are joined from physical ones, barriers are
    /// control barriers (which that pass makes work-group ones), since the joined physical
    /// sub-groups share one area.
    pub(crate) fn for_logical_subgroups(self, module: &Module, target: &DeviceCaps) -> SubgroupScratch {
        SubgroupScratch { joined: joins_subgroups(module, target), ..self }
    }

    /// The first index of the sub-group's area in an array of `per` elements per sub-group.
    pub(crate) fn area_start(&self, b: &mut Builder<'_>, per: u32) -> Word {
        let uint = b.module.type_int(32, false);
        let sg_var = b.module.get_or_add_builtin(BuiltIn::SubgroupId, uint);
        let sg = b.load(uint, sg_var);
        let per = b.module.constant_u32(per);
        b.imul(uint, sg, per)
    }

    /// Runs `body(b, index)` for every index below `total`, each on one lane of the sub-group
    /// (`index = round * SubgroupSize + lane`).
    pub(crate) fn for_each(&self, b: &mut Builder<'_>, total: u32, mut body: impl FnMut(&mut Builder<'_>, Word)) {
        let uint = b.module.type_int(32, false);
        let boolean = b.module.type_bool();
        let lane_var = b.module.get_or_add_builtin(BuiltIn::SubgroupLocalInvocationId, uint);
        let size_var = b.module.get_or_add_builtin(BuiltIn::SubgroupSize, uint);
        let lane = b.load(uint, lane_var);
        let size = b.load(uint, size_var);
        let (zero, rounds, total_c) = (b.module.constant_u32(0), b.module.constant_u32(total.div_ceil(self.min_subgroup)), b.module.constant_u32(total));
        b.counted_loop_with(zero, rounds, self.element_loops(), |b, round| {
            let first = b.imul(uint, round, size);
            let index = b.iadd(uint, first, lane);
            let inside = b.op(Op::ULessThan, boolean, &[index, total_c]);
            b.if_then(inside, |b| body(b, index));
        });
    }

    /// The control of loops over an area's elements (`DontUnroll` where the target's
    /// `unrolls_element_loops` says so).
    pub(crate) fn element_loops(&self) -> spirv::LoopControl {
        self.workarounds.element_loop_control()
    }

    /// Makes the lanes of a sub-group see one another's workgroup-memory writes: a sub-group
    /// control barrier, or only a sub-group memory barrier where the target's sub-group
    /// barriers wait for the whole work-group (`Workarounds::subgroup_barriers_wait_for_workgroup`).
    pub(crate) fn barrier(&self, b: &mut Builder<'_>) {
        let subgroup = b.module.constant_u32(Scope::Subgroup as u32);
        let semantics = b.module.constant_u32((MemorySemantics::ACQUIRE_RELEASE | MemorySemantics::WORKGROUP_MEMORY).bits());
        let (op, ids) = match self.workarounds.subgroup_barriers_wait_for_workgroup && !self.joined {
            true => (Op::MemoryBarrier, vec![subgroup, semantics]),
            false => (Op::ControlBarrier, vec![subgroup, subgroup, semantics]),
        };
        b.emit_void(op, ids.into_iter().map(Operand::Id).collect());
    }
}

/// Whether `virtualize-subgroup-size` will join physical sub-groups of `target` into the
/// larger ones an entry point of `module` requires.
fn joins_subgroups(module: &Module, target: &DeviceCaps) -> bool {
    crate::kernel::recorded_subgroup_sizes(module).iter().any(|(_, s)| !target.runs_subgroup_size(*s) && *s > target.subgroup_size)
}

/// How the memory a cooperative-matrix load or store reads or writes holds the matrix's
/// components: its pointer's class, and the pointee, a scalar or a vector of `lanes` scalars
/// ("words") each holding `per_word` components (IREE stages int8 fragments in `uvec4` arrays:
/// four lanes of four components).
#[derive(Clone, Copy, Debug)]
pub(crate) struct MatrixMemory {
    pub(crate) class: u32,
    pub(crate) word: Word,
    pub(crate) lanes: u32,
    pub(crate) per_word: u32,
}

impl MatrixMemory {
    /// `None` where the pointee is not such a scalar or vector, or a word does not hold a whole
    /// number of components, or holds more than a four-component vector's worth.
    pub(crate) fn of(types: &Types, ptr: Word, component: Word) -> Option<MatrixMemory> {
        let (class, pointee) = types.pointer(types.type_of(ptr)?)?;
        let (word, lanes) = types.vector(pointee).unwrap_or((pointee, 1));
        let (w, c) = (types.scalar_width(word)?, types.scalar_width(component)?);
        let per_word = (w % c == 0).then_some(w / c).filter(|n| matches!(n, 1 | 2 | 4))?;
        Some(MatrixMemory { class, word, lanes, per_word })
    }

    /// Components per pointee element: the unit of a stride.
    pub(crate) fn per_element(&self) -> u32 {
        self.lanes * self.per_word
    }

    /// A pointer to the word that holds the component `offset` (a 32-bit unsigned count of
    /// components) past where `ptr` points, and the component's place in that word where a
    /// word holds more than one. `chains` are the module's access chains: a pointer one of
    /// them made is rebuilt with its last index moved; others (physical pointers) are indexed
    /// by `OpPtrAccessChain`.
    pub(crate) fn component_pointer(&self, bld: &mut Builder<'_>, types: &Types, chains: &HashMap<Word, Inst>, ptr: Word, offset: Word) -> (Word, Option<Word>) {
        let uint = bld.module.type_int(32, false);
        // The offset split into a word and a place in it, and the word into a pointee element
        // and a vector lane.
        let mut split = |v: Word, n: u32| -> (Word, Option<Word>) {
            if n == 1 {
                return (v, None);
            }
            let n = bld.module.constant_u32(n);
            (bld.op(Op::UDiv, uint, &[v, n]), Some(bld.op(Op::UMod, uint, &[v, n])))
        };
        let (word, part) = split(offset, self.per_word);
        let (index, lane) = split(word, self.lanes);
        let psb = self.class == StorageClass::PhysicalStorageBuffer as u32;
        let ptr_ty = types.type_of(ptr).unwrap_or(0);
        let word_ptr = match lane {
            Some(_) => bld.module.type_pointer(StorageClass::from_u32(self.class).unwrap_or(StorageClass::Workgroup), self.word),
            None => ptr_ty,
        };
        let pointer = match chains.get(&ptr) {
            Some(chain) if !psb => {
                let mut ops = chain.operands.clone();
                let last = ops.len() - 1;
                let idx = ops[last].id().unwrap_or(0);
                ops[last] = Operand::Id(bld.index_plus(types, idx, index));
                ops.extend(lane.map(Operand::Id));
                bld.emit(chain.op().unwrap_or(Op::AccessChain), word_ptr, ops)
            }
            _ => {
                if psb {
                    stride_physical_pointer(bld.module, types, ptr_ty);
                }
                let mut ops = vec![Operand::Id(ptr), Operand::Id(index)];
                ops.extend(lane.map(Operand::Id));
                bld.emit(Op::PtrAccessChain, word_ptr, ops)
            }
        };
        (pointer, part)
    }

    /// Memory operands of a single-word access (`Aligned` to the word for physical pointers).
    pub(crate) fn word_operands(&self, types: &Types) -> Vec<Operand> {
        if self.class == StorageClass::PhysicalStorageBuffer as u32 {
            vec![Operand::Enum(rspirv::grammar::OperandKind::MemoryAccess, spirv::MemoryAccess::ALIGNED.bits()), Operand::Literal(component_bytes(types, self.word))]
        } else {
            Vec::new()
        }
    }
}

/// Sub-groups per workgroup of `dims` in sub-groups of `min_subgroup`, rounded up, as a
/// constant expression (specializable): `(x * y * z + S - 1) / S`.
fn subgroups_per_workgroup(module: &mut Module, dims: [Word; 3], min_subgroup: u32) -> Word {
    let uint = module.type_int(32, false);
    let xy = spec_op(module, uint, Op::IMul, dims[0], dims[1]);
    let invocations = spec_op(module, uint, Op::IMul, xy, dims[2]);
    let less = module.constant_u32(min_subgroup - 1);
    let rounded = spec_op(module, uint, Op::IAdd, invocations, less);
    let size = module.constant_u32(min_subgroup);
    spec_op(module, uint, Op::UDiv, rounded, size)
}

/// A new workgroup array of `component` with `elements` per sub-group for `subgroups` of them.
fn subgroup_areas(module: &mut Module, component: Word, elements: u32, subgroups: Word) -> Word {
    let uint = module.type_int(32, false);
    let per = module.constant_u32(elements);
    let len = spec_op(module, uint, Op::IMul, subgroups, per);
    let array = module.type_array(component, len);
    let ptr = module.type_pointer(StorageClass::Workgroup, array);
    module.add_global_variable(ptr, StorageClass::Workgroup, None)
}

fn spec_op(module: &mut Module, ty: Word, op: Op, a: Word, b: Word) -> Word {
    module.spec_constant_op(ty, op, &[a, b])
}

/// Bytes of a scalar component type.
pub(crate) fn component_bytes(types: &Types, ty: Word) -> u32 {
    size_align(types, ty).map_or(4, |(size, _)| size)
}

/// Bytes of the module's workgroup variables whose size is known (arrays sized by
/// specialization constants count as empty).
fn workgroup_bytes(module: &Module, types: &Types) -> u64 {
    module
        .globals()
        .iter()
        .filter(|g| g.is(Op::Variable) && g.word_opt(0) == Some(StorageClass::Workgroup as u32))
        .filter_map(|g| g.result_type.and_then(|p| types.defs.get(&p)).and_then(|d| d.id(1).ok()))
        .filter_map(|t| size_align(types, t))
        .map(|(size, _)| u64::from(size))
        .sum()
}

/// The entry point's workgroup size: its three dimensions as ids (constants or specialization
/// constants) and the invocations they make by default; `None` where it has none.
pub(crate) fn workgroup_size(module: &mut Module, types: &Types) -> Option<([Word; 3], u32)> {
    let parts: Vec<Word> = if let Some(composite) = module.builtin_constant(BuiltIn::WorkgroupSize) {
        module.globals().iter().find(|g| g.result_id == Some(composite))?.operands.iter().filter_map(Operand::id).collect()
    } else {
        let f = module.entry_points.first()?.operands.get(1).and_then(Operand::id)?;
        let mode = module
            .execution_modes
            .iter()
            .find(|m| m.word_opt(0) == Some(f) && matches!(m.word_opt(1), Some(x) if x == ExecutionMode::LocalSize as u32 || x == ExecutionMode::LocalSizeId as u32))?
            .clone();
        if mode.word_opt(1) == Some(ExecutionMode::LocalSize as u32) {
            let dims = [mode.word_opt(2)?, mode.word_opt(3)?, mode.word_opt(4)?];
            // Saturated: a size past u32 is refused by the areas' size check, not wrapped.
            return Some((dims.map(|d| module.constant_u32(d)), dims.iter().fold(1u32, |n, d| n.saturating_mul(*d))));
        }
        mode.operands.get(2..)?.iter().filter_map(Operand::id).collect()
    };
    let default_of = |id: Word| types.const_u32(id).or_else(|| module.globals().iter().find(|g| g.result_id == Some(id) && g.is(Op::SpecConstant)).and_then(|g| g.word_opt(0)));
    let default = parts.iter().try_fold(1u32, |n, p| n.checked_mul(default_of(*p)?))?;
    Some((parts.try_into().ok()?, default))
}
