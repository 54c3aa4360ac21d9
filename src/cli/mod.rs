//! The command line: parse arguments, build the context from the environment, run one
//! command, and turn its outcome into output and an exit code. Everything here is the
//! binary's; the library (`convo::*`) never prints, reads the environment or touches the
//! terminal.

pub mod capabilities;
pub mod command_error;
pub mod commands;
pub mod hooks;
pub mod ui;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use convo::clock::Clock;
use convo::config;
use convo::store::{FailPoint, Store, StoreError};

use command_error::{CommandError, EXIT_CODES, Kind};
use ui::{ColorChoice, Ui};

/// The heading global flags are listed under in every `--help`, apart from the command's own.
const GLOBAL: &str = "Global options";

/// A git-backed store for LLM conversations
#[derive(Parser)]
#[command(name = "convo", version, after_long_help = EXIT_CODES, propagate_version = true)]
pub struct Cli {
    /// Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)
    #[arg(short = 'C', long = "store", global = true, help_heading = GLOBAL, value_name = "PATH")]
    store: Option<PathBuf>,
    /// When to colour output (NO_COLOR is honoured by `auto`)
    #[arg(long, global = true, help_heading = GLOBAL, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    color: ColorChoice,
    /// Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)
    #[arg(long, global = true, help_heading = GLOBAL)]
    no_pager: bool,
    /// Print nothing but data and errors
    #[arg(short, long, global = true, help_heading = GLOBAL)]
    quiet: bool,
    /// Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5
    #[arg(long = "config", global = true, help_heading = GLOBAL, value_name = "KEY=VALUE")]
    config: Vec<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Init(commands::init::Args),
    New(commands::new::Args),
    List(commands::list::Args),
    Switch(commands::switch::Args),
    Rename(commands::rename::Args),
    Rm(commands::rm::Args),
    Private(commands::private::Args),
    Share(commands::share::Args),
    Restore(commands::restore::Args),
    Append(Box<commands::append::Args>),
    Show(commands::show::Args),
    Log(commands::log::Args),
    Fsck(commands::fsck::Args),
    Status(commands::status::Args),
    Compact(commands::compact::Args),
    Diff(commands::diff::Args),
    Fork(commands::fork::Args),
    Config(commands::config::Args),
    Query(commands::query::Args),
    Remote(commands::remote::Args),
    Clone(commands::clone::Args),
    Fetch(commands::fetch::Args),
    Pull(commands::pull::Args),
    Push(commands::push::Args),
    Sync(commands::sync::Args),
    Redact(commands::redact::Args),
    Resume(commands::resume::Args),
    Import(commands::import::Args),
    Export(commands::export::Args),
    Grep(commands::grep::Args),
    Usage(commands::usage::Args),
    Hook(commands::hook::Args),
    Watch(commands::watch::Args),
    Mcp(commands::mcp::Args),
    Serve(commands::serve::Args),
    #[command(hide = true)]
    GenerateDocs(commands::generate_docs::Args),
}

/// Where the store is and how it was chosen: only the default location is created on first
/// write; a path the user named must exist (or be made with `convo init`).
pub struct StoreLocation {
    pub path: PathBuf,
    pub is_default: bool,
}

