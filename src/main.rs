//! The `matbridge` command-line program.

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand};
use matbridge::{out, outln};
use matbridge_runtime::{Instance, InstanceOptions};
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(name = "matbridge", version, about = "Vendor matrix SPIR-V and fast matmuls on any Vulkan device")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Use every cooperative-matrix shape the driver lists, including those `matbridge probe`
    /// recorded as wrong or slower than emulation.
    #[arg(long, global = true)]
    force_native: bool,
    /// The record of distrusted shapes (default: `matbridge/distrusted-shapes.json` in the
    /// user's cache folder).
    #[arg(long, global = true)]
    distrust_record: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// List every Vulkan device and its capabilities.
    Info {
        /// Print a JSON array, one object per device.
        #[arg(long)]
        json: bool,
    },
    /// Translate a SPIR-V module (binary, or .spvasm text with SPIRV-Tools) for a target.
    Translate {
        /// Input module (.spv, or .spvasm).
        input: PathBuf,
        /// Output file; nothing is written when translation fails.
        #[arg(short, long)]
        output: PathBuf,
        /// lavapipe, swiftshader, h100, generic-subgroup, device, device:N, or a JSON file from
        /// `matbridge info --json`.
        #[arg(long, default_value = "device")]
        target: String,
        /// Which device of a JSON array file.
        #[arg(long)]
        device: Option<usize>,
        /// Print which passes ran and what they rewrote, as JSON.
        #[arg(long)]
        report: bool,
        /// Specialize first: specialization constant ID gets VALUE (an integer, a float with a
        /// `.` or exponent, `true` or `false`), as a pipeline would give it; repeatable.
        #[arg(long = "spec", value_name = "ID=VALUE", value_parser = parse_spec)]
        spec: Vec<(u32, u32)>,
        /// The sub-group size the module's entry points are written for (a pipeline's required
        /// size): emulated where the target's own size differs and cannot be requested.
        #[arg(long)]
        subgroup_size: Option<u32>,
        /// Translate only this kernel of an OpenCL program (the others and what only they use
        /// go), as `Context::load_kernel` does.
        #[arg(long, value_name = "NAME")]
        kernel: Option<String>,
    },
    /// Launch one kernel as a launch file (TOML) describes it; exit status 1 when an output
    /// differs from its expected file.
    Run {
        /// The launch file (see README: "Launch files").
        launch: PathBuf,
        /// Device index or name substring (default: the best device).
        #[arg(long)]
        device: Option<String>,
    },
    /// Run, time and optionally check one matmul (the default command: a checked demo).
    Matmul(MatmulArgs),
    /// Check every cooperative-matrix shape the device lists against the CPU and time it
    /// against matbridge's emulation; record the shapes not to use (wrong, or slower).
    Probe {
        /// Device index or name substring (default: the best device).
        #[arg(long)]
        device: Option<String>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Check results only, without timing.
        #[arg(long)]
        no_timing: bool,
        /// Do not update the record.
        #[arg(long)]
        dry_run: bool,
    },
    /// Time a table of sizes and dtypes.
    Bench {
        #[arg(long)]
        device: Option<String>,
        /// Comma-separated square sizes (default 256..8192 on GPUs, up to 1024 on CPU devices).
        #[arg(long, value_delimiter = ',')]
        sizes: Option<Vec<usize>>,
        /// Comma-separated dtype[:acc] entries, e.g. `f16:f32,s8`.
        #[arg(long, value_delimiter = ',')]
        dtypes: Option<Vec<String>>,
        #[arg(long, default_value_t = 20)]
        iters: u32,
        #[arg(long)]
        json: bool,
        /// Store B transposed (k contiguous), the layout int8 GEMM libraries prefer.
        #[arg(long)]
        tb: bool,
        /// Instead of the table: the device's cooperative-matrix throughput ceiling (register-only
        /// multiply-adds), the bound for any GEMM on that path.
        #[arg(long)]
        peak: bool,
        /// Instead of the table: the subgroup path against the naive per-element kernel, f32 at
        /// this size.
        #[arg(long)]
        naive_baseline: Option<usize>,
    },
}

