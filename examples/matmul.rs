//! A copyable example: a checked f16 matmul on the best device (or the CPU).
//!
//! `cargo run --release --example matmul [m n k]`

use matbridge::{AccType, DType, Matbridge, MatbridgeOptions, MatmulDesc};

fn main() -> anyhow::Result<()> {
    matbridge::runtime::loader_env::configure();
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let (m, n, k) = match args[..] {
        [m, n, k] => (m, n, k),
        _ => (256, 256, 256),
    };
    // The fastest path the machine has (the best GPU, else the CPU), with every device result
    // cross-checked against the CPU path (a seeded sample for large problems).
    let mb = Matbridge::with_options(&MatbridgeOptions { verify: true, ..Default::default() })?;

    let a: Vec<half::f16> = (0..m * k).map(|i| half::f16::from_f32(((i % 7) as f32 - 3.0) / 4.0)).collect();
    let b: Vec<half::f16> = (0..k * n).map(|i| half::f16::from_f32(((i % 5) as f32 - 2.0) / 2.0)).collect();
    // C = A * B, row-major, f16 inputs accumulated and stored in f32.
    let mut desc = MatmulDesc::new(m, n, k, DType::F16);
    desc.acc = AccType::F32;
    let (ta, tb) = (mb.tensor(&a)?, mb.tensor(&b)?);
    let mut tc = mb.zeros::<f32>(&[m, n])?;
    let run = mb.matmul(&desc, &ta, &tb, &mut tc)?;
    let c: Vec<f32> = tc.read()?;

    print!("{}: {} in {:.3} ms; c[0] = {}", mb.device_name(), run.path, run.time.as_secs_f64() * 1e3, c[0]);
    match &run.check {
        Some(report) => println!(", max abs error {:.3e} against the CPU: {}", report.max_abs_error, if report.pass { "pass" } else { "FAIL" }),
        None => println!(" (computed on the CPU)"),
    }
    Ok(())
}
