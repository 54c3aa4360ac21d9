use std::io::IsTerminal;

use convo::sync;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Download a remote's commits without changing any conversation
#[derive(clap::Args)]
pub struct Args {
    /// The remote's name
    #[arg(default_value = "origin")]
    remote: String,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    sync::fetch(&store, &args.remote, std::io::stderr().is_terminal() && !ctx.ui.quiet)?;
    Ok(())
}