/// Everything a command needs from the outside world, resolved once.
pub struct Ctx {
    pub location: Option<StoreLocation>,
    /// `$XDG_CONFIG_HOME/convo/config.toml` (or under `~/.config`).
    pub user_config: Option<PathBuf>,
    /// `--config KEY=VALUE`, in order.
    config_args: Vec<(String, toml::Value)>,
    pub ui: Ui,
    pub clock: Clock,
    fail_point: Option<FailPoint>,
    /// Warnings about ignored config already printed: each is said once a run.
    warned: std::cell::RefCell<std::collections::BTreeSet<String>>,
    /// Set by a store when a commit was signed with the fallback identity, for the hint
    /// after the command (`tell_identity`).
    fallback_signed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Ctx {
    fn location(&self) -> Result<&StoreLocation, CommandError> {
        self.location.as_ref().ok_or_else(|| {
            CommandError::new(Kind::NotFound, "cannot find a place for the store: HOME is not set")
                .hint("pass --store PATH or set CONVO_DIR")
        })
    }

    /// The store, which must exist: reads never create one. The default store before its
    /// first write is not there yet, which is said as such.
    pub fn open_store(&self) -> Result<Store, CommandError> {
        let location = self.location()?;
        match Store::open(&location.path) {
            Err(e @ StoreError::NotAStore { .. }) if location.is_default => {
                let mut e = CommandError::from(e);
                e.hints = vec!["the first write makes it: `convo new` starts a conversation".into()];
                Err(e)
            }
            other => self.prepared(other?),
        }
    }

    /// The store for a command that reads what is there (`list`, `status`): none while the
    /// default store has not been made, which they show as an empty store. Nothing is
    /// created: the README promises the default store on first use, and a look is not one.
    pub fn open_store_if_made(&self) -> Result<Option<Store>, CommandError> {
        let location = self.location()?;
        match Store::open(&location.path) {
            Err(StoreError::NotAStore { .. }) if location.is_default => Ok(None),
            other => Ok(Some(self.prepared(other?)?)),
        }
    }

    /// `store.fsync`, from the user's own layers only (it is a `USER_ONLY_KEYS` key, so the
    /// store's `convo.toml` is not read for it).
    fn durability(store: &config::StoreConfig) -> convo::store::Durability {
        match store.fsync {
            config::Fsync::Committed => convo::store::Durability::Committed,
            config::Fsync::None => convo::store::Durability::None,
        }
    }

    /// `share.default`, from the user's own layers only (a `USER_ONLY_KEYS` key).
    pub fn share_default(&self) -> Result<config::ShareDefault, CommandError> {
        Ok(config::Resolved::new(self.base_layers()?)?.config.share.default)
    }

    /// `store.fsync` as the user's own config sets it, for a store not made yet (`clone`).
    pub fn durability_setting(&self) -> Result<convo::store::Durability, CommandError> {
        Ok(Self::durability(&config::Resolved::new(self.base_layers()?)?.config.store))
    }

    /// The store for a write: the default location is created on first use.
    pub fn open_store_for_write(&self) -> Result<Store, CommandError> {
        let location = self.location()?;
        match Store::open(&location.path) {
            Err(StoreError::NotAStore { .. }) if location.is_default => {
                let (store, _) = Store::init(&location.path)?;
                self.note(&format!("Created convo store in {}", location.path.display()));
                self.tell_identity_of(&store);
                self.prepared(store)
            }
            other => self.prepared(other?),
        }
    }

    /// `store` with the test seam, who records through it and how durably.
    /// The user's own layers are resolved once for both.
    pub fn prepared(&self, store: Store) -> Result<Store, CommandError> {
        let config = config::Resolved::new(self.base_layers()?)?.config;
        let durability = Self::durability(&config.store);
        Ok(store
            .with_fail_point(self.fail_point)
            .with_recorder(self.recorder_of(config.user))
            .with_durability(durability))
    }

    /// The person from the user's own config (`user.name` and `user.email`, both or
    /// neither), and the machine's name if `user.record_machine` asks for it.
    pub fn recorder(&self) -> Result<convo::store::Recorder, CommandError> {
        Ok(self.recorder_of(config::Resolved::new(self.base_layers()?)?.config.user))
    }

    fn recorder_of(&self, user: config::UserConfig) -> convo::store::Recorder {
        let person = match (user.name, user.email) {
            (Some(name), Some(email)) => Some(convo::store::Person { name, email }),
            _ => None,
        };
        let machine = user
            .record_machine
            .then(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
            .flatten()
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty());
        convo::store::Recorder { person, machine, fallback_signed: self.fallback_signed.clone() }
    }

    /// After a command that committed as `convo <convo@localhost>`: how to say who you are,
    /// once a store (not with --quiet, which leaves it to the next command).
    fn tell_identity(&self) {
        if !self.fallback_signed.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        if let Some(store) = self.location.as_ref().and_then(|l| Store::open(&l.path).ok()) {
            self.tell_identity_of(&store);
        }
    }

    /// For a store just made (`init`, `clone`, a first write) that will commit as `convo
    /// <convo@localhost>`: how to say who you are, said then rather than at its first commit.
    pub fn tell_identity_of(&self, store: &Store) {
        if self.ui.quiet {
            return;
        }
        // Convo's own identity first, as a commit would take it.
        let configured = self.recorder().ok().and_then(|r| r.person).is_some();
        if configured || store.identity().1 != convo::store::IdentitySource::Fallback {
            return;
        }
        if let Ok(true) = store.identity_hint_due() {
            self.ui.hint(&format!(
                "commits are by {} <{}>: say who you are with `convo config set user.name \"Your Name\"` \
                 and `convo config set user.email you@example.com` (or git's user.name and user.email)",
                convo::store::identity::FALLBACK_NAME,
                convo::store::identity::FALLBACK_EMAIL
            ));
        }
    }

    /// Built-in defaults, the user file and `--config`: the layers that do not depend on
    /// the store.
    pub fn base_layers(&self) -> Result<Vec<config::Layer>, CommandError> {
        let mut layers = vec![config::defaults()];
        if let Some(path) = &self.user_config {
            match std::fs::read_to_string(path) {
                Ok(text) => layers.push(config::parse_layer(config::Source::User, &path.display().to_string(), &text)?),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(CommandError::input(format!("{}: {e}", path.display()))),
            }
        }
        if !self.config_args.is_empty() {
            layers.push(config::layer_from_pairs(config::Source::CommandLine, "--config", &self.config_args)?);
        }
        Ok(layers)
    }

    /// The configuration in force for a conversation with `events` in `store`; a warning
    /// for each key its content set and may not.
    pub fn config(&self, store: &Store, events: &[convo::event::Event]) -> Result<config::Resolved, CommandError> {
        let resolved = self.config_quietly(store, events)?;
        self.warn_ignored(&resolved.ignored);
        Ok(resolved)
    }

    /// [`Ctx::config`] without the warnings (for `config list`, which shows them itself).
    pub fn config_quietly(
        &self,
        store: &Store,
        events: &[convo::event::Event],
    ) -> Result<config::Resolved, CommandError> {
        let base = self.base_layers()?;
        let trusted = store_trusted(store.root(), &config::trusted_stores(&base));
        Ok(convo::ops::resolve_config(store, events, &base, trusted)?)
    }

    /// `warning: ignored KEY from ORIGIN (why)`, each once a run, then one hint per kind.
    /// Said even with --quiet: it is about where a conversation would be sent.
    pub fn warn_ignored(&self, ignored: &[config::Ignored]) {
        let mut warned = self.warned.borrow_mut();
        let mut hints = Vec::new();
        for item in ignored {
            if warned.insert(item.message()) {
                self.ui.warning(&item.message());
                if !hints.contains(&item.hint()) {
                    hints.push(item.hint());
                }
            }
        }
        for hint in hints {
            if warned.insert(hint.to_owned()) {
                self.ui.hint(hint);
            }
        }
    }

    /// Leave `value` to the process's exit instead of dropping it, at the end of a command
    /// that read a long conversation: freeing its 38,000 outlines (150,000 allocations)
    /// took a fifth of `compact --dry-run` on 55 MB, and gives memory back to no one. Only
    /// for values whose drop does nothing else (a `Store` holds no lock or file), and only
    /// once per process: commands run once, then `main` exits.
    pub fn keep_until_exit<T>(&self, value: T) {
        std::mem::forget(value);
    }

    /// Keep what became of a capture of `path` where `convo status` and the next command at
    /// a terminal see it (`store::captures`): `failed` is the error's message. Failing to
    /// keep it is said; it never changes the capture's own outcome.
    pub fn note_capture(&self, store: &Store, by: &str, path: &std::path::Path, failed: Option<&str>) {
        let kept = match failed {
            Some(error) => store.capture_failed(by, path, error, &self.clock.timestamp()),
            None => store.capture_worked(path).and_then(|()| match std::fs::metadata(path) {
                // Its size after the capture: a `status` that finds it longer says it lags.
                Ok(m) if m.is_file() => store.capture_recorded(by, path, m.len(), &self.clock.timestamp()),
                _ => Ok(()),
            }),
        };
        if let Err(e) = kept {
            self.ui.warning(&format!("could not record how the capture of {} went: {e}", path.display()));
        }
    }

    /// At a terminal, say the captures that failed and the push the secret scan refused
    /// since a command last said so, once. The files are looked for first: a command at a
    /// terminal does not open the store again when there is nothing to say.
    fn tell_failed_captures(&self) {
        if !self.ui.progress() {
            return;
        }
        let Some(location) = self.location.as_ref() else { return };
        let state = location.path.join(".git").join("convo");
        let (captures, refused) = (state.join("captures").exists(), state.join(convo::store::refused::FILE).exists());
        if !captures && !refused {
            return;
        }
        let Ok(store) = Store::open(&location.path) else { return };
        if refused
            && let Ok(Some(push)) = store.refused_push()
            && !push.told
        {
            self.ui.warning(&format!(
                "a push to {} was refused at {} ({}): {} secret{} in what it would publish",
                convo::render::escape_line(&push.remote),
                convo::render::escape_line(&push.at),
                convo::render::escape_line(&push.by),
                push.secrets,
                if push.secrets == 1 { "" } else { "s" }
            ));
            self.ui.hint("`convo status` says where; `convo redact --secrets` replaces them, then push again");
            let _ = store.refused_push_told();
        }
        if !captures {
            return;
        }
        let failures = store.failed_captures().unwrap_or_default();
        let new: Vec<_> = failures.iter().filter(|f| !f.told).collect();
        let Some(latest) = new.last() else { return };
        let more = match new.len() {
            1 => String::new(),
            n => format!(" ({n} new failures)"),
        };
        self.ui.warning(&format!(
            "a capture failed{more}: {}: {}",
            convo::render::escape_line(&latest.path),
            convo::render::escape_line(&latest.error)
        ));
        self.ui.hint("`convo status` lists the captures that failed");
        let _ = store.failed_captures_told();
    }

    /// A status line on stderr, unless `--quiet` (see [`Ui::status`]).
    pub fn note(&self, message: &str) {
        self.ui.status(message);
    }

    /// In a lazy store (`clone --lazy`), fetch the conversation `query` names if the store
    /// does not hold it yet, saying so on stderr (see `ops::lazy`).
    pub fn fetch_if_lazy(&self, store: &Store, query: Option<&str>) -> Result<(), CommandError> {
        convo::ops::lazy::ensure(store, query, &self.clock, &mut |f| {
            self.note(&format!("Fetching {} from {} ({})", f.id, f.remote, kib(f.bytes)))
        })?;
        Ok(())
    }
}

/// `43 KiB`: a size said in passing.
fn kib(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{} KiB", bytes.div_ceil(1024)),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}

fn store_location(flag: Option<PathBuf>) -> Option<StoreLocation> {
    if let Some(path) = flag {
        return Some(StoreLocation { path, is_default: false });
    }
    if let Some(dir) = std::env::var_os("CONVO_DIR").filter(|d| !d.is_empty()) {
        return Some(StoreLocation { path: dir.into(), is_default: false });
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
    Some(StoreLocation { path: data.join("convo"), is_default: true })
}

/// Sealed tests freeze time (and so ids and commit hashes) with CONVO_NOW, simulate a
/// kill at a step of a commit with CONVO_TEST_FAIL_AT, and a bug with CONVO_TEST_PANIC.
fn clock() -> Result<Clock, CommandError> {
    match std::env::var("CONVO_NOW") {
        Ok(now) => chrono::DateTime::parse_from_rfc3339(&now)
            .map(|t| Clock::fixed(t.to_utc()))
            .map_err(|e| CommandError::input(format!("CONVO_NOW: not an RFC 3339 time ({e})"))),
        Err(_) => Ok(Clock::system()),
    }
}

/// Whether the store at `root` is one of `trusted` (paths, compared once both are made
/// canonical where they exist).
pub fn store_trusted(root: &std::path::Path, trusted: &[String]) -> bool {
    let root = canonical(root);
    trusted.iter().any(|t| canonical(std::path::Path::new(t)) == root)
}

/// `path` made absolute and canonical, or as it is when it does not exist.
pub fn canonical(path: &std::path::Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| std::path::absolute(path).unwrap_or_else(|_| path.to_owned()))
}

/// What a conversation argument completes to: each id, described by its title, and each
/// title a shell can take as one word. The store is the one `CONVO_DIR` or the default
/// location names (a `--store` on the line being completed is not seen); none when it
/// cannot be read, since a completion must never print an error.
pub fn conversation_candidates() -> Vec<clap_complete::CompletionCandidate> {
    let Some(location) = store_location(None) else {
        return Vec::new();
    };
    let Ok(summaries) = Store::open(&location.path).and_then(|store| store.summaries()) else {
        return Vec::new();
    };
    let mut candidates = Vec::new();
    for s in &summaries {
        let title = s.title.as_deref().map(|t| convo::render::fit(t, Some(60)));
        candidates.push(clap_complete::CompletionCandidate::new(&s.id).help(title.clone().map(Into::into)));
    }
    for s in &summaries {
        // A title with spaces or shell syntax would be inserted unquoted by some shells.
        if let Some(title) = s
            .title
            .as_deref()
            .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_alphanumeric() || "-_.:@+,=".contains(c)))
        {
            candidates.push(clap_complete::CompletionCandidate::new(title).help(Some(s.id.clone().into())));
        }
    }
    candidates
}

