use std::io::Write;

use super::{Conversation, render_value, resolve};
use crate::cli::Ctx;
use crate::cli::command_error::{CommandError, Kind};

/// Print the value of KEY in force
#[derive(clap::Args)]
pub struct Args {
    /// The key, e.g. compaction.keep_last
    key: String,
    #[command(flatten)]
    at: Conversation,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let resolved = resolve(ctx, args.at.id.as_deref())?;
    let key = &args.key;
    let (value, _) =
        resolved.get(key).ok_or_else(|| CommandError::new(Kind::NotFound, format!("`{key}` is not set")))?;
    writeln!(ctx.ui.stdout(), "{}", render_value(&value))?;
    Ok(())
}
