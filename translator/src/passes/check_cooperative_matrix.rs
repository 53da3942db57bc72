//! `CheckCooperativeMatrix`: verifies that every KHR cooperative-matrix type and MulAdd shape
//! left in the module is one the target lists.
//!
//! Rewrite: none. Fails with an error naming the instruction, its place and the missing
//! shape or component type when the target has no cooperative matrices, lists no row with a
//! component type (e.g. fp8 on the H100), lists no row for a MulAdd's M x N x K and types, or
//! lists no row with a matrix of a type's component, scope, rows and columns (an s8 16x16
//! matrix on the H100, whose s8 rows are 16x32 and 32x16).
//! Matrices whose dimensions are specialization constants are checked at MulAdd only when the
//! constants' defaults are known. `EmulateCooperativeMatrix` runs first and lowers every module
//! this check would refuse, so it finds nothing to refuse unless the emulation was left out.
//! Applies to every target.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::{Inst, Module};
use crate::pass::{Context, Outcome, Pass, Preserves};
use crate::profile::{ComponentType, CoopMatShape, DeviceCaps, MatrixScope};
use spirv::{CooperativeMatrixUse, FPEncoding, Op, Scope, Word};

pub struct CheckCooperativeMatrix;

/// Component type of a scalar type id; `signed` overrides integer signedness (KHR MulAdd flags).
pub fn component_type(types: &Types, ty: Word, signed: Option<bool>) -> Option<ComponentType> {
    if let Some((w, s)) = types.int(ty) {
        let s = signed.unwrap_or(s);
        return Some(match (w, s) {
            (8, true) => ComponentType::S8,
            (8, false) => ComponentType::U8,
            (16, true) => ComponentType::S16,
            (16, false) => ComponentType::U16,
            (32, true) => ComponentType::S32,
            (32, false) => ComponentType::U32,
            (64, true) => ComponentType::S64,
            (64, false) => ComponentType::U64,
            _ => return None,
        });
    }
    let (w, encoding) = types.float(ty)?;
    let encoding = encoding.map(FPEncoding::from_u32);
    Some(match (w, encoding) {
        (16, None) => ComponentType::F16,
        (16, Some(Some(FPEncoding::BFloat16KHR))) => ComponentType::Bf16,
        (32, None) => ComponentType::F32,
        (64, None) => ComponentType::F64,
        (8, Some(Some(FPEncoding::Float8E4M3EXT))) => ComponentType::E4m3,
        (8, Some(Some(FPEncoding::Float8E5M2EXT))) => ComponentType::E5m2,
        _ => return None,
    })
}

impl Pass for CheckCooperativeMatrix {
    fn name(&self) -> &'static str {
        "check-cooperative-matrix"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn preserves(&self) -> Preserves {
        Preserves::ALL
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        if let Some(e) = first_unlisted(module, cx.target)? {
            return Err(e);
        }
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        for inst in module.globals().iter().filter(|i| i.is(Op::TypeCooperativeMatrixKHR)) {
            let (Some(id), Ok([comp, _, rows, cols, usage])) = (inst.result_id, inst.ids()) else { continue };
            let name = module.name_of(id).map_or_else(|| format!("%{id}"), |n| format!("%{n}"));
            let comp = component_type(&types, comp, None).map_or_else(|| format!("%{comp}"), |c| c.to_string());
            let dim = |d: Word| types.const_u32(d).map_or_else(|| format!("%{d}"), |v| v.to_string());
            outcome.notes.push(format!("{name} ({}x{} {comp} {}): native", dim(rows), dim(cols), use_name(types.const_u32(usage))));
        }
        Ok(outcome)
    }
}

/// "A", "B" or "accumulator" for a cooperative-matrix Use value.
pub fn use_name(value: Option<u32>) -> &'static str {
    match value {
        Some(0) => "A",
        Some(1) => "B",
        Some(2) => "accumulator",
        _ => "of unknown use",
    }
}

