//! Who did what: a commit's author is the person (convo's `user.name` and `user.email`, else
//! git's, else `convo <convo@localhost>` with a hint said once), and every event recorded
//! names the person who recorded it and, where the agent's session says them, the agent, its
//! version and the model. `show` and `log` name them per turn, `--author` filters `log`,
//! `list` and `grep`, `usage --by person|agent` reports, and `redact` keeps them.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::TestEnv;
use crate::common::githttp::Daemon;

/// A real Claude Code 2.1.42 session.
fn claude_session() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus-current/claude-code/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl")
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name).to_str().unwrap().to_owned()
}

fn events(env: &TestEnv, id: &str) -> Vec<Value> {
    env.run(&["show", id, "--format", "jsonl"]).ok().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The turn headings of `show ID`.
fn headings(env: &TestEnv, id: &str) -> Vec<String> {
    env.run(&["show", id]).ok().lines().filter(|l| l.starts_with("── turn")).map(str::to_owned).collect()
}

/// Alice, whose identity is git's (her store's own config), and Bob, whose identity is
/// convo's (`config set user.name`), sharing through a hub served by `git daemon`: Alice
/// imports a Claude Code session and pushes, Bob clones it.
struct Team {
    alice: TestEnv,
    bob: TestEnv,
    hub: PathBuf,
    claude: String,
    _hub: (tempfile::TempDir, Daemon),
}

fn team() -> Team {
    let dir = tempfile::tempdir().unwrap();
    let hub = crate::common::bare(dir.path(), "hub");
    let daemon = Daemon::start(dir.path());
    let url = format!("{}/hub.git", daemon.url);
    let alice = TestEnv::new();
    alice.git(&["config", "user.name", "Alice Doe"]);
    alice.git(&["config", "user.email", "alice@example.com"]);
    let claude = alice.run(&["import", claude_session().to_str().unwrap()]).ok().trim().to_owned();
    alice.run(&["remote", "add", "origin", &url]).ok();
    alice.run(&["push"]).ok();
    let bob = TestEnv::bare_at(100);
    bob.run(&["config", "set", "user.name", "Bob Roe"]).ok();
    bob.run(&["config", "set", "user.email", "bob@example.com"]).ok();
    bob.run(&["clone", &url, bob.store.to_str().unwrap()]).ok();
    Team { alice, bob, hub, claude, _hub: (dir, daemon) }
}

fn hub_authors(hub: &std::path::Path) -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["log", "--format=%an <%ae>"])
        .current_dir(hub)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    let mut authors: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_owned).collect();
    authors.dedup();
    authors
}

#[test]
fn each_person_names_their_commits_in_the_hub_and_their_turns_with_agent_and_model() {
    let Team { alice, bob, hub, claude, _hub } = team();
    let codex = bob.run(&["import", &fixture("codex-0.169.jsonl")]).ok().trim().to_owned();
    bob.run(&["append", &claude, "--user", "bob carries on"]).ok();
    bob.run(&["push"]).ok();

    assert_eq!(hub_authors(&hub), ["Bob Roe <bob@example.com>", "Alice Doe <alice@example.com>"]);

    // Every event names who recorded it; the agents' own claims are theirs.
    let claude_events = events(&bob, &claude);
    let (last, imported) = claude_events.split_last().unwrap();
    assert!(imported.iter().all(|e| e["person"] == "Alice Doe <alice@example.com>"), "{imported:?}");
    assert!(imported.iter().all(|e| e["agent"] == "claude-code" && e["agent_version"] == "2.1.42"));
    assert_eq!(last["person"], "Bob Roe <bob@example.com>");
    assert!(last.get("agent").is_none());

    let turns = headings(&bob, &claude);
    assert!(
        turns[0].ends_with(" ── Alice Doe <alice@example.com> · claude-code 2.1.42 · claude-opus-4-6"),
        "{turns:#?}"
    );
    assert!(turns.last().unwrap().ends_with(" ── Bob Roe <bob@example.com>"), "{turns:#?}");
    let turns = headings(&bob, &codex);
    assert!(turns.iter().all(|t| t.ends_with(" ── Bob Roe <bob@example.com> · codex 0.169.0 · gpt-5.1-codex")));

    let log = bob.run(&["log", &claude]).ok().to_owned();
    let by: Vec<&str> = log.lines().filter(|l| l.starts_with("Author:") || l.starts_with("By:")).collect();
    assert_eq!(
        by,
        [
            "Author: Bob Roe <bob@example.com>",
            "By:     Bob Roe <bob@example.com>",
            "Author: Alice Doe <alice@example.com>",
            "By:     Alice Doe <alice@example.com> · claude-code 2.1.42 · claude-opus-4-6",
        ],
        "{log}"
    );
    let json: Value = serde_json::from_str(bob.run(&["log", &codex, "--format", "json"]).ok()).unwrap();
    assert_eq!(json[0]["people"], serde_json::json!(["Bob Roe <bob@example.com>"]));
    assert_eq!(json[0]["agents"], serde_json::json!(["codex 0.169.0"]));
    assert_eq!(json[0]["models"], serde_json::json!(["gpt-5.1-codex"]));

    // Alice pulls and sees the same.
    alice.run(&["pull"]).ok();
    assert_eq!(headings(&alice, &codex), headings(&bob, &codex));
}

