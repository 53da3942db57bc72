//! CPU f32 GEMM throughput beside numpy's matmul (OpenBLAS) in the same run.
//!
//! `cargo bench --bench cpu_gemm` (numpy must be importable by `python3`).

use matbridge::matmul::cpu;
use matbridge::matmul::{DType, HostData, MatmulDesc};
use std::process::Command;
use std::time::Instant;

fn numpy_gflops(n: usize, reps: usize) -> Option<f64> {
    let script = format!(
        "import numpy as np, time\nn={n}\na=np.random.rand(n,n).astype(np.float32)\nb=np.random.rand(n,n).astype(np.float32)\na@b\nbest=1e9\nfor _ in range({reps}):\n    t=time.perf_counter(); a@b; best=min(best, time.perf_counter()-t)\nprint(2*n**3/best/1e9)"
    );
    let out = Command::new("python3").args(["-c", &script]).output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn main() {
    for n in [1024usize, 2048] {
        let reps = if n <= 1024 { 10 } else { 4 };
        let desc = MatmulDesc::new(n, n, n, DType::F32);
        let a = HostData::from_f32(DType::F32, &(0..n * n).map(|i| (i % 13) as f32 * 0.1).collect::<Vec<_>>());
        let b = HostData::from_f32(DType::F32, &(0..n * n).map(|i| (i % 7) as f32 * 0.2).collect::<Vec<_>>());
        let mut c = HostData::from_f32(DType::F32, &vec![0.0; n * n]);
        cpu::matmul(&desc, &a, &b, &mut c).expect("cpu matmul");
        let mut best = f64::MAX;
        for _ in 0..reps {
            let t = Instant::now();
            cpu::matmul(&desc, &a, &b, &mut c).expect("cpu matmul");
            best = best.min(t.elapsed().as_secs_f64());
        }
        let ours = desc.flops() / best / 1e9;
        match numpy_gflops(n, reps) {
            Some(np) => println!("f32 {n}^3: matbridge cpu {ours:.1} GFLOP/s, numpy {np:.1} GFLOP/s, ratio {:.2}", ours / np),
            None => println!("f32 {n}^3: matbridge cpu {ours:.1} GFLOP/s (numpy not available)"),
        }
    }
}