/// The first KHR matrix type or MulAdd of `module` that `target` does not list, as the error
/// naming it; `None` when the target runs every one natively (or there are none).
/// The integer component type of the other signedness (KHR matrices take signedness from the
/// MulAdd's operands, so a listed s8 shape serves u8 matrices too); other types are their own.
pub(crate) fn signedness_twin(c: ComponentType) -> ComponentType {
    match c {
        ComponentType::S8 => ComponentType::U8,
        ComponentType::S32 => ComponentType::U32,
        ComponentType::U8 => ComponentType::S8,
        ComponentType::U32 => ComponentType::S32,
        other => other,
    }
}

/// Whether a listed shape has a `rows` x `cols` matrix (A, B, C or result) of component type id
/// `component` (either signedness for integers) and scope id `scope`, as Vulkan requires of
/// every matrix type a module declares. True where the component or scope is not one a listed
/// shape can have a value for (the checks that name them come first).
pub(crate) fn matrix_listed(target: &DeviceCaps, types: &Types, (component, scope, usage): (Word, Word, Word), rows: u32, cols: u32) -> bool {
    let (Some(comp), Some(scope), Some(usage)) = (component_type(types, component, None), types.const_u32(scope), types.const_u32(usage)) else { return true };
    let scope = match scope {
        s if s == Scope::Subgroup as u32 => MatrixScope::Subgroup,
        s if s == Scope::Workgroup as u32 => MatrixScope::Workgroup,
        _ => return true,
    };
    let twin = signedness_twin(comp);
    // A Use-A matrix must be some row's A (M x K), a Use-B one its B (K x N), an accumulator its
    // C or result (M x N).
    let uses = |r: &CoopMatShape| -> Vec<(ComponentType, u32, u32)> {
        match usage {
            u if u == CooperativeMatrixUse::MatrixAKHR as u32 => vec![(r.a, r.m, r.k)],
            u if u == CooperativeMatrixUse::MatrixBKHR as u32 => vec![(r.b, r.k, r.n)],
            _ => vec![(r.c, r.m, r.n), (r.result, r.m, r.n)],
        }
    };
    target.cooperative_matrix.iter().filter(|r| r.scope == scope).any(|r| uses(r).iter().any(|&(t, m, n)| (t == comp || t == twin) && (m, n) == (rows, cols)))
}

