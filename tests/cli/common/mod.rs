//! A sealed environment for running the real `convo` binary: a temporary HOME and store, no
//! inherited git config, a clock that advances one minute per command (so ids and commit
//! hashes are reproducible), and helpers to compare whole outputs and whole stores.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub struct TestEnv {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub store: PathBuf,
    tick: Cell<u32>,
    /// Hours added to this environment's clock, so two environments never mint the same ids.
    epoch: u32,
}

#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Assert success and return stdout.
    #[track_caller]
    pub fn ok(&self) -> &str {
        assert_eq!(self.code, 0, "command failed\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        &self.stdout
    }

    /// Assert success and return stderr: what a command says for people (`pull`'s status).
    #[track_caller]
    pub fn ok_status(&self) -> &str {
        self.ok();
        &self.stderr
    }

    #[track_caller]
    pub fn fails_with(&self, code: i32) -> &str {
        assert_eq!(self.code, code, "unexpected exit\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        &self.stderr
    }
}

impl TestEnv {
    /// An environment whose store (`CONVO_DIR`) is initialised.
    pub fn new() -> TestEnv {
        let env = TestEnv::bare();
        env.run(&["init"]).ok();
        env
    }

    /// An environment with no store yet.
    pub fn bare() -> TestEnv {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical tempdir");
        std::fs::create_dir_all(root.join("home")).unwrap();
        TestEnv { store: root.join("store"), root, _dir: dir, tick: Cell::new(0), epoch: 0 }
    }

    /// A second environment whose clock runs `hours` ahead (distinct ids and hashes).
    pub fn bare_at(hours: u32) -> TestEnv {
        TestEnv { epoch: hours, ..TestEnv::bare() }
    }

    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    /// The time the next command sees: one minute after the previous one.
    fn next_now(&self) -> String {
        let n = self.tick.get();
        self.tick.set(n + 1);
        let hours = self.epoch + n / 60;
        format!("2026-01-{:02}T{:02}:{:02}:00Z", 1 + hours / 24, hours % 24, n % 60)
    }

    /// A command with a sealed environment; CONVO_DIR points at this env's store.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = self.command_without_store(args);
        cmd.env("CONVO_DIR", &self.store);
        cmd
    }

    /// A sealed command that finds its store through XDG_DATA_HOME (the default location).
    pub fn command_without_store(&self, args: &[&str]) -> Command {
        let mut cmd = self.sealed(env!("CARGO_BIN_EXE_convo"));
        cmd.args(args);
        cmd
    }

    /// Any program, run with the sealed environment (and CONVO_DIR unset).
    pub fn sealed(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("XDG_DATA_HOME", self.home().join(".local/share"))
            .env("XDG_CONFIG_HOME", self.home().join(".config"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("CONVO_NOW", self.next_now())
            .current_dir(&self.root);
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.run_stdin(args, "")
    }

    pub fn run_stdin(&self, args: &[&str], stdin: &str) -> Run {
        run_command(self.command(args), stdin)
    }

    /// Every file of the store, `.git` included, with its bytes: two equal snapshots mean
    /// the store is byte-for-byte unchanged. All but the outline index (`.git/convo/outline`),
    /// which any reader fills in, a refused command included: its records are keyed by the
    /// blob they describe, so one can be added but never make an answer wrong (the outline
    /// tests check it against full reads).
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        collect(&self.store, &self.store, &mut files);
        files
    }

    /// `git status --porcelain` of the store (empty when clean).
    pub fn git_status(&self) -> String {
        self.git(&["status", "--porcelain"])
    }

    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(&self.store)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// `text` with this environment's temporary root shown as `[ROOT]`, so a snapshot does
    /// not depend on where the temporary directory was made.
    pub fn redact(&self, text: &str) -> String {
        text.replace(self.root.to_str().expect("a UTF-8 temporary path"), "[ROOT]")
    }

    /// A command's whole result for a snapshot: its exit code, then stdout and stderr, with
    /// the temporary root redacted. An empty stream is left out.
    pub fn transcript(&self, run: &Run) -> String {
        let mut out = format!("exit {}\n", run.code);
        for (name, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
            if !text.is_empty() {
                out += &format!("--- {name}\n{}", self.redact(text));
                if !text.ends_with('\n') {
                    out += "\n[no newline at the end]\n";
                }
            }
        }
        out
    }

    /// `transcript`, with each `(value, placeholder)` of `names` replaced too: whatever else
    /// differs from run to run, such as a loopback server's URL (its port).
    pub fn transcript_with(&self, run: &Run, names: &[(&str, &str)]) -> String {
        names.iter().fold(self.transcript(run), |text, (value, placeholder)| text.replace(value, placeholder))
    }

    /// Start a conversation and return its id (`new` prints it alone on stdout).
    pub fn new_conversation(&self, title: &str) -> String {
        self.run(&["new", "--title", title]).ok().trim_end().to_owned()
    }
}

pub fn run_command(mut cmd: Command, stdin: &str) -> Run {
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("convo runs");
    {
        let mut pipe = child.stdin.take().unwrap();
        let _ = pipe.write_all(stdin.as_bytes());
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn collect(base: &Path, dir: &Path, files: &mut BTreeMap<PathBuf, Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            if path.strip_prefix(base).unwrap() == Path::new(".git/convo/outline") {
                continue;
            }
            collect(base, &path, files);
        } else {
            files.insert(path.strip_prefix(base).unwrap().to_owned(), std::fs::read(&path).unwrap());
        }
    }
}

pub mod server;

pub mod agents;

pub mod llama;

pub mod githttp;

pub mod chromium;

pub mod sessions;

/// A bare repository `name.git` under `dir`, on branch main, accepting pushes over HTTP: a
/// hub for the sharing tests.
pub fn bare(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(format!("{name}.git"));
    let ok = Command::new("git")
        .args(["init", "--quiet", "--bare", "--initial-branch=main"])
        .arg(&path)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap()
        .success();
    assert!(ok);
    Command::new("git").args(["config", "http.receivepack", "true"]).current_dir(&path).status().unwrap();
    path
}

/// Two people, each with a HOME and clock of their own, sharing a hub: `a` has a store (no
/// remote yet: add `url` when the test wants it), `b` none yet (its clock 100 hours
/// ahead, so the two never mint the same ids). Taken apart, `served` is held to the end
/// (`served: _served`): dropping it stops the hub's server and removes its folder.
pub struct TwoPeople {
    pub a: TestEnv,
    pub b: TestEnv,
    /// The bare repository `hub.git`.
    pub hub: PathBuf,
    /// What a remote names it by: `git://…/hub.git`, or the hub's path (see
    /// [`two_people_on_disk`]).
    pub url: String,
    pub served: Served,
}

/// A hub's server (if any) and the folder holding the hub, kept while held.
pub struct Served {
    _daemon: Option<githttp::Daemon>,
    dir: tempfile::TempDir,
}

impl Served {
    /// The folder holding the hub.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// [`TwoPeople`] sharing a hub served by `git daemon`, as a team on a network does.
pub fn two_people() -> TwoPeople {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let daemon = githttp::Daemon::start(dir.path());
    let url = format!("{}/hub.git", daemon.url);
    let served = Served { _daemon: Some(daemon), dir };
    TwoPeople { a: TestEnv::new(), b: TestEnv::bare_at(100), hub, url, served }
}

/// [`TwoPeople`] sharing a hub by its path, for the tests whose output names the hub.
pub fn two_people_on_disk() -> TwoPeople {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let url = hub.to_str().unwrap().to_owned();
    TwoPeople { a: TestEnv::new(), b: TestEnv::bare_at(100), hub, url, served: Served { _daemon: None, dir } }
}

/// A process named `git` working in the store: what convo sees of a live git.
pub struct FakeGit(std::process::Child);

impl FakeGit {
    pub fn start(env: &TestEnv, seconds: &str) -> FakeGit {
        let bin: PathBuf = env.root.join("fake-bin");
        std::fs::create_dir_all(&bin).unwrap();
        let git = bin.join("git");
        if !git.exists() {
            std::fs::copy("/bin/sleep", &git).unwrap();
        }
        FakeGit(Command::new(&git).arg(seconds).current_dir(&env.store).spawn().unwrap())
    }
}

impl Drop for FakeGit {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Install a test dependency from PyPI with `.ci/SCRIPT install VENV` (a venv under the
/// target folder, `target/VENV`): the venv, or `Err(why)` when the install is impossible
/// here (the script's exit 10, its last line saying why) and `CONVO_SKIP_PYPI` asks to skip
/// what needs it; an impossible install without it, or any other failure, panics.
pub fn pypi_venv(script: &str, venv: &str) -> Result<PathBuf, String> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // `CARGO_TARGET_TMPDIR` is `<target>/tmp`.
    let venv = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).parent().expect("target folder").join(venv);
    let out = Command::new("bash")
        .arg(repo.join(".ci").join(script))
        .arg("install")
        .arg(&venv)
        .stdin(Stdio::null())
        .output()
        .expect("bash runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => Ok(venv),
        // Its last line says why (pip's own output comes before it).
        Some(10) if std::env::var_os("CONVO_SKIP_PYPI").is_some() => {
            Err(stderr.trim().lines().last().unwrap_or_default().to_owned())
        }
        Some(10) => panic!("{script} cannot install here (CONVO_SKIP_PYPI=1 skips the tests that need it):\n{stderr}"),
        _ => panic!("{script} install failed:\n{stderr}"),
    }
}

/// What a test does when something it needs outside convo is missing here: fail, unless
/// the opt-out variable `var` (`CONVO_SKIP_…`) is set, in which case the skip is said on
/// stderr past the harness's capture and the test returns. A missing dependency never
/// passes for a test that ran.
#[track_caller]
pub fn skip_or_fail(var: &str, why: &str) {
    if std::env::var_os(var).is_none() {
        panic!("{why} ({var}=1 skips this test)");
    }
    let _ = writeln!(std::io::stderr(), "SKIPPED ({var}): {why}");
}

/// The fan folder of conversation `id` in a store's tree: its last two characters.
pub fn fan(id: &str) -> &str {
    &id[id.len() - 2..]
}

/// Where conversation `id`'s folder is, from the store's root.
pub fn conversation_dir(id: &str) -> String {
    format!("conversations/{}/{id}", fan(id))
}

/// A Claude Code session that ran in `cwd` on `branch`, asking `prompt`.
pub fn claude_session(cwd: &str, branch: &str, prompt: &str) -> String {
    let line = |uuid: &str, parent: Option<&str>, kind: &str, content: serde_json::Value| {
        serde_json::json!({
            "parentUuid": parent, "isSidechain": false, "type": kind, "uuid": uuid,
            "timestamp": "2026-01-01T00:00:00Z", "cwd": cwd, "gitBranch": branch, "sessionId": "s",
            "message": {"role": kind, "content": content},
        })
        .to_string()
    };
    [
        line("u1", None, "user", prompt.into()),
        line("a1", Some("u1"), "assistant", serde_json::json!([{"type": "text", "text": "Done."}])),
    ]
    .join("\n")
        + "\n"
}

/// `convo mcp` over a bare pipe: each request is one JSON line in, its answer one line out.
pub struct McpPipe {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl McpPipe {
    /// The server of `env`'s store, its stderr dropped.
    pub fn start(env: &TestEnv) -> McpPipe {
        use std::process::Stdio;
        let mut child =
            env.command(&["mcp"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        McpPipe { child, stdin, stdout }
    }

    /// Send `line`; with `answer`, read and parse the line the server answers.
    pub fn ask(&mut self, line: &str, answer: bool) -> Option<serde_json::Value> {
        use std::io::{BufRead, Write};
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        answer.then(|| {
            let mut reply = String::new();
            self.stdout.read_line(&mut reply).unwrap();
            serde_json::from_str(&reply).unwrap_or_else(|e| panic!("{e}: {reply}"))
        })
    }

    /// Close stdin and wait: whether the server then exited with success.
    pub fn finish(self) -> bool {
        let McpPipe { mut child, stdin, .. } = self;
        drop(stdin);
        child.wait().unwrap().success()
    }
}
