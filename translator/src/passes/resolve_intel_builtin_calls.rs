//! `ResolveIntelBuiltinCalls`: calls of imported functions that stand for Intel matrix
//! instructions become those instructions.
//!
//! OpenCL C and SYCL code reaches Intel's matrix hardware through built-ins that `llvm-spirv`
//! writes as calls of bodiless functions imported by their mangled names, where its build does
//! not translate them (and Intel's Triton backend emits such calls too). No Vulkan module can
//! link them, so they are resolved here, before inlining:
//! - `__spirv_SubgroupMatrixMultiplyAccumulateINTEL(K, A, B, C[, operands])`, the SPIR-V
//!   friendly name of the instruction, becomes `OpSubgroupMatrixMultiplyAccumulateINTEL` with
//!   the same operands (K and the operands must be constants);
//! - cl_intel_subgroup_matrix_multiply_accumulate's `intel_sub_group_<a>_<b>_matrix_mad_k<K>(a,
//!   b, acc)` becomes the instruction with K from the name and the Matrix Multiply Accumulate
//!   Operands its element types give: `i8`/`u8` packed 8-bit integers (signed or not), `i4`/`u4`
//!   packed 4-bit ones, `f16`, `bf16` (a 16-bit integer accumulator or result is bf16 too) and
//!   `tf32`.
//!
//! - SPV_INTEL_2d_block_io's `__spirv_Subgroup2DBlock{Load,LoadTransform,LoadTranspose,Store,
//!   Prefetch}INTEL` become those instructions with the same operands, and
//!   cl_intel_subgroup_2d_block_io's `intel_sub_group_2d_block_{read,read_transform,
//!   read_transpose,write,prefetch}_<bits>b_<rows>r<columns>x<count>c(base, width, height,
//!   pitch, coord[, private pointer])` with the element size and block shape of the name.
//!
//! - cl_intel_subgroup_buffer_prefetch's `intel_sub_group_block_prefetch_<type><n>(p)` and the
//!   SPIR-V friendly `__spirv_SubgroupBlockPrefetchINTEL(p, bytes)` are cache hints: the calls
//!   go (their results are void; a prefetch changes nothing in memory).
//!
//! The imports left without calls go, with their function types. Refused by name: 2-bit elements (`i2`, `u2`: no operand of
//! the extension describes them), the split (`dpasw`) forms, and non-constant K or operands.
//! Other imports stay for `inline-functions` to name. Preconditions: none.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use crate::reference::dpas::operands as mma;
use rspirv::grammar::OperandKind;
use spirv::{Decoration, Op, Word};
use std::collections::HashMap;

pub struct ResolveIntelBuiltinCalls;

const SPIRV_DPAS: &str = "__spirv_SubgroupMatrixMultiplyAccumulateINTEL";
const OPENCL_DPAS: &str = "intel_sub_group_";
const OPENCL_BLOCK: &str = "intel_sub_group_2d_block_";

/// Sub-group buffer prefetches: cl_intel_subgroup_buffer_prefetch's built-ins (a prefix) and
/// SPV_INTEL_subgroup_buffer_prefetch's SPIR-V friendly name.
const OPENCL_BUFFER_PREFETCH: &str = "intel_sub_group_block_prefetch_";
const SPIRV_BUFFER_PREFETCH: &str = "__spirv_SubgroupBlockPrefetchINTEL";

/// The SPIR-V friendly names of the 2D block instructions.
const SPIRV_BLOCKS: [(&str, Op); 5] = [
    ("__spirv_Subgroup2DBlockLoadINTEL", Op::Subgroup2DBlockLoadINTEL),
    ("__spirv_Subgroup2DBlockLoadTransformINTEL", Op::Subgroup2DBlockLoadTransformINTEL),
    ("__spirv_Subgroup2DBlockLoadTransposeINTEL", Op::Subgroup2DBlockLoadTransposeINTEL),
    ("__spirv_Subgroup2DBlockStoreINTEL", Op::Subgroup2DBlockStoreINTEL),
    ("__spirv_Subgroup2DBlockPrefetchINTEL", Op::Subgroup2DBlockPrefetchINTEL),
];

