//! The terminal: colour choice, the pager, and the one path output takes: data on stdout,
//! status and warnings on stderr. Only the binary uses this.

use std::io::{self, IsTerminal, Write};
use std::process::{Child, Command, Stdio};

use clap::ValueEnum;
use convo::render::{Theme, escape_line};
use convo::store::{GcOutcome, Landed};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// One commit, as [`Ui::commit`] reports it.
pub struct CommitReport<'a> {
    /// The conversation it changed, when it changed one.
    pub conversation: Option<&'a str>,
    pub commit: &'a dyn std::fmt::Display,
    pub subject: &'a str,
    pub landed: &'a Landed,
}

/// What a store write returns that its commit line says: every writer's result has it.
pub trait Landing {
    fn commit_id(&self) -> &dyn std::fmt::Display;
    fn subject(&self) -> &str;
    fn landed(&self) -> &Landed;
}

macro_rules! landing {
    ($($ty:ty),*) => {$(
        impl Landing for $ty {
            fn commit_id(&self) -> &dyn std::fmt::Display {
                &self.commit
            }
            fn subject(&self) -> &str {
                &self.subject
            }
            fn landed(&self) -> &Landed {
                &self.landed
            }
        }
    )*};
}

landing!(
    convo::store::Appended,
    convo::store::BulkAppended,
    convo::store::Created,
    convo::store::Fixed,
    convo::ops::folder::Committed
);

/// Every byte convo writes goes through here: data to stdout ([`Ui::stdout`], [`Ui::paged`]),
/// status, warnings and commit lines to stderr. Read once at start-up from the environment.
pub struct Ui {
    pub theme: Theme,
    pub quiet: bool,
    /// The columns listings fit (`list`, `log --oneline`, `grep`): the terminal's width when stdout
    /// is one, else `COLUMNS` when set, else none: piped output keeps whole titles for
    /// scripts (set `COLUMNS=80` to cut them anyway).
    pub width: Option<usize>,
    pager: Option<String>,
}

impl Ui {
    pub fn new(color: ColorChoice, no_pager: bool, quiet: bool) -> Ui {
        let tty = io::stdout().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
        let color = match color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => tty && !no_color && !dumb,
        };
        // As git: CONVO_PAGER, then PAGER, then less; empty or `cat` means none.
        let pager = if no_pager || !tty {
            None
        } else {
            let cmd =
                std::env::var("CONVO_PAGER").or_else(|_| std::env::var("PAGER")).unwrap_or_else(|_| "less".into());
            Some(cmd).filter(|c| !c.trim().is_empty() && c.trim() != "cat")
        };
        let columns = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()).filter(|c| *c > 0);
        let terminal = if tty { terminal_size::terminal_size().map(|(w, _)| usize::from(w.0)) } else { None };
        Ui { theme: Theme { color }, quiet, width: terminal.or(columns), pager }
    }

    /// Data: what scripts read (ids, listings, answers). `--quiet` never silences it.
    pub fn stdout(&self) -> io::StdoutLock<'static> {
        io::stdout().lock()
    }

    /// stderr as a stream, for text that arrives in pieces (a model's reasoning); callers
    /// escape what they write and honour `quiet` themselves.
    pub fn stderr(&self) -> io::StderrLock<'static> {
        io::stderr().lock()
    }

    /// A status line for people on stderr (commit lines, notices), nothing under
    /// `--quiet`. What it quotes from the store cannot write control characters.
    pub fn status(&self, line: &str) {
        if !self.quiet {
            let _ = writeln!(io::stderr(), "{}", escape_line(line));
        }
    }

    /// Whether git's (and convo's) progress meters may draw: stderr is a terminal and
    /// `--quiet` was not given.
    pub fn progress(&self) -> bool {
        io::stderr().is_terminal() && !self.quiet
    }

    /// `warning: MESSAGE` on stderr, also under `--quiet`: something went wrong that the
    /// user must know about although the command succeeded.
    pub fn warning(&self, message: &str) {
        let _ = writeln!(io::stderr(), "warning: {}", escape_line(message));
    }

    /// `hint: MESSAGE` on stderr, after a warning.
    pub fn hint(&self, message: &str) {
        let _ = writeln!(io::stderr(), "hint: {}", escape_line(message));
    }

    /// One commit as every writing command reports it: `[ID HASH] SUBJECT` on the status
    /// stream, then what went wrong after it landed.
    pub fn commit(&self, report: &CommitReport<'_>) {
        let hash: String = report.commit.to_string().chars().take(7).collect();
        match report.conversation {
            Some(id) => self.status(&format!("[{id} {hash}] {}", report.subject)),
            None => self.status(&format!("[{hash}] {}", report.subject)),
        }
        self.landed(report.landed);
    }

    /// [`Ui::commit`] for what a writer returned, on `conversation` when it changed one.
    pub fn committed(&self, conversation: Option<&str>, what: &dyn Landing) {
        self.commit(&CommitReport {
            conversation,
            commit: what.commit_id(),
            subject: what.subject(),
            landed: what.landed(),
        });
    }

    /// After a commit: say so when it landed but its mirror into the working tree did not,
    /// or when the store needs packing and git is missing to do it.
    pub fn landed(&self, landed: &Landed) {
        if let Some(warning) = &landed.warning {
            self.warning(warning);
        }
        if landed.gc == GcOutcome::GitMissing {
            self.warning("the store has many loose objects and `git` is not installed to pack them (`git gc`)");
        }
    }

    /// Where long output (`show`, `log`) goes: a pager on a terminal, else stdout.
    pub fn paged(&self) -> Output {
        if let Some(cmd) = &self.pager {
            // As git: a pager that cannot start is left out and the output written directly.
            // `sh -c` itself always starts, so the program is looked for first.
            if let Some(program) = missing_program(cmd) {
                self.warning(&format!("cannot run the pager `{program}`: not found; writing directly"));
                self.hint("set CONVO_PAGER or PAGER to a pager you have, or pass --no-pager");
                return Output::stdout();
            }
            let mut command = Command::new("sh");
            command.arg("-c").arg(cmd).stdin(Stdio::piped());
            if std::env::var_os("LESS").is_none() {
                // Quit if one screen, keep colour, don't clear the screen: git's defaults.
                command.env("LESS", "FRX");
            }
            if let Ok(mut child) = command.spawn()
                && let Some(stdin) = child.stdin.take()
            {
                return Output { sink: Box::new(stdin), pager: Some(child) };
            }
        }
        Output::stdout()
    }
}

