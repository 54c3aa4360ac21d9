use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use convo::ops::import::{self, Followed};
use convo::ops::opencode;
use convo::ops::watch::Watch;

use convo::render::plural;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Set by SIGINT, SIGTERM and SIGHUP: finish what was seen, then exit.
static STOP: AtomicBool = AtomicBool::new(false);

/// Follow agent session folders and import each session as it grows
///
/// Watches the folders (default: ~/.claude/projects, ~/.codex/sessions and Gemini CLI's
/// ~/.gemini/tmp, or $GEMINI_CLI_HOME/.gemini/tmp; those that exist) for new and growing
/// .jsonl session files, and imports each as `import --follow` does once it has been quiet
/// for a moment: one commit per change. opencode's database
/// ($XDG_DATA_HOME/opencode/opencode.db, default ~/.local/share/opencode/opencode.db) is
/// followed too, as `import DB` reads it: what is new in each of its sessions. Files there
/// already are brought up to date first. One status line on a terminal. Ctrl-C (or SIGTERM)
/// imports what was seen, then exits 0. --once does one sweep and exits (for cron).
#[derive(clap::Args)]
pub struct Args {
    /// Folders (or opencode databases) to watch (default: ~/.claude/projects,
    /// ~/.codex/sessions, ~/.gemini/tmp, ~/.local/share/opencode/opencode.db)
    dirs: Vec<PathBuf>,
    /// One sweep: bring every session up to date, then exit
    #[arg(long)]
    once: bool,
    /// Milliseconds a file must stay unchanged before it is imported
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    quiet_ms: u64,
    /// Seconds between scans for changes the file system did not report
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    poll: u64,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let (dirs, databases): (Vec<PathBuf>, Vec<PathBuf>) = if args.dirs.is_empty() {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        // Gemini CLI keeps its folder under GEMINI_CLI_HOME when that is set, as its home.
        let gemini = std::env::var_os("GEMINI_CLI_HOME").filter(|h| !h.is_empty()).map_or(home.clone(), PathBuf::from);
        // opencode keeps its database in XDG's data folder.
        let data = std::env::var_os("XDG_DATA_HOME")
            .filter(|h| !h.is_empty())
            .map_or_else(|| home.join(".local/share"), PathBuf::from);
        let dirs = [home.join(".claude/projects"), home.join(".codex/sessions"), gemini.join(".gemini/tmp")]
            .into_iter()
            .filter(|d| d.is_dir())
            .collect();
        (dirs, [opencode::database_in(&data)].into_iter().filter(|d| d.is_file()).collect())
    } else {
        args.dirs.iter().cloned().partition(|d| !(d.is_file() && opencode::is_database(d)))
    };
    if let Some(missing) = dirs.iter().find(|d| !d.is_dir()) {
        return Err(CommandError::input(format!("{}: not a folder or an opencode database", missing.display())));
    }
    if dirs.is_empty() && databases.is_empty() {
        return Err(CommandError::input(
            "no session folders to watch (~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp, ~/.local/share/opencode/opencode.db)",
        )
        .hint("name the folders: convo watch DIR..."));
    }
    let store = ctx.open_store_for_write()?;
    let quiet = Duration::from_millis(args.quiet_ms);
    let mut watch = Watch::new(dirs.clone(), databases.clone(), quiet, Instant::now());
    let follow_due = |watch: &mut Watch, all: bool| -> Result<(), CommandError> {
        for path in watch.due(Instant::now(), all) {
            if watch.is_database(&path) {
                follow_database(ctx, &store, &path);
                continue;
            }
            let options = import::Options { title: None, again: false };
            match import::follow(&store, &path, None, &options, &ctx.clock) {
                Ok(Followed::Started(done)) => {
                    let events: u64 = done.conversations.iter().map(|(_, s)| s.events).sum();
                    ctx.ui.status(&format!("{}: new, {}", path.display(), plural(events, "event")));
                }
                Ok(Followed::Grew { added, new_parts, .. }) => {
                    ctx.ui.status(&format!("{}: +{}", path.display(), plural(added + new_parts, "event")));
                }
                Ok(Followed::Unchanged { .. }) => {}
                Ok(Followed::TakenOver { id, .. }) => {
                    ctx.ui.status(&format!("{}: imported whole before, as {id}; followed from here", path.display()));
                }
                Err(e) if e.is_not_a_session() => {}
                // One bad file never stops the watch: said, and left.
                Err(e) => ctx.ui.warning(&format!("{} (left as it is)", CommandError::from(e).message)),
            }
        }
        Ok(())
    };
    if args.once {
        return follow_due(&mut watch, true);
    }