pub fn first_unlisted(module: &Module, target: &DeviceCaps) -> Result<Option<Error>> {
    {
        let Some(first) = module.globals().iter().find(|i| i.is(Op::TypeCooperativeMatrixKHR)) else {
            return Ok(None);
        };
        let unsupported = |inst: &Inst, missing: String| Error::Unsupported { site: module.site(inst), target: target.name.clone(), missing };
        if !target.has_cooperative_matrix() {
            return Ok(Some(unsupported(first, "VK_KHR_cooperative_matrix".into())));
        }
        // A native matrix spans the physical sub-group, which holds several logical ones.
        if let Some((entry, s, p)) = crate::kernel::split_subgroups(module).into_iter().next() {
            return Ok(Some(unsupported(first, format!("cooperative matrices in sub-groups of {s} for `{entry}`, which runs them split out of its sub-groups of {p}"))));
        }
        let types = Types::new(module);
        for inst in module.globals().iter().filter(|i| i.is(Op::TypeCooperativeMatrixKHR)) {
            let component = inst.id(0)?;
            let comp = component_type(&types, component, None);
            let listed = comp.is_some_and(|c| {
                let twin = signedness_twin(c);
                target.cooperative_matrix.iter().any(|r| [r.a, r.b, r.c, r.result].iter().any(|t| *t == c || *t == twin))
            });
            if !listed {
                let name = comp.map_or_else(|| format!("component type %{component}"), |c| format!("{c}"));
                return Ok(Some(unsupported(inst, format!("cooperative matrices of {name} (no listed shape uses it)"))));
            }
            // The scope must be a constant a listed shape has (spirv-val does not look into a
            // specialization constant there).
            let scope = inst.id(1)?;
            let listed_scope = |s: MatrixScope| target.cooperative_matrix.iter().any(|r| r.scope == s);
            let known = match types.const_u32(scope) {
                Some(s) if s == Scope::Subgroup as u32 => listed_scope(MatrixScope::Subgroup),
                Some(s) if s == Scope::Workgroup as u32 => listed_scope(MatrixScope::Workgroup),
                _ => false,
            };
            if !known {
                let given = types.const_u32(scope).map_or_else(|| format!("%{scope}, not a constant"), |s| s.to_string());
                return Ok(Some(unsupported(inst, format!("cooperative matrices of scope {given} (no listed shape has it)"))));
            }
        }
        // A dimension: a constant, or a specialization constant's default (what the pipeline
        // runs unless it specializes it; the runtime specializes before it checks).
        let spec_defaults: std::collections::HashMap<Word, u32> = module.globals().iter().filter(|g| g.is(Op::SpecConstant)).filter_map(|g| Some((g.result_id?, g.word_opt(0)?))).collect();
        let dimension = |id: Word| types.const_u32(id).or_else(|| spec_defaults.get(&id).copied());
        // Each MulAdd's shape and types: (component, rows, columns) of a matrix type.
        let mat = |ty: Word| -> Option<(Word, Option<u32>, Option<u32>)> {
            let d = types.defs.get(&ty).filter(|d| d.is(Op::TypeCooperativeMatrixKHR))?;
            let [comp, _scope, rows, cols] = d.ids().ok()?;
            Some((comp, dimension(rows), dimension(cols)))
        };
        for f in &module.functions {
            for inst in f.blocks.iter().flat_map(|b| &b.insts).filter(|i| i.is(Op::CooperativeMatrixMulAddKHR)) {
                let [a, b, c] = inst.ids()?;
                let flags = inst.word_opt(3).unwrap_or(0);
                let ty = |v: Word| types.type_of(v).and_then(mat);
                let (Some(a), Some(b), Some(c), Some(r)) = (ty(a), ty(b), ty(c), mat(inst.ty()?)) else { continue };
                let (Some(m), Some(k), Some(n)) = (a.1, a.2, b.2) else {
                    log::info!("MulAdd at word {} has specialization-constant dimensions; shape checked by the driver", inst.at());
                    continue;
                };
                use spirv::CooperativeMatrixOperands as F;
                let comp = |t: Word, bit: F| component_type(&types, t, types.int(t).map(|_| flags & bit.bits() != 0));
                let (Some(ca), Some(cb), Some(cc), Some(cr)) = (
                    comp(a.0, F::MATRIX_A_SIGNED_COMPONENTS_KHR),
                    comp(b.0, F::MATRIX_B_SIGNED_COMPONENTS_KHR),
                    comp(c.0, F::MATRIX_C_SIGNED_COMPONENTS_KHR),
                    comp(r.0, F::MATRIX_RESULT_SIGNED_COMPONENTS_KHR),
                ) else {
                    continue;
                };
                let saturating = flags & F::SATURATING_ACCUMULATION_KHR.bits() != 0;
                if target.find_coop_shape(m, n, k, [ca, cb, cc, cr], saturating).is_none() {
                    let sat = if saturating { " saturating" } else { "" };
                    return Ok(Some(unsupported(inst, format!("cooperative-matrix shape {m}x{n}x{k} {ca}*{cb}+{cc}->{cr}{sat}"))));
                }
            }
        }
        // Every matrix type, in or out of a MulAdd, must be one of a listed shape's matrices
        // (Vulkan: component type, scope, rows and columns; a conversion target counts too).
        for inst in module.globals().iter().filter(|i| i.is(Op::TypeCooperativeMatrixKHR)) {
            let Ok([component, scope, rows, cols, usage]) = inst.ids() else { continue };
            let (Some(comp), Some(rows), Some(cols)) = (component_type(&types, component, None), dimension(rows), dimension(cols)) else { continue };
            if !matrix_listed(target, &types, (component, scope, usage), rows, cols) {
                let role = use_name(types.const_u32(usage));
                return Ok(Some(unsupported(inst, format!("a {rows}x{cols} cooperative matrix of {comp}, Use {role} (no listed shape has one)"))));
            }
        }
        Ok(None)
    }
}
