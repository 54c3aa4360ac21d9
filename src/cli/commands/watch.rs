use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use convo::agents;
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
/// Watches the folders (default: ~/.claude/projects or $CLAUDE_CONFIG_DIR/projects,
/// ~/.codex/sessions or $CODEX_HOME/sessions, and Gemini CLI's ~/.gemini/tmp, or
/// $GEMINI_CLI_HOME/.gemini/tmp) for new and growing .jsonl session
/// files, and imports each as `import --follow` does once it has been quiet for a moment:
/// one commit per change. A folder not there yet (an agent that never ran) is waited for,
/// and followed once it appears; the folders watched and waited for are said on start.
/// opencode's database
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
        // Each agent's sessions where the agent keeps them (its own variables, as `resume`
        // finds them). A sweep takes the folders there; a watch waits for the others too
        // (Codex makes its folder on its first run).
        let var = |name: &str| std::env::var_os(name);
        let env = agents::Env::new(&var);
        let (mut dirs, mut databases) = (Vec::new(), Vec::new());
        for root in agents::ALL.iter().filter_map(|a| a.folder(&env).ok().map(|f| a.session_root(&f))) {
            match root {
                agents::Root::Folder(d) if !args.once || d.is_dir() => dirs.push(d),
                agents::Root::Database(d) if d.is_file() => databases.push(d),
                agents::Root::Folder(_) | agents::Root::Database(_) => {}
            }
        }
        (dirs, databases)
    } else {
        args.dirs.iter().cloned().partition(|d| !(d.is_file() && opencode::is_database(d)))
    };
    // A folder named that is not there yet is waited for, except by a sweep.
    if let Some(missing) = dirs.iter().find(|d| !d.is_dir() && (args.once || d.exists())) {
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
            let followed = import::follow(&store, &path, None, &options, &ctx.clock);
            if followed.is_ok() {
                ctx.note_capture(&store, "watch", &path, None);
            }
            match followed {
                Ok(Followed::Started(done)) => {
                    let events: u64 = done.conversations.iter().map(|(_, s)| s.events).sum();
                    ctx.ui.status(&format!("{}: new, {}", path.display(), plural(events, "event")));
                }
                Ok(Followed::Grew { added, new_parts, went_on_in, .. }) => {
                    let forked = went_on_in.map(|fork| format!(" (went on in fork {fork})")).unwrap_or_default();
                    ctx.ui.status(&format!("{}: +{}{forked}", path.display(), plural(added + new_parts, "event")));
                }
                Ok(Followed::Unchanged { .. }) => {}
                Ok(Followed::TakenOver { id, .. }) => {
                    ctx.ui.status(&format!("{}: imported whole before, as {id}; followed from here", path.display()));
                }
                Err(e) if e.is_not_a_session() => {}
                // One bad file never stops the watch: said, kept for `convo status`, and left.
                Err(e) => {
                    let message = CommandError::from(e).message;
                    ctx.note_capture(&store, "watch", &path, Some(&message));
                    ctx.ui.warning(&format!("{message} (left as it is)"));
                }
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
    let mut watches = Watches { watcher: notify::recommended_watcher(send).ok(), placed: Vec::new() };
    if !watches.place(watch.spots()) {
        watches.watcher = None;
        ctx.ui.warning("the file system reports no changes here: scanning the folders instead");
    }
    // What was written while the watches were being placed.
    watch.scan(Instant::now());
    for folder in dirs.iter().filter(|d| d.is_dir()).chain(&databases) {
        ctx.ui.status(&format!("watching {}", folder.display()));
    }
    for (folder, _) in watch.awaited() {
        ctx.ui.status(&format!("waiting for {} (not there yet)", folder.display()));
    }
    let names: Vec<String> = dirs.iter().chain(&databases).map(|d| d.display().to_string()).collect();
    let poll = Duration::from_secs(args.poll.max(1));
    let mut last_scan = Instant::now();
    let spinner = crate::cli::ui::spinner(ctx.ui.quiet, format!("watching {}", names.join(", ")));
    // Whether a folder waited for may have appeared (or one watched gone): at once, in
    // case one did while the watches were being placed.
    let mut look = true;
    while !STOP.load(Ordering::SeqCst) {
        match events.recv_timeout(Duration::from_millis(100)) {
            Ok(Ok(event)) => {
                use notify::event::{EventKind, ModifyKind};
                let made = matches!(event.kind, EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(_)));
                for path in &event.paths {
                    look |= made && watch.leads_to_awaited(path);
                    watch.touched(path, Instant::now());
                    if made {
                        watch.made(path, Instant::now());
                    }
                }
            }
            Ok(Err(_)) | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => std::thread::sleep(Duration::from_millis(100)),
        }
        if last_scan.elapsed() >= poll {
            watch.scan(Instant::now());
            last_scan = Instant::now();
            look = true;
        }
        if std::mem::take(&mut look) {
            for folder in watches.settle(&mut watch) {
                ctx.ui.status(&format!("watching {}", folder.display()));
            }
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

/// The file system's watches, and where they are.
struct Watches {
    watcher: Option<notify::RecommendedWatcher>,
    /// Each watched path, and whether with its subfolders.
    placed: Vec<(PathBuf, bool)>,
}

impl Watches {
    /// Move the watches to `spots`; false if one could not be put in place. A spot that
    /// failed counts as placed, not tried again at once: the scans cover it.
    fn place(&mut self, spots: Vec<(PathBuf, bool)>) -> bool {
        use notify::Watcher as _;
        let Some(watcher) = &mut self.watcher else { return true };
        for (path, _) in self.placed.iter().filter(|p| !spots.contains(p)) {
            // A watch on a folder that has gone went with it.
            let _ = watcher.unwatch(path);
        }
        let mut all = true;
        for (path, whole) in spots.iter().filter(|s| !self.placed.contains(s)) {
            let mode = if *whole { notify::RecursiveMode::Recursive } else { notify::RecursiveMode::NonRecursive };
            all &= watcher.watch(path, mode).is_ok();
        }
        self.placed = spots;
        all
    }

    /// Take in the folders that appeared since last looked at (watched first, then what
    /// is in them made due) and follow the way down to those still waited for, until
    /// nothing moves (a folder may appear while a watch is being placed); the folders
    /// that appeared.
    fn settle(&mut self, watch: &mut Watch) -> Vec<PathBuf> {
        let mut appeared = Vec::new();
        // Each round takes a folder in or moves a watch a folder down: a few at most.
        for _ in 0..32 {
            let arrived = watch.arrived();
            let spots = watch.spots();
            if arrived.is_empty() && spots == self.placed {
                break;
            }
            self.place(spots);
            for folder in arrived {
                watch.folder_appeared(&folder, Instant::now());
                appeared.push(folder);
            }
        }
        appeared
    }
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
        Ok(_) => ctx.note_capture(store, "watch", path, None),
        Err(e) => {
            let message = CommandError::from(e).message;
            ctx.note_capture(store, "watch", path, Some(&message));
            ctx.ui.warning(&format!("{message} (left as it is)"));
        }
    }
}
