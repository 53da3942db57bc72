//! Tensor layouts and views (SPV_NV_tensor_addressing) as plain structs of 32-bit words, and
//! the addressing of `OpCooperativeMatrixLoadTensorNV` and `StoreTensorNV` computed per element.
//!
//! A layout of `D` dimensions becomes `struct { uint blockSize[D], dimension[D], stride[D],
//! offset[D], span[D]; uint clampValue; }` and a view `struct { uint dimension[D], stride[D];
//! uint clipRowOffset, clipRowSpan, clipColOffset, clipColSpan; }` under the same type ids;
//! their clamp mode, `HasDimensions` and permutation stay known from the types. The layout and
//! view instructions become composite inserts that set the state the extension defines.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use spirv::{Op, TensorClampMode, Word};
use std::collections::HashMap;

/// What a tensor type declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Tensor {
    Layout { dim: u32, clamp: u32 },
    View { dim: u32, has_dimensions: bool, permutation: Vec<u32> },
}

pub(super) const BLOCK_SIZE: u32 = 0;
pub(super) const DIMENSION: u32 = 1;
pub(super) const STRIDE: u32 = 2;
pub(super) const OFFSET: u32 = 3;
pub(super) const SPAN: u32 = 4;
pub(super) const CLAMP_VALUE: u32 = 5;
pub(super) const VIEW_DIMENSION: u32 = 0;
pub(super) const VIEW_STRIDE: u32 = 1;
pub(super) const CLIP: u32 = 2;

const OPS: [Op; 10] = [
    Op::CreateTensorLayoutNV,
    Op::TensorLayoutSetDimensionNV,
    Op::TensorLayoutSetStrideNV,
    Op::TensorLayoutSliceNV,
    Op::TensorLayoutSetClampValueNV,
    Op::TensorLayoutSetBlockSizeNV,
    Op::CreateTensorViewNV,
    Op::TensorViewSetDimensionNV,
    Op::TensorViewSetStrideNV,
    Op::TensorViewSetClipNV,
];

/// Every tensor layout and view type of the module; an error names a type whose dimension,
/// clamp mode or permutation is not a valid constant.
pub(super) fn tensor_types(module: &Module, types: &Types) -> Result<HashMap<Word, Tensor>> {
    let mut out = HashMap::new();
    for g in module.globals() {
        let bad = |what: &str| Error::Invalid { site: module.site(g), message: format!("{what} of a tensor type is not a valid constant") };
        let konst = |k: usize| g.id(k).ok().and_then(|v| types.const_u32(v));
        let t = match g.op() {
            Some(Op::TypeTensorLayoutNV) => {
                let dim = konst(0).filter(|d| (1..=5).contains(d)).ok_or_else(|| bad("the dimension"))?;
                let clamp = konst(1).filter(|c| TensorClampMode::from_u32(*c).is_some()).ok_or_else(|| bad("the clamp mode"))?;
                Tensor::Layout { dim, clamp }
            }
            Some(Op::TypeTensorViewNV) => {
                let dim = konst(0).filter(|d| (1..=5).contains(d)).ok_or_else(|| bad("the dimension"))?;
                let has = g.id(1).ok().and_then(|v| module.globals().iter().find(|c| c.result_id == Some(v))).and_then(|c| c.op());
                let has_dimensions = match has {
                    Some(Op::ConstantTrue) => true,
                    Some(Op::ConstantFalse) => false,
                    _ => return Err(bad("HasDimensions")),
                };
                let permutation: Option<Vec<u32>> = (2..2 + dim as usize).map(konst).collect();
                let permutation = permutation.filter(|p| {
                    let mut sorted = p.clone();
                    sorted.sort_unstable();
                    sorted == (0..dim).collect::<Vec<_>>()
                });
                Tensor::View { dim, has_dimensions, permutation: permutation.ok_or_else(|| bad("the permutation"))? }
            }
            _ => continue,
        };
        if let Some(id) = g.result_id {
            out.insert(id, t);
        }
    }
    Ok(out)
}

