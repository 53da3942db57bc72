//! The five `OpSubgroup2DBlock*INTEL` instructions (SPV_INTEL_2d_block_io).
//!
//! Memory is a row-major 2D region: `height` rows of `width` bytes, `pitch` bytes apart. A block
//! of `width x height` elements (`elem_size` bytes each; `count` blocks side by side) starts at
//! element `coord.0` of row `coord.1`. Before assignment to invocations the block is padded —
//! width to a power of two (load, transform, store), height to a power of two (transpose),
//! height to a multiple of 4 (1-byte) or 2 (2-byte) elements (transform) — and padded elements
//! read as zero (stores ignore them). Transform packs 4 (1-byte) or 2 (2-byte) rows of each column
//! into 32-bit values, lower rows in lower bits; transpose swaps rows and columns. Rows of the
//! resulting block go to invocations: width = N, one element per row each; width < N, several
//! rows per step; width > N, `width / N` consecutive elements per row each. Out-of-bounds loads
//! read zero; out-of-bounds stores are dropped; prefetch changes nothing.

use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum BlockError {
    #[error("{0}")]
    Invalid(String),
}

/// The 2D memory region.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    pub width: u64,
    pub height: u64,
    pub pitch: u64,
}

/// The block operands.
#[derive(Clone, Copy, Debug)]
pub struct Block {
    pub elem_size: u32,
    pub width: u32,
    pub height: u32,
    pub count: u32,
}

/// Which load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadKind {
    Plain,
    Transform,
    Transpose,
}

fn check(block: &Block, subgroup: u32) -> Result<(), BlockError> {
    let bad = |m: String| Err(BlockError::Invalid(m));
    if ![1, 2, 4, 8].contains(&block.elem_size) {
        return bad(format!("element size {} is not 1, 2, 4 or 8 bytes", block.elem_size));
    }
    if block.width == 0 || block.height == 0 || block.count == 0 {
        return bad("block width, height and count must be positive".into());
    }
    if (block.elem_size == 1 && !block.width.is_multiple_of(4)) || (block.elem_size == 2 && !block.width.is_multiple_of(2)) {
        return bad(format!("block width {} is not a multiple of {} for {}-byte elements", block.width, 4 / block.elem_size, block.elem_size));
    }
    if !subgroup.is_power_of_two() || subgroup > 64 {
        return bad(format!("subgroup size {subgroup} is not a power of two up to 64"));
    }
    Ok(())
}

/// The value of a padded block's element at (row, column), as a closure over the block.
type ElementAt<'a> = Box<dyn Fn(u32, u32) -> u64 + 'a>;

fn read_elem(mem: &[u8], region: &Region, size: u32, x: i64, y: i64) -> u64 {
    if x < 0 || y < 0 || y as u64 >= region.height || (x as u64 + 1) * size as u64 > region.width {
        return 0;
    }
    let at = (y as u64 * region.pitch + x as u64 * size as u64) as usize;
    match mem.get(at..at + size as usize) {
        Some(bytes) => bytes.iter().rev().fold(0u64, |acc, b| (acc << 8) | *b as u64),
        None => 0,
    }
}

/// Invocation `i`'s element positions (row, col) in a `w x h` block, in storage order (rows
/// at or past `h` are padding).
pub fn assignment(w: u32, h: u32, subgroup: u32, inv: u32) -> Vec<(u32, u32)> {
    let per_row = (w / subgroup).max(1);
    let inv_per_row = w / per_row;
    let step = (subgroup / w).max(1);
    let col0 = (inv % inv_per_row) * per_row;
    let row0 = inv / inv_per_row;
    // Every invocation holds the same number of values; rows past the block are padding.
    let mut out = Vec::new();
    for j in 0..h.div_ceil(step) {
        for c in col0..col0 + per_row {
            out.push((row0 + j * step, c));
        }
    }
    out
}