impl Pass for ResolveIntelBuiltinCalls {
    fn name(&self) -> &'static str {
        "resolve-intel-builtin-calls"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let imports: HashMap<Word, String> = module.functions.iter().filter(|f| f.blocks.is_empty()).filter_map(|f| Some((f.id(), base_name(&import_name(module, f.id())?).to_string()))).collect();
        let prefetch = |n: &str| n.starts_with(OPENCL_BUFFER_PREFETCH) || n == SPIRV_BUFFER_PREFETCH;
        if !imports.values().any(|n| n == SPIRV_DPAS || n.starts_with(OPENCL_DPAS) || SPIRV_BLOCKS.iter().any(|b| b.0 == n) || prefetch(n)) {
            return Ok(outcome);
        }
        let types = Types::new(module);
        for fi in 0..module.functions.len() {
            for bi in 0..module.functions[fi].blocks.len() {
                for ii in 0..module.functions[fi].blocks[bi].insts.len() {
                    let inst = &module.functions[fi].blocks[bi].insts[ii];
                    if !inst.is(Op::FunctionCall) {
                        continue;
                    }
                    let Some(name) = inst.operands.first().and_then(Operand::id).and_then(|f| imports.get(&f)) else { continue };
                    let inst = inst.clone();
                    let args: Vec<Word> = inst.operands.iter().skip(1).filter_map(Operand::id).collect();
                    if prefetch(name) && inst.result_type.is_some_and(|t| types.defs.get(&t).is_some_and(|d| d.is(Op::TypeVoid))) {
                        module.functions[fi].blocks[bi].insts[ii] = Inst::new(Op::Nop, None, None, vec![]);
                        outcome.count(Op::FunctionCall as u32);
                        continue;
                    }
                    let resolved = if name == SPIRV_DPAS {
                        spirv_dpas(module, &args).map(|o| (Op::SubgroupMatrixMultiplyAccumulateINTEL, o))
                    } else if let Some(&(_, op)) = SPIRV_BLOCKS.iter().find(|b| b.0 == name) {
                        spirv_block(module, op, &args).map(|o| (op, o))
                    } else if let Some(rest) = name.strip_prefix(OPENCL_BLOCK) {
                        opencl_block(module, rest, &args)
                    } else if let Some(rest) = name.strip_prefix(OPENCL_DPAS).filter(|r| r.contains("matrix_mad_k")) {
                        opencl_dpas(module, &types, rest, &inst, &args).map(|o| (Op::SubgroupMatrixMultiplyAccumulateINTEL, o))
                    } else {
                        continue;
                    };
                    let (op, operands) = resolved.map_err(|message| Error::Invalid { site: module.site(&inst), message: format!("call of {name}: {message}") })?;
                    // The 2D block instructions have no result (the call's is void).
                    let (ty, id) = if op == Op::SubgroupMatrixMultiplyAccumulateINTEL { (inst.result_type, inst.result_id) } else { (None, None) };
                    let new = Inst::new(op, ty, id, operands).from_origin(inst.origin);
                    module.functions[fi].blocks[bi].insts[ii] = new;
                    outcome.count(Op::FunctionCall as u32);
                }
            }
        }
        if outcome.changed {
            for block in module.functions.iter_mut().flat_map(|f| f.blocks.iter_mut()) {
                block.insts.retain(|i| !i.is(Op::Nop));
            }
            let called: std::collections::HashSet<Word> =
                module.functions.iter().flat_map(|f| f.insts()).filter(|i| i.is(Op::FunctionCall)).filter_map(|i| i.operands.first().and_then(Operand::id)).collect();
            module.functions.retain(|f| !f.blocks.is_empty() || called.contains(&f.id()) || !imports.contains_key(&f.id()));
            module.forget_undefined();
            module.remove_unused_globals(|g| g.is(Op::TypeFunction));
        }
        Ok(outcome)
    }
}

/// The name an imported function is linked by (its `LinkageAttributes`, else its `OpName`).
fn import_name(module: &Module, f: Word) -> Option<String> {
    module
        .annotations
        .iter()
        .find(|a| a.is(Op::Decorate) && a.word_opt(0) == Some(f) && a.word_opt(1) == Some(Decoration::LinkageAttributes as u32))
        // The name's words, then the linkage type (the grammar decodes decoration parameters
        // as literals).
        .and_then(|a| {
            let words: Vec<Word> = a.operands.get(2..a.operands.len().saturating_sub(1))?.iter().filter_map(Operand::word).collect();
            Some(crate::ir::words_to_string(&words))
        })
        .filter(|n| !n.is_empty())
        .or_else(|| module.name_of(f))
}