#[test]
fn author_filters_log_list_and_grep_like_git() {
    let Team { bob, claude, _hub, .. } = team();
    let codex = bob.run(&["import", &fixture("codex-0.169.jsonl")]).ok().trim().to_owned();
    bob.run(&["append", &claude, "--user", "bob carries on"]).ok();

    let subjects = |args: &[&str]| -> Vec<String> {
        let json: Value =
            serde_json::from_str(bob.run(&[&["log"], args, &["--format", "json"]].concat()).ok()).unwrap();
        json.as_array().unwrap().iter().map(|e| e["subject"].as_str().unwrap().to_owned()).collect()
    };
    let all = subjects(&[&claude]);
    assert_eq!(all.len(), 2);
    assert_eq!(subjects(&[&claude, "--author", "Alice"]), [all[1].clone()]);
    assert_eq!(subjects(&[&claude, "--author", "bob@example\\.com>$"]), [all[0].clone()]);
    assert_eq!(subjects(&[&claude, "--author", "^Bob", "-n", "1"]), [all[0].clone()]);
    assert!(subjects(&[&claude, "--author", "Carol"]).is_empty());

    let listed = |author: &str| -> Vec<String> {
        let json: Value =
            serde_json::from_str(bob.run(&["list", "--author", author, "--format", "json"]).ok()).unwrap();
        json.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(listed("Alice Doe"), std::slice::from_ref(&claude));
    let mut bobs = listed("Bob");
    bobs.sort();
    let mut both = vec![claude.clone(), codex.clone()];
    both.sort();
    assert_eq!(bobs, both);

    let grep = |author: &str| bob.run(&["grep", "carries on", "-c", "--author", author]);
    assert_eq!(grep("Bob Roe").ok(), format!("{claude}\t1\n"));
    // As grep: nothing found is exit 1.
    assert_eq!((grep("Alice").code, grep("Alice").stdout), (1, String::new()));
    // Alice's events are found by her name, Bob's not.
    let alices = bob.run(&["grep", ".", "-l", "--author", "alice@"]).ok().to_owned();
    assert_eq!(alices, format!("{claude}\n"));
    let refused = bob.run(&["log", &claude, "--author", "("]);
    assert_eq!(refused.fails_with(3), "error: --author (: not a regular expression (unclosed group)\n");
}

/// `list` and `grep` in JSON name who took part in each conversation, and `log --all` says
/// `By:` for each commit as the conversation's own log does.
#[test]
fn list_grep_and_log_all_name_who_took_part() {
    let Team { bob, claude, _hub, .. } = team();
    let codex = bob.run(&["import", &fixture("codex-0.169.jsonl")]).ok().trim().to_owned();
    bob.run(&["append", &claude, "--user", "bob carries on"]).ok();
    let (alice_doe, bob_roe) = ("Alice Doe <alice@example.com>", "Bob Roe <bob@example.com>");
    let who = |row: &Value| (row["people"].clone(), row["agents"].clone(), row["models"].clone());
    let claudes = (
        serde_json::json!([alice_doe, bob_roe]),
        serde_json::json!(["claude-code 2.1.42"]),
        serde_json::json!(["claude-opus-4-6"]),
    );
    let claudes_import = || {
        (
            serde_json::json!([alice_doe]),
            serde_json::json!(["claude-code 2.1.42"]),
            serde_json::json!(["claude-opus-4-6"]),
        )
    };
    let codexes =
        (serde_json::json!([bob_roe]), serde_json::json!(["codex 0.169.0"]), serde_json::json!(["gpt-5.1-codex"]));

    let listed: Value = serde_json::from_str(bob.run(&["list", "--format", "json"]).ok()).unwrap();
    let row = |id: &str| listed.as_array().unwrap().iter().find(|r| r["id"] == id).unwrap().clone();
    assert_eq!(who(&row(&claude)), claudes);
    assert_eq!(who(&row(&codex)), codexes);

    for args in [&[][..], &["-c"], &["-l"]] {
        let out = bob.run(&[&["grep", "carries on", "--format", "json"], args].concat()).ok().to_owned();
        let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: {out}");
        assert_eq!(lines[0]["conversation"], claude.as_str());
        assert_eq!(who(&lines[0]), claudes, "{args:?}");
    }

    // Each commit's `By:` in the whole store's log is its conversation's log's.
    let by = |log: &str| -> Vec<String> {
        log.lines().filter(|l| l.starts_with("commit ") || l.starts_with("By:")).map(str::to_owned).collect()
    };
    let all = by(bob.run(&["log", "--all"]).ok());
    for id in [&claude, &codex] {
        let own = by(bob.run(&["log", id]).ok());
        assert!(own.iter().any(|l| l.starts_with("By:")), "{own:?}");
        for pair in own.windows(2).filter(|p| p[1].starts_with("By:")) {
            let at = all.iter().position(|l| *l == pair[0]).unwrap_or_else(|| panic!("{} in {all:#?}", pair[0]));
            assert_eq!(all.get(at + 1), Some(&pair[1]), "{all:#?}");
        }
    }
    assert!(all.contains(&format!("By:     {bob_roe} · codex 0.169.0 · gpt-5.1-codex")), "{all:#?}");
    let json: Value = serde_json::from_str(bob.run(&["log", "--all", "--format", "json"]).ok()).unwrap();
    assert_eq!(json[0]["people"], serde_json::json!([bob_roe]), "{json:#}");
    let import = json.as_array().unwrap().iter().find(|e| e["author"] == alice_doe).unwrap();
    assert_eq!(who(import), claudes_import(), "{json:#}");
}

#[test]
fn usage_by_person_and_by_agent() {
    let Team { bob, _hub, .. } = team();
    bob.run(&["import", &fixture("codex-0.169.jsonl")]).ok();
    bob.run(&["import", &fixture("gemini-cli-0.61.jsonl")]).ok();
    let rows = |by: &str| -> Vec<(Value, u64)> {
        let json: Value = serde_json::from_str(bob.run(&["usage", "--by", by, "--format", "json"]).ok()).unwrap();
        json["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["key"].clone(), r["usage"]["output_tokens"].as_u64().unwrap()))
            .collect()
    };
    let by_person = rows("person");
    let people: Vec<&Value> = by_person.iter().map(|(k, _)| &k["person"]).collect();
    assert_eq!(people, ["Alice Doe <alice@example.com>", "Bob Roe <bob@example.com>"]);
    let by_agent = rows("agent");
    let agents: Vec<&Value> = by_agent.iter().map(|(k, _)| &k["agent"]).collect();
    assert_eq!(agents, ["claude-code", "codex", "gemini-cli"]);
    // Every token is someone's, and some agent's.
    let sum = |rows: &[(Value, u64)]| rows.iter().map(|(_, n)| n).sum::<u64>();
    assert_eq!(sum(&by_person), sum(&by_agent));
    let text = bob.run(&["usage", "--by", "person,agent"]).ok().to_owned();
    assert!(text.starts_with("person "), "{text}");
    let gemini: Vec<&str> = text.lines().find(|l| l.contains("gemini-cli")).unwrap().split_whitespace().collect();
    assert_eq!(gemini[..4], ["Bob", "Roe", "<bob@example.com>", "gemini-cli"], "{text}");
}

#[test]
fn redact_keeps_who_made_each_commit_and_event() {
    let Team { bob, claude, _hub, .. } = team();
    bob.run(&["append", &claude, "--user", "the key is sk-secret-1234"]).ok();
    let before = bob.git(&["log", "--format=%an <%ae>|%cn <%ce>"]);
    bob.run(&["redact", "sk-secret-1234"]).ok();
    assert_eq!(bob.git(&["log", "--format=%an <%ae>|%cn <%ce>"]), before);
    let last = events(&bob, &claude).pop().unwrap();
    assert_eq!(last["content"], "the key is [REDACTED]");
    assert_eq!(last["person"], "Bob Roe <bob@example.com>");
    assert!(headings(&bob, &claude).last().unwrap().ends_with(" ── Bob Roe <bob@example.com>"));
}

#[test]
fn gemini_and_opencode_turns_name_their_agent_and_model() {
    let env = TestEnv::new();
    env.run(&["config", "set", "user.name", "Alice Doe"]).ok();
    env.run(&["config", "set", "user.email", "alice@example.com"]).ok();
    let gemini = env.run(&["import", &fixture("gemini-cli-0.61.jsonl")]).ok().trim().to_owned();
    let turns = headings(&env, &gemini);
    assert!(turns[0].ends_with(" ── Alice Doe <alice@example.com> · gemini-cli · gemini-2.5-flash"), "{turns:#?}");

    let db = env.root.join("opencode.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        r#"CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, title TEXT NOT NULL, directory TEXT NOT NULL,
                                 version TEXT NOT NULL, time_created INTEGER NOT NULL);
           CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
                                 data TEXT NOT NULL);
           CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
                              data TEXT NOT NULL);
           INSERT INTO session VALUES ('ses_1', NULL, 'notes', '/w', '1.18.33', 1);
           INSERT INTO message VALUES ('msg_1', 'ses_1', 2, '{"role":"user","time":{"created":2}}');
           INSERT INTO part VALUES ('prt_1', 'msg_1', 'ses_1', '{"type":"text","text":"what is in notes.txt?"}');
           INSERT INTO message VALUES ('msg_2', 'ses_1', 3,
             '{"role":"assistant","time":{"created":3,"completed":4},"modelID":"qwen3-coder","providerID":"ollama"}');
           INSERT INTO part VALUES ('prt_2', 'msg_2', 'ses_1', '{"type":"text","text":"it says hello"}');"#,
    )
    .unwrap();
    drop(conn);
    let opencode = env.run(&["import", db.to_str().unwrap()]).ok().trim().to_owned();
    assert_eq!(
        headings(&env, &opencode)[0].split(" ── ").last().unwrap(),
        "Alice Doe <alice@example.com> · opencode 1.18.33 · qwen3-coder"
    );
}