/// Rewrites the layout and view instructions into composite operations and the tensor types
/// into structs. Returns how many instructions it rewrote.
pub(super) fn lower_tensor_objects(module: &mut Module, tensors: &HashMap<Word, Tensor>) -> Result<usize> {
    let types = Types::new(module);
    let mut count = 0;
    for f in 0..module.functions.len() {
        for b in 0..module.functions[f].blocks.len() {
            let mut i = 0;
            while i < module.functions[f].blocks[b].insts.len() {
                let inst = &module.functions[f].blocks[b].insts[i];
                let is_tensor = inst.op().is_some_and(|op| OPS.contains(&op)) && inst.result_type.is_some_and(|t| tensors.contains_key(&t));
                if !is_tensor {
                    i += 1;
                    continue;
                }
                let inst = module.functions[f].blocks[b].insts.remove(i);
                count += 1;
                let mut bld = Builder::new(module, Cursor { function: f, block: b, index: i }).with_origin(inst.origin);
                let v = rewrite(&mut bld, &types, tensors, &inst)?;
                bld.insert(Inst::new(Op::CopyObject, Some(inst.ty()?), inst.result_id, vec![Operand::Id(v)]));
                i = bld.cursor.index;
            }
        }
    }
    let uint = module.type_int(32, false);
    for (&id, t) in tensors {
        let dim = match t {
            Tensor::Layout { dim, .. } | Tensor::View { dim, .. } => *dim,
        };
        let len = module.constant_u32(dim);
        let arr = module.type_array(uint, len);
        let members: Vec<Word> = match t {
            Tensor::Layout { .. } => vec![arr, arr, arr, arr, arr, uint],
            Tensor::View { .. } => vec![arr, arr, uint, uint, uint, uint],
        };
        if let Some(g) = module.globals_mut().iter_mut().find(|g| g.result_id == Some(id)) {
            g.opcode = Op::TypeStruct as u32;
            g.operands = members.into_iter().map(Operand::Id).collect();
        }
    }
    module.reorder_globals();
    Ok(count)
}

fn dim_of(tensors: &HashMap<Word, Tensor>, ty: Word) -> u32 {
    match tensors.get(&ty) {
        Some(Tensor::Layout { dim, .. } | Tensor::View { dim, .. }) => *dim,
        None => 1,
    }
}

/// `v` as a `uint` (a 32-bit signed integer bit-cast).
pub(super) fn as_uint(b: &mut Builder<'_>, types: &Types, v: Word) -> Word {
    let uint = b.module.type_int(32, false);
    match types.type_of(v) {
        Some(t) if t != uint => b.bitcast(uint, v),
        _ => v,
    }
}

/// `struct.field[k]` (or `struct.field` where `k` is `None`).
pub(super) fn get(b: &mut Builder<'_>, s: Word, field: u32, k: Option<u32>) -> Word {
    let uint = b.module.type_int(32, false);
    let mut ops = vec![Operand::Id(s), Operand::Literal(field)];
    ops.extend(k.map(Operand::Literal));
    b.emit(Op::CompositeExtract, uint, ops)
}

fn set(b: &mut Builder<'_>, ty: Word, s: Word, field: u32, k: Option<u32>, v: Word) -> Word {
    let mut ops = vec![Operand::Id(v), Operand::Id(s), Operand::Literal(field)];
    ops.extend(k.map(Operand::Literal));
    b.emit(Op::CompositeInsert, ty, ops)
}

