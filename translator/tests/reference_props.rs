//! Property tests of the reference model against plain loops.

use matbridge_translator::reference::block_io::{self, Block, LoadKind, Region};
use matbridge_translator::reference::dpas::{operands, pack_a, pack_b, pack_c, Container, Dpas, Operand};
use matbridge_translator::reference::elements::Elem;
use matbridge_translator::reference::integer_dot::{dot, DotKind};
use matbridge_translator::reference::matrix::{khr, mul_add_khr, Matrix};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whole-matrix DPAS on int8 equals the naive product, for every A distribution.
    #[test]
    fn dpas_int8_equals_naive(n_log in 2u32..6, k_mul in 1u32..4, m in 1u32..9, a_bits_log in 3u32..6, seed in any::<u64>()) {
        let n = 1 << n_log;
        let a_bits = 1 << a_bits_log; // 8, 16 or 32-bit containers
        let epc = a_bits / 8;
        let k = (32 * k_mul).min(n * epc).max(4);
        prop_assume!(k % epc == 0 && k % 4 == 0 && k / epc <= n);
        let rnd = |i: u64| ((seed.wrapping_mul(6364136223846793005).wrapping_add(i.wrapping_mul(1442695040888963407))) >> 33) as i64 % 256 - 128;
        let av: Vec<i64> = (0..(m * k) as u64).map(rnd).collect();
        let bv: Vec<i64> = (0..(k * n) as u64).map(|i| rnd(i + 100_000)).collect();
        let raw = |v: &[i64]| v.iter().map(|x| *x as u64 & 0xff).collect::<Vec<_>>();
        let d = Dpas {
            m, k, result: Container::Int(32),
            operands: operands::A_SIGNED | operands::B_SIGNED | operands::A_PACKED_INT8 | operands::B_PACKED_INT8,
            a: Operand { container: Container::Int(a_bits), data: pack_a(&raw(&av), m, k, n, Container::Int(a_bits), 8) },
            b: Operand { container: Container::Int(32), data: pack_b(&raw(&bv), k, n, Container::Int(32), 8) },
            c: Operand { container: Container::Int(32), data: pack_c(&vec![0; (m * n) as usize], m, n) },
        };
        let got = d.run().unwrap();
        for r in 0..m {
            for c in 0..n {
                let want: i64 = (0..k).map(|p| av[(r * k + p) as usize] * bv[(p * n + c) as usize]).sum();
                prop_assert_eq!(got[c as usize][r as usize] as u32 as i32 as i64, want);
            }
        }
    }

    /// Load then store of a block is the identity inside the region's bounds.
    #[test]
    fn block_load_store_identity(es_log in 0u32..4, w_units in 1u32..5, h in 1u32..9, count in 1u32..3, n_log in 2u32..5, x in -4i64..24, y in -3i64..12) {
        let es = 1u32 << es_log;
        let w = w_units * (4 / es).max(1);
        let n = 1 << n_log;
        let region = Region { width: 64, height: 10, pitch: 72 };
        let mem: Vec<u8> = (0..72 * 10).map(|i| (i * 7 + 3) as u8).collect();
        let block = Block { elem_size: es, width: w, height: h, count };
        // Stay on element boundaries.
        let x = x.max(-4) ;
        let data = block_io::load(&mem, &region, &block, (x, y), n, LoadKind::Plain).unwrap();
        let mut out = vec![0u8; mem.len()];
        block_io::store(&mut out, &region, &block, (x, y), n, &data).unwrap();
        for row in 0..10i64 {
            for col in 0..(64 / es as i64) {
                let inside = (y..y + h as i64).contains(&row) && (x..x + (w * count) as i64).contains(&col);
                let at = (row as u64 * 72 + col as u64 * es as u64) as usize;
                let want = if inside { mem[at..at + es as usize].to_vec() } else { vec![0; es as usize] };
                prop_assert_eq!(&out[at..at + es as usize], &want[..]);
            }
        }
    }

    /// KHR MulAdd with signed components equals the naive i64 product.
    #[test]
    fn khr_mul_add_signed_equals_naive(m in 1u32..5, n in 1u32..5, k in 1u32..9, vals in proptest::collection::vec(-128i64..128, 200)) {
        let mk = |rows: u32, cols: u32, off: usize, bits: u32| Matrix { rows, cols, elem: Elem::Int { bits, signed: false }, data: (0..rows * cols).map(|i| vals[(i as usize + off) % vals.len()] as u64 & ((1u64 << bits) - 1)).collect() };
        let (a, b, c) = (mk(m, k, 0, 8), mk(k, n, 50, 8), mk(m, n, 120, 32));
        let r = mul_add_khr(&a, &b, &c, Elem::Int { bits: 32, signed: true }, khr::A_SIGNED | khr::B_SIGNED | khr::C_SIGNED | khr::RESULT_SIGNED).unwrap();
        for i in 0..m {
            for j in 0..n {
                let want: i64 = (0..k).map(|p| vals[((i * k + p) as usize) % 200] * vals[((p * n + j) as usize + 50) % 200]).sum::<i64>() + vals[((i * n + j) as usize + 120) % 200];
                prop_assert_eq!(r.data[(i * n + j) as usize] as u32 as i32 as i64, want);
            }
        }
    }

    /// The dot product reference wraps the exact result.
    #[test]
    fn dot_wraps_exact(a in proptest::collection::vec(0u64..256, 4), b in proptest::collection::vec(0u64..256, 4), width in prop_oneof![Just(8u32), Just(16), Just(32)]) {
        let exact: i64 = a.iter().zip(&b).map(|(x, y)| (*x as u8 as i8 as i64) * (*y as u8 as i8 as i64)).sum();
        prop_assert_eq!(dot(DotKind::S, &a, &b, 8, width), (exact as u64) & ((1u64 << width) - 1));
    }
}
