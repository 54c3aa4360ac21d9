use convo::render::{self, ShortIds};
use convo::store::subject;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Give a conversation a new title
///
/// One commit rewrites its meta.json; events are untouched. With one argument the active
/// conversation is renamed, and a status line says which. A title another conversation has
/// too is taken, with a warning: a shared title no longer names either one. When both sides
/// of a pull renamed it, the remote's title wins.
#[derive(clap::Args)]
#[command(allow_missing_positional = true)]
pub struct Args {
    /// Conversation id or title, or a unique prefix of either (default: the active one)
    id: Option<String>,
    /// The new title
    title: String,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let tx = store.transaction()?;
    let id = store.resolve_or_active(args.id.as_deref())?;
    let Some(renamed) = store.rename(tx, &id, &args.title, &ctx.clock)? else {
        ctx.note(&format!("{id} is already titled \"{}\"; nothing to do", args.title));
        return Ok(());
    };
    ctx.ui.committed(Some(&id), &renamed.fixed);
    // The shown ids' shortest unique prefixes depend only on their neighbours.
    let mut near = vec![id.clone()];
    near.extend(renamed.namesakes.iter().cloned());
    for named in near.clone() {
        near.extend(store.id_neighbours(&named)?);
    }
    let ids = ShortIds::new(near);
    let short = |id: &str| ids.short(id, render::Theme::default());
    if args.id.is_none() {
        // One argument is easily meant as a name with the title forgotten: say whose it was.
        ctx.note(&format!(
            "renamed the active conversation {}: {} -> {}",
            short(&id),
            subject::name(&id, renamed.old.as_deref()),
            subject::name(&id, Some(&args.title))
        ));
    }
    if !renamed.namesakes.is_empty() {
        let others: Vec<String> = renamed.namesakes.iter().map(|other| short(other)).collect();
        let (count, are) = match others.len() {
            1 => ("another conversation".to_owned(), "is"),
            n => (format!("{n} other conversations"), "are"),
        };
        ctx.ui.warning(&format!(
            "{count} {are} titled \"{}\" too ({}): the title alone names none of them now",
            args.title,
            others.join(", ")
        ));
    }
    Ok(())
}
