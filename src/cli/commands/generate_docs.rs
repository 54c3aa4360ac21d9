use std::path::{Path, PathBuf};

use crate::cli::command_error::{CommandError, EXIT_CODES, Kind};

/// Write man pages and shell completions from the command definitions
///
/// Writes DIR/man/*.1 (one page per command) and DIR/completions/ for bash, zsh, fish,
/// elvish and powershell (the scripts `COMPLETE=SHELL convo` prints). Run `cargo run -- generate-docs .` after changing any flag; a test
/// fails while the committed files are stale.
#[derive(clap::Args)]
pub struct Args {
    /// Where to write man/ and completions/
    #[arg(default_value = ".")]
    dir: PathBuf,
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), CommandError> {
    std::fs::write(path, bytes).map_err(|e| CommandError::new(Kind::Store, format!("{}: {e}", path.display())))
}

fn mkdir(path: &Path) -> Result<(), CommandError> {
    std::fs::create_dir_all(path).map_err(|e| CommandError::new(Kind::Store, format!("{}: {e}", path.display())))
}

pub fn run(command: clap::Command, args: Args) -> Result<(), CommandError> {
    let man_dir = args.dir.join("man");
    let completions_dir = args.dir.join("completions");
    mkdir(&man_dir)?;
    mkdir(&completions_dir)?;
    for (name, page) in man_pages(command) {
        let mut bytes = Vec::new();
        clap_mangen::Man::new(page).render(&mut bytes).map_err(|e| CommandError::new(Kind::Store, e.to_string()))?;
        bytes.extend_from_slice(exit_status_section().as_bytes());
        write(&man_dir.join(format!("{name}.1")), &bytes)?;
    }
    // The scripts `COMPLETE=SHELL convo` prints: they ask `convo` (from PATH) at each TAB,
    // so conversation ids and titles complete as well as flags.
    let shells = clap_complete::env::Shells::builtins();
    for (shell, file) in [
        ("bash", "convo.bash"),
        ("zsh", "_convo"),
        ("fish", "convo.fish"),
        ("elvish", "convo.elv"),
        ("powershell", "_convo.ps1"),
    ] {
        let completer = shells
            .completer(shell)
            .ok_or_else(|| CommandError::internal(format!("clap_complete has no {shell} completer")))?;
        let mut bytes = Vec::new();
        completer
            .write_registration("COMPLETE", "convo", "convo", "convo", &mut bytes)
            .map_err(|e| CommandError::new(Kind::Store, e.to_string()))?;
        write(&completions_dir.join(file), &bytes)?;
    }
    Ok(())
}

/// One page per command and per nested command (`convo-config-set`), named as the
/// SUBCOMMANDS section of its parent's page refers to it. Without a `help` subcommand, which
/// would be listed as a `convo-help(1)` no one writes, and without the exit codes in the
/// EXTRA section, where roff would run their lines together: [`exit_status_section`] says
/// them instead.
fn man_pages(command: clap::Command) -> Vec<(String, clap::Command)> {
    fn prepare(command: clap::Command) -> clap::Command {
        command.disable_help_subcommand(true).after_long_help(None::<&str>).mut_subcommands(prepare)
    }
    fn walk(name: String, command: clap::Command, pages: &mut Vec<(String, clap::Command)>) {
        for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
            let sub_name = format!("{name}-{}", sub.get_name());
            walk(sub_name.clone(), sub.clone().name(&sub_name), pages);
        }
        pages.push((name, command));
    }
    let mut command = prepare(command);
    command.build();
    let mut pages = Vec::new();
    walk("convo".to_owned(), command, &mut pages);
    pages.sort_by(|a, b| a.0.cmp(&b.0));
    pages
}

/// `EXIT STATUS`, one tagged paragraph per code, from the same text `convo --help` shows
/// (`EXIT_CODES`: a heading line, then `CODE  meaning` lines, continuations indented).
fn exit_status_section() -> String {
    let mut codes: Vec<(String, String)> = Vec::new();
    for line in EXIT_CODES.lines().skip(1) {
        let line = line.trim();
        match line.split_once(char::is_whitespace) {
            Some((code, text)) if code.chars().all(|c| c.is_ascii_digit()) => {
                codes.push((code.to_owned(), text.trim().to_owned()))
            }
            _ => {
                if let Some((_, text)) = codes.last_mut() {
                    text.push(' ');
                    text.push_str(line);
                }
            }
        }
    }
    let mut roff = String::from(".SH \"EXIT STATUS\"\n");
    for (code, text) in codes {
        roff += &format!(".TP\n{code}\n{}\n", roff_text(&text));
    }
    roff
}

/// Text for a roff line: backslashes and hyphens escaped, a leading `.` or `'` (a request)
/// made literal.
fn roff_text(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) { format!("\\&{escaped}") } else { escaped }
}
