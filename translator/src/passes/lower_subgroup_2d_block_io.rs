//! `LowerSubgroup2dBlockIo`: SPV_INTEL_2d_block_io's loads, transformed and transposed loads,
//! stores and prefetches -> per-invocation OpenCL loads and stores, in a kernel before its
//! pointers are lowered. No Vulkan device has the extension, so the pass applies everywhere.
//!
//! A block of `Block Width x Block Height` elements of `Element Size` bytes (`Block Count`
//! blocks side by side) at `Coordinate` (element, row) of a 2D region (`Memory Width` bytes by
//! `Memory Height` rows, `Memory Pitch` bytes apart, at `Src/Dst Base Pointer`) is padded,
//! transformed or transposed and assigned to the sub-group's invocations as the spec's
//! "Mapping Block Data to Invocations" says ([`crate::reference::block_io`] is the same
//! mapping on the CPU). Rewrite, in place, for the invocation with sub-group id `l`:
//! - its `k`-th value, at row `r` and column `c` of the padded block (`r` and `c` computed from
//!   `l` and `k`, the geometry being constant), is element `(r, c)` of the block (transpose:
//!   `(c, r)`; transform: rows `r * per + e` of column `c`, `per` = 4 one-byte or 2 two-byte
//!   elements packed into a 32-bit word, lower rows in lower bits);
//! - an element is read only where it is inside the block (not padding) and inside the region
//!   (`x >= 0`, `y >= 0`, `y < height`, `(x + 1) * size <= width`), under a branch, from the
//!   base pointer plus `y * pitch + x * size` bytes; elsewhere it is zero;
//! - loads store the values to `Dst Pointer[k]`; stores read `Src Pointer[k]` and write the
//!   elements inside the block and the region (the rest is dropped); prefetches go.
//!
//! The sub-group size N is the kernel's `SubgroupSize` (`intel_reqd_sub_group_size`), else the
//! target's own (required of the kernel where the target's size varies and can be pinned);
//! `virtualize-subgroup-size` maps a size the device does not run onto its own.
//!
//! Refused by name: modules other than kernels (the region is `CrossWorkgroup` memory), block
//! operands that are not 32-bit integer constants, element sizes other than 1, 2, 4 and 8 bytes,
//! block widths a 1- or 2-byte element does not fill 32-bit words with, transforms of elements
//! wider than 2 bytes, and `Dst`/`Src` pointers to other than integers or floats of the
//! element's (a transform's: 32-bit) width. Preconditions: functions inlined (kernels), control
//! flow not yet structured (the branches are plain selections).

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{BuiltIn, Capability, ExecutionMode, MemoryAccess, Op, StorageClass, Word};

pub struct LowerSubgroup2dBlockIo;

fn is_block_io(inst: &Inst) -> bool {
    matches!(
        inst.op(),
        Some(Op::Subgroup2DBlockLoadINTEL | Op::Subgroup2DBlockLoadTransformINTEL | Op::Subgroup2DBlockLoadTransposeINTEL | Op::Subgroup2DBlockStoreINTEL | Op::Subgroup2DBlockPrefetchINTEL)
    )
}

impl Pass for LowerSubgroup2dBlockIo {
    fn name(&self) -> &'static str {
        "lower-subgroup-2d-block-io"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        // The accesses' operands are the input's values: one analysis serves every access.
        let types = Types::new(module);
        while let Some((fi, bi, ii)) = find(module) {
            let inst = module.functions[fi].blocks[bi].insts.remove(ii);
            if !module.has_capability(Capability::Kernel) {
                return Err(Error::Invalid { site: module.site(&inst), message: "a 2D block access outside a kernel (its region is CrossWorkgroup memory, which only kernels have)".into() });
            }
            outcome.count(inst.opcode);
            if inst.is(Op::Subgroup2DBlockPrefetchINTEL) {
                continue;
            }
            let n = subgroup_size(module, fi, cx.target).map_err(|message| Error::Invalid { site: module.site(&inst), message })?;
            let access = Access::of(module, &types, &inst).map_err(|message| Error::Invalid { site: module.site(&inst), message })?;
            let mut b = Builder::new(module, Cursor { function: fi, block: bi, index: ii }).with_origin(inst.origin);
            access.lower(&mut b, &types, n);
        }
        Ok(outcome)
    }
}

fn find(module: &Module) -> Option<(usize, usize, usize)> {
    for (fi, f) in module.functions.iter().enumerate() {
        for (bi, b) in f.blocks.iter().enumerate() {
            if let Some(ii) = b.insts.iter().position(is_block_io) {
                return Some((fi, bi, ii));
            }
        }
    }
    None
}