/// The program a pager command starts, when it is a plain word (no shell syntax) that is
/// neither a shell builtin nor an executable on PATH (or at the path it names).
pub fn missing_program(cmd: &str) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let program = cmd.split_whitespace().next()?;
    if program.contains(|c: char| "|&;<>()$`\\\"'*?[#~=%{}".contains(c)) {
        return None;
    }
    let executable =
        |p: &std::path::Path| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    let found = if program.contains('/') {
        executable(std::path::Path::new(program))
    } else {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path).any(|dir| executable(&dir.join(program)))
            || matches!(program, "exec" | "command" | "eval" | "env" | "." | ":")
    };
    (!found).then(|| program.to_owned())
}

/// A writer that may feed a pager, which is waited for when the output is finished.
pub struct Output {
    sink: Box<dyn Write>,
    pager: Option<Child>,
}

impl Output {
    pub fn stdout() -> Output {
        Output { sink: Box::new(io::BufWriter::new(io::stdout().lock())), pager: None }
    }

    pub fn writer(&mut self) -> &mut dyn Write {
        &mut *self.sink
    }

    /// Flush, close the pager's input and wait for the user to leave it.
    pub fn finish(mut self) -> io::Result<()> {
        let flushed = self.sink.flush();
        drop(self.sink);
        if let Some(mut child) = self.pager.take() {
            let _ = child.wait();
        }
        flushed
    }
}

/// A spinner on stderr while something slow happens (a summary being written); indicatif
/// draws nothing when stderr is not a terminal.
pub fn spinner(quiet: bool, message: String) -> Option<indicatif::ProgressBar> {
    if quiet {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    bar.set_message(message);
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(bar)
}

/// Ask a yes/no question on the terminal; `None` when there is no terminal to ask on.
pub fn confirm(prompt: &str) -> Option<bool> {
    if !(io::stdin().is_terminal() && io::stderr().is_terminal()) {
        return None;
    }
    dialoguer::Confirm::new().with_prompt(prompt).default(false).interact().ok()
}

/// A byte-count progress bar on stderr (hidden when stderr is not a terminal).
pub fn progress_bar(quiet: bool, len: u64, message: String) -> Option<indicatif::ProgressBar> {
    if quiet {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(Some(len), indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template("{msg} {bar:30} {bytes}/{total_bytes} ({bytes_per_sec})")
    {
        bar.set_style(style);
    }
    bar.set_message(message);
    Some(bar)
}
