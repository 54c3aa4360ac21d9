use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Remove conversations from the store (their history stays)
///
/// One commit takes their folders out of the tree: they no longer list or resolve, and the
/// removal travels through push and pull like any commit. Nothing leaves history: `convo
/// restore ID` brings one back as it was. A conversation's subagent conversations imported
/// on this machine go with it, in the same commit; one that only names it as its parent (as
/// a pull can bring) is kept and listed. If the active conversation is removed, none is
/// active afterwards.
#[derive(clap::Args)]
pub struct Args {
    /// Conversation ids or titles, or unique prefixes of either
    #[arg(required = true)]
    ids: Vec<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let tx = store.transaction()?;
    // Every name is resolved before anything is written: one unknown name removes nothing.
    let mut ids = args.ids.iter().map(|q| store.resolve(q)).collect::<Result<Vec<_>, _>>()?;
    // A subagent's work is part of its parent's: left behind it would list as an orphan.
    // Only links captured here: pulled data does not choose what this removes.
    let family = store.subagents_of(&ids)?;
    let subagents = family.captured;
    ids.extend(subagents.iter().cloned());
    let fixed = store.remove(tx, &ids, &ctx.clock)?;
    let single = (ids.len() == subagents.len() + 1).then(|| ids[0].as_str());
    ctx.ui.committed(single, &fixed);
    if !subagents.is_empty() {
        let n = subagents.len();
        let what = if n == 1 { "subagent conversation" } else { "subagent conversations" };
        ctx.ui.status(&format!("Also removed {n} {what}: {}", subagents.join(", ")));
    }
    if !family.claimed.is_empty() {
        let n = family.claimed.len();
        let what = if n == 1 { "conversation" } else { "conversations" };
        ctx.ui.status(&format!(
            "Kept {n} {what} naming a removed one as parent but not imported here: {} (`convo rm ID` removes one)",
            family.claimed.join(", ")
        ));
    }
    ctx.note(&match single {
        Some(id) => format!("`convo restore {id}` brings it back"),
        None => "`convo restore ID` brings one back; `convo restore --list` lists them".to_owned(),
    });
    Ok(())
}
