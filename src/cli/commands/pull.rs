use convo::ops::sync;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Fetch a remote and bring its conversations in, losing nothing
///
/// Fast-forwards when only the remote moved. When both sides changed, conversations changed
/// on one side take that side; a conversation appended to on both keeps the remote's line
/// under its id, and your local line becomes a fork (`forked_from` the common point), one line
/// of output per such conversation. A conversation removed there (`convo rm`) and left as it
/// was here is removed here too (`convo restore` brings it back); one you appended to stays.
/// When both sides renamed a conversation, the remote's title wins, and a line says so. The
/// active conversation is left as it is. What happened is said on stderr; -q says nothing
/// but errors.
#[derive(clap::Args)]
pub struct Args {
    /// The remote's name
    #[arg(default_value = "origin")]
    remote: String,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let progress = ctx.ui.progress();
    if convo::sync::lazy::lazy_remote(&store)?.is_some() {
        return lazy(ctx, &store, &args.remote);
    }
    let pulled = sync::pull(&store, &args.remote, progress, &ctx.clock)?;
    let outcome = pulled.integrated;
    // Status, as git's: on stderr, and nothing under -q.
    let mut lines = Vec::new();
    convo::render::pull::integrated(&mut lines, &outcome, &pulled.incoming)?;
    for line in String::from_utf8_lossy(&lines).lines() {
        ctx.note(line);
    }
    if let Some(landed) = outcome.landed() {
        ctx.ui.landed(landed);
    }
    Ok(())
}

/// A lazy store's pull (`clone --lazy`): the catalog, and the conversations fetched here
/// that changed there.
fn lazy(ctx: &Ctx, store: &convo::store::Store, remote: &str) -> Result<(), CommandError> {
    let pulled = convo::sync::lazy::pull(store, remote, &ctx.clock)?;
    for id in &pulled.updated {
        ctx.note(&format!("Updated {id} from {remote}"));
    }
    for (id, outcome) in &pulled.merged {
        ctx.note(&format!("Merged {id} from {remote}: it changed here and there since it was fetched"));
        let mut lines = Vec::new();
        convo::render::pull::details(&mut lines, outcome)?;
        for line in String::from_utf8_lossy(&lines).lines() {
            ctx.note(line);
        }
        if let Some(landed) = outcome.landed() {
            ctx.ui.landed(landed);
        }
    }
    for id in &pulled.kept {
        ctx.note(&format!("Kept {id} as it is here: it was never fetched from {remote}"));
    }
    if pulled.updated.is_empty() && pulled.merged.is_empty() && pulled.kept.is_empty() {
        ctx.note(&format!("Up to date ({} conversations listed by {remote})", pulled.listed));
    }
    Ok(())
}