fn user_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("convo/config.toml"))
}

fn run(cli: Cli) -> Result<(), CommandError> {
    let config_args = cli
        .config
        .iter()
        .map(|a| config::parse_assignment(a).map_err(|m| CommandError::input(format!("--config {m}"))))
        .collect::<Result<Vec<_>, _>>()?;
    // Checked up front, as `config set` checks a key: a misspelt key is refused whether or
    // not this command reads config.
    if !config_args.is_empty() {
        config::layer_from_pairs(config::Source::CommandLine, "--config", &config_args)?;
    }
    let ctx = Ctx {
        location: store_location(cli.store),
        user_config: user_config_path(),
        config_args,
        ui: Ui::new(cli.color, cli.no_pager, cli.quiet),
        clock: clock()?,
        fail_point: std::env::var("CONVO_TEST_FAIL_AT").ok().as_deref().and_then(FailPoint::parse),
        warned: Default::default(),
        fallback_signed: Default::default(),
    };
    if std::env::var_os("CONVO_TEST_PANIC").is_some() {
        panic!("CONVO_TEST_PANIC is set");
    }
    // Captures run unseen (hooks, watch): a person's next command says when one failed.
    let tells = !matches!(
        cli.command,
        Command::Hook(_)
            | Command::Watch(_)
            | Command::Status(_)
            | Command::Mcp(_)
            | Command::Serve(_)
            | Command::GenerateDocs(_)
    );
    let result = match cli.command {
        Command::Init(args) => commands::init::run(&ctx, args),
        Command::New(args) => commands::new::run(&ctx, args),
        Command::List(args) => commands::list::run(&ctx, args),
        Command::Grep(args) => commands::grep::run(&ctx, args),
        Command::Hook(args) => commands::hook::run(&ctx, args),
        Command::Watch(args) => commands::watch::run(&ctx, args),
        Command::Usage(args) => commands::usage::run(&ctx, args),
        Command::Serve(args) => commands::serve::run(&ctx, args),
        // The server runs until its client leaves, owning the context.
        Command::Mcp(args) => return commands::mcp::run(ctx, args),
        Command::Switch(args) => commands::switch::run(&ctx, args),
        Command::Rename(args) => commands::rename::run(&ctx, args),
        Command::Rm(args) => commands::rm::run(&ctx, args),
        Command::Private(args) => commands::private::run(&ctx, args),
        Command::Share(args) => commands::share::run(&ctx, args),
        Command::Restore(args) => commands::restore::run(&ctx, args),
        Command::Append(args) => commands::append::run(&ctx, *args),
        Command::Show(args) => commands::show::run(&ctx, args),
        Command::Log(args) => commands::log::run(&ctx, args),
        Command::Fsck(args) => commands::fsck::run(&ctx, args),
        Command::Status(args) => commands::status::run(&ctx, args),
        Command::Compact(args) => commands::compact::run(&ctx, args),
        Command::Diff(args) => commands::diff::run(&ctx, args),
        Command::Fork(args) => commands::fork::run(&ctx, args),
        Command::Config(args) => commands::config::run(&ctx, args),
        Command::Query(args) => commands::query::run(&ctx, args),
        Command::Remote(args) => commands::remote::run(&ctx, args),
        Command::Clone(args) => commands::clone::run(&ctx, args),
        Command::Fetch(args) => commands::fetch::run(&ctx, args),
        Command::Pull(args) => commands::pull::run(&ctx, args),
        Command::Push(args) => commands::push::run(&ctx, args),
        Command::Sync(args) => commands::sync::run(&ctx, args),
        Command::Redact(args) => commands::redact::run(&ctx, args),
        Command::Resume(args) => commands::resume::run(&ctx, args),
        Command::Import(args) => commands::import::run(&ctx, args),
        Command::Export(args) => commands::export::run(&ctx, args),
        Command::GenerateDocs(args) => commands::generate_docs::run(Cli::command(), args),
    };
    if tells {
        ctx.tell_failed_captures();
    }
    ctx.tell_identity();
    result
}

