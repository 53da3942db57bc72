//! Disjoint sets of ids (union by linking, path compression, no recursion): groups of values
//! that must be rewritten alike, such as values that meet in one instruction.

use spirv::Word;
use std::collections::HashMap;

#[derive(Default)]
pub struct UnionFind(HashMap<Word, Word>);

impl UnionFind {
    /// The representative of `x`'s set (`x` itself when it was never joined).
    pub fn find(&mut self, x: Word) -> Word {
        let mut root = x;
        while let Some(&p) = self.0.get(&root) {
            root = p;
        }
        let mut at = x;
        while let Some(&p) = self.0.get(&at) {
            if p != root {
                self.0.insert(at, root);
            }
            at = p;
        }
        root
    }

    /// Joins the sets of `a` and `b`.
    pub fn union(&mut self, a: Word, b: Word) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.0.insert(ra, rb);
        }
    }
}