#[derive(clap::Args, Clone)]
struct MatmulArgs {
    #[arg(long, default_value_t = 1024)]
    m: usize,
    #[arg(long, default_value_t = 1024)]
    n: usize,
    #[arg(long, default_value_t = 1024)]
    k: usize,
    /// f32, f16, bf16, s8, u8
    #[arg(long, default_value = "f16")]
    dtype: String,
    /// f32, f16 or s32 (default: f32 for floats, s32 for integers)
    #[arg(long)]
    acc: Option<String>,
    /// Output type (default: f32 for floats, f16 with --acc f16, s32 for integers)
    #[arg(long)]
    out: Option<String>,
    /// Transpose A (op(A) = A^T, A stored k x m).
    #[arg(long)]
    ta: bool,
    /// Transpose B.
    #[arg(long)]
    tb: bool,
    #[arg(long, default_value_t = 1)]
    batch: usize,
    /// Device index, name substring, or `cpu` (default: best device, else the CPU).
    #[arg(long)]
    device: Option<String>,
    #[arg(long, default_value_t = 10)]
    iters: u32,
    /// Compare with the CPU reference; exit status 1 when over tolerance.
    #[arg(long)]
    check: bool,
    #[arg(long)]
    json: bool,
}

impl Default for MatmulArgs {
    fn default() -> Self {
        MatmulArgs { m: 1024, n: 1024, k: 1024, dtype: "f16".into(), acc: None, out: None, ta: false, tb: false, batch: 1, device: None, iters: 10, check: true, json: false }
    }
}

fn main() -> std::process::ExitCode {
    matbridge_runtime::loader_env::configure();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        // The reader of our output went away (`| head`): nothing is left to tell it.
        Err(e) if e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_chain(&e));
            std::process::ExitCode::from(2)
        }
    }
}

/// The error and its causes, `: `-joined, leaving out a cause whose text the message before it
/// already ends with (library errors print their source in their own message).
fn error_chain(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.is_empty() {
            text = part;
        } else if !text.ends_with(&part) {
            text = format!("{text}: {part}");
        }
    }
    text
}

fn run(cli: Cli) -> Result<std::process::ExitCode> {
    let ok = |r: Result<()>| r.map(|_| std::process::ExitCode::SUCCESS);
    let record = cli.distrust_record.clone().or_else(|| dirs::cache_dir().map(|d| d.join("matbridge").join("distrusted-shapes.json")));
    // Read only by the commands that open a device with it (`probe` keeps the record itself).
    let options = || context_options(record.as_deref(), cli.force_native);
    match cli.command {
        Some(Command::Info { json }) => ok(info(json)),
        Some(Command::Translate { input, output, target, device, report, spec, subgroup_size, kernel }) => {
            ok(translate(&input, &output, (&target, device), report, (&spec, subgroup_size, kernel.as_deref()), &options()?))
        }
        Some(Command::Matmul(args)) => matmul(&args, &options()?),
        Some(Command::Probe { device, json, no_timing, dry_run }) => probe(device.as_deref(), json, no_timing, if dry_run { None } else { record.as_deref() }),
        Some(Command::Run { launch, device }) => run_launch(&launch, device.as_deref(), &options()?),
        Some(Command::Bench { device, naive_baseline: Some(size), iters, .. }) => ok(naive_baseline(device.as_deref(), size, iters, &options()?)),
        Some(Command::Bench { device, peak: true, json, .. }) => ok(peak(device.as_deref(), json, &options()?)),
        Some(Command::Bench { device, sizes, dtypes, iters, json, tb, .. }) => ok(bench(device.as_deref(), sizes, dtypes, iters, json, tb, &options()?)),
        None => matmul(&MatmulArgs::default(), &options()?),
    }
}

