//! `StagePackedMatrices`: cooperative-matrix loads and stores in SPV_INTEL_joint_matrix's
//! `PackedINTEL` layout (the VNNI form DPC++'s `layout::ext_intel_packed` B matrices take,
//! `intel_cooperative_matrix::LAYOUT_PACKED`, which no Vulkan device lists) go through a
//! per-sub-group area of workgroup memory in row-major order.
//!
//! In the packed layout `v = 4 / component bytes` consecutive rows of a column lie next to one
//! another: element (k, n) of a K x N B matrix is component `(k / v) * Stride + n * v + k % v`
//! past the pointer, counting the Stride in the pointee's elements as KHR loads do (a 16-bit
//! B holds rows 2i and 2i+1 of a column in one 32-bit word; 32-bit components are row-major).
//!
//! Rewrite:
//! - a packed `OpCooperativeMatrixLoadKHR`: the sub-group's lanes copy the matrix's elements
//!   from memory into the sub-group's area (the unsigned integer of the component's width, so
//!   that only bits move), a sub-group barrier, then the same load from the area, row-major with
//!   stride N, and a barrier before the area is used again;
//! - a packed `OpCooperativeMatrixStoreKHR`: the matrix is stored row-major into the area, and
//!   after a barrier the lanes copy it out, a whole word each where the pointee's words hold
//!   `v` components (so that no two lanes write parts of one word), else an element each.
//!
//! The areas (one per component width, sized for the largest packed matrix of it, times the
//! sub-groups of the workgroup) come from `SubgroupScratch`. The pass runs before
//! `virtualize-subgroup-size`, so that the areas belong to the module's logical sub-groups; where
//! those join physical ones, its barriers are control barriers, which become work-group ones. The `PackedCooperativeMatrixINTEL`
//! capability goes.
//!
//! Preconditions: one entry point with a workgroup size; packed matrices are B matrices of
//! constant dimensions, through a pointer to a scalar or vector whose scalars hold 1, 2 or 4
//! components. Refused by name: a packed A or accumulator matrix (Intel defines the layout for B
//! only), a packed store whose memory words hold other than 1 or `v` components or whose K `v`
//! does not divide, and areas past the target's workgroup memory.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::grammar::intel_cooperative_matrix as icm;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::lower_joint_matrix::drop_capability;
use crate::passes::subgroup_scratch::{AreasByType, MatrixMemory, SubgroupScratch};
use crate::passes::tile_cooperative_matrix::{access_chains, matrix};
use crate::profile::DeviceCaps;
use spirv::{CooperativeMatrixLayout, CooperativeMatrixUse, Op, StorageClass, Word};
use std::collections::{BTreeMap, HashMap};

pub struct StagePackedMatrices;

/// A packed matrix type: component, K rows and N columns, and the area's element type.
#[derive(Clone, Copy, Debug)]
struct Packed {
    component: Word,
    bits: u32,
    rows: u32,
    cols: u32,
    area_type: Word,
}

impl Packed {
    /// Rows of a column that share a word.
    fn vnni(&self) -> u32 {
        (32 / self.bits).max(1)
    }
}

/// Whether `inst` is a load or store whose layout is the constant `PackedINTEL`.
fn is_packed(types: &Types, inst: &Inst) -> bool {
    let at = match inst.op() {
        Some(Op::CooperativeMatrixLoadKHR) => 1,
        Some(Op::CooperativeMatrixStoreKHR) => 2,
        _ => return false,
    };
    inst.operands.get(at).and_then(Operand::id).and_then(|l| types.const_u32(l)) == Some(icm::LAYOUT_PACKED)
}

