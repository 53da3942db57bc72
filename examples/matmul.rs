//! A copyable example: a checked f16 matmul on the best device (or the CPU).
//!
//! `cargo run --release --example matmul [m n k]`

use matbridge::matmul::api::{DeviceChoice, Matbridge};
use matbridge::matmul::check::check;
use matbridge::matmul::HostData;
use matbridge::{AccType, DType, MatmulDesc};

fn main() -> anyhow::Result<()> {
    matbridge::runtime::loader_env::configure();
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let (m, n, k) = match args[..] {
        [m, n, k] => (m, n, k),
        _ => (256, 256, 256),
    };
    let mb = Matbridge::new(&DeviceChoice::Auto)?;
    let a: Vec<half::f16> = (0..m * k).map(|i| half::f16::from_f32(((i % 7) as f32 - 3.0) / 4.0)).collect();
    let b: Vec<half::f16> = (0..k * n).map(|i| half::f16::from_f32(((i % 5) as f32 - 2.0) / 2.0)).collect();
    let mut desc = MatmulDesc::new(m, n, k, DType::F16);
    desc.acc = AccType::F32;
    let (ta, tb) = (mb.tensor(&a)?, mb.tensor(&b)?);
    let mut tc = mb.zeros(DType::F32, m * n)?;
    let run = mb.matmul(&desc, &ta, &tb, &mut tc)?;
    let c = mb.read_host(&tc)?;
    let report = check(&desc, &HostData::from_slice(&a), &HostData::from_slice(&b), &HostData::from_f32(DType::F32, &vec![0.0; m * n]), &c, 1)?;
    println!("{}: {} in {:.3} ms, max abs error {:.3e}, {}", mb.device_name(), run.path, run.seconds * 1e3, report.max_abs_error, if report.pass { "pass" } else { "FAIL" });
    Ok(())
}