/// The unqualified name of an Itanium-mangled function name (`_Z<length><name>...`), or the
/// name itself.
fn base_name(mangled: &str) -> &str {
    let Some(rest) = mangled.strip_prefix("_Z") else { return mangled };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    // A length that does not end on a character (a damaged name) leaves the name whole.
    match rest[..digits].parse::<usize>() {
        Ok(len) => rest.get(digits..digits.saturating_add(len)).unwrap_or(mangled),
        _ => mangled,
    }
}

/// The value of constant `id`, if it is a 32-bit integer `OpConstant`.
fn constant(module: &Module, id: Word) -> Option<Word> {
    let c = module.globals().iter().find(|g| g.result_id == Some(id) && g.is(Op::Constant))?;
    (c.operands.len() == 1).then(|| c.word_opt(0)).flatten()
}

fn spirv_dpas(module: &Module, args: &[Word]) -> std::result::Result<Vec<Operand>, String> {
    let (k, a, b, c, ops) = match *args {
        [k, a, b, c] => (k, a, b, c, None),
        [k, a, b, c, ops] => (k, a, b, c, Some(ops)),
        _ => return Err(format!("takes {} arguments (K Dim, Matrix A, Matrix B, Matrix C and the optional operands are 4 or 5)", args.len())),
    };
    constant(module, k).ok_or("its K Dim is not a 32-bit integer constant")?;
    let mut operands = vec![Operand::Id(k), Operand::Id(a), Operand::Id(b), Operand::Id(c)];
    if let Some(ops) = ops {
        let mask = constant(module, ops).ok_or("its Matrix Multiply Accumulate Operands are not a 32-bit integer constant")?;
        operands.push(Operand::Enum(OperandKind::MatrixMultiplyAccumulateOperands, mask));
    }
    Ok(operands)
}

/// `rest`: the name after `intel_sub_group_`, such as `bf16_bf16_matrix_mad_k16`.
fn opencl_dpas(module: &mut Module, types: &Types, rest: &str, call: &Inst, args: &[Word]) -> std::result::Result<Vec<Operand>, String> {
    let (elements, k) = rest.split_once("_matrix_mad_k").ok_or("not a matrix built-in")?;
    if elements.ends_with("_split") {
        return Err("the split forms (dpasw, cl_intel_subgroup_split_matrix_multiply_accumulate) have no SPIR-V instruction and are not translated".into());
    }
    let k: u32 = k.parse().map_err(|_| format!("`{k}` is not a K"))?;
    let (ta, tb) = elements.split_once('_').ok_or("no element types in the name")?;
    let flags = |t: &str, a: bool| -> std::result::Result<u32, String> {
        let pick = |x: u32, y: u32| if a { x } else { y };
        Ok(match t {
            "i8" => pick(mma::A_PACKED_INT8 | mma::A_SIGNED, mma::B_PACKED_INT8 | mma::B_SIGNED),
            "u8" => pick(mma::A_PACKED_INT8, mma::B_PACKED_INT8),
            "i4" => pick(mma::A_PACKED_INT4 | mma::A_SIGNED, mma::B_PACKED_INT4 | mma::B_SIGNED),
            "u4" => pick(mma::A_PACKED_INT4, mma::B_PACKED_INT4),
            "f16" => pick(mma::A_PACKED_F16, mma::B_PACKED_F16),
            "bf16" => pick(mma::A_PACKED_BF16, mma::B_PACKED_BF16),
            "tf32" => pick(mma::A_TF32, mma::B_TF32),
            "i2" | "u2" => return Err(format!("2-bit {} elements have no Matrix Multiply Accumulate Operand", if a { "A" } else { "B" })),
            _ => return Err(format!("unknown element type `{t}`")),
        })
    };
    let mut mask = flags(ta, true)? | flags(tb, false)?;
    let [a, b, acc] = *args else { return Err(format!("takes {} arguments (a, b and acc are 3)", args.len())) };
    let is_short = |ty: Option<Word>| ty.map(|t| types.vector(t).map_or(t, |v| v.0)).and_then(|s| types.int(s)).is_some_and(|(w, _)| w == 16);
    if ta == "bf16" {
        if is_short(types.type_of(acc)) {
            mask |= mma::C_BFLOAT16;
        }
        if is_short(call.result_type) {
            mask |= mma::RESULT_BFLOAT16;
        }
    }
    let k_id = module.constant_u32(k);
    Ok(vec![Operand::Id(k_id), Operand::Id(a), Operand::Id(b), Operand::Id(acc), Operand::Enum(OperandKind::MatrixMultiplyAccumulateOperands, mask)])
}