impl Pass for StagePackedMatrices {
    fn name(&self) -> &'static str {
        "stage-packed-matrices"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        let accesses: Vec<Inst> = module.functions.iter().flat_map(|f| f.insts()).filter(|i| is_packed(&types, i)).cloned().collect();
        if drop_capability(module, icm::CAPABILITY_PACKED) {
            outcome.count(Op::Capability as u32);
        }
        if accesses.is_empty() {
            return Ok(outcome);
        }
        // Every packed type, and the largest matrix of each area type.
        let mut packed: HashMap<Word, Packed> = HashMap::new();
        let mut areas: BTreeMap<Word, u32> = BTreeMap::new();
        for inst in &accesses {
            let ty = match inst.op() {
                Some(Op::CooperativeMatrixLoadKHR) => inst.result_type,
                _ => inst.operands.get(1).and_then(Operand::id).and_then(|v| types.type_of(v)),
            };
            let m = ty.and_then(|t| Some((t, matrix(&types, t)?)));
            let Some((ty, m)) = m else {
                return Err(Error::Invalid { site: module.site(inst), message: "a PackedINTEL access of a value that is not a cooperative matrix of constant rows and columns".into() });
            };
            if types.const_u32(m.usage) != Some(CooperativeMatrixUse::MatrixBKHR as u32) {
                return Err(Error::Invalid {
                    site: module.site(inst),
                    message: "the PackedINTEL (VNNI) layout on a matrix that is not a B matrix (Intel defines it for B matrices, whose rows it packs)".into(),
                });
            }
            let Some(bits @ (8 | 16 | 32)) = types.scalar_width(m.component) else {
                return Err(Error::Invalid { site: module.site(inst), message: "the PackedINTEL layout on a matrix whose components are not 8, 16 or 32 bits wide".into() });
            };
            let area_type = module.type_int(bits, false);
            packed.insert(ty, Packed { component: m.component, bits, rows: m.rows, cols: m.cols, area_type });
            let largest = areas.entry(area_type).or_default();
            *largest = (*largest).max(m.rows * m.cols);
        }
        let (scratch, arrays) = SubgroupScratch::by_type(module, &types, cx.target, &areas).map_err(|why| Error::Unsupported {
            site: module.site(&accesses[0]),
            target: cx.target.name.clone(),
            missing: format!("room for the staging of PackedINTEL matrices (the staging {why})"),
        })?;
        let chains = access_chains(module);
        let scratch = scratch.for_logical_subgroups(module, cx.target);
        let mut stager = Stager { types: &types, scratch, arrays, chains, row_major: module.constant_u32(CooperativeMatrixLayout::RowMajorKHR as u32), uint: module.type_int(32, false) };
        let rewritten = module.rewrite_matching(
            &mut stager,
            |s, i| is_packed(s.types, i),
            |s, bld, inst| {
                if inst.is(Op::CooperativeMatrixLoadKHR) {
                    let p = packed[&inst.ty()?];
                    s.load(bld, inst, p)
                } else {
                    let p = packed[&inst.id(1).ok().and_then(|v| s.types.type_of(v)).unwrap_or_default()];
                    s.store(bld, inst, p)
                }
            },
        )?;
        for opcode in rewritten {
            outcome.count(opcode);
        }
        Ok(outcome)
    }
}

struct Stager<'a> {
    types: &'a Types,
    scratch: SubgroupScratch,
    arrays: AreasByType,
    chains: HashMap<Word, Inst>,
    row_major: Word,
    uint: Word,
}

