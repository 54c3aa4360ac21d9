//! The real coding agents (Claude Code, Codex, Gemini CLI and opencode from npm, pinned in
//! `.ci/agents.sh`), run offline in a sealed HOME against `tests/agent_server.py` on
//! loopback, which logs every request and answers a fixed text or a scripted tool call.
//!
//! When the install is impossible here (no npm registry, nothing installed) the tests fail,
//! unless `CONVO_SKIP_AGENTS=1` says to skip them, which they then say on stderr.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

pub struct Agents {
    pub claude: PathBuf,
    pub codex: PathBuf,
    /// Gemini CLI's bundle, run by the node on PATH.
    pub gemini: PathBuf,
    pub opencode: PathBuf,
}

static AGENTS: OnceLock<Result<Agents, String>> = OnceLock::new();

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn target() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).parent().expect("target folder").to_owned()
}

fn agents_script(args: &[&str]) -> std::process::Output {
    Command::new("bash")
        .arg(repo().join(".ci/agents.sh"))
        .args(args)
        .env("CARGO_TARGET_DIR", target())
        .stdin(Stdio::null())
        .output()
        .expect("bash runs")
}

fn install() -> Result<Agents, String> {
    let out = agents_script(&["install"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {}
        Some(10) => return Err(stderr.trim().lines().last().unwrap_or_default().to_owned()),
        _ => panic!("agents.sh install failed:\n{stderr}"),
    }
    let path = |agent| {
        let out = agents_script(&["path", agent]);
        assert!(out.status.success(), "agents.sh path {agent}: {}", String::from_utf8_lossy(&out.stderr));
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    };
    Ok(Agents { claude: path("claude"), codex: path("codex"), gemini: path("gemini"), opencode: path("opencode") })
}

/// The agents, installed once per test binary; `None` only when the install is impossible
/// and `CONVO_SKIP_AGENTS` is set (said on stderr); otherwise an impossible install fails.
pub fn agents() -> Option<&'static Agents> {
    match AGENTS.get_or_init(install) {
        Ok(agents) => Some(agents),
        Err(why) if std::env::var_os("CONVO_SKIP_AGENTS").is_some() => {
            let _ = writeln!(std::io::stderr(), "SKIPPED (agent tests, CONVO_SKIP_AGENTS): {why}");
            None
        }
        Err(why) => panic!("the agents cannot be installed ({why}); set CONVO_SKIP_AGENTS=1 to skip these tests"),
    }
}

/// `tests/agent_server.py` on a free loopback port, logging to `log`; stops when dropped.
pub struct Recorder {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl Recorder {
    pub fn start(dir: &Path, name: &str, script: Option<&Value>) -> Recorder {
        let log = dir.join(format!("{name}.requests.jsonl"));
        let mut cmd = Command::new("python3");
        cmd.arg(repo().join("tests/agent_server.py")).arg("--log").arg(&log);
        if let Some(script) = script {
            let file = dir.join(format!("{name}.script.json"));
            std::fs::write(&file, script.to_string()).unwrap();
            cmd.arg("--script").arg(file);
        }
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("python3 runs");
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        let port = first.trim().strip_prefix("PORT ").and_then(|p| p.parse().ok()).expect("PORT line");
        Recorder { child, port, log }
    }

