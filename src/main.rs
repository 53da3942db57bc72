//! The `matbridge` command-line program.

use anyhow::{bail, Context as _, Result};
use clap::{Parser, Subcommand};
use matbridge_runtime::{DeviceSelector, Instance, InstanceOptions};
use matbridge_translator::DeviceCaps;
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(name = "matbridge", version, about = "Vendor matrix SPIR-V and fast matmuls on any Vulkan device")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
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
    },
}

fn main() -> std::process::ExitCode {
    matbridge_runtime::loader_env::configure();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<std::process::ExitCode> {
    let ok = |r: Result<()>| r.map(|_| std::process::ExitCode::SUCCESS);
    match cli.command {
        Some(Command::Info { json }) => ok(info(json)),
        Some(Command::Translate { input, output, target, device, report }) => ok(translate(&input, &output, &target, device, report)),
        None => ok(info(false)),
    }
}

fn info(json: bool) -> Result<()> {
    let instance = Instance::new(&InstanceOptions::default()).context("creating the Vulkan instance")?;
    let devices = matbridge_runtime::enumerate_devices(&instance).context("enumerating Vulkan devices")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&devices)?);
    } else {
        for d in &devices {
            println!("{}", matbridge::cli_info::render_device(d));
        }
    }
    Ok(())
}

/// Resolves `--target`: a built-in profile, the live device, or a JSON capability file.
fn resolve_target(target: &str, device: Option<usize>) -> Result<DeviceCaps> {
    if let Some(caps) = DeviceCaps::builtin(target) {
        return Ok(caps);
    }
    if target == "device" || target.starts_with("device:") {
        let selector = match target.strip_prefix("device:") {
            Some(n) => DeviceSelector::parse(n),
            None => DeviceSelector::Auto,
        };
        let instance = Instance::new(&InstanceOptions::default()).context("creating the Vulkan instance for --target device")?;
        let devices = matbridge_runtime::enumerate_devices(&instance)?;
        return Ok(selector.choose(&devices)?.clone());
    }
    let path = Path::new(target);
    if path.exists() {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        return DeviceCaps::from_json(&text, device).with_context(|| format!("parsing the capability file {}", path.display()));
    }
    bail!(
        "unknown target `{target}`: use one of {}, device, device:N, or a JSON file from `matbridge info --json`",
        matbridge_translator::profile::BUILTIN_PROFILES.join(", ")
    )
}

fn read_module(input: &Path) -> Result<Vec<u32>> {
    let bytes = std::fs::read(input).with_context(|| format!("reading {}", input.display()))?;
    let ext = input.extension().and_then(|e| e.to_str()).unwrap_or("");
    let is_text = ext == "spvasm" || (ext != "spv" && bytes.len() >= 4 && bytes[..4] != [0x03, 0x02, 0x23, 0x07] && bytes[..4] != [0x07, 0x23, 0x02, 0x03] && bytes.iter().take(256).all(|b| b.is_ascii()));
    if is_text {
        let text = String::from_utf8(bytes).context("the .spvasm input is not UTF-8")?;
        // Assemble for the version the disassembly header names, if any.
        let env = text
            .lines()
            .find_map(|l| l.strip_prefix("; Version: "))
            .map(|v| format!("spv{}", v.trim()))
            .unwrap_or_else(|| "vulkan1.3".into());
        return matbridge_translator::tools::assemble(&text, &env).with_context(|| format!("assembling {}", input.display()));
    }
    let module = matbridge_translator::Module::from_bytes(&bytes).with_context(|| format!("reading {}", input.display()))?;
    Ok(module.to_words())
}

fn translate(input: &Path, output: &Path, target: &str, device: Option<usize>, report: bool) -> Result<()> {
    let caps = resolve_target(target, device)?;
    let words = read_module(input)?;
    let (out, rep) = matbridge_translator::translate(&words, &caps).with_context(|| format!("translating {} for {}", input.display(), caps.name))?;
    let bytes: Vec<u8> = out.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(output, bytes).with_context(|| format!("writing {}", output.display()))?;
    if report {
        println!("{}", serde_json::to_string_pretty(&rep)?);
    }
    Ok(())
}
