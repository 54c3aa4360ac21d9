use std::io::Write;

use super::{Conversation, render_value, resolve_quietly};
use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Print every key in force, with the layer it comes from, and the keys ignored
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    at: Conversation,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let resolved = resolve_quietly(ctx, args.at.id.as_deref())?;
    let mut rows: Vec<(String, String, String)> = resolved
        .list()
        .into_iter()
        .map(|(key, value, layer)| (key, render_value(&value), layer.origin.clone()))
        .collect();
    for item in &resolved.ignored {
        let note = format!("ignored: {}, {}", item.origin, item.reason());
        rows.push((item.key.clone(), render_value(&item.value), note));
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = ctx.ui.stdout();
    for (key, value, note) in rows {
        writeln!(out, "{key} = {value}  {}", ctx.ui.theme.dim(&format!("# {note}")))?;
    }
    Ok(())
}