/// A panic is a bug in convo: print it as an error (message and where) with a request to
/// report it, and exit with the internal-error code (70) instead of Rust's 101. The
/// backtrace is printed only when RUST_BACKTRACE asks for one. The process exits from the
/// hook, whichever thread panicked: the store's lock dies with it and the next writer
/// finishes or discards a half-done commit.
fn exit_on_panic() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a panic without a message");
        let place = info.location().map(|l| format!(" at {l}")).unwrap_or_default();
        let mut err = std::io::stderr().lock();
        CommandError::internal(format!("{message}{place}")).print(&mut err);
        let backtrace = std::backtrace::Backtrace::capture();
        if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
            let _ = writeln!(err, "{backtrace}");
        }
        std::process::exit(Kind::Internal.exit_code().into());
    }));
}

pub fn main() -> ExitCode {
    // Conversations are private: every file this process writes (gix's objects, the
    // repository gix::init lays out, exports, the user's config) and every child it starts
    // (git) is user-only, whatever the shell's umask.
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
    exit_on_panic();
    // `COMPLETE=bash convo` prints the shell's registration script, and the shell then calls
    // `COMPLETE=bash convo -- WORDS` at each TAB: flags from the clap definition, conversation
    // ids and titles from the store (`conversation_candidates`). The committed `completions/`
    // are these scripts, calling `convo` from PATH.
    clap_complete::CompleteEnv::with_factory(Cli::command).completer("convo").complete();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if e.kind != Kind::BrokenPipe && !e.message.is_empty() {
                e.print(&mut std::io::stderr());
            }
            ExitCode::from(e.kind.exit_code())
        }
    }
}