fn spirv_block(module: &Module, op: Op, args: &[Word]) -> std::result::Result<Vec<Operand>, String> {
    let want = if op == Op::Subgroup2DBlockPrefetchINTEL { 9 } else { 10 };
    if args.len() != want {
        return Err(format!("takes {} arguments ({want} are needed)", args.len()));
    }
    for (i, what) in ["Element Size", "Block Width", "Block Height", "Block Count"].iter().enumerate() {
        constant(module, args[i]).ok_or_else(|| format!("its {what} is not a 32-bit integer constant"))?;
    }
    Ok(args.iter().map(|a| Operand::Id(*a)).collect())
}

/// `rest`: the name after `intel_sub_group_2d_block_`, such as `read_transform_16b_16r16x1c`:
/// the access, then element bits, rows, columns and blocks.
fn opencl_block(module: &mut Module, rest: &str, args: &[Word]) -> std::result::Result<(Op, Vec<Operand>), String> {
    let (access, shape) = rest.rsplit_once('_').ok_or("no block shape in the name")?;
    let (access, bits) = access.rsplit_once('_').ok_or("no element size in the name")?;
    let op = match access {
        "read" => Op::Subgroup2DBlockLoadINTEL,
        "read_transform" => Op::Subgroup2DBlockLoadTransformINTEL,
        "read_transpose" => Op::Subgroup2DBlockLoadTransposeINTEL,
        "write" => Op::Subgroup2DBlockStoreINTEL,
        "prefetch" => Op::Subgroup2DBlockPrefetchINTEL,
        _ => return Err(format!("unknown 2D block access `{access}`")),
    };
    let bits: u32 = bits.strip_suffix('b').and_then(|b| b.parse().ok()).ok_or_else(|| format!("`{bits}` is not an element size"))?;
    let bad = || format!("`{shape}` is not a block shape (<rows>r<columns>x<count>c)");
    let (rows, rest) = shape.split_once('r').ok_or_else(bad)?;
    let (cols, count) = rest.split_once('x').ok_or_else(bad)?;
    let count = count.strip_suffix('c').ok_or_else(bad)?;
    let [rows, cols, count]: [u32; 3] = [rows, cols, count].map(|v| v.parse().unwrap_or(0));
    if rows == 0 || cols == 0 || count == 0 || !bits.is_multiple_of(8) {
        return Err(bad());
    }
    let want = if op == Op::Subgroup2DBlockPrefetchINTEL { 5 } else { 6 };
    if args.len() != want {
        return Err(format!("takes {} arguments ({want} are needed)", args.len()));
    }
    let mut operands: Vec<Operand> = [bits / 8, cols, rows, count].into_iter().map(|v| Operand::Id(module.constant_u32(v))).collect();
    // OpenCL's order is base, width, height, pitch, coordinate, then the private pointer; the
    // store instruction takes the private pointer first.
    if op == Op::Subgroup2DBlockStoreINTEL {
        operands.push(Operand::Id(args[5]));
        operands.extend(args[..5].iter().map(|a| Operand::Id(*a)));
    } else {
        operands.extend(args.iter().map(|a| Operand::Id(*a)));
    }
    Ok((op, operands))
}

#[cfg(test)]
mod tests {
    use super::base_name;

    #[test]
    fn base_names_of_mangled_and_damaged_names() {
        assert_eq!(base_name("_Z38intel_sub_group_f16_f16_matrix_mad_k16Dv8_sDv8_iDv8_f"), "intel_sub_group_f16_f16_matrix_mad_k16");
        assert_eq!(base_name("plain"), "plain");
        assert_eq!(base_name("_Z99short"), "_Z99short");
        // A length that ends inside a character (found by fuzzing) leaves the name whole.
        assert_eq!(base_name("_Z2a\u{20ac}b"), "_Z2a\u{20ac}b");
        assert_eq!(base_name("_Z4a\u{20ac}b"), "a\u{20ac}");
    }
}