/// How the GPU commands open their device: the environment's options, with the distrust
/// record unless `force_native`.
fn context_options(record: Option<&Path>, force_native: bool) -> Result<matbridge_runtime::ContextOptions> {
    let distrust = match record {
        Some(path) if !force_native => Some(matbridge_runtime::DistrustRecord::load(path).with_context(|| format!("reading the distrust record {}", path.display()))?),
        _ => None,
    };
    Ok(matbridge_runtime::ContextOptions { distrust, ..matbridge_runtime::ContextOptions::from_env() })
}

/// The matmul API on `--device` (else `MATBRIDGE_DEVICE`, else the best), with the
/// environment's options and `context`.
fn open_matbridge(device: Option<&str>, context: &matbridge_runtime::ContextOptions) -> Result<matbridge::Matbridge> {
    let mut options = matbridge::MatbridgeOptions::from_env();
    if let Some(d) = device {
        options.device = matbridge::DeviceChoice::parse(d);
    }
    options.context = context.clone();
    Ok(matbridge::Matbridge::with_options(&options)?)
}

/// `--device`, else `MATBRIDGE_DEVICE`, else the best device.
fn selector(device: Option<&str>) -> matbridge_runtime::DeviceSelector {
    device.map(matbridge_runtime::DeviceSelector::parse).or_else(matbridge_runtime::DeviceSelector::from_env).unwrap_or(matbridge_runtime::DeviceSelector::Auto)
}

/// `matbridge probe`: exit status 1 when a listed shape computes wrong results.
fn probe(device: Option<&str>, json: bool, no_timing: bool, record: Option<&Path>) -> Result<std::process::ExitCode> {
    // The probe sees the driver's whole list.
    let ctx = matbridge_runtime::Context::new_with_options(&selector(device), &matbridge_runtime::ContextOptions::from_env()).context("opening the Vulkan device")?;
    let options = matbridge::probe::ProbeOptions { time: !no_timing, ..Default::default() };
    let report = matbridge::probe::probe(&ctx, &options)?;
    let distrusted = report.distrusted();
    if let Some(path) = record {
        let mut all = matbridge_runtime::DistrustRecord::load(path).with_context(|| format!("reading {}", path.display()))?;
        all.set_device(ctx.caps(), distrusted.clone());
        all.save(path).with_context(|| format!("writing {}", path.display()))?;
    }
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        out!("{}", matbridge::cli_probe::render_probe(&report, record))?;
    }
    let wrong = report.shapes.iter().any(|s| s.verdict == matbridge::probe::Verdict::WrongResults || s.emulation_mismatch.is_some());
    Ok(if wrong { std::process::ExitCode::from(1) } else { std::process::ExitCode::SUCCESS })
}

fn info(json: bool) -> Result<()> {
    let instance = Instance::new(&InstanceOptions::from_env()).context("creating the Vulkan instance")?;
    let devices = matbridge_runtime::enumerate_devices(&instance).context("enumerating Vulkan devices")?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&devices)?)?;
    } else {
        for d in &devices {
            outln!("{}", matbridge::cli_info::render_device(d))?;
        }
    }
    Ok(())
}

fn read_module(input: &Path) -> Result<Vec<u32>> {
    matbridge::cli_run::read_module(input)
}

fn run_launch(launch: &Path, device: Option<&str>, options: &matbridge_runtime::ContextOptions) -> Result<std::process::ExitCode> {
    let ctx = matbridge_runtime::Context::new_with_options(&selector(device), options).context("opening the Vulkan device")?;
    let ok = matbridge::cli_run::run(&ctx, launch)?;
    Ok(if ok { std::process::ExitCode::SUCCESS } else { std::process::ExitCode::from(1) })
}

/// `ID=VALUE` of `--spec`: the constant's 32 bits.
fn parse_spec(s: &str) -> std::result::Result<(u32, u32), String> {
    let (id, value) = s.split_once('=').ok_or_else(|| format!("`{s}` is not ID=VALUE"))?;
    let id = id.trim().parse::<u32>().map_err(|_| format!("`{id}` is not a specialization constant id"))?;
    let value = value.trim();
    let bits = match value {
        "true" => 1,
        "false" => 0,
        v if v.contains(['.', 'e', 'E']) && !v.starts_with("0x") => v.parse::<f32>().map_err(|_| format!("`{v}` is not a number"))?.to_bits(),
        v => match v.strip_prefix("0x") {
            Some(hex) => u32::from_str_radix(hex, 16).map_err(|_| format!("`{v}` is not a 32-bit value"))?,
            None => v.parse::<u32>().or_else(|_| v.parse::<i32>().map(|i| i as u32)).map_err(|_| format!("`{v}` is not a 32-bit value"))?,
        },
    };
    Ok((id, bits))
}