/// Loads: per invocation, the values it receives (elements, or 32-bit words for transform).
pub fn load(mem: &[u8], region: &Region, block: &Block, coord: (i64, i64), subgroup: u32, kind: LoadKind) -> Result<Vec<Vec<u64>>, BlockError> {
    check(block, subgroup)?;
    let es = block.elem_size;
    if kind == LoadKind::Transform && es > 2 {
        return Err(BlockError::Invalid(format!("transform needs 1- or 2-byte elements, given {es}")));
    }
    let mut out = vec![Vec::new(); subgroup as usize];
    for b in 0..block.count {
        let bx = coord.0 + (b * block.width) as i64;
        let elem = |r: u32, c: u32| -> u64 {
            // Padded positions read zero even when memory exists there.
            if r >= block.height || c >= block.width {
                0
            } else {
                read_elem(mem, region, es, bx + c as i64, coord.1 + r as i64)
            }
        };
        let (w, h, value): (u32, u32, ElementAt) = match kind {
            LoadKind::Plain => (block.width.next_power_of_two(), block.height, Box::new(elem)),
            LoadKind::Transpose => (block.height.next_power_of_two(), block.width, Box::new(move |r, c| elem(c, r))),
            LoadKind::Transform => {
                let per = 4 / es;
                let rows = block.height.div_ceil(per);
                (block.width.next_power_of_two(), rows, Box::new(move |r, c| (0..per).fold(0u64, |acc, e| acc | elem(r * per + e, c) << (8 * es * e))))
            }
        };
        for inv in 0..subgroup {
            for (r, c) in assignment(w, h, subgroup, inv) {
                out[inv as usize].push(value(r, c));
            }
        }
    }
    Ok(out)
}