/// The sub-group size of kernel function `fi`: its `SubgroupSize`, else the target's (made the
/// kernel's requirement where the target's size varies).
fn subgroup_size(module: &mut Module, fi: usize, target: &DeviceCaps) -> std::result::Result<u32, String> {
    let f = module.functions[fi].id();
    if let Some(n) = module.execution_modes.iter().find(|m| m.word_opt(0) == Some(f) && m.word_opt(1) == Some(ExecutionMode::SubgroupSize as u32)).and_then(|m| m.word_opt(2)) {
        return Ok(n);
    }
    if target.min_subgroup_size != target.max_subgroup_size {
        if !target.subgroup_size_control {
            return Err(format!(
                "a 2D block access in a kernel without a required sub-group size, on a target whose sub-groups have {} to {} invocations and cannot be pinned (the block's assignment to invocations depends on it)",
                target.min_subgroup_size, target.max_subgroup_size
            ));
        }
        module.execution_modes.push(Inst::new(
            Op::ExecutionMode,
            None,
            None,
            vec![Operand::Id(f), Operand::Enum(OperandKind::ExecutionMode, ExecutionMode::SubgroupSize as u32), Operand::Literal(target.subgroup_size)],
        ));
    }
    Ok(target.subgroup_size)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Plain,
    Transform,
    Transpose,
    Store,
}

/// A validated 2D block access.
struct Access {
    kind: Kind,
    size: u32,
    width: u32,
    height: u32,
    count: u32,
    base: Word,
    region: [Word; 3],
    coord: Word,
    /// The per-invocation pointer (Dst of a load, Src of a store) and its pointee.
    private: Word,
    private_ty: Word,
    private_ptr_ty: Word,
}

impl Access {
    fn of(module: &Module, types: &Types, inst: &Inst) -> std::result::Result<Access, String> {
        let kind = match inst.op() {
            Some(Op::Subgroup2DBlockLoadTransformINTEL) => Kind::Transform,
            Some(Op::Subgroup2DBlockLoadTransposeINTEL) => Kind::Transpose,
            Some(Op::Subgroup2DBlockStoreINTEL) => Kind::Store,
            _ => Kind::Plain,
        };
        let ids: Vec<Word> = inst.operands.iter().filter_map(Operand::id).collect();
        if ids.len() != 10 {
            return Err(format!("has {} operands where 10 are needed", ids.len()));
        }
        let constant = |i: usize, what: &str| -> std::result::Result<u32, String> {
            let id = ids[i];
            module
                .globals()
                .iter()
                .find(|g| g.result_id == Some(id) && g.is(Op::Constant))
                .and_then(|_| types.const_u32(id))
                .ok_or_else(|| format!("takes a {what} that is not a 32-bit integer constant"))
        };
        let (size, width, height, count) = (constant(0, "Element Size")?, constant(1, "Block Width")?, constant(2, "Block Height")?, constant(3, "Block Count")?);
        if ![1, 2, 4, 8].contains(&size) {
            return Err(format!("takes an Element Size of {size} bytes (1, 2, 4 or 8 are defined)"));
        }
        if width == 0 || height == 0 || count == 0 {
            return Err("takes an empty block (its width, height and count must be positive)".into());
        }
        if size < 4 && !width.is_multiple_of(4 / size) {
            return Err(format!("takes a Block Width of {width} {size}-byte elements (a multiple of {} is needed)", 4 / size));
        }
        if kind == Kind::Transform && size > 2 {
            return Err(format!("transforms {size}-byte elements (1 or 2 bytes are packed)"));
        }
        let (private, base, region, coord) = if kind == Kind::Store { (ids[4], ids[5], [ids[6], ids[7], ids[8]], ids[9]) } else { (ids[9], ids[4], [ids[5], ids[6], ids[7]], ids[8]) };
        let private_ptr_ty = types.type_of(private).ok_or("has an untyped per-invocation pointer")?;
        let private_ty = types.pointer(private_ptr_ty).map(|p| p.1).ok_or("has a per-invocation operand that is not a pointer")?;
        let bits = types.int(private_ty).map(|i| i.0).or_else(|| types.float(private_ty).map(|f| f.0));
        let want = if kind == Kind::Transform { 32 } else { size * 8 };
        if bits != Some(want) {
            return Err(format!("points its per-invocation operand to other than {want}-bit integers or floats"));
        }
        Ok(Access { kind, size, width, height, count, base, region, coord, private, private_ty, private_ptr_ty })
    }

