//! History tied to the repository: an import records where its session ran (`project` in
//! `meta.json`: cwd, branch, the repository's remote), and `list --here` / `--project DIR`
//! find a repository's conversations by its remote, in any clone at any path, through a
//! hub; a recorded cwd is data, only ever read as a path, never written to.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{TestEnv, bare, claude_session, run_command};

/// `git` in the sealed environment, in `dir`.
fn git(env: &TestEnv, dir: &Path, args: &[&str]) {
    let out = env.sealed("git").args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A git repository at `dir` whose `origin` is `url` (none when `None`).
fn repository(env: &TestEnv, dir: &Path, url: Option<&str>) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    git(env, dir, &["init", "--quiet", "--initial-branch=main"]);
    if let Some(url) = url {
        git(env, dir, &["remote", "add", "origin", url]);
    }
    dir.to_owned()
}

/// A Codex rollout that ran in `cwd`, its `git` record naming `url` (or no remote).
fn codex_session(cwd: &str, url: Option<&str>, prompt: &str) -> String {
    let mut git = serde_json::json!({"branch": "main", "commit_hash": "87d292ac346e58c85dc4eef0a8dd13bd02ec0c7f"});
    if let Some(url) = url {
        git["repository_url"] = url.into();
    }
    let message = |role: &str, text: &str| {
        let kind = if role == "user" { "input_text" } else { "output_text" };
        serde_json::json!({"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
            "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}})
        .to_string()
    };
    [
        serde_json::json!({"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
            "payload": {"id": "019", "cwd": cwd, "originator": "codex_cli_rs", "git": git}})
        .to_string(),
        message("user", &format!("<environment_context>\n  <cwd>{cwd}</cwd>\n</environment_context>")),
        message("user", prompt),
        message("assistant", "Done."),
    ]
    .join("\n")
        + "\n"
}

fn import(env: &TestEnv, name: &str, text: &str) -> String {
    let file = env.root.join("sessions").join(name);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    env.run(&["import", file.to_str().unwrap()]).ok().lines().next().unwrap().to_owned()
}

/// `convo ARGS` run in `dir`.
fn run_in(env: &TestEnv, dir: &Path, args: &[&str]) -> String {
    let mut cmd = env.command(args);
    cmd.current_dir(dir).env("COLUMNS", "120");
    run_command(cmd, "").ok().to_owned()
}

/// Two repositories (one remote each) and a folder in none, with sessions of both agents.
struct World {
    env: TestEnv,
    project: PathBuf,
}

fn world() -> World {
    let env = TestEnv::new();
    let project = repository(&env, &env.root.join("work/project"), Some("https://github.com/Example/project.git"));
    let other = repository(&env, &env.root.join("work/other"), Some("https://github.com/Example/other.git"));
    std::fs::create_dir_all(project.join("src")).unwrap();
    let loose = env.root.join("loose/notes");
    std::fs::create_dir_all(&loose).unwrap();
    let path = |p: &Path| p.to_str().unwrap().to_owned();
    // Claude Code records no remote: the one at its cwd (a subfolder) is looked up.
    import(&env, "c1.jsonl", &claude_session(&path(&project.join("src")), "feature/here", "Fix the parser"));
    // Codex without a `repository_url`: looked up too.
    import(&env, "x1.jsonl", &codex_session(&path(&project), None, "Add a --here flag"));
    import(&env, "c2.jsonl", &claude_session(&path(&other), "main", "Unrelated work"));
    // Codex naming its remote (another spelling of `other`): taken as recorded.
    import(
        &env,
        "x2.jsonl",
        &codex_session("/nowhere/on/this/machine", Some("git@github.com:Example/other"), "Elsewhere"),
    );
    import(&env, "c3.jsonl", &claude_session(&path(&loose), "", "Loose notes"));
    World { env, project }
}

#[test]
fn list_here_shows_the_conversations_of_the_current_repository() {
    let World { env, project } = world();
    insta::assert_snapshot!(run_in(&env, &project.join("src"), &["list", "--here"]), @r"
    01KDVDYE Fix the parser     1 turn  2 events   ~5 tok  2026-01-01 00:00
    01KDVE09 Add a --here flag  1 turn  3 events  ~27 tok  2026-01-01 00:00
    ");
    // The same from anywhere, naming the folder; outside any repository, by path.
    assert_eq!(
        run_in(&env, &env.root, &["list", "--project", project.to_str().unwrap()]),
        run_in(&env, &project, &["list", "--here"])
    );
    insta::assert_snapshot!(run_in(&env, &env.root, &["list", "--project", "loose"]), @"* 01KDVE5S Loose notes  1 turn  2 events  ~4 tok  2026-01-01 00:00");
    // `work/` is in no repository: every session that ran below it, whichever repository.
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&run_in(&env, &env.root.join("work"), &["list", "--here", "--format", "json"])).unwrap();
    let titles: Vec<&str> = rows.iter().map(|r| r["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["Fix the parser", "Add a --here flag", "Unrelated work"]);
}

#[test]
fn list_json_says_where_each_session_ran() {
    let World { env, .. } = world();
    env.new_conversation("made here");
    let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let places: Vec<String> =
        rows.iter().map(|r| format!("{} | {} | {} | {}", r["title"], r["cwd"], r["branch"], r["remote"])).collect();
    insta::assert_snapshot!(env.redact(&places.join("\n")), @r#"
    "Fix the parser" | "[ROOT]/work/project/src" | "feature/here" | "https://github.com/Example/project.git"
    "Add a --here flag" | "[ROOT]/work/project" | "main" | "https://github.com/Example/project.git"
    "Unrelated work" | "[ROOT]/work/other" | "main" | "https://github.com/Example/other.git"
    "Elsewhere" | "/nowhere/on/this/machine" | "main" | "git@github.com:Example/other"
    "Loose notes" | "[ROOT]/loose/notes" | null | null
    "made here" | null | null | null
    "#);
}

/// A teammate's clone at another path, with another spelling of the remote, gets the
/// conversations through a hub (`convo push`, `convo clone`) and finds them with `--here`.
#[test]
fn list_here_matches_across_clones_at_other_paths() {
    let World { env: a, project } = world();
    let hub_dir = tempfile::tempdir().unwrap();
    let hub = bare(hub_dir.path(), "hub");
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    a.run(&["push"]).ok();

    let b = TestEnv::bare_at(100);
    b.run(&["clone", hub.to_str().unwrap(), b.store.to_str().unwrap()]).ok();
    let clone = repository(&b, &b.root.join("elsewhere/checkout"), Some("git@github.com:Example/project"));
    assert_ne!(clone, project);
    let here = run_in(&b, &clone, &["list", "--here"]);
    insta::assert_snapshot!(here, @r"
    01KDVDYE Fix the parser     1 turn  2 events   ~5 tok  2026-01-01 00:00
    01KDVE09 Add a --here flag  1 turn  3 events  ~27 tok  2026-01-01 00:00
    ");
    // `other` by an ssh URL with a port: the Codex session that recorded its scp-like spelling.
    let other = repository(&b, &b.root.join("elsewhere/other"), Some("ssh://git@GitHub.com:22/Example/other.git/"));
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&run_in(&b, &other, &["list", "--here", "--format", "json"])).unwrap();
    let titles: Vec<&str> = rows.iter().map(|r| r["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["Unrelated work", "Elsewhere"]);
    // A repository with no remote matches by its own path only: nothing ran here.
    let plain = repository(&b, &b.root.join("elsewhere/plain"), None);
    assert_eq!(run_in(&b, &plain, &["list", "--here"]), "");
}

#[test]
fn list_project_of_a_missing_directory_is_refused() {
    let env = TestEnv::new();
    let out = env.run(&["list", "--project", "no/such/dir"]);
    insta::assert_snapshot!(env.transcript(&out), @r"
    exit 4
    --- stderr
    error: no/such/dir: No such file or directory (os error 2)
    hint: --project takes a directory: a repository's (any folder in it), or a folder of sessions
    ");
}

/// Every file under `dir` (`.git` included) with its bytes and permissions.
fn tree(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                todo.push(path.clone());
            }
            let bytes = if meta.is_file() { std::fs::read(&path).unwrap() } else { Vec::new() };
            out.insert(path, (bytes, meta.permissions().mode()));
        }
    }
    out
}

/// A recorded cwd is data: relative, climbing out, through a symlink, huge, or full of
/// control characters, it imports, is never written to, and leads to no remote lookup
/// except for a real, canonical directory.
#[test]
fn a_hostile_recorded_cwd_is_harmless_and_never_written_to() {
    let env = TestEnv::new();
    let target = repository(&env, &env.root.join("victim"), Some("https://github.com/victim/repo.git"));
    std::os::unix::fs::symlink(&target, env.root.join("link")).unwrap();
    let before = tree(&target);
    let link = format!("{}/link", env.root.display());
    let dotted = format!("{}/victim/../victim", env.root.display());
    let huge = format!("/{}", "x/".repeat(50_000));
    let cases = [
        ("relative", "../../etc"),
        ("plain relative", "victim"),
        ("symlink", link.as_str()),
        ("dot-dot", dotted.as_str()),
        ("huge", huge.as_str()),
        ("control", "/tmp/\u{1b}[31mred"),
    ];
    let mut seen = Vec::new();
    for (n, (name, cwd)) in cases.iter().enumerate() {
        import(&env, &format!("{n}.jsonl"), &claude_session(cwd, "main", name));
        let meta: serde_json::Value = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
        let row = &meta.as_array().unwrap()[n];
        let cwd = row["cwd"].as_str().map(|c| if c.len() > 80 { "(long)".to_owned() } else { env.redact(c) });
        seen.push(format!("{name}: cwd {cwd:?}, remote {}", row["remote"]));
    }
    insta::assert_snapshot!(seen.join("\n"), @r#"
    relative: cwd Some("../../etc"), remote null
    plain relative: cwd Some("victim"), remote null
    symlink: cwd Some("[ROOT]/link"), remote null
    dot-dot: cwd Some("[ROOT]/victim/../victim"), remote null
    huge: cwd None, remote null
    control: cwd None, remote null
    "#);
    assert!(tree(&target) == before, "the repository a cwd pointed at was changed");
    assert!(!env.root.join("etc").exists() && !env.root.join("store/victim").exists());
    // Listing by a project finds nothing through them either.
    assert_eq!(run_in(&env, &target, &["list", "--here"]), "");
    assert!(tree(&target) == before);
}

/// A session captured by Claude Code's hook as it grows (`import --follow`) records where it
/// ran too; its subagent's conversation (new in a later capture) and a fork of it are listed
/// with it.
#[test]
fn a_captured_session_its_subagent_and_a_fork_are_listed_here() {
    let env = TestEnv::new();
    let repo = repository(&env, &env.root.join("repo"), Some("git@example.com:team/repo.git"));
    let cwd = repo.to_str().unwrap();
    let line = |uuid: &str, parent: Option<&str>, kind: &str, side: bool, content: serde_json::Value| {
        serde_json::json!({"parentUuid": parent, "isSidechain": side, "type": kind, "uuid": uuid,
            "timestamp": "2026-01-01T00:00:00Z", "cwd": cwd, "gitBranch": "main", "sessionId": "s1",
            "message": {"role": kind, "content": content}})
        .to_string()
            + "\n"
    };
    let task = serde_json::json!([{"type": "tool_use", "id": "toolu_1", "name": "Task",
        "input": {"description": "Survey the store code", "prompt": "Look at src/store and report."}}]);
    let first = line("u1", None, "user", false, "Refactor the store".into())
        + &line("a1", Some("u1"), "assistant", false, task);
    let later = line("s1", Some("a1"), "user", true, "Look at src/store and report.".into())
        + &line("s2", Some("s1"), "assistant", true, serde_json::json!([{"type": "text", "text": "It is big."}]))
        + &line(
            "u2",
            Some("a1"),
            "user",
            false,
            serde_json::json!([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "It is big."}]),
        )
        + &line("a2", Some("u2"), "assistant", false, serde_json::json!([{"type": "text", "text": "Done."}]));
    let transcript = env.root.join("s1.jsonl");
    let hook =
        serde_json::json!({"session_id": "s1", "transcript_path": transcript, "hook_event_name": "Stop"}).to_string();
    std::fs::write(&transcript, &first).unwrap();
    env.run_stdin(&["hook", "claude-code"], &hook).ok();
    std::fs::write(&transcript, first + &later).unwrap();
    env.run_stdin(&["hook", "claude-code"], &hook).ok();
    env.run(&["fork", "Refactor the store", "--title", "the other way"]).ok();
    env.new_conversation("elsewhere");
    insta::assert_snapshot!(run_in(&env, &repo, &["list", "--here"]), @r"
    01KDVDTS Refactor the store                           1 turn  4 events  ~30 tok  2026-01-01 00:00
    01KDVDWM └ Refactor the store: Survey the store code  1 turn  2 events  ~10 tok  2026-01-01 00:00
    01KDVDYE ⑂ the other way                              1 turn  4 events  ~30 tok  2026-01-01 00:00
    ");
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&run_in(&env, &repo, &["list", "--here", "--format", "json"])).unwrap();
    let subagent = rows.iter().find(|r| !r["subagent_of"].is_null()).unwrap();
    assert_eq!(
        (subagent["cwd"].as_str(), subagent["remote"].as_str()),
        (Some(cwd), Some("git@example.com:team/repo.git"))
    );
}

/// The MCP server's `list_conversations` with `here` lists the conversations of the project
/// the server runs in, as `list --here` does; a client names no path, it can only ask for
/// the server's own.
#[test]
fn mcp_list_conversations_here_lists_the_servers_project() {
    use std::io::{BufRead, BufReader, Write};
    let World { env, project } = world();
    let mut child = env
        .command(&["mcp"])
        .current_dir(project.join("src"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("convo runs");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |line: &str, answer: bool| -> serde_json::Value {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let mut reply = String::new();
        if answer {
            stdout.read_line(&mut reply).unwrap();
        }
        serde_json::from_str(&reply).unwrap_or_default()
    };
    ask(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}"#,
        true,
    );
    ask(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, false);
    let mut titles = |arguments: &str| -> Vec<String> {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"list_conversations","arguments":{arguments}}}}}"#
        );
        let listed = ask(&call, true);
        let rows = listed["result"]["structuredContent"]["conversations"].as_array();
        let rows = rows.unwrap_or_else(|| panic!("{listed}"));
        let mut titles: Vec<String> = rows.iter().map(|r| r["title"].as_str().unwrap().to_owned()).collect();
        titles.sort();
        titles
    };
    assert_eq!(titles(r#"{"here":true}"#), ["Add a --here flag", "Fix the parser"]);
    assert_eq!(titles(r#"{"here":false}"#).len(), 5);
    assert_eq!(titles("{}").len(), 5);
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// A Claude Code session that ran in `cwd`, its one answer by `claude-sonnet-4` having used
/// `input` and `output` tokens.
fn used_session(cwd: &Path, session: &str, prompt: &str, input: u64, output: u64) -> String {
    let line = |uuid: &str, parent: Option<&str>, message: serde_json::Value| {
        serde_json::json!({
            "parentUuid": parent, "isSidechain": false, "type": message["role"], "uuid": uuid,
            "timestamp": "2026-01-01T00:00:00Z", "cwd": cwd, "gitBranch": "main", "sessionId": session,
            "message": message,
        })
        .to_string()
    };
    let answer = serde_json::json!({"role": "assistant", "model": "claude-sonnet-4", "id": format!("msg_{session}"),
        "content": [{"type": "text", "text": "Done."}],
        "usage": {"input_tokens": input, "output_tokens": output}});
    [line("u1", None, serde_json::json!({"role": "user", "content": prompt})), line("a1", Some("u1"), answer)]
        .join("\n")
        + "\n"
}

/// `usage --by project` in `env`, as a table.
fn usage_by_project(env: &TestEnv) -> String {
    let mut cmd = env.command(&["usage", "--by", "project"]);
    cmd.env("COLUMNS", "120");
    run_command(cmd, "").ok().to_owned()
}

/// Issue 41: Alice's clone has the https URL, Bob's the ssh one (another host case, no
/// `.git`): one repository, one row. A fork made with `convo fork` records no place of its
/// own: it counts under its parent's project, and the events it copied count once.
#[test]
fn usage_by_project_is_one_row_for_one_repository_however_its_remote_is_spelled() {
    let env = TestEnv::new();
    let https = repository(&env, &env.root.join("alice/project"), Some("https://github.com/Example/project.git"));
    let ssh = repository(&env, &env.root.join("bob/project"), Some("git@GitHub.com:Example/project"));
    let other = repository(&env, &env.root.join("bob/other"), Some("ssh://git@github.com/Example/other.git"));
    import(&env, "a.jsonl", &used_session(&https, "a", "Alice's work", 1000, 100));
    import(&env, "b.jsonl", &used_session(&ssh, "b", "Bob's work", 2000, 200));
    import(&env, "c.jsonl", &used_session(&other, "c", "Other work", 4000, 400));
    env.run(&["fork", "Alice's work", "--title", "Alice's other way"]).ok();
    env.run(&["append", "--user", "and then?"]).ok();
    // `list --format json` names each project as `usage` does, the fork its parent's.
    let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let projects: Vec<String> = rows.iter().map(|r| format!("{} | {}", r["title"], r["project"])).collect();
    insta::assert_snapshot!(projects.join("\n"), @r#"
    "Alice's work" | "github.com/Example/project"
    "Bob's work" | "github.com/Example/project"
    "Other work" | "github.com/Example/other"
    "Alice's other way" | "github.com/Example/project"
    "#);
    insta::assert_snapshot!(usage_by_project(&env), @r#"
    project                     input  output  cache read  cache write   cost
    github.com/Example/other    4,000     400           0            0  $0.02
    github.com/Example/project  3,000     300           0            0  $0.01
    total                       7,000     700           0            0  $0.03
    prices of 2025-11-01, US$ per million tokens; config's prices."MODEL" sets others
    "#);
}

/// Issue 41: a conversation appended to on both sides of a hub becomes a fork on `pull`:
/// the fork keeps the project, and the events it holds from before the split count once.
#[test]
fn a_fork_made_by_pull_keeps_its_project_and_counts_its_copied_events_once() {
    let hub_dir = tempfile::tempdir().unwrap();
    let hub = bare(hub_dir.path(), "hub");
    let url = hub.to_str().unwrap();
    let a = TestEnv::new();
    let repo = repository(&a, &a.root.join("project"), Some("https://github.com/Example/project.git"));
    import(&a, "a.jsonl", &used_session(&repo, "a", "Shared work", 1000, 100));
    a.run(&["remote", "add", "origin", url]).ok();
    a.run(&["push"]).ok();
    let b = TestEnv::bare_at(100);
    b.run(&["clone", url, b.store.to_str().unwrap()]).ok();
    b.run(&["switch", "Shared work"]).ok();
    b.run(&["append", "--user", "from b"]).ok();
    a.run(&["append", "--user", "from a"]).ok();
    a.run(&["push"]).ok();
    assert!(b.run(&["pull"]).ok_status().contains("diverged"));
    insta::assert_snapshot!(usage_by_project(&b), @r#"
    project                     input  output  cache read  cache write   cost
    github.com/Example/project  1,000     100           0            0  $0.00
    total                       1,000     100           0            0  $0.00
    prices of 2025-11-01, US$ per million tokens; config's prices."MODEL" sets others
    "#);
    let rows: serde_json::Value =
        serde_json::from_str(b.run(&["usage", "--by", "project,conversation", "--format", "json"]).ok()).unwrap();
    let keys: Vec<String> = rows["rows"].as_array().unwrap().iter().map(|r| r["key"]["project"].to_string()).collect();
    assert_eq!(keys, ["\"github.com/Example/project\""], "the fork's own events used nothing");
}