/// Stores per-invocation `data` (as `load` with `Plain` would return it) into memory.
pub fn store(mem: &mut [u8], region: &Region, block: &Block, coord: (i64, i64), subgroup: u32, data: &[Vec<u64>]) -> Result<(), BlockError> {
    check(block, subgroup)?;
    let es = block.elem_size as u64;
    let w = block.width.next_power_of_two();
    let per_block = assignment(w, block.height, subgroup, 0).len();
    if data.len() != subgroup as usize || data.iter().any(|d| d.len() < per_block * block.count as usize) {
        return Err(BlockError::Invalid(format!("store data must hold {} values per invocation", per_block * block.count as usize)));
    }
    for b in 0..block.count {
        for inv in 0..subgroup {
            for (k, (r, c)) in assignment(w, block.height, subgroup, inv).into_iter().enumerate() {
                if c >= block.width || r >= block.height {
                    continue;
                }
                let (x, y) = (coord.0 + (b * block.width + c) as i64, coord.1 + r as i64);
                if x < 0 || y < 0 || y as u64 >= region.height || (x as u64 + 1) * es > region.width {
                    continue;
                }
                let at = (y as u64 * region.pitch + x as u64 * es) as usize;
                let v = data[inv as usize][b as usize * per_block + k];
                if let Some(bytes) = mem.get_mut(at..at + es as usize) {
                    for (i, byte) in bytes.iter_mut().enumerate() {
                        *byte = (v >> (8 * i)) as u8;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Prefetch: checks its operands like a load and changes nothing.
pub fn prefetch(block: &Block, subgroup: u32) -> Result<(), BlockError> {
    check(block, subgroup)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A region whose element (r, c) holds the tag r * 16 + c (1 byte each, or wider).
    fn tagged(rows: u32, cols: u32, es: u32) -> (Vec<u8>, Region) {
        let pitch = (cols * es) as u64;
        let mut mem = vec![0u8; (rows as u64 * pitch) as usize];
        for r in 0..rows {
            for c in 0..cols {
                let at = (r as u64 * pitch + (c * es) as u64) as usize;
                mem[at] = (r * 16 + c) as u8;
            }
        }
        (mem, Region { width: pitch, height: rows as u64, pitch })
    }

    fn t(r: u64, c: u64) -> u64 {
        r * 16 + c
    }

    fn blk(es: u32, w: u32, h: u32) -> Block {
        Block { elem_size: es, width: w, height: h, count: 1 }
    }

    #[test]
    fn spec_example_1_width_equals_subgroup() {
        let (mem, reg) = tagged(2, 4, 4);
        let got = load(&mem, &reg, &blk(4, 4, 2), (0, 0), 4, LoadKind::Plain).unwrap();
        for i in 0..4 {
            assert_eq!(got[i as usize], vec![t(0, i), t(1, i)]);
        }
    }

    #[test]
    fn spec_example_2_width_less_than_subgroup() {
        let (mem, reg) = tagged(4, 2, 4);
        let got = load(&mem, &reg, &blk(4, 2, 4), (0, 0), 4, LoadKind::Plain).unwrap();
        assert_eq!(got, vec![vec![t(0, 0), t(2, 0)], vec![t(0, 1), t(2, 1)], vec![t(1, 0), t(3, 0)], vec![t(1, 1), t(3, 1)]]);
    }

    #[test]
    fn spec_example_3_width_greater_than_subgroup() {
        let (mem, reg) = tagged(2, 8, 4);
        let got = load(&mem, &reg, &blk(4, 8, 2), (0, 0), 4, LoadKind::Plain).unwrap();
        for i in 0..4u64 {
            assert_eq!(got[i as usize], vec![t(0, 2 * i), t(0, 2 * i + 1), t(1, 2 * i), t(1, 2 * i + 1)]);
        }
    }

    #[test]
    fn spec_example_4_transpose() {
        let (mem, reg) = tagged(4, 2, 4);
        let got = load(&mem, &reg, &blk(4, 2, 4), (0, 0), 4, LoadKind::Transpose).unwrap();
        for i in 0..4u64 {
            assert_eq!(got[i as usize], vec![t(i, 0), t(i, 1)]);
        }
    }

    #[test]
    fn spec_example_5_transform_two_byte() {
        let (mem, reg) = tagged(2, 4, 2);
        let got = load(&mem, &reg, &blk(2, 4, 2), (0, 0), 4, LoadKind::Transform).unwrap();
        for i in 0..4u64 {
            assert_eq!(got[i as usize], vec![t(1, i) << 16 | t(0, i)]);
        }
    }

    #[test]
    fn spec_example_6_transform_one_byte() {
        let (mem, reg) = tagged(4, 4, 1);
        let got = load(&mem, &reg, &blk(1, 4, 4), (0, 0), 4, LoadKind::Transform).unwrap();
        for i in 0..4u64 {
            assert_eq!(got[i as usize], vec![t(3, i) << 24 | t(2, i) << 16 | t(1, i) << 8 | t(0, i)]);
        }
    }

    #[test]
    fn padding_out_of_bounds_and_block_count() {
        // Width 3 of 4-byte elements pads to 4: column 3 reads zero although memory exists there.
        let (mem, reg) = tagged(2, 8, 4);
        let got = load(&mem, &reg, &blk(4, 3, 2), (0, 0), 4, LoadKind::Plain).unwrap();
        assert_eq!(got[3], vec![0, 0]);
        // Out of bounds (negative and past the end) reads zero.
        let got = load(&mem, &reg, &blk(4, 4, 2), (-2, 1), 4, LoadKind::Plain).unwrap();
        assert_eq!(got[0], vec![0, 0]);
        assert_eq!(got[2], vec![t(1, 0), 0]);
        // Two blocks side by side: the second block's data follows the first's.
        let got = load(&mem, &reg, &Block { elem_size: 4, width: 4, height: 1, count: 2 }, (0, 0), 4, LoadKind::Plain).unwrap();
        assert_eq!(got[1], vec![t(0, 1), t(0, 5)]);
        // Invalid element sizes and widths are errors.
        assert!(load(&mem, &reg, &blk(3, 4, 1), (0, 0), 4, LoadKind::Plain).is_err());
        assert!(load(&mem, &reg, &blk(1, 6, 1), (0, 0), 4, LoadKind::Plain).is_err());
    }

    #[test]
    fn store_drops_out_of_bounds_and_round_trips() {
        for (es, w, h, n) in [(1u32, 8u32, 3u32, 4u32), (2, 4, 5, 8), (4, 16, 2, 4), (8, 2, 4, 4)] {
            let (mem, reg) = tagged(8, 16, es);
            let b = blk(es, w, h);
            let data = load(&mem, &reg, &b, (2, 1), n, LoadKind::Plain).unwrap();
            let mut copy = vec![0u8; mem.len()];
            store(&mut copy, &reg, &b, (2, 1), n, &data).unwrap();
            for r in 0..8u64 {
                for c in 0..16u64 {
                    let inside = (1..1 + h as u64).contains(&r) && (2..2 + w as u64).contains(&c);
                    let at = (r * reg.pitch + c * es as u64) as usize;
                    assert_eq!(copy[at..at + es as usize], if inside { mem[at..at + es as usize].to_vec() } else { vec![0; es as usize] }, "es {es} ({r},{c})");
                }
            }
        }
        // A store hanging off the right edge writes only the in-bounds part.
        let (mem, reg) = tagged(2, 4, 4);
        let mut out = vec![0u8; mem.len()];
        let data = vec![vec![1u64, 1]; 4];
        store(&mut out, &reg, &blk(4, 4, 2), (2, 0), 4, &data).unwrap();
        assert_eq!(out.iter().filter(|b| **b == 1).count(), 4);
        assert!(prefetch(&blk(4, 4, 2), 4).is_ok());
    }
}