    fn lower(&self, b: &mut Builder<'_>, types: &Types, n: u32) {
        let uint = b.module.type_int(32, false);
        let ulong = b.module.type_int(64, false);
        let boolean = b.module.type_bool();
        let elem_ty = b.module.type_int(self.size * 8, false);
        let uchar = b.module.type_int(8, false);
        let bytes_ptr = b.module.type_pointer(StorageClass::CrossWorkgroup, uchar);
        let elem_ptr = b.module.type_pointer(StorageClass::CrossWorkgroup, elem_ty);
        let c = |b: &mut Builder<'_>, v: u32| b.module.constant_u32(v);
        let var = b.module.get_or_add_builtin(BuiltIn::SubgroupLocalInvocationId, uint);
        let lane_ty = b.module.variable_pointee(var).unwrap_or(uint);
        let lane = b.load(lane_ty, var);
        let lane = if lane_ty == uint { lane } else { b.bitcast(uint, lane) };
        // Region and coordinate (`v` of integer type `t`) as 32-bit integers.
        let int32 = |b: &mut Builder<'_>, v: Word, t: Word| -> Word {
            if t == uint {
                v
            } else if types.int(t).is_some_and(|i| i.0 == 32) {
                b.bitcast(uint, v)
            } else {
                b.op(Op::UConvert, uint, &[v])
            }
        };
        let [w, h, pitch] = self.region.map(|r| int32(b, r, types.type_of(r).unwrap_or(uint)));
        let coord_ty = types.type_of(self.coord).unwrap_or(uint);
        let coord_comp = types.vector(coord_ty).map_or(uint, |v| v.0);
        let cx = b.composite_extract(coord_comp, self.coord, 0);
        let cy = b.composite_extract(coord_comp, self.coord, 1);
        let (cx, cy) = (int32(b, cx, coord_comp), int32(b, cy, coord_comp));
        let base = b.bitcast(bytes_ptr, self.base);
        let tmp = b.function_variable(elem_ty);
        let zero_elem = b.module.constant_null(elem_ty);
        let es = c(b, self.size);

        // Where element (row, col) of block `blk` lies in the region, and whether it is there:
        // inside the block (not padding) and inside the region.
        let locate = |b: &mut Builder<'_>, blk: u32, row: Word, col: Word| -> (Word, Word, Word) {
            let (bw, bh) = (c(b, self.width), c(b, self.height));
            let in_w = b.op(Op::ULessThan, boolean, &[col, bw]);
            let in_h = b.op(Op::ULessThan, boolean, &[row, bh]);
            let inside = b.op(Op::LogicalAnd, boolean, &[in_w, in_h]);
            let (x, y) = position(b, cx, cy, blk * self.width, row, col);
            let ok = in_region(b, x, y, [w, h], es, self.size);
            (x, y, b.op(Op::LogicalAnd, boolean, &[inside, ok]))
        };
        // Element (row, col) of block `blk`, zero where padding or outside the region.
        let read = |b: &mut Builder<'_>, blk: u32, row: Word, col: Word| -> Word {
            let (x, y, ok) = locate(b, blk, row, col);
            b.store(tmp, zero_elem);
            b.if_then(ok, |b| {
                let p = address(b, base, bytes_ptr, elem_ptr, x, y, pitch, es, ulong);
                let v = b.emit(Op::Load, elem_ty, vec![Operand::Id(p), Operand::Enum(OperandKind::MemoryAccess, MemoryAccess::ALIGNED.bits()), Operand::Literal(self.size)]);
                b.store(tmp, v);
            });
            b.load(elem_ty, tmp)
        };

        // The padded, transformed or transposed block's width and height (before assignment).
        let per = 4 / self.size.min(4);
        let (pw, ph) = match self.kind {
            Kind::Transpose => (self.height.next_power_of_two(), self.width),
            Kind::Transform => (self.width.next_power_of_two(), self.height.div_ceil(per)),
            _ => (self.width.next_power_of_two(), self.height),
        };
        let per_row = (pw / n).max(1);
        let lanes_per_row = pw / per_row;
        let step = (n / pw).max(1);
        let (lpr, pr) = (c(b, lanes_per_row), c(b, per_row));
        let lane_col = b.op(Op::UMod, uint, &[lane, lpr]);
        let col0 = b.op(Op::IMul, uint, &[lane_col, pr]);
        let row0 = b.op(Op::UDiv, uint, &[lane, lpr]);
        let per_block = ph.div_ceil(step) * per_row;
        let ptr_index = |b: &mut Builder<'_>, k: u32| {
            let i = b.module.constant_int(ulong, 64, false, k as u64);
            b.emit(Op::InBoundsPtrAccessChain, self.private_ptr_ty, vec![Operand::Id(self.private), Operand::Id(i)])
        };
        for blk in 0..self.count {
            for j in 0..ph.div_ceil(step) {
                for k in 0..per_row {
                    let index = blk * per_block + j * per_row + k;
                    let (jr, kc) = (c(b, j * step), c(b, k));
                    let row = b.op(Op::IAdd, uint, &[row0, jr]);
                    let col = b.op(Op::IAdd, uint, &[col0, kc]);
                    match self.kind {
                        Kind::Plain | Kind::Transpose => {
                            let v = if self.kind == Kind::Plain { read(b, blk, row, col) } else { read(b, blk, col, row) };
                            let v = if self.private_ty == elem_ty { v } else { b.bitcast(self.private_ty, v) };
                            let p = ptr_index(b, index);
                            b.store(p, v);
                        }
                        Kind::Transform => {
                            let mut word = c(b, 0);
                            for e in 0..per {
                                let pe = c(b, per);
                                let r = b.op(Op::IMul, uint, &[row, pe]);
                                let ec = c(b, e);
                                let r = b.op(Op::IAdd, uint, &[r, ec]);
                                let v = read(b, blk, r, col);
                                let v = b.op(Op::UConvert, uint, &[v]);
                                let shift = c(b, 8 * self.size * e);
                                let v = b.op(Op::ShiftLeftLogical, uint, &[v, shift]);
                                word = b.op(Op::BitwiseOr, uint, &[word, v]);
                            }
                            let word = if self.private_ty == uint { word } else { b.bitcast(self.private_ty, word) };
                            let p = ptr_index(b, index);
                            b.store(p, word);
                        }
                        Kind::Store => {
                            let (x, y, ok) = locate(b, blk, row, col);
                            b.if_then(ok, |b| {
                                let p = ptr_index(b, index);
                                let v = b.load(self.private_ty, p);
                                let v = if self.private_ty == elem_ty { v } else { b.bitcast(elem_ty, v) };
                                let q = address(b, base, bytes_ptr, elem_ptr, x, y, pitch, es, ulong);
                                b.emit_void(Op::Store, vec![Operand::Id(q), Operand::Id(v), Operand::Enum(OperandKind::MemoryAccess, MemoryAccess::ALIGNED.bits()), Operand::Literal(self.size)]);
                            });
                        }
                    }
                }
            }
        }
    }
}

