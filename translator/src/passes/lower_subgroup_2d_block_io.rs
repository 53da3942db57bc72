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
//!   (`x >= 0`, `y >= 0`, `y < height`, `(x + 1) * size <= width`), from the base pointer plus
//!   `y * pitch + x * size` bytes; elsewhere it is zero. Where the whole block (all `Block
//!   Count` of them) lies inside the region, as in the body of a tiled loop, every element is
//!   read or written at a constant offset from the invocation's first, without a branch (an
//!   element that is padding for some invocations only is selected, or guarded where written);
//!   otherwise each element is checked and read or written under a branch;
//! - loads store the values to `Dst Pointer[k]`; stores read `Src Pointer[k]` and write the
//!   elements inside the block and the region (the rest is dropped); prefetches go.
//!
//! The sub-group size N is the kernel's `SubgroupSize` (`intel_reqd_sub_group_size`), else the
//! target's own (required of the kernel where the target's size varies and can be pinned);
//! `virtualize-subgroup-size` maps a size the device does not run onto its own.
//!
//! Refused by name: modules other than kernels (the region is `CrossWorkgroup` memory), block
//! operands that are not 32-bit integer constants, element sizes other than 1, 2, 4 and 8 bytes,
//! block widths a 1- or 2-byte element does not fill 32-bit words with, blocks of more than
//! 65536 elements (count included; Intel's hold at most 8192), transforms of elements
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
use std::cell::RefCell;
use std::collections::HashMap;

pub struct LowerSubgroup2dBlockIo;