    // ctrlc's `termination` feature adds SIGTERM and SIGHUP (a closed terminal) to SIGINT.
    // Without a handler the first signal would kill the watch mid-import.
    if let Err(e) = ctrlc::set_handler(|| STOP.store(true, Ordering::SeqCst)) {
        ctx.ui.warning(&format!("Ctrl-C will stop the watch without importing what it saw last ({e})"));
    }
    let (send, events) = std::sync::mpsc::channel::<notify::Result<notify::Event>>();
    // inotify where it works; scans alone (every --poll seconds) where it does not.
    let watcher = notify::recommended_watcher(send).ok().and_then(|mut w| {
        use notify::Watcher as _;
        let folders = dirs.iter().all(|d| w.watch(d, notify::RecursiveMode::Recursive).is_ok());
        // A database's folder: the database and its write-ahead log change there.
        let databases = databases
            .iter()
            .filter_map(|d| d.parent())
            .all(|d| w.watch(d, notify::RecursiveMode::NonRecursive).is_ok());
        (folders && databases).then_some(w)
    });
    if watcher.is_none() {
        ctx.ui.warning("the file system reports no changes here: scanning the folders instead");
    }
    let names: Vec<String> = dirs.iter().chain(&databases).map(|d| d.display().to_string()).collect();
    let poll = Duration::from_secs(args.poll.max(1));
    let mut last_scan = Instant::now();
    let spinner = crate::cli::ui::spinner(ctx.ui.quiet, format!("watching {}", names.join(", ")));
    while !STOP.load(Ordering::SeqCst) {
        match events.recv_timeout(Duration::from_millis(100)) {
            Ok(Ok(event)) => event.paths.iter().for_each(|p| watch.touched(p, Instant::now())),
            Ok(Err(_)) | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => std::thread::sleep(Duration::from_millis(100)),
        }
        if last_scan.elapsed() >= poll {
            watch.scan(Instant::now());
            last_scan = Instant::now();
        }
        follow_due(&mut watch, false)?;
        if let Some(s) = &spinner {
            s.set_message(format!("watching {} ({} waiting)", names.join(", "), watch.waiting()));
        }
    }
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    // What was seen before the signal: imported now, not lost.
    while let Ok(Ok(event)) = events.try_recv() {
        event.paths.iter().for_each(|p| watch.touched(p, Instant::now()));
    }
    watch.scan(Instant::now());
    follow_due(&mut watch, true)
}

/// What is new in each session of an opencode database, said in a line; a failure is said
/// and left (the watch goes on).
fn follow_database(ctx: &Ctx, store: &convo::store::Store, path: &std::path::Path) {
    let done = opencode::prepare(path).and_then(|p| opencode::import(store, p, &ctx.clock, &mut || {}));
    match done {
        Ok(done) if done.committed.is_some() => ctx.ui.status(&format!(
            "{}: {} new, {} continued, {}",
            path.display(),
            plural(done.started.len() as u64, "session"),
            done.grew.len(),
            plural(done.events(), "event")
        )),
        Ok(_) => {}
        Err(e) => ctx.ui.warning(&format!("{} (left as it is)", CommandError::from(e).message)),
    }
}