/// The region position (element x, row y) of block element (row, col), the block starting
/// `offset` elements right of the coordinate: signed 32-bit values.
fn position(b: &mut Builder<'_>, cx: Word, cy: Word, offset: u32, row: Word, col: Word) -> (Word, Word) {
    let uint = b.module.type_int(32, false);
    let off = b.module.constant_u32(offset);
    let x = b.op(Op::IAdd, uint, &[cx, off]);
    let x = b.op(Op::IAdd, uint, &[x, col]);
    let y = b.op(Op::IAdd, uint, &[cy, row]);
    (x, y)
}

/// Whether element (x, y) of `size` bytes lies inside a region `width` bytes by `height` rows.
fn in_region(b: &mut Builder<'_>, x: Word, y: Word, [width, height]: [Word; 2], es: Word, size: u32) -> Word {
    let uint = b.module.type_int(32, false);
    let boolean = b.module.type_bool();
    let zero = b.module.constant_u32(0);
    let x_ok = b.op(Op::SGreaterThanEqual, boolean, &[x, zero]);
    let y_ok = b.op(Op::SGreaterThanEqual, boolean, &[y, zero]);
    let below = b.op(Op::SLessThan, boolean, &[y, height]);
    let end = b.op(Op::IMul, uint, &[x, es]);
    let s = b.module.constant_u32(size);
    let end = b.op(Op::IAdd, uint, &[end, s]);
    let within = b.op(Op::SLessThanEqual, boolean, &[end, width]);
    let a = b.op(Op::LogicalAnd, boolean, &[x_ok, y_ok]);
    let a = b.op(Op::LogicalAnd, boolean, &[a, below]);
    b.op(Op::LogicalAnd, boolean, &[a, within])
}

/// The element pointer `base + y * pitch + x * size` bytes (x and y inside the region).
#[allow(clippy::too_many_arguments)]
fn address(b: &mut Builder<'_>, base: Word, bytes_ptr: Word, elem_ptr: Word, x: Word, y: Word, pitch: Word, es: Word, ulong: Word) -> Word {
    let wide = |b: &mut Builder<'_>, v: Word| b.op(Op::UConvert, ulong, &[v]);
    let (x, y, pitch, es) = (wide(b, x), wide(b, y), wide(b, pitch), wide(b, es));
    let row = b.op(Op::IMul, ulong, &[y, pitch]);
    let col = b.op(Op::IMul, ulong, &[x, es]);
    let off = b.op(Op::IAdd, ulong, &[row, col]);
    let p = b.emit(Op::InBoundsPtrAccessChain, bytes_ptr, vec![Operand::Id(base), Operand::Id(off)]);
    b.bitcast(elem_ptr, p)
}
