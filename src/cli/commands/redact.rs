use convo::ops::redact::{self, Target};

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Replace a secret with [REDACTED] in the commits not pushed yet
///
/// The one exception to append-only, for history that has not left the machine: every
/// commit reachable from HEAD and from no remote-tracking ref is rewritten, the text
/// replaced inside event strings (lines stay valid JSON), titles and commit messages. Then
/// the reflog is expired and unreachable objects pruned (`git reflog expire --expire=now
/// --all`, a repack and `git prune --expire=now`, each step on disk before the next), so the
/// secret is gone from this repository. Refused when
/// a remote already has a commit holding it: rotate the key instead. Needs the `git` binary.
#[derive(clap::Args)]
pub struct Args {
    /// The exact text to replace (repeatable; at least 4 characters each)
    #[arg(required_unless_present = "secrets", conflicts_with = "secrets")]
    text: Vec<String>,
    /// Replace what `convo push` refuses: the secrets its scan finds in the unpushed commits
    #[arg(long)]
    secrets: bool,
    /// With --secrets: the remote the push would go to
    #[arg(long, default_value = "origin", requires = "secrets")]
    remote: String,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let lock = store.lock()?;
    let target = if args.secrets { Target::Secrets { remote: args.remote.clone() } } else { Target::Texts(args.text) };
    let done = redact::redact(&store, &lock, &target, &ctx.clock)?;
    drop(lock);
    let Some(rewritten) = done.rewritten else {
        ctx.note(match (&target, done.texts) {
            (Target::Secrets { .. }, 0) => "Nothing to redact: the push scan finds no secret in the unpushed commits",
            _ => "Nothing to redact: no unpushed commit holds it",
        });
        return Ok(());
    };
    let short = |c: &dyn std::fmt::Display| super::short_hash(&c);
    let plural = |n: usize, word: &str| convo::render::plural(n as u64, word);
    ctx.note(&format!(
        "Redacted {} in {} of {} unpushed commits ({}): HEAD {} -> {}",
        plural(done.texts, if args.secrets { "secret" } else { "text" }),
        rewritten.changed,
        rewritten.commits,
        plural(rewritten.files, "file"),
        short(&rewritten.old_head),
        short(&rewritten.new_head),
    ));
    ctx.ui.landed(&rewritten.landed);
    match done.pruned {
        Ok(()) => ctx.note(
            "Expired the reflog and pruned the old objects (git reflog expire --expire=now --all; git repack; git prune --expire=now): \
             the old commits are gone from this repository",
        ),
        Err(why) => {
            ctx.ui.warning(&format!("the old commits are still in the repository ({why})"));
            ctx.ui.hint("run `git reflog expire --expire=now --all && git gc --prune=now` in the store");
        }
    }
    for finding in &done.left {
        ctx.ui.warning(&format!("still found: {}: {}", finding.place, finding.kind));
    }
    if !done.left.is_empty() {
        ctx.ui.hint("name the text itself: `convo redact TEXT`");
    }
    Ok(())
}
