use convo::render;
use convo::store::Mend;

use crate::cli::Ctx;
use crate::cli::command_error::{CommandError, Kind};

/// Check the store's integrity
///
/// Every event file parses, event ids are unique within a conversation, every tool result
/// follows its tool call, and the working tree and index match HEAD. Problems are listed on
/// stdout, one per line; the exit status is 1 if there are any.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(ctx: &Ctx, _args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    // What a power cut left of writes never acknowledged goes first: `git fsck` would
    // report it, and it is no one's data.
    let torn = store.remove_torn_objects()?;
    for id in &torn.removed {
        ctx.note(&format!("removed torn object {id}: unreachable, left by a write a crash interrupted"));
    }
    let mut problems = store.fsck()?;
    for id in &torn.reachable {
        problems.push(convo::store::Problem {
            path: format!(".git/objects/{}/{}", &id[..2], &id[2..]),
            message: "object is empty or torn, and history reaches it: the store is corrupt (written without store.fsync, or the disk lost it)".into(),
            mend: None,
        });
    }
    let mut out = crate::cli::ui::Output::stdout();
    render::problems(out.writer(), &problems)?;
    out.finish()?;
    if problems.is_empty() {
        let n = store.conversation_ids()?.len();
        ctx.note(&format!("checked {n} conversation{}: no problems", if n == 1 { "" } else { "s" }));
        Ok(())
    } else {
        let n = problems.len();
        let mut error =
            CommandError::new(Kind::CheckFailed, format!("{n} problem{} found", if n == 1 { "" } else { "s" }));
        // The top-level paths to restore (`conversations`, `convo.toml`), so the command
        // given names only what HEAD holds.
        let mut restore: Vec<&str> = problems
            .iter()
            .filter(|p| p.mend == Some(Mend::RestoreFile))
            .map(|p| p.path.split('/').next().unwrap_or(&p.path))
            .collect();
        restore.sort_unstable();
        restore.dedup();
        if !restore.is_empty() {
            error = error.hint(format!(
                "`git checkout HEAD -- {}` in the store restores the files HEAD holds \
                 (an edit made there by hand is lost: conversations change through convo)",
                restore.join(" ")
            ));
        }
        if problems.iter().any(|p| p.mend == Some(Mend::RebuildIndex)) {
            error = error
                .hint("the index is git's copy of HEAD's file list, nothing of its own: `git reset --quiet` in the store rebuilds it");
        }
        Err(error)
    }
}