fn translate(
    input: &Path,
    output: &Path,
    (target, device): (&str, Option<usize>),
    report: bool,
    (spec, subgroup_size, kernel): (&[(u32, u32)], Option<u32>, Option<&str>),
    options: &matbridge_runtime::ContextOptions,
) -> Result<()> {
    let mut caps = matbridge_runtime::resolve_target(target, device)?;
    if let Some(record) = &options.distrust {
        record.apply_to(&mut caps);
    }
    let mut words = read_module(input)?;
    if kernel.is_some() || subgroup_size.is_some() {
        let mut module = matbridge_translator::Module::from_words(&words)?;
        if let Some(name) = kernel {
            matbridge_translator::kernel::keep_entry_point(&mut module, name)?;
        }
        if let Some(size) = subgroup_size {
            let entries: Vec<(String, Option<u32>)> = module.entry_points.iter().filter_map(|e| Some((e.string(2)?, e.word_opt(0)))).collect();
            for (name, model) in entries {
                if model == Some(spirv::ExecutionModel::Kernel as u32) {
                    matbridge_translator::kernel::require_subgroup_size(&mut module, &name, size)?;
                } else if model == Some(spirv::ExecutionModel::GLCompute as u32) {
                    matbridge_translator::kernel::require_shader_subgroup_size(&mut module, &name, size)?;
                }
            }
        }
        words = module.to_words();
    }
    if let Some(size) = subgroup_size {
        // A size the target can request is the one its code (the emulation) is written for.
        if caps.subgroup_size_control && (caps.min_subgroup_size..=caps.max_subgroup_size).contains(&size) {
            caps.subgroup_size = size;
        }
    }
    let (out, rep) = matbridge_translator::translate_specialized(&words, &caps, spec).with_context(|| format!("translating {} for {}", input.display(), caps.name))?;
    // The translator's outputs pass spirv-val (its tests check every pass); where SPIRV-Tools
    // is installed, an output that does not is not written: the input's fault where it fails
    // too, else a translator bug.
    if matbridge_translator::tools::find("spirv-val").is_some() {
        use matbridge_translator::tools::InvalidTranslation;
        match matbridge_translator::tools::validate_translation(&words, &out, "vulkan1.3") {
            Ok(()) => {}
            Err(InvalidTranslation::Input { env, error, output }) => {
                anyhow::bail!("translating {}: the input fails spirv-val ({env}), which the translator does not repair: {error}\nits translation for {} fails: {output}", input.display(), caps.name)
            }
            Err(InvalidTranslation::Output(e)) => {
                return Err(e).with_context(|| format!("translating {} for {}: the output fails spirv-val (a translator bug; please report it with the input)", input.display(), caps.name))
            }
        }
    }
    let bytes: Vec<u8> = out.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(output, bytes).with_context(|| format!("writing {}", output.display()))?;
    if report {
        outln!("{}", serde_json::to_string_pretty(&rep)?)?;
    }
    Ok(())
}

fn parse_dtype(s: &str) -> Result<matbridge::DType> {
    matbridge::DType::parse(s).with_context(|| format!("unknown dtype `{s}` (f32, f16, bf16, s8, u8)"))
}

fn parse_acc(s: &str) -> Result<matbridge::AccType> {
    matbridge::AccType::parse(s).with_context(|| format!("unknown accumulator `{s}` (f32, f16, s32)"))
}

