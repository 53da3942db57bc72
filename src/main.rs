//! The `matbridge` command-line program.

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand};
use matbridge_runtime::{Instance, InstanceOptions};

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
}

fn main() -> Result<()> {
    matbridge_runtime::loader_env::configure();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Info { json }) => info(json),
        None => info(false),
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