#[test]
fn a_store_with_no_identity_commits_as_convo_and_says_how_to_set_one_once() {
    let env = TestEnv::bare();
    insta::assert_snapshot!(env.transcript(&env.run(&["init"])), @r#"
    exit 0
    --- stdout
    Initialized empty convo store in [ROOT]/store
    --- stderr
    hint: commits are by convo <convo@localhost>: say who you are with `convo config set user.name "Your Name"` and `convo config set user.email you@example.com` (or git's user.name and user.email)
    "#);
    let first = env.run(&["new", "--title", "t"]);
    assert!(!first.ok_status().contains("hint:"), "{}", first.stderr);
    let second = env.run(&["append", "--user", "hi"]);
    assert!(!second.ok_status().contains("hint:"), "{}", second.stderr);
    // A store an older convo made says it at its first commit.
    std::fs::remove_file(env.store.join(".git/convo/identity-hint")).unwrap();
    let third = env.run(&["append", "--user", "more"]);
    assert!(third.ok_status().contains("hint: commits are by convo <convo@localhost>"), "{}", third.stderr);
    assert!(!env.run(&["append", "--user", "more"]).ok_status().contains("hint:"));
    assert_eq!(env.git(&["log", "--format=%an <%ae>"]), "convo <convo@localhost>\n".repeat(4));
    // The fallback is no person: no event claims one.
    let id = first.stdout.trim();
    assert!(events(&env, id)[0].get("person").is_none());
    // Once set, commits and events name the person.
    env.run(&["config", "set", "user.name", "Alice Doe"]).ok();
    env.run(&["config", "set", "user.email", "alice@example.com"]).ok();
    env.run(&["append", "--user", "again"]).ok();
    assert_eq!(events(&env, id)[3]["person"], "Alice Doe <alice@example.com>");
    assert!(env.git(&["log", "-1", "--format=%an <%ae>"]).starts_with("Alice Doe <alice@example.com>"));
}

#[test]
fn an_inputs_claimed_person_is_kept_as_a_claim_and_never_believed() {
    let env = TestEnv::new();
    env.git(&["config", "user.name", "Alice Doe"]);
    env.git(&["config", "user.email", "alice@example.com"]);
    let id = env.new_conversation("t");
    let line = r#"{"type":"user","content":"hi","person":"Mallory <boss@example.com>","machine":"boss-laptop"}"#;
    env.run_stdin(&["append", &id], line).ok();
    let e = &events(&env, &id)[0];
    assert_eq!(e["person"], "Alice Doe <alice@example.com>");
    assert_eq!(e["claimed_person"], "Mallory <boss@example.com>");
    assert_eq!(e["claimed_machine"], "boss-laptop");
    assert!(e.get("machine").is_none(), "no machine name unless the user opts in: {e}");

    // An import of convo's own JSONL is outside data too.
    let file = env.root.join("export.jsonl");
    let exported = line.replace("{", r#"{"id":"e1","ts":"2026-01-01T00:00:00Z","#);
    std::fs::write(&file, format!("{exported}\n")).unwrap();
    let imported = env.run(&["import", file.to_str().unwrap()]).ok().trim().to_owned();
    let e = &events(&env, &imported)[0];
    assert_eq!(
        (&e["person"], &e["claimed_person"]),
        (&"Alice Doe <alice@example.com>".into(), &"Mallory <boss@example.com>".into())
    );

    // Opted in: the machine's name.
    env.run(&["--config", "user.record_machine=true", "append", &id, "--user", "from here"]).ok();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(events(&env, &id)[1]["machine"], host.trim());
}
