//! A copyable example: a checked f16 matmul on the best device (or the CPU).
//!
//! `cargo run --release --example matmul [m n k]`

use matbridge::{AccType, DType, DeviceChoice, Matbridge, MatmulDesc};

fn main() -> anyhow::Result<()> {
    matbridge::runtime::loader_env::configure();
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let (m, n, k) = match args[..] {
        [m, n, k] => (m, n, k),
        _ => (256, 256, 256),
    };
    // The best Vulkan device, or the CPU when there is none.
    let mb = Matbridge::new(&DeviceChoice::Auto)?;
    // Cross-check every device result against the CPU path (a seeded sample for large problems).
    mb.set_verify(true);

    let a: Vec<half::f16> = (0..m * k).map(|i| half::f16::from_f32(((i % 7) as f32 - 3.0) / 4.0)).collect();
    let b: Vec<half::f16> = (0..k * n).map(|i| half::f16::from_f32(((i % 5) as f32 - 2.0) / 2.0)).collect();
    // C = A * B, row-major, f16 inputs accumulated and stored in f32.
    let mut desc = MatmulDesc::new(m, n, k, DType::F16);
    desc.acc = AccType::F32;
    let (ta, tb) = (mb.tensor(&a)?, mb.tensor(&b)?);
    let mut tc = mb.zeros(DType::F32, m * n)?;
    let run = mb.matmul(&desc, &ta, &tb, &mut tc)?;
    let c: Vec<f32> = mb.read(&tc)?;

    print!("{}: {} in {:.3} ms; c[0] = {}", mb.device_name(), run.path, run.time.as_secs_f64() * 1e3, c[0]);
    match &run.check {
        Some(report) => println!(", max abs error {:.3e} against the CPU: {}", report.max_abs_error, if report.pass { "pass" } else { "FAIL" }),
        None => println!(" (computed on the CPU)"),
    }
    Ok(())
}