/// The most elements (width x height x count) of one block access the pass unrolls.
const MAX_BLOCK_ELEMENTS: u64 = 1 << 16;

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
        // Intel's blocks hold at most 64 bytes by 32 rows, four times (8192 1-byte elements);
        // the lowering unrolls every element, so far larger blocks are refused.
        let elements = u64::from(width) * u64::from(height) * u64::from(count);
        if elements > MAX_BLOCK_ELEMENTS {
            return Err(format!("takes a block of {width} x {height} elements, {count} times ({elements} elements; at most {MAX_BLOCK_ELEMENTS} are lowered)"));
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
        let ops = self.operands(b, types);
        let layout = Layout::of(self, n);
        let whole = self.whole_block_inside(b, &ops);
        b.if_then_else(whole, |b| self.lower_inside(b, &ops, &layout, n), |b| self.lower_checked(b, &ops, &layout));
    }

    /// The region, the coordinate and the invocation's id, as 32-bit integers, and the base
    /// as a byte pointer.
    fn operands(&self, b: &mut Builder<'_>, types: &Types) -> Operands {
        let uint = b.module.type_int(32, false);
        let uchar = b.module.type_int(8, false);
        let bytes_ptr = b.module.type_pointer(StorageClass::CrossWorkgroup, uchar);
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
        let [width, height, pitch] = self.region.map(|r| int32(b, r, types.type_of(r).unwrap_or(uint)));
        let coord_ty = types.type_of(self.coord).unwrap_or(uint);
        let coord_comp = types.vector(coord_ty).map_or(uint, |v| v.0);
        let cx = b.composite_extract(coord_comp, self.coord, 0);
        let cy = b.composite_extract(coord_comp, self.coord, 1);
        let (cx, cy) = (int32(b, cx, coord_comp), int32(b, cy, coord_comp));
        let base = b.bitcast(bytes_ptr, self.base);
        Operands { lane, width, height, pitch, cx, cy, base }
    }

    /// Whether the whole block (every block of the count) lies inside the region, computed in
    /// 64 bits so that no coordinate or size overflows.
    fn whole_block_inside(&self, b: &mut Builder<'_>, ops: &Operands) -> Word {
        let long = b.module.type_int(64, false);
        let boolean = b.module.type_bool();
        let wide = |b: &mut Builder<'_>, v: Word| b.op(Op::SConvert, long, &[v]);
        let (cx, cy, w, h) = (wide(b, ops.cx), wide(b, ops.cy), wide(b, ops.width), wide(b, ops.height));
        let zero = b.module.constant_int(long, 64, false, 0);
        let x_ok = b.op(Op::SGreaterThanEqual, boolean, &[cx, zero]);
        let y_ok = b.op(Op::SGreaterThanEqual, boolean, &[cy, zero]);
        let rows = b.module.constant_int(long, 64, false, u64::from(self.height));
        let bottom = b.iadd(long, cy, rows);
        let below = b.op(Op::SLessThanEqual, boolean, &[bottom, h]);
        let cols = b.module.constant_int(long, 64, false, u64::from(self.count * self.width));
        let right = b.iadd(long, cx, cols);
        let size = b.module.constant_int(long, 64, false, u64::from(self.size));
        let right = b.imul(long, right, size);
        let within = b.op(Op::SLessThanEqual, boolean, &[right, w]);
        let a = b.op(Op::LogicalAnd, boolean, &[x_ok, y_ok]);
        let a = b.op(Op::LogicalAnd, boolean, &[a, below]);
        b.op(Op::LogicalAnd, boolean, &[a, within])
    }

    /// The access where the whole block lies inside the region: every element is read or
    /// written at a constant offset from the invocation's first (no branch), padding reads
    /// zero; only an element that is padding for some invocations and not for others is
    /// selected (reads) or guarded (writes).
    fn lower_inside(&self, b: &mut Builder<'_>, ops: &Operands, layout: &Layout, n: u32) {
        let uint = b.module.type_int(32, false);
        let long = b.module.type_int(64, false);
        let boolean = b.module.type_bool();
        let elem_ty = b.module.type_int(self.size * 8, false);
        let uchar = b.module.type_int(8, false);
        let bytes_ptr = b.module.type_pointer(StorageClass::CrossWorkgroup, uchar);
        let elem_ptr = b.module.type_pointer(StorageClass::CrossWorkgroup, elem_ty);
        let c32 = |b: &mut Builder<'_>, v: u32| b.module.constant_u32(v);
        let c64 = |b: &mut Builder<'_>, v: u64| b.module.constant_int(long, 64, false, v);
        // The invocation's own row and column (of the block before its values are assigned)
        // in memory: (lane_y + dy, lane_x + dx) is a value's element.
        let (lpr, pr) = (c32(b, layout.lanes_per_row), c32(b, layout.per_row));
        let lane_col = b.op(Op::UMod, uint, &[ops.lane, lpr]);
        let col0 = b.imul(uint, lane_col, pr);
        let row0 = b.op(Op::UDiv, uint, &[ops.lane, lpr]);
        let (lane_y, lane_x) = match self.kind {
            Kind::Transpose => (col0, row0),
            Kind::Transform => {
                let per = c32(b, layout.per);
                (b.imul(uint, row0, per), col0)
            }
            _ => (row0, col0),
        };
        // Byte offsets from the base (coordinates are not negative here).
        let wide = |b: &mut Builder<'_>, v: Word| b.op(Op::UConvert, long, &[v]);
        let (cx, cy, pitch) = (widen_unsigned(b, ops.cx), widen_unsigned(b, ops.cy), widen_unsigned(b, ops.pitch));
        let size = c64(b, u64::from(self.size));
        let origin_row = b.imul(long, cy, pitch);
        let origin_col = b.imul(long, cx, size);
        let origin = b.iadd(long, origin_row, origin_col);
        let (ly, lx) = (wide(b, lane_y), wide(b, lane_x));
        let lane_row = b.imul(long, ly, pitch);
        let lane_col = b.imul(long, lx, size);
        let lane_off = b.iadd(long, lane_row, lane_col);
        let lane_off = b.iadd(long, origin, lane_off);
        let row_offsets: RefCell<HashMap<u32, Word>> = RefCell::default();
        let zero_elem = b.module.constant_null(elem_ty);
        let (bw, bh) = (c32(b, self.width), c32(b, self.height));
        // Element (dy, dx) of block `blk`, from the invocation's first: its pointer, and
        // whether it is inside the block (`None` where it is for every invocation).
        let element = |b: &mut Builder<'_>, blk: u32, dy: u32, dx: u32, lanes: Inside| -> Option<(Word, Option<Word>)> {
            if lanes == Inside::None {
                return None;
            }
            let row = *row_offsets.borrow_mut().entry(dy).or_insert_with(|| {
                let d = c64(b, u64::from(dy));
                b.imul(long, d, pitch)
            });
            let col = c64(b, u64::from((blk * self.width + dx) * self.size));
            let off = b.iadd(long, row, col);
            let off = b.iadd(long, lane_off, off);
            let inside = (lanes == Inside::Some).then(|| {
                let (dy, dx) = (c32(b, dy), c32(b, dx));
                let r = b.iadd(uint, lane_y, dy);
                let c = b.iadd(uint, lane_x, dx);
                let in_h = b.op(Op::ULessThan, boolean, &[r, bh]);
                let in_w = b.op(Op::ULessThan, boolean, &[c, bw]);
                b.op(Op::LogicalAnd, boolean, &[in_h, in_w])
            });
            // A padding element's offset is the block's first, which is inside the region.
            let off = match inside {
                Some(ok) => b.select(long, ok, off, origin),
                None => off,
            };
            let p = b.emit(Op::InBoundsPtrAccessChain, bytes_ptr, vec![Operand::Id(ops.base), Operand::Id(off)]);
            Some((b.bitcast(elem_ptr, p), inside))
        };
        let aligned = |p: Word| vec![Operand::Id(p), Operand::Enum(OperandKind::MemoryAccess, MemoryAccess::ALIGNED.bits()), Operand::Literal(self.size)];
        let read = |b: &mut Builder<'_>, blk: u32, (dy, dx): (u32, u32), lanes: Inside| -> Word {
            match element(b, blk, dy, dx, lanes) {
                None => zero_elem,
                Some((p, inside)) => {
                    let v = b.emit(Op::Load, elem_ty, aligned(p));
                    match inside {
                        Some(ok) => b.select(elem_ty, ok, v, zero_elem),
                        None => v,
                    }
                }
            }
        };
        for value in layout.values(self) {
            let lanes = |e: u32| Inside::of((0..n).map(|l| self.inside(layout.position(self.kind, l, value.j, value.k, e))));
            let offset = |e: u32| layout.offset(self.kind, value.j, value.k, e);
            let p = self.private_value(b, value.index);
            match self.kind {
                Kind::Plain | Kind::Transpose => {
                    let v = read(b, value.block, offset(0), lanes(0));
                    let v = if self.private_ty == elem_ty { v } else { b.bitcast(self.private_ty, v) };
                    b.store(p, v);
                }
                Kind::Transform => {
                    let mut word = c32(b, 0);
                    for e in 0..layout.per {
                        let v = read(b, value.block, offset(e), lanes(e));
                        let v = b.op(Op::UConvert, uint, &[v]);
                        let shift = c32(b, 8 * self.size * e);
                        let v = b.op(Op::ShiftLeftLogical, uint, &[v, shift]);
                        word = b.op(Op::BitwiseOr, uint, &[word, v]);
                    }
                    let word = if self.private_ty == uint { word } else { b.bitcast(self.private_ty, word) };
                    b.store(p, word);
                }
                Kind::Store => {
                    let (dy, dx) = offset(0);
                    if let Some((q, inside)) = element(b, value.block, dy, dx, lanes(0)) {
                        let write = |b: &mut Builder<'_>| {
                            let v = b.load(self.private_ty, p);
                            let v = if self.private_ty == elem_ty { v } else { b.bitcast(elem_ty, v) };
                            b.emit_void(Op::Store, vec![Operand::Id(q), Operand::Id(v), Operand::Enum(OperandKind::MemoryAccess, MemoryAccess::ALIGNED.bits()), Operand::Literal(self.size)]);
                        };
                        match inside {
                            Some(ok) => b.if_then(ok, write),
                            None => write(b),
                        }
                    }
                }
            }
        }
    }

    /// Whether a block element (row, col) is inside the block (not padding).
    fn inside(&self, (row, col): (u32, u32)) -> bool {
        row < self.height && col < self.width
    }

    /// The per-invocation pointer's element `k`.
    fn private_value(&self, b: &mut Builder<'_>, k: u32) -> Word {
        let ulong = b.module.type_int(64, false);
        let i = b.module.constant_int(ulong, 64, false, u64::from(k));
        b.emit(Op::InBoundsPtrAccessChain, self.private_ptr_ty, vec![Operand::Id(self.private), Operand::Id(i)])
    }

    /// The access where the block may reach past the region: each element is checked (inside
    /// the block and the region) and read or written under a branch.
    fn lower_checked(&self, b: &mut Builder<'_>, ops: &Operands, layout: &Layout) {
        let uint = b.module.type_int(32, false);
        let ulong = b.module.type_int(64, false);
        let boolean = b.module.type_bool();
        let elem_ty = b.module.type_int(self.size * 8, false);
        let uchar = b.module.type_int(8, false);
        let bytes_ptr = b.module.type_pointer(StorageClass::CrossWorkgroup, uchar);
        let elem_ptr = b.module.type_pointer(StorageClass::CrossWorkgroup, elem_ty);
        let c = |b: &mut Builder<'_>, v: u32| b.module.constant_u32(v);
        let Operands { lane, width: w, height: h, pitch, cx, cy, base } = *ops;
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

        let (lpr, pr) = (c(b, layout.lanes_per_row), c(b, layout.per_row));
        let lane_col = b.op(Op::UMod, uint, &[lane, lpr]);
        let col0 = b.op(Op::IMul, uint, &[lane_col, pr]);
        let row0 = b.op(Op::UDiv, uint, &[lane, lpr]);
        for value in layout.values(self) {
            let index = value.index;
            let (jr, kc) = (c(b, value.j * layout.step), c(b, value.k));
            let row = b.op(Op::IAdd, uint, &[row0, jr]);
            let col = b.op(Op::IAdd, uint, &[col0, kc]);
            let blk = value.block;
            match self.kind {
                Kind::Plain | Kind::Transpose => {
                    let v = if self.kind == Kind::Plain { read(b, blk, row, col) } else { read(b, blk, col, row) };
                    let v = if self.private_ty == elem_ty { v } else { b.bitcast(self.private_ty, v) };
                    let p = self.private_value(b, index);
                    b.store(p, v);
                }
                Kind::Transform => {
                    let mut word = c(b, 0);
                    for e in 0..layout.per {
                        let pe = c(b, layout.per);
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
                    let p = self.private_value(b, index);
                    b.store(p, word);
                }
                Kind::Store => {
                    let (x, y, ok) = locate(b, blk, row, col);
                    b.if_then(ok, |b| {
                        let p = self.private_value(b, index);
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

/// An access's operands as the lowering reads them.
#[derive(Clone, Copy)]
struct Operands {
    /// The invocation's id in the sub-group.
    lane: Word,
    width: Word,
    height: Word,
    pitch: Word,
    cx: Word,
    cy: Word,
    /// The region's base, as a byte pointer.
    base: Word,
}

/// Whether an element is inside the block for the sub-group's invocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Inside {
    All,
    None,
    Some,
}

impl Inside {
    fn of(lanes: impl Iterator<Item = bool>) -> Inside {
        let (mut any, mut all) = (false, true);
        for inside in lanes {
            any |= inside;
            all &= inside;
        }
        match (any, all) {
            (_, true) => Inside::All,
            (false, _) => Inside::None,
            _ => Inside::Some,
        }
    }
}

/// One value an invocation receives or gives: its index in the per-invocation storage, and
/// its block, row step `j` and column `k` in the assignment.
struct Value {
    index: u32,
    block: u32,
    j: u32,
    k: u32,
}

/// How a block's values are assigned to the `n` invocations (the spec's "Mapping Block Data
/// to Invocations", as `reference::block_io::assignment` computes it): the padded,
/// transformed or transposed block of `pw x ph` values is cut into rows of `per_row` values
/// for `lanes_per_row` invocations each; an invocation takes every `step`-th row.
struct Layout {
    /// Elements per 32-bit word of a transform.
    per: u32,
    ph: u32,
    per_row: u32,
    lanes_per_row: u32,
    step: u32,
}

impl Layout {
    fn of(access: &Access, n: u32) -> Layout {
        let per = 4 / access.size.min(4);
        let (pw, ph) = match access.kind {
            Kind::Transpose => (access.height.next_power_of_two(), access.width),
            Kind::Transform => (access.width.next_power_of_two(), access.height.div_ceil(per)),
            _ => (access.width.next_power_of_two(), access.height),
        };
        let per_row = (pw / n).max(1);
        Layout { per, ph, per_row, lanes_per_row: pw / per_row, step: (n / pw).max(1) }
    }

    /// The values of each invocation, in storage order.
    fn values(&self, access: &Access) -> Vec<Value> {
        let rows = self.ph.div_ceil(self.step);
        let per_block = rows * self.per_row;
        let mut out = Vec::new();
        for block in 0..access.count {
            for j in 0..rows {
                for k in 0..self.per_row {
                    out.push(Value { index: block * per_block + j * self.per_row + k, block, j, k });
                }
            }
        }
        out
    }

    /// The block element (row, column) of invocation `lane`'s value (j, k) (of a transform,
    /// its element `e`).
    fn position(&self, kind: Kind, lane: u32, j: u32, k: u32, e: u32) -> (u32, u32) {
        let (r, c) = (lane / self.lanes_per_row + j * self.step, lane % self.lanes_per_row * self.per_row + k);
        match kind {
            Kind::Transpose => (c, r),
            Kind::Transform => (r * self.per + e, c),
            _ => (r, c),
        }
    }

    /// [`Layout::position`] less the invocation's own first element: the same for every
    /// invocation.
    fn offset(&self, kind: Kind, j: u32, k: u32, e: u32) -> (u32, u32) {
        match kind {
            Kind::Transpose => (k, j * self.step),
            Kind::Transform => (j * self.step * self.per + e, k),
            _ => (j * self.step, k),
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

/// 32-bit `v`, not negative where it is used (a coordinate inside the region, or the pitch, which
/// is at least the region's width), as a 64-bit unsigned value. Its sign bit is cleared, which
/// changes nothing for such values and lets later passes see that the offsets made from it are
/// not negative ([`crate::analysis::bounds`]): `negative-offsets-through-integers` then keeps
/// the accesses as pointer chains.
fn widen_unsigned(b: &mut Builder<'_>, v: Word) -> Word {
    let (uint, ulong) = (b.module.type_int(32, false), b.module.type_int(64, false));
    let below_sign = b.module.constant_u32(i32::MAX as u32);
    let v = b.op(Op::BitwiseAnd, uint, &[v, below_sign]);
    b.op(Op::UConvert, ulong, &[v])
}

/// The element pointer `base + y * pitch + x * size` bytes (x and y inside the region).
#[allow(clippy::too_many_arguments)]
fn address(b: &mut Builder<'_>, base: Word, bytes_ptr: Word, elem_ptr: Word, x: Word, y: Word, pitch: Word, es: Word, ulong: Word) -> Word {
    let (x, y, pitch) = (widen_unsigned(b, x), widen_unsigned(b, y), widen_unsigned(b, pitch));
    let es = b.op(Op::UConvert, ulong, &[es]);
    let row = b.op(Op::IMul, ulong, &[y, pitch]);
    let col = b.op(Op::IMul, ulong, &[x, es]);
    let off = b.op(Op::IAdd, ulong, &[row, col]);
    let p = b.emit(Op::InBoundsPtrAccessChain, bytes_ptr, vec![Operand::Id(base), Operand::Id(off)]);
    b.bitcast(elem_ptr, p)
}