impl Stager<'_> {
    /// The sub-group's area for `p`: its array and first index.
    fn area(&self, bld: &mut Builder<'_>, p: Packed) -> (Word, Word) {
        let (array, per) = self.arrays[&p.area_type];
        (array, self.scratch.area_start(bld, per))
    }

    fn slot(&self, bld: &mut Builder<'_>, p: Packed, (array, base): (Word, Word), index: Word) -> Word {
        let at = bld.iadd(self.uint, base, index);
        let ptr = bld.module.type_pointer(StorageClass::Workgroup, p.area_type);
        bld.access_chain(ptr, array, &[at])
    }

    /// The operands of an access, checked: pointer, its memory, and the stride in 32 bits.
    fn memory(&self, bld: &mut Builder<'_>, inst: &Inst, p: Packed, ptr: Word, stride: Word) -> Result<(MatrixMemory, Word)> {
        let mem = MatrixMemory::of(self.types, ptr, p.component).ok_or_else(|| Error::Invalid {
            site: bld.module.site(inst),
            message: "a PackedINTEL access through a pointer that is not to a scalar or vector whose scalars hold 1, 2 or 4 of the matrix's components".into(),
        })?;
        Ok((mem, bld.to_32_bits(self.types, self.uint, stride)))
    }

    /// Component offset of element (k, n) in the packed memory: `(k / v) * stride + n * v + k % v`.
    fn packed_offset(&self, bld: &mut Builder<'_>, p: Packed, mem: MatrixMemory, stride: Word, k: Word, n: Word) -> Word {
        let uint = self.uint;
        let v = bld.module.constant_u32(p.vnni());
        let group = bld.op(Op::UDiv, uint, &[k, v]);
        let mut line = bld.imul(uint, group, stride);
        if mem.per_element() > 1 {
            let per = bld.module.constant_u32(mem.per_element());
            line = bld.imul(uint, line, per);
        }
        let across = bld.imul(uint, n, v);
        let within = bld.op(Op::UMod, uint, &[k, v]);
        let minor = bld.iadd(uint, across, within);
        bld.iadd(uint, line, minor)
    }

    fn load(&self, bld: &mut Builder<'_>, inst: &Inst, p: Packed) -> Result<()> {
        let (ptr, stride) = (inst.id(0)?, inst.id(2)?);
        let (mem, stride) = self.memory(bld, inst, p, ptr, stride)?;
        let area = self.area(bld, p);
        let (uint, cols) = (self.uint, bld.module.constant_u32(p.cols));
        let operands = mem.word_operands(self.types);
        self.scratch.for_each(bld, p.rows * p.cols, |bld, index| {
            let k = bld.op(Op::UDiv, uint, &[index, cols]);
            let n = bld.op(Op::UMod, uint, &[index, cols]);
            let offset = self.packed_offset(bld, p, mem, stride, k, n);
            let (src, part) = mem.component_pointer(bld, self.types, &self.chains, ptr, offset);
            let mut ops = vec![Operand::Id(src)];
            ops.extend(operands.iter().cloned());
            let w = bld.emit(Op::Load, mem.word, ops);
            let bits = match part {
                None if mem.word == p.area_type => w,
                None => bld.bitcast(p.area_type, w),
                Some(part) => {
                    let parts = bld.module.type_vector(p.area_type, mem.per_word);
                    let parts = bld.bitcast(parts, w);
                    bld.op(Op::VectorExtractDynamic, p.area_type, &[parts, part])
                }
            };
            let slot = self.slot(bld, p, area, index);
            bld.store(slot, bits);
        });
        self.scratch.barrier(bld);
        let zero = bld.module.constant_u32(0);
        let start = self.slot(bld, p, area, zero);
        let operands = vec![Operand::Id(start), Operand::Id(self.row_major), Operand::Id(cols)];
        bld.insert(Inst::new(Op::CooperativeMatrixLoadKHR, inst.result_type, inst.result_id, operands));
        self.scratch.barrier(bld);
        Ok(())
    }

    fn store(&self, bld: &mut Builder<'_>, inst: &Inst, p: Packed) -> Result<()> {
        let (ptr, value, stride) = (inst.id(0)?, inst.id(1)?, inst.id(3)?);
        let (mem, stride) = self.memory(bld, inst, p, ptr, stride)?;
        let v = p.vnni();
        let whole_words = mem.per_word == v && v > 1;
        if mem.per_word > 1 && !(whole_words && p.rows.is_multiple_of(v)) {
            return Err(Error::Invalid {
                site: bld.module.site(inst),
                message: format!(
                    "a PackedINTEL store of a {}x{} matrix of {}-bit components into words of {} components (each lane writes whole words: they must hold {v}, and {v} divide the rows)",
                    p.rows, p.cols, p.bits, mem.per_word
                ),
            });
        }
        let area = self.area(bld, p);
        let (uint, cols) = (self.uint, bld.module.constant_u32(p.cols));
        let zero = bld.module.constant_u32(0);
        let start = self.slot(bld, p, area, zero);
        bld.emit_void(Op::CooperativeMatrixStoreKHR, vec![Operand::Id(start), Operand::Id(value), Operand::Id(self.row_major), Operand::Id(cols)]);
        self.scratch.barrier(bld);
        let operands = mem.word_operands(self.types);
        // Each lane one element, or one word: rows k..k+v of column n.
        let (total, run) = if whole_words { (p.rows / v * p.cols, v) } else { (p.rows * p.cols, 1) };
        let run_c = bld.module.constant_u32(run);
        self.scratch.for_each(bld, total, |bld, index| {
            let group = bld.op(Op::UDiv, uint, &[index, cols]);
            let n = bld.op(Op::UMod, uint, &[index, cols]);
            let k = if run == 1 { group } else { bld.imul(uint, group, run_c) };
            let offset = self.packed_offset(bld, p, mem, stride, k, n);
            let (dst, _) = mem.component_pointer(bld, self.types, &self.chains, ptr, offset);
            let parts: Vec<Word> = (0..run)
                .map(|j| {
                    let row = if j == 0 {
                        k
                    } else {
                        let j = bld.module.constant_u32(j);
                        bld.iadd(uint, k, j)
                    };
                    let scaled = bld.imul(uint, row, cols);
                    let at = bld.iadd(uint, scaled, n);
                    let slot = self.slot(bld, p, area, at);
                    bld.load(p.area_type, slot)
                })
                .collect();
            let word = match parts.as_slice() {
                [one] if mem.word == p.area_type => *one,
                [one] => bld.bitcast(mem.word, *one),
                _ => {
                    let vec = bld.module.type_vector(p.area_type, run);
                    let packed = bld.emit(Op::CompositeConstruct, vec, parts.iter().map(|&x| Operand::Id(x)).collect());
                    bld.bitcast(mem.word, packed)
                }
            };
            let mut ops = vec![Operand::Id(dst), Operand::Id(word)];
            ops.extend(operands.iter().cloned());
            bld.emit_void(Op::Store, ops);
        });
        self.scratch.barrier(bld);
        Ok(())
    }
}