fn rewrite(b: &mut Builder<'_>, types: &Types, tensors: &HashMap<Word, Tensor>, inst: &Inst) -> Result<Word> {
    let ty = inst.ty()?;
    let d = dim_of(tensors, ty);
    let uint = b.module.type_int(32, false);
    let args: Vec<Word> = inst.operands.iter().skip(1).filter_map(Operand::id).collect();
    let wrong = |b: &Builder<'_>| Error::Invalid { site: b.module.site(inst), message: format!("{} with the wrong number of operands for {d} dimensions", inst.name()) };
    let need = |b: &Builder<'_>, n: usize| if args.len() == n { Ok(()) } else { Err(wrong(b)) };
    let op = inst.op().unwrap_or(Op::Nop);
    let (zero, one) = (b.module.constant_u32(0), b.module.constant_u32(1));
    let len = b.module.constant_u32(d);
    let arr = b.module.type_array(uint, len);
    // Spelled out: SwiftShader's compiler crashed on a layout built from an OpConstantNull
    // array whose words were all constants.
    let zeros = b.module.intern(Op::ConstantComposite, Some(arr), vec![Operand::Id(zero); d as usize]);
    match op {
        Op::CreateTensorLayoutNV => {
            let ones = b.module.intern(Op::ConstantComposite, Some(arr), vec![Operand::Id(one); d as usize]);
            Ok(b.op(Op::CompositeConstruct, ty, &[ones, zeros, zeros, zeros, zeros, zero]))
        }
        Op::CreateTensorViewNV => {
            let all = b.module.constant_u32(u32::MAX);
            Ok(b.op(Op::CompositeConstruct, ty, &[zeros, zeros, zero, all, zero, all]))
        }
        _ => {
            let mut s = inst.id(0)?;
            let values: Vec<Word> = args.iter().map(|v| as_uint(b, types, *v)).collect();
            match op {
                Op::TensorLayoutSetBlockSizeNV | Op::TensorLayoutSetStrideNV | Op::TensorViewSetStrideNV => {
                    need(b, d as usize)?;
                    let field = match op {
                        Op::TensorLayoutSetBlockSizeNV => BLOCK_SIZE,
                        Op::TensorLayoutSetStrideNV => STRIDE,
                        _ => VIEW_STRIDE,
                    };
                    for (k, v) in values.iter().enumerate() {
                        s = set(b, ty, s, field, Some(k as u32), *v);
                    }
                }
                Op::TensorLayoutSetDimensionNV => {
                    need(b, d as usize)?;
                    // Dimensions and spans; offsets zero; strides packed, in blocks.
                    let mut stride = one;
                    for k in (0..d).rev() {
                        let v = values[k as usize];
                        s = set(b, ty, s, DIMENSION, Some(k), v);
                        s = set(b, ty, s, SPAN, Some(k), v);
                        s = set(b, ty, s, OFFSET, Some(k), zero);
                        s = set(b, ty, s, STRIDE, Some(k), stride);
                        let block = get(b, s, BLOCK_SIZE, Some(k));
                        let less = b.op(Op::ISub, uint, &[block, one]);
                        let up = b.iadd(uint, v, less);
                        let blocks = b.op(Op::UDiv, uint, &[up, block]);
                        stride = b.imul(uint, stride, blocks);
                    }
                }
                Op::TensorViewSetDimensionNV => {
                    need(b, d as usize)?;
                    let mut stride = one;
                    for k in (0..d).rev() {
                        let v = values[k as usize];
                        s = set(b, ty, s, VIEW_DIMENSION, Some(k), v);
                        s = set(b, ty, s, VIEW_STRIDE, Some(k), stride);
                        stride = b.imul(uint, stride, v);
                    }
                }
                Op::TensorLayoutSliceNV => {
                    need(b, 2 * d as usize)?;
                    for k in 0..d {
                        let old = get(b, s, OFFSET, Some(k));
                        let offset = b.iadd(uint, old, values[2 * k as usize]);
                        s = set(b, ty, s, OFFSET, Some(k), offset);
                        s = set(b, ty, s, SPAN, Some(k), values[2 * k as usize + 1]);
                    }
                }
                Op::TensorLayoutSetClampValueNV => {
                    need(b, 1)?;
                    s = set(b, ty, s, CLAMP_VALUE, None, values[0]);
                }
                Op::TensorViewSetClipNV => {
                    need(b, 4)?;
                    for (k, v) in values.iter().enumerate() {
                        s = set(b, ty, s, CLIP + k as u32, None, *v);
                    }
                }
                _ => return Err(wrong(b)),
            }
            Ok(s)
        }
    }
}

