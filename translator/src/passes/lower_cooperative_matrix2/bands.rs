//! Workgroup-scope matrices as row bands of sub-group-scope ones.
//!
//! A workgroup-scope A or accumulator matrix of `M` rows is held as `count` bands of `M /
//! count` rows: sub-group `s` holds band `s % count`, the same sub-group-scope matrix that a
//! sub-group-scope kernel would hold for those rows. B matrices are replicated: every
//! sub-group holds all of one. A MulAdd then needs nothing from the other sub-groups (band `b`
//! of `A x B + C` is band `b` of `A` times `B` plus band `b` of `C`), and neither do
//! element-wise arithmetic, conversions that keep the Use, `Length`, row reductions and
//! composite extracts and inserts (the elements an invocation owns are the band's). Where
//! there are more sub-groups than bands, the later ones compute the same bands again and only
//! the first `count` write memory (for a replicated matrix, sub-group 0).
//!
//! `count` is the largest power of two that divides the number of sub-groups at the target's
//! largest sub-group size (so also at every smaller power of two) and every banded matrix's
//! rows in multiples of the smallest `M` the target lists (1 where it lists none); 1 (every
//! matrix replicated) where there is none or the workgroup size is unknown.

use crate::analysis::Types;
use crate::ir::builder::Builder;
use crate::ir::{Module, Operand};
use crate::passes::tile_cooperative_matrix::{matrix, Matrix};
use crate::profile::{DeviceCaps, MatrixScope};
use spirv::{BuiltIn, CooperativeMatrixUse, Op, Scope, Word};
use std::collections::BTreeMap;

pub(super) struct Bands {
    count: u32,
    /// The workgroup's invocations (0 where its size is unknown).
    pub(super) invocations: u32,
    /// Every workgroup-scope matrix type: its whole matrix and whether it is banded.
    types: BTreeMap<Word, (Matrix, bool)>,
}

impl Bands {
    /// The bands of `module`'s workgroup-scope matrix types on `target`; `None` where it has
    /// none.
    pub(super) fn plan(module: &mut Module, types: &Types, target: &DeviceCaps) -> Option<Bands> {
        let workgroup = Scope::Workgroup as u32;
        let b_use = CooperativeMatrixUse::MatrixBKHR as u32;
        let found: BTreeMap<Word, (Matrix, bool)> = module
            .globals()
            .iter()
            .filter(|g| g.is(Op::TypeCooperativeMatrixKHR))
            .filter_map(|g| {
                let m = matrix(types, g.result_id?)?;
                (types.const_u32(m.scope) == Some(workgroup)).then(|| (g.result_id.unwrap_or(0), (m, types.const_u32(m.usage) != Some(b_use))))
            })
            .collect();
        if found.is_empty() {
            return None;
        }
        let largest = target.max_subgroup_size.max(target.subgroup_size).max(1);
        let invocations = crate::passes::subgroup_scratch::workgroup_size(module, types).map_or(0, |(_, n)| n);
        let subgroups = if invocations.is_multiple_of(largest) { invocations / largest } else { 0 };
        let granule = target.cooperative_matrix.iter().filter(|r| r.scope == MatrixScope::Subgroup).map(|r| r.m).min().unwrap_or(1).max(1);
        let mut count = 1;
        while subgroups > 0 && subgroups.is_multiple_of(count * 2) && found.values().filter(|(_, banded)| *banded).all(|(m, _)| m.rows.is_multiple_of(count * 2 * granule)) {
            count *= 2;
        }
        Some(Bands { count, invocations, types: found })
    }

    /// Whether `ty` is a workgroup-scope matrix type.
    pub(super) fn is_workgroup(&self, ty: Word) -> bool {
        self.types.contains_key(&ty)
    }

    /// Whether every sub-group holds the whole of `ty`, a workgroup-scope matrix type (a B
    /// matrix, or any where there is one band).
    pub(super) fn is_replicated(&self, ty: Word) -> bool {
        self.types.get(&ty).is_some_and(|(_, banded)| !*banded || self.count == 1)
    }