    /// Every request logged so far.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The body of the last model request (one that offers the agent tools; for Gemini,
    /// whose side requests have `contents` too, one with `tools`).
    pub fn last_main_body(&self) -> Value {
        self.requests()
            .into_iter()
            .rev()
            .map(|r| r["body"].clone())
            .find(|b| {
                b.get("messages").is_some()
                    || b.get("input").is_some()
                    || (b.get("contents").is_some() && b.get("tools").is_some())
            })
            .expect("a model request was logged")
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A sealed agent run in `cwd`: only the variables below, HOME `home`, stdin closed (Codex
/// waits for more input on an open pipe).
pub fn run_agent(program: &Path, home: &Path, cwd: &Path, port: u16, args: &[&str]) -> super::Run {
    let mut cmd = Command::new(program);
    cmd.env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home)
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
        .env("ANTHROPIC_API_KEY", "test")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("REC_KEY", "test")
        .env("GEMINI_API_KEY", "test")
        .env("GOOGLE_GEMINI_BASE_URL", format!("http://127.0.0.1:{port}"))
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        // opencode: no models.dev catalogue download, no self-update (its data, config and
        // state go under HOME's XDG defaults).
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .current_dir(cwd)
        .args(args)
        .stdin(Stdio::null());
    let out = cmd.output().expect("the agent runs");
    super::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Codex's config in `home`: the recording server as its provider, nothing else reached.
pub fn codex_config(home: &Path, port: u16) {
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    let config = format!(
        "model_provider = \"rec\"\nmodel = \"gpt-5.1-codex\"\n\n[model_providers.rec]\nname = \"recording server\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nenv_key = \"REC_KEY\"\nwire_api = \"responses\"\n\n[analytics]\nenabled = false\n\n[features]\nplugins = false\n"
    );
    std::fs::write(home.join(".codex/config.toml"), config).unwrap();
}

/// Gemini CLI's settings in `home`: an API key (GEMINI_API_KEY, sent to the recording
/// server), no usage statistics.
pub fn gemini_config(home: &Path) {
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    let settings =
        r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false}}"#;
    std::fs::write(home.join(".gemini/settings.json"), settings).unwrap();
}

/// Gemini CLI's arguments for a run without a terminal: a model named (so no routing
/// request picks one), every tool call approved, `prompt` as the one turn.
pub fn gemini_args<'a>(before: &[&'a str], prompt: &'a str) -> Vec<&'a str> {
    let mut args = vec!["-m", "gemini-2.5-flash", "--approval-mode", "yolo"];
    args.extend_from_slice(before);
    args.extend(["-p", prompt]);
    args
}

/// opencode's config in `home`: the recording server as an OpenAI-compatible provider
/// (Chat Completions), its one model the default, nothing shared.
pub fn opencode_config(home: &Path, port: u16) {
    let dir = home.join(".config/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    let config = serde_json::json!({
        "provider": {"rec": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "recording server",
            "options": {"baseURL": format!("http://127.0.0.1:{port}/v1"), "apiKey": "test"},
            "models": {"test-model": {"name": "test model", "tool_call": true}},
        }},
        "model": "rec/test-model",
        "autoupdate": false,
        "share": "disabled",
    });
    std::fs::write(dir.join("opencode.json"), config.to_string()).unwrap();
}

/// opencode's database in `home` (XDG's data folder).
pub fn opencode_db(home: &Path) -> PathBuf {
    home.join(".local/share/opencode/opencode.db")
}

/// opencode, driven by `script` on a recording server, records a natural session of its
/// current version in `proj` (one `opencode run` with `prompt`, every permission approved):
/// the session's id (`ses_…`, as `opencode session list` gives it) and the recorder, whose
/// log holds what opencode sent.
pub fn natural_opencode_session(
    opencode: &Path,
    home: &Path,
    proj: &Path,
    log_dir: &Path,
    script: &Value,
    prompt: &str,
) -> (String, Recorder) {
    let rec = Recorder::start(log_dir, "opencode-record", Some(script));
    opencode_config(home, rec.port);
    let run = run_agent(opencode, home, proj, rec.port, &["run", "--auto", prompt]);
    assert_eq!(run.code, 0, "opencode run:\n{}\n{}", run.stdout, run.stderr);
    let list = run_agent(opencode, home, proj, rec.port, &["session", "list", "--format", "json", "-n", "1"]);
    assert_eq!(list.code, 0, "opencode session list:\n{}\n{}", list.stdout, list.stderr);
    let sessions: Value = serde_json::from_str(&list.stdout).expect("opencode session list prints JSON");
    let id = sessions[0]["id"].as_str().expect("a session id").to_owned();
    (id, rec)
}

/// opencode reverts session `session` to before message `message`, as its `/undo` does:
/// `opencode serve` on a free loopback port, then its HTTP API's
/// `POST /session/{id}/revert`. opencode deletes what the revert took back when the session
/// next goes on.
pub fn opencode_revert(opencode: &Path, home: &Path, cwd: &Path, session: &str, message: &str) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut serve = Command::new(opencode);
    serve
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home)
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .current_dir(cwd)
        .args(["serve", "--hostname", "127.0.0.1", "--port", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = serve.spawn().expect("opencode serve runs");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let listening = lines.by_ref().map_while(Result::ok).any(|l| l.contains("listening on"));
    assert!(listening, "opencode serve did not listen");
    let body = serde_json::json!({"messageID": message}).to_string();
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST /session/{session}/revert HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // The status line: opencode's server may keep the connection open after its answer.
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(answer.starts_with("HTTP/1.1 200"), "opencode's revert: {answer}");
    let conn = rusqlite::Connection::open(home.join(".local/share/opencode/opencode.db")).unwrap();
    let revert: String = conn.query_row("SELECT revert FROM session WHERE id = ?1", [session], |r| r.get(0)).unwrap();
    assert!(revert.contains(message), "opencode recorded no revert: {revert}");
}