fn matmul(args: &MatmulArgs, context: &matbridge_runtime::ContextOptions) -> Result<std::process::ExitCode> {
    use matbridge::cli_matmul::*;
    let mb = open_matbridge(args.device.as_deref(), context)?;
    let options = MatmulOptions {
        m: args.m,
        n: args.n,
        k: args.k,
        batch: args.batch,
        dtype: parse_dtype(&args.dtype)?,
        acc: args.acc.as_deref().map(parse_acc).transpose()?,
        out: args.out.as_deref().map(parse_dtype).transpose()?,
        ta: args.ta,
        tb: args.tb,
        iters: args.iters,
        check: args.check,
    };
    let r = run_matmul(&mb, &options)?;
    if args.json {
        outln!("{}", serde_json::to_string(&r)?)?;
    } else {
        outln!("{}", describe(&r))?;
    }
    Ok(if r.check == Some("fail") { std::process::ExitCode::from(1) } else { std::process::ExitCode::SUCCESS })
}

fn bench(device: Option<&str>, sizes: Option<Vec<usize>>, dtypes: Option<Vec<String>>, iters: u32, json: bool, tb: bool, context: &matbridge_runtime::ContextOptions) -> Result<()> {
    use matbridge::cli_matmul::*;
    let mb = open_matbridge(device, context)?;
    let sizes = sizes.unwrap_or_else(|| bench_sizes(&mb));
    let types: Vec<(matbridge::DType, Option<matbridge::AccType>)> = match dtypes {
        None => BENCH_TYPES.iter().map(|(d, a, _)| (*d, Some(*a))).collect(),
        Some(list) => list
            .iter()
            .map(|e| {
                let mut parts = e.split(':');
                let d = parse_dtype(parts.next().unwrap_or(""))?;
                let a = parts.next().map(parse_acc).transpose()?;
                Ok((d, a))
            })
            .collect::<Result<_>>()?,
    };
    let bar = indicatif::ProgressBar::new((sizes.len() * types.len()) as u64);
    if json {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let mut results = Vec::new();
    for &(dtype, acc) in &types {
        for &s in &sizes {
            bar.set_message(format!("{dtype} {s}"));
            let options = MatmulOptions { m: s, n: s, k: s, batch: 1, dtype, acc, out: None, ta: false, tb, iters, check: s <= 2048 };
            match run_matmul(&mb, &options) {
                Ok(r) => {
                    if !json {
                        if bar.is_hidden() {
                            outln!("{}", describe(&r))?;
                        } else {
                            bar.println(describe(&r));
                        }
                    }
                    results.push(r);
                }
                Err(e) if bar.is_hidden() => eprintln!("{dtype} {s}: {e}"),
                Err(e) => bar.println(format!("{dtype} {s}: {e}")),
            }
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    if json {
        outln!("{}", serde_json::to_string_pretty(&results)?)?;
    }
    Ok(())
}

fn peak(device: Option<&str>, json: bool, context: &matbridge_runtime::ContextOptions) -> Result<()> {
    let mb = open_matbridge(device, context)?;
    let peaks = mb.coop_peak()?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&peaks)?)?;
    } else if peaks.is_empty() {
        outln!("{}: no cooperative-matrix shapes to measure", mb.device_name())?;
    } else {
        for p in &peaks {
            outln!("{} cooperative-matrix ceiling {}: {:.1} T(FL)OP/s", mb.device_name(), p.shape, p.tops)?;
        }
    }
    Ok(())
}

fn naive_baseline(device: Option<&str>, size: usize, iters: u32, context: &matbridge_runtime::ContextOptions) -> Result<()> {
    use matbridge::cli_matmul::*;
    let mb = open_matbridge(device, context)?;
    let (naive, sub) = naive_vs_subgroup(&mb, size, iters)?;
    let flops = 2.0 * (size as f64).powi(3);
    outln!(
        "{} f32 {size}^3: naive per-element kernel {:.3} ms ({:.2} GFLOP/s), subgroup path {:.3} ms ({:.2} GFLOP/s): {:.1}x",
        mb.device_name(),
        naive * 1e3,
        flops / naive / 1e9,
        sub * 1e3,
        flops / sub / 1e9,
        naive / sub
    )?;
    Ok(())
}