    /// Whether `ty` is a banded (A or accumulator) workgroup-scope matrix type.
    pub(super) fn is_banded(&self, ty: Word) -> bool {
        self.types.get(&ty).is_some_and(|(_, banded)| *banded)
    }

    /// The whole matrix of a workgroup-scope type, or of any other matrix type.
    pub(super) fn whole(&self, types: &Types, ty: Word) -> Option<Matrix> {
        self.types.get(&ty).map(|(m, _)| *m).or_else(|| matrix(types, ty))
    }

    /// What a sub-group holds of `ty`: a band of a banded type, the whole matrix of any other.
    pub(super) fn held(&self, types: &Types, ty: Word) -> Option<Matrix> {
        match self.types.get(&ty) {
            Some((m, true)) => Some(Matrix { rows: m.rows / self.count, ..*m }),
            Some((m, false)) => Some(*m),
            None => matrix(types, ty),
        }
    }

    /// The first row of the sub-group's band of a banded `rows`-row matrix: `(SubgroupId %
    /// count) * rows / count`.
    pub(super) fn first_row(&self, b: &mut Builder<'_>, rows: u32) -> Word {
        let uint = b.module.type_int(32, false);
        let band = self.band(b);
        let per = b.module.constant_u32(rows / self.count);
        b.imul(uint, band, per)
    }

    fn band(&self, b: &mut Builder<'_>) -> Word {
        let uint = b.module.type_int(32, false);
        let sg_var = b.module.get_or_add_builtin(BuiltIn::SubgroupId, uint);
        let sg = b.load(uint, sg_var);
        let mask = b.module.constant_u32(self.count - 1);
        b.op(Op::BitwiseAnd, uint, &[sg, mask])
    }

    /// Whether the sub-group writes memory for a matrix: one of the first `count` for a
    /// banded matrix, sub-group 0 for a replicated one.
    pub(super) fn writes(&self, b: &mut Builder<'_>, banded: bool) -> Word {
        let uint = b.module.type_int(32, false);
        let boolean = b.module.type_bool();
        let sg_var = b.module.get_or_add_builtin(BuiltIn::SubgroupId, uint);
        let sg = b.load(uint, sg_var);
        let limit = b.module.constant_u32(if banded { self.count } else { 1 });
        b.op(Op::ULessThan, boolean, &[sg, limit])
    }

    /// A sub-group-scope matrix type of `component` with the rows, columns and Use of what a
    /// sub-group holds of `like`.
    pub(super) fn held_type(&self, module: &mut Module, types: &Types, like: Word, component: Word) -> Option<Word> {
        let m = self.held(types, like)?;
        let (scope, rows, cols) = (module.constant_u32(Scope::Subgroup as u32), module.constant_u32(m.rows), module.constant_u32(m.cols));
        Some(module.intern(Op::TypeCooperativeMatrixKHR, None, vec![Operand::Id(component), Operand::Id(scope), Operand::Id(rows), Operand::Id(cols), Operand::Id(m.usage)]))
    }

    /// Makes every workgroup-scope matrix type the sub-group-scope type of what a sub-group
    /// holds of it (after the operations that needed to know have been rewritten).
    pub(super) fn retype(&self, module: &mut Module) {
        let subgroup = module.constant_u32(Scope::Subgroup as u32);
        for (&ty, (m, banded)) in &self.types {
            let rows = module.constant_u32(if *banded { m.rows / self.count } else { m.rows });
            if let Some(def) = module.globals_mut().iter_mut().find(|g| g.result_id == Some(ty) && g.operands.len() >= 4) {
                def.operands[1] = Operand::Id(subgroup);
                def.operands[2] = Operand::Id(rows);
            }
        }
        module.interner.clear();
        module.reorder_globals();
        module.merge_duplicate_types();
    }
}