/// A tensor load's or store's addressing operands: layout, optional view, and whether it is a
/// load.
pub(super) struct Addressing<'a> {
    pub(super) layout: Word,
    pub(super) clamp: u32,
    pub(super) dim: u32,
    pub(super) view: Option<(Word, &'a Tensor)>,
    pub(super) load: bool,
    /// Whether the load has a decode function, which needs the coordinates in the block.
    pub(super) decode: bool,
}

/// Where [`element`] puts a matrix element in the tensor.
pub(super) struct Element {
    /// Whether the view's clip keeps the element (None without a view).
    pub(super) valid: Option<Word>,
    /// The element index from the pointer.
    pub(super) index: Word,
    /// Whether a coordinate is out of bounds where that skips the access or gives the clamp
    /// value.
    pub(super) out_of_bounds: Word,
    /// The block coordinates, and (for a decode function) the coordinates in the block.
    pub(super) blocks: Vec<Word>,
    pub(super) within: Vec<Word>,
}

/// The tensor element of matrix element (`row`, `col`) of a matrix of `cols` columns, as the
/// extension's `matrixCoordToTensorElement(WithView)` computes it.
pub(super) fn element(b: &mut Builder<'_>, a: &Addressing<'_>, row: Word, col: Word, cols: u32) -> Element {
    let uint = b.module.type_int(32, false);
    let int = b.module.type_int(32, true);
    let boolean = b.module.type_bool();
    let (zero, one) = (b.module.constant_u32(0), b.module.constant_u32(1));
    let t = a.layout;
    let (mut index, valid) = match a.view {
        Some((v, Tensor::View { dim: vd, has_dimensions, permutation })) => {
            let clip: Vec<Word> = (0..4).map(|k| get(b, v, CLIP + k, None)).collect();
            let inside = |b: &mut Builder<'_>, x: Word, offset: Word, span: Word| {
                let ge = b.op(Op::UGreaterThanEqual, boolean, &[x, offset]);
                let rel = b.op(Op::ISub, uint, &[x, offset]);
                let lt = b.op(Op::ULessThan, boolean, &[rel, span]);
                (b.op(Op::LogicalAnd, boolean, &[ge, lt]), rel)
            };
            let (row_ok, r) = inside(b, row, clip[0], clip[1]);
            let (col_ok, c) = inside(b, col, clip[2], clip[3]);
            let valid = b.op(Op::LogicalAnd, boolean, &[row_ok, col_ok]);
            let n = b.module.constant_u32(cols);
            let glsl = b.module.ext_inst_import("GLSL.std.450");
            let width = b.emit(Op::ExtInst, uint, vec![Operand::Id(glsl), Operand::Literal(spirv::GlslStd450Op::UMin as u32), Operand::Id(n), Operand::Id(clip[3])]);
            let scaled = b.imul(uint, r, width);
            let mut index = b.iadd(uint, scaled, c);
            let vd = *vd;
            let dims: Vec<Word> = (0..vd).map(|k| if *has_dimensions { get(b, v, VIEW_DIMENSION, Some(k)) } else { get(b, t, SPAN, Some(k)) }).collect();
            let mut coord = vec![zero; vd as usize];
            for d in (0..vd as usize).rev() {
                let i = permutation[d] as usize;
                coord[i] = b.op(Op::UMod, uint, &[index, dims[i]]);
                index = b.op(Op::UDiv, uint, &[index, dims[i]]);
            }
            let strides: Vec<Word> = if *has_dimensions {
                (0..vd).map(|k| get(b, v, VIEW_STRIDE, Some(k))).collect()
            } else {
                let mut s = vec![one; vd as usize];
                for k in (0..vd as usize - 1).rev() {
                    s[k] = b.imul(uint, s[k + 1], dims[k + 1]);
                }
                s
            };
            let mut linear = zero;
            for k in 0..vd as usize {
                let term = b.imul(uint, coord[k], strides[k]);
                linear = b.iadd(uint, linear, term);
            }
            (linear, Some(valid))
        }
        _ => {
            let n = b.module.constant_u32(cols);
            let scaled = b.imul(uint, row, n);
            (b.iadd(uint, scaled, col), None)
        }
    };
    let ld = a.dim as usize;
    let mut span_coord = vec![zero; ld];
    for d in (0..ld).rev() {
        let span = get(b, t, SPAN, Some(d as u32));
        span_coord[d] = b.op(Op::UMod, uint, &[index, span]);
        index = b.op(Op::UDiv, uint, &[index, span]);
    }
    let mut total = zero;
    let (mut blocks, mut within) = (Vec::new(), Vec::new());
    let mut oob = b.module.constant_bool(false);
    // Stores discard out-of-bounds elements whatever the mode; so do loads in Constant mode
    // (which read the clamp value instead). Undefined loads clamp to the edge, reading nothing
    // outside the tensor.
    let clamp = if a.load { a.clamp } else { TensorClampMode::Constant as u32 };
    for (d, &sc) in span_coord.iter().enumerate() {
        let k = Some(d as u32);
        let offset = get(b, t, OFFSET, k);
        let c = b.iadd(uint, sc, offset);
        let dim = get(b, t, DIMENSION, k);
        // Negative coordinates are above every dimension as unsigned words.
        let out = b.op(Op::UGreaterThanEqual, boolean, &[c, dim]);
        let c = match TensorClampMode::from_u32(clamp) {
            Some(TensorClampMode::Constant) => {
                oob = b.op(Op::LogicalOr, boolean, &[oob, out]);
                b.select(uint, out, zero, c)
            }
            Some(TensorClampMode::Repeat) => {
                let (ci, di) = (b.bitcast(int, c), b.bitcast(int, dim));
                let m = b.op(Op::SMod, int, &[ci, di]);
                b.bitcast(uint, m)
            }
            Some(TensorClampMode::RepeatMirrored) => {
                // c % (2 dim - 2), reflected past dim (period 1 where dim is 1).
                let twice = b.iadd(uint, dim, dim);
                let two = b.module.constant_u32(2);
                let period = b.op(Op::ISub, uint, &[twice, two]);
                let empty = b.op(Op::IEqual, boolean, &[period, zero]);
                let period = b.select(uint, empty, one, period);
                let (ci, pi) = (b.bitcast(int, c), b.bitcast(int, period));
                let m = b.op(Op::SMod, int, &[ci, pi]);
                let m = b.bitcast(uint, m);
                let past = b.op(Op::UGreaterThanEqual, boolean, &[m, dim]);
                let back = b.op(Op::ISub, uint, &[period, m]);
                b.select(uint, past, back, m)
            }
            _ => {
                // Clamp to the edge: negative -> 0, past the end -> dim - 1.
                let ci = b.bitcast(int, c);
                let izero = b.module.constant_int(int, 32, true, 0);
                let negative = b.op(Op::SLessThan, boolean, &[ci, izero]);
                let last = b.op(Op::ISub, uint, &[dim, one]);
                let edge = b.select(uint, negative, zero, last);
                b.select(uint, out, edge, c)
            }
        };
        let block = get(b, t, BLOCK_SIZE, k);
        let block_coord = b.op(Op::UDiv, uint, &[c, block]);
        if a.decode {
            within.push(b.op(Op::UMod, uint, &[c, block]));
        }
        blocks.push(block_coord);
        let stride = get(b, t, STRIDE, k);
        let term = b.imul(uint, block_coord, stride);
        total = b.iadd(uint, total, term);
    }
    Element { valid, index: total, out_of_bounds: oob, blocks, within }
}
