//! End-to-end: the real binary in a sealed environment, whole outputs compared.

use crate::common::{TestEnv, conversation_dir};

fn record_sample(env: &TestEnv) -> String {
    let id = env.new_conversation("fix login");
    env.run(&["append", "--system", "You are a careful engineer."]).ok();
    env.run(&["append", "--user", "The login form rejects valid passwords."]).ok();
    env.run(&["append", "--tool-call", "fs_read", "--args", r#"{"path":"src/login.rs"}"#, "--call-id", "c1"]).ok();
    env.run(&["append", "--tool-result", "c1", "--content", "fn check(p: &str) -> bool {\n    p.len() > 80\n}"]).ok();
    env.run_stdin(
        &["append"],
        "{\"type\":\"assistant\",\"content\":\"The length check is inverted.\"}\n{\"type\":\"user\",\"content\":\"Fix it.\"}\n",
    )
    .ok();
    id
}

#[test]
fn new_prints_id_commit_and_subject() {
    let env = TestEnv::new();
    let out = env.run(&["new", "--title", "fix login"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stdout
    01KDVDQ4K00000000000000001
    --- stderr
    [01KDVDQ4K00000000000000001 411a14d] new: "fix login"
    "#);
    assert_eq!(env.git_status(), "");
}

#[test]
fn append_prints_what_it_added() {
    let env = TestEnv::new();
    env.new_conversation("fix login");
    let out = env.run_stdin(
        &["append"],
        "{\"type\":\"user\",\"content\":\"hi\"}\n{\"type\":\"tool_call\",\"call_id\":\"c9\",\"name\":\"ls\",\"arguments\":{}}\n{\"type\":\"tool_result\",\"call_id\":\"c9\",\"content\":\"a b\",\"is_error\":true}\n",
    );
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 7ed6d97] append: "fix login" turn 0 (+3 events)
        turn 0  user        01KDVDRZ600000000000000001
        turn 0  tool_call   01KDVDRZ600000000000000002 ls c9
        turn 0  tool_result 01KDVDRZ600000000000000003 c9 error
    "#);
    let generated = env.run(&["append", "--tool-call", "ls", "--args", "{}"]);
    insta::assert_snapshot!(env.transcript(&generated), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 0df1af2] append: "fix login" turn 0 (+1 event)
        turn 0  tool_call   01KDVDTSS00000000000000002 ls call_01KDVDTSS00000000000000001
    "#);
}

#[test]
fn show_prints_a_readable_conversation() {
    let env = TestEnv::new();
    record_sample(&env);
    insta::assert_snapshot!(env.run(&["show"]).ok());
}

#[test]
fn show_brief_folds_tool_calls_to_one_line() {
    let env = TestEnv::new();
    record_sample(&env);
    let out = env.run(&["show", "--brief"]);
    insta::assert_snapshot!(out.ok());
}

#[test]
fn jsonl_round_trips_through_append() {
    let env = TestEnv::new();
    let first = record_sample(&env);
    let jsonl = env.run(&["show", &first, "--format", "jsonl"]).ok().to_owned();
    assert_eq!(jsonl.lines().count(), 6);
    let copy = env.new_conversation("copy");
    env.run_stdin(&["append", &copy], &jsonl).ok();
    assert_eq!(env.run(&["show", &copy, "--format", "jsonl"]).ok(), jsonl);
    // Unknown fields ride along, in order.
    let extra = "{\"id\":\"x1\",\"ts\":\"2026-02-02T00:00:00Z\",\"type\":\"user\",\"content\":\"hi\",\"zeta\":{\"b\":1},\"alpha\":[2]}\n";
    env.run_stdin(&["append", &copy], extra).ok();
    assert!(env.run(&["show", &copy, "--format", "jsonl"]).ok().ends_with(extra));
}

#[test]
fn log_shows_commits_newest_first_with_sizes() {
    let env = TestEnv::new();
    record_sample(&env);
    insta::assert_snapshot!("log_n_2", env.run(&["log", "-n", "2"]).ok());
    insta::assert_snapshot!("log_oneline", env.run(&["log", "--oneline"]).ok());
    insta::assert_snapshot!("log_json_n_1", env.run(&["log", "--format", "json", "-n", "1"]).ok());
}

/// Interleaved conversations: each log holds its own commits only, and gives the same
/// answer from the trailer chain, from a cold cache, and across a commit made by plain git.
#[test]
fn log_of_one_conversation_skips_the_others() {
    let env = TestEnv::new();
    let a = env.new_conversation("alpha");
    let b = env.new_conversation("beta");
    for i in 0..3 {
        env.run(&["append", &a, "--user", &format!("a{i}")]).ok();
        env.run(&["append", &b, "--user", &format!("b{i}")]).ok();
    }
    let log_a = env.run(&["log", &a, "--oneline"]).ok().to_owned();
    let subjects: Vec<&str> = log_a.lines().map(|l| l.split_once(" 2026-01-01 ").unwrap().1).collect();
    assert_eq!(
        subjects,
        [
            "append: \"alpha\" turn 2 (+1 event) [3 turns, 3 events, ~2 tokens (chars/4)]",
            "append: \"alpha\" turn 1 (+1 event) [2 turns, 2 events, ~1 tokens (chars/4)]",
            "append: \"alpha\" turn 0 (+1 event) [1 turn, 1 event, ~1 tokens (chars/4)]",
            "new: \"alpha\" [0 turns, 0 events, ~0 tokens (chars/4)]",
        ]
    );
    assert_eq!(env.run(&["log", "--all", "--oneline"]).ok().lines().count(), 8);

    // The same answer from the log index, from a cold cache and index, and from a stale index.
    std::fs::remove_dir_all(env.store.join(".git/convo/cache")).unwrap();
    std::fs::remove_dir_all(env.store.join(".git/convo/log")).unwrap();
    assert_eq!(env.run(&["log", &a, "--oneline"]).ok(), log_a);
    let index = env.store.join(format!(".git/convo/log/{a}.jsonl"));
    let lines = std::fs::read_to_string(&index).unwrap();
    assert_eq!(lines.lines().count(), 4);
    std::fs::write(&index, lines.lines().take(2).map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    assert_eq!(env.run(&["log", &a, "--oneline"]).ok(), log_a);

    // A commit by another tool touching the conversation joins its history.
    std::fs::write(env.store.join(format!("{}/NOTES", conversation_dir(&a))), "by hand\n").unwrap();
    env.git(&["add", "."]);
    env.git(&["-c", "user.name=H", "-c", "user.email=h@x", "commit", "-qm", "notes by hand"]);
    env.run(&["append", &a, "--user", "after"]).ok();
    let log = env.run(&["log", &a, "--oneline"]).ok().to_owned();
    let subjects: Vec<&str> = log.lines().map(|l| l.split_once(" 2026-").map_or(l, |p| p.1)).collect();
    assert_eq!(subjects.len(), 6, "{log}");
    assert!(subjects[1].ends_with("notes by hand"), "{log}");
    assert!(log.ends_with(&log_a[log_a.find('\n').map(|_| 0).unwrap()..]), "{log}");
}

#[test]
fn list_shows_counts_and_marks_the_active_conversation() {
    let env = TestEnv::new();
    record_sample(&env);
    env.new_conversation("second");
    insta::assert_snapshot!(env.run(&["list"]).ok(), @"
      01KDVDQ4 fix login  2 turns  6 events  ~45 tok  2026-01-01 00:06
    * 01KDVE24 second     0 turns  0 events   ~0 tok  2026-01-01 00:07
    ");
    insta::assert_snapshot!("list_json", env.run(&["list", "--format", "json"]).ok());
}

#[test]
fn ids_resolve_by_full_id_prefix_and_title() {
    let env = TestEnv::new();
    let a = env.new_conversation("alpha");
    let b = env.new_conversation("beta");
    env.run(&["switch", "alpha"]).ok();
    assert_eq!(env.run(&["append", "--user", "to alpha"]).stderr.split(' ').next().unwrap(), format!("[{a}"));
    env.run(&["switch", &b[..11].to_lowercase()]).ok();
    assert_eq!(env.run(&["append", "--user", "to beta"]).stderr.split(' ').next().unwrap(), format!("[{b}"));
    env.run(&["switch", &a]).ok();
    insta::assert_snapshot!(env.run(&["show", "--format", "jsonl"]).ok(), @r#"{"id":"01KDVDWMC00000000000000001","ts":"2026-01-01T00:04:00.000Z","type":"user","content":"to alpha"}"#);

    insta::assert_snapshot!(env.transcript(&env.run(&["show", "01KDV"])), @r#"
        exit 4
        --- stderr
        error: `01KDV` is ambiguous: 2 conversations match
        hint: candidates: 01KDVDQ4K00000000000000001 "alpha", 01KDVDRZ600000000000000001 "beta"
        "#);
    insta::assert_snapshot!(env.transcript(&env.run(&["show", "gamma"])), @r#"
        exit 4
        --- stderr
        error: no conversation matches `gamma`
        hint: recent conversations: 01KDVDRZ600000000000000001 "beta", 01KDVDQ4K00000000000000001 "alpha"
        hint: name one by id or title, or a unique prefix of either; `convo list` shows all
        "#);
    insta::assert_snapshot!(env.transcript(&env.run(&["show", "../x"])), @r#"
        exit 4
        --- stderr
        error: no conversation matches `../x`
        hint: recent conversations: 01KDVDRZ600000000000000001 "beta", 01KDVDQ4K00000000000000001 "alpha"
        hint: name one by id or title, or a unique prefix of either; `convo list` shows all
        "#);
}

#[test]
fn reading_a_missing_store_says_how_to_create_one() {
    let env = TestEnv::bare();
    let out = env.run(&["list"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
        exit 4
        --- stderr
        error: no convo store at [ROOT]/store
        hint: create one with `convo init [ROOT]/store`
        "#);
    assert!(!env.store.exists());
    // A store named explicitly is not created behind the user's back, even by a write.
    env.run(&["new"]).fails_with(4);
    assert!(!env.store.exists());
}

/// What a new store with no identity anywhere says once (see `who.rs`).
const IDENTITY_HINT: &str = "hint: commits are by convo <convo@localhost>: say who you are with `convo config set \
                             user.name \"Your Name\"` and `convo config set user.email you@example.com` (or git's \
                             user.name and user.email)";

#[test]
fn the_first_write_creates_the_default_store() {
    let env = TestEnv::bare();
    let out = crate::common::run_command(env.command_without_store(&["new", "--title", "first"]), "");
    out.ok();
    let default = env.home().join(".local/share/convo");
    assert_eq!(
        out.stderr,
        format!(
            "Created convo store in {}\n{IDENTITY_HINT}\n[{} 68351f6] new: \"first\"\n",
            default.display(),
            out.stdout.trim_end()
        )
    );
    let listed = crate::common::run_command(env.command_without_store(&["list"]), "");
    insta::assert_snapshot!(listed.ok(), @"* 01KDVDNA first  0 turns  0 events  ~0 tok  2026-01-01 00:00");
}

/// The default store is made on first use, and a look is not a use: before the first write,
/// `list` and `status` show an empty store and exit 0, other reads say the first write makes
/// it, and none of them creates anything.
#[test]
fn reading_the_default_store_before_its_first_write_shows_it_empty_and_makes_none() {
    let env = TestEnv::bare();
    let run = |args: &[&str]| crate::common::run_command(env.command_without_store(args), "");
    insta::assert_snapshot!(env.transcript(&run(&["list"])), @"
    exit 0
    --- stderr
    hint: no conversations yet: `convo new` starts one
    hint: `convo watch` imports your Claude Code, Codex, Gemini CLI and opencode sessions as they are written
    hint: `convo clone URL` copies a store you keep elsewhere
    ");
    assert_eq!(run(&["list", "--format", "json", "--usage"]).ok(), "[]\n");
    assert_eq!(run(&["status"]).ok(), "No active conversation.\n");
    insta::assert_snapshot!(env.transcript(&run(&["show"])), @"
    exit 4
    --- stderr
    error: no convo store at [ROOT]/home/.local/share/convo
    hint: the first write makes it: `convo new` starts a conversation
    ");
    assert!(!env.home().join(".local/share/convo").exists(), "nothing was made");
}

#[test]
fn no_active_conversation_is_an_error_with_a_hint() {
    let env = TestEnv::new();
    insta::assert_snapshot!(env.transcript(&env.run(&["show"])), @r#"
        exit 4
        --- stderr
        error: no active conversation
        hint: name a conversation, `convo switch ID`, or start one with `convo new`
        "#);
}

#[test]
fn init_is_idempotent_and_store_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::bare();
    let path = env.store.display().to_string();
    assert_eq!(env.run(&["init", &path]).ok(), format!("Initialized empty convo store in {path}\n"));
    assert_eq!(env.run(&["init", &path]).ok(), format!("Reinitialized existing convo store in {path}\n"));
    let id = env.new_conversation("private");
    env.run(&["append", "--user", "secret"]).ok();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&env.store), 0o700);
    assert_eq!(mode(&env.store.join(conversation_dir(&id))), 0o700);
    assert_eq!(mode(&env.store.join(format!("{}/meta.json", conversation_dir(&id)))), 0o600);
    assert_eq!(mode(&env.store.join(format!("{}/events/0000/000000.jsonl", conversation_dir(&id)))), 0o600);
    assert_eq!(env.git_status(), "");
}

/// Files convo writes outside the store are private too: an export (also over an existing
/// file with a wider mode) and the user's config file, whose folder convo creates 0700.
#[test]
fn export_files_and_the_user_config_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let env = TestEnv::new();
    env.new_conversation("private");
    env.run(&["append", "--user", "secret"]).ok();
    let fresh = env.root.join("fresh.md");
    env.run(&["export", "--format", "markdown", "-o", fresh.to_str().unwrap()]).ok();
    assert_eq!(mode(&fresh), 0o600);
    let existing = env.root.join("existing.jsonl");
    std::fs::write(&existing, "old contents, longer than nothing").unwrap();
    std::fs::set_permissions(&existing, std::fs::Permissions::from_mode(0o644)).unwrap();
    env.run(&["export", "--format", "jsonl", "-o", existing.to_str().unwrap()]).ok();
    assert_eq!(mode(&existing), 0o600);
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), env.run(&["show", "--format", "jsonl"]).ok());

    env.run(&["config", "set", "--user", "compaction.keep_last", "4"]).ok();
    let dir = env.home().join(".config/convo");
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("config.toml")), 0o600);
    std::fs::set_permissions(dir.join("config.toml"), std::fs::Permissions::from_mode(0o664)).unwrap();
    env.run(&["config", "set", "--user", "compaction.keep_last", "5"]).ok();
    assert_eq!(mode(&dir.join("config.toml")), 0o600);
    insta::assert_snapshot!(std::fs::read_to_string(dir.join("config.toml")).unwrap(), @"
    [compaction]
    keep_last = 5
    ");
}

#[test]
fn fsck_reports_every_problem_and_exits_one() {
    let env = TestEnv::new();
    let id = record_sample(&env);
    env.run(&["fsck"]).ok();
    // Commit damage with plain git: a torn line, a result without its call.
    let segment = format!("{}/events/0000/000001.jsonl", conversation_dir(&id));
    std::fs::create_dir_all(env.store.join(format!("{}/events/0000", conversation_dir(&id)))).unwrap();
    std::fs::write(
        env.store.join(&segment),
        "{\"id\":\"z1\",\"ts\":\"2026-01-01T00:00:00Z\",\"type\":\"tool_result\",\"call_id\":\"ghost\",\"content\":\"\"}\n{\"id\":",
    )
    .unwrap();
    env.git(&["add", "."]);
    env.git(&["-c", "user.name=H", "-c", "user.email=h@x", "commit", "-qm", "damage"]);
    std::fs::write(env.store.join(format!("{}/meta.json", conversation_dir(&id))), "{}").unwrap();
    let out = env.run(&["fsck"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
        exit 1
        --- stdout
        conversations/01/01KDVDQ4K00000000000000001/events/0000/000001.jsonl: line 2: torn last line (no trailing newline)
        conversations/01/01KDVDQ4K00000000000000001/meta.json: working tree file differs from HEAD
        --- stderr
        error: 2 problems found
        hint: `git checkout HEAD -- conversations` in the store restores the files HEAD holds (an edit made there by hand is lost: conversations change through convo)
        "#);
    // The hint's mend takes the working-tree problem away, and only it.
    env.git(&["checkout", "HEAD", "--", "conversations"]);
    let mended = env.run(&["fsck"]);
    assert_eq!(mended.stdout.lines().count(), 1, "{}", mended.stdout);
    assert!(mended.stdout.contains("torn last line"), "{}", mended.stdout);
    assert_eq!(mended.fails_with(1), "error: 1 problem found\n");
    std::fs::write(env.store.join(format!("{}/meta.json", conversation_dir(&id))), "{}").unwrap();
    // Reading the damaged conversation names the file and line.
    insta::assert_snapshot!(env.transcript(&env.run(&["show"])), @r#"
        exit 5
        --- stderr
        error: conversations/01/01KDVDQ4K00000000000000001/events/0000/000001.jsonl: line 2: torn last line (no trailing newline)
        hint: `convo fsck` lists every problem in the store
        "#);
}

/// `show --format jsonl` copies stored lines through without parsing them into events; a
/// committed segment that is not JSON lines, or carries a raw carriage return between
/// tokens (valid JSON, but it would reach the terminal as it is), is still refused.
#[test]
fn show_jsonl_copies_stored_lines_but_refuses_what_convo_did_not_write() {
    let env = TestEnv::new();
    let id = record_sample(&env);
    let stored = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let files: String = ["000000.jsonl"]
        .iter()
        .map(|f| std::fs::read_to_string(env.store.join(format!("{}/events/0000/{f}", conversation_dir(&id)))).unwrap())
        .collect();
    assert_eq!(stored, files, "the stored bytes, as they are");
    let segment = format!("{}/events/0000/000001.jsonl", conversation_dir(&id));
    for (what, line) in [
        (
            "a carriage return between tokens",
            "{\"id\":\"z1\",\r\"ts\":\"2026-01-01T00:00:00Z\",\"type\":\"user\",\"content\":\"\u{1b}[2J\"}\n",
        ),
        ("not JSON", "{\"id\": nope}\n"),
    ] {
        std::fs::write(env.store.join(&segment), line).unwrap();
        env.git(&["add", "."]);
        env.git(&["-c", "user.name=H", "-c", "user.email=h@x", "commit", "-qm", what]);
        let out = env.run(&["show", "--format", "jsonl"]);
        assert_eq!(out.code, 5, "{what}: {out:?}");
        assert!(out.stderr.starts_with(&format!("error: {segment}: line 1: ")), "{what}: {}", out.stderr);
        // The export streams the same lines: a damaged one leaves an existing file as it was.
        let exported = env.root.join("export.jsonl");
        std::fs::write(&exported, "kept\n").unwrap();
        let out = env.run(&["export", "--format", "jsonl", "-o", exported.to_str().unwrap()]);
        assert_eq!(out.code, 5, "{what}: {out:?}");
        assert_eq!(std::fs::read_to_string(&exported).unwrap(), "kept\n", "{what}");
        let leftovers: Vec<_> = std::fs::read_dir(&env.root)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".convo-"))
            .collect();
        assert!(leftovers.is_empty(), "{what}: {leftovers:?}");
    }
    // Whole, it is the stored bytes.
    env.git(&["rm", "-q", &segment]);
    env.git(&["-c", "user.name=H", "-c", "user.email=h@x", "commit", "-qm", "undamage"]);
    let exported = env.root.join("export.jsonl");
    env.run(&["export", "--format", "jsonl", "-o", exported.to_str().unwrap()]).ok();
    assert_eq!(std::fs::read_to_string(&exported).unwrap(), stored);
    // Not a plain file: written through, not replaced.
    assert_eq!(env.run(&["export", "--format", "jsonl", "-o", "/dev/stdout"]).ok(), stored);
    // The list of segments already checked, torn by a crash: cut back, never misread.
    let checked = env.store.join(".git/convo/checked");
    let mut bytes = std::fs::read(&checked).expect("convo notes the segments it writes");
    bytes.extend_from_slice(b"torn");
    std::fs::write(&checked, &bytes).unwrap();
    assert_eq!(env.run(&["show", "--format", "jsonl"]).ok(), stored);
    assert_eq!(std::fs::metadata(&checked).unwrap().len() % 20, 0);
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    let env = TestEnv::new();
    env.new_conversation("big");
    let big = format!("{{\"type\":\"user\",\"content\":\"{}\"}}\n", "x".repeat(400_000));
    env.run_stdin(&["append"], &big).ok();
    let mut cmd = env.command(&["show", "--format", "jsonl"]);
    cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn a_bug_is_an_internal_error_that_asks_for_a_report() {
    let env = TestEnv::new();
    let mut cmd = env.command(&["list"]);
    cmd.env("CONVO_TEST_PANIC", "1");
    let run = crate::common::run_command(cmd, "");
    let stderr = run.fails_with(70);
    let (first, rest) = stderr.split_once('\n').unwrap_or((stderr, ""));
    // The panic's message and where it happened (line:column move with the code).
    let place = first.strip_prefix("error: internal error: CONVO_TEST_PANIC is set at src/cli/mod.rs:");
    assert!(
        place.is_some_and(|p| p.split(':').count() == 2 && p.split(':').all(|n| n.parse::<u32>().is_ok())),
        "{stderr}"
    );
    // No "thread 'main' panicked" and no backtrace note unless RUST_BACKTRACE asks.
    assert_eq!(rest, "hint: this is a bug in convo; please report it with the command you ran\n");
    assert_eq!(run.stdout, "");
}

#[test]
fn color_is_off_when_piped_and_on_when_asked() {
    let env = TestEnv::new();
    record_sample(&env);
    // No escape anywhere: a property of the whole output, whatever its text.
    assert!(!env.run(&["show"]).ok().contains('\x1b'));
    assert!(!env.run(&["--color", "never", "log"]).ok().contains('\x1b'));
    // The coloured output, each ESC shown as ␛.
    insta::assert_snapshot!(env.run(&["--color", "always", "show"]).ok().replace('\x1b', "␛"), @r#"
    ␛[1mfix login␛[0m ␛[1;33m01KD␛[0m␛[2mVDQ4K00000000000000001␛[0m
    ␛[2m2 turns, 6 events, ~45 tokens (chars/4)␛[0m

    ␛[33msystem␛[0m
        You are a careful engineer.

    ␛[1m── turn 0 ── 2026-01-01 00:03:00␛[0m
    ␛[32muser␛[0m
        The login form rejects valid passwords.
    ␛[35mtool_call␛[0m fs_read ␛[2mc1␛[0m
        {
          "path": "src/login.rs"
        }
    ␛[35mtool_result␛[0m fs_read ␛[2mc1␛[0m success
        fn check(p: &str) -> bool {
            p.len() > 80
        }
    ␛[36massistant␛[0m
        The length check is inverted.

    ␛[1m── turn 1 ── 2026-01-01 00:06:00␛[0m
    ␛[32muser␛[0m
        Fix it.
    "#);
}

#[test]
fn help_documents_exit_codes() {
    let env = TestEnv::bare();
    let help = env.run(&["--help"]);
    // The whole help, its table of exit codes included.
    insta::assert_snapshot!("help", help.ok());
}

/// A title with every kind of control character, a bidi override and a line break.
const HOSTILE: &str = "red \x1b[31mX\x1b]0;pwned\x07 cr\rZ csi\u{9b}Q bidi\u{202e}RTL\nfake line";
/// How text output shows it on one line.
const HOSTILE_SHOWN: &str = "red ^[[31mX^[]0;pwned^G cr^MZ csi<U+009B>Q bidi<U+202E>RTL\\nfake line";

/// No control character but line breaks and tabs, and no bidi override or isolate.
#[track_caller]
fn assert_terminal_safe(what: &str, text: &str) {
    for c in text.chars() {
        let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        let control = c.is_control() && c != '\n' && c != '\t';
        assert!(!control && !bidi, "{what} writes {c:?} raw:\n{text:?}");
    }
}

/// Stored content never writes control characters to the terminal: `list`, `show`, `log`,
/// `diff` and an error quoting a title show them escaped, and a title cannot forge a line.
/// With colour on, the only escape sequences are convo's own.
#[test]
fn text_output_escapes_control_characters_from_the_store() {
    let env = TestEnv::new();
    let id = env.new_conversation(HOSTILE);
    env.run(&["append", "--user", "hello \x1b[31mred\x1b[0m\rover\x7f \u{9b}2J \u{2066}iso\nline two\ttab"]).ok();
    env.run(&["append", "--tool-call", "gr\x1b[2Jep", "--args", "{\"q\":\"\\u001b[31m \u{9b}\"}", "--call-id", "c1"])
        .ok();
    env.run(&["append", "--tool-result", "c1", "--content", "out\x1b[1m\x07"]).ok();

    let list = env.run(&["list"]).ok().to_owned();
    assert_terminal_safe("list", &list);
    assert_eq!(list.lines().count(), 1, "{list}");
    // Piped with no COLUMNS: the whole title, escaped.
    insta::assert_snapshot!(list, @r"* 01KDVDQ4 red ^[[31mX^[]0;pwned^G cr^MZ csi<U+009B>Q bidi<U+202E>RTL\nfake line  1 turn  3 events  ~21 tok  2026-01-01 00:04");

    let show = env.run(&["show"]).ok().to_owned();
    assert_terminal_safe("show", &show);
    assert_eq!(
        show,
        format!(
            "{HOSTILE_SHOWN} {id}\n\
             1 turn, 3 events, ~21 tokens (chars/4)\n\
             \n\
             ── turn 0 ── 2026-01-01 00:02:00\n\
             user\n    \
                 hello ^[[31mred^[[0m^Mover^? <U+009B>2J <U+2066>iso\n    \
                 line two\ttab\n\
             tool_call gr^[[2Jep c1\n    \
                 {{\n      \
                   \"q\": \"\\u001b[31m <U+009B>\"\n    \
                 }}\n\
             tool_result gr^[[2Jep c1 success\n    \
                 out^[[1m^G\n"
        )
    );
    let brief = env.run(&["show", "--brief"]).ok().to_owned();
    assert_terminal_safe("show --brief", &brief);
    insta::assert_snapshot!(brief, @r#"
    red ^[[31mX^[]0;pwned^G cr^MZ csi<U+009B>Q bidi<U+202E>RTL\nfake line 01KDVDQ4K00000000000000001
    1 turn, 3 events, ~21 tokens (chars/4)

    ── turn 0 ── 2026-01-01 00:02:00
    user
        hello ^[[31mred^[[0m^Mover^? <U+009B>2J <U+2066>iso
        line two	tab
    tool_call gr^[[2Jep {"q":"\u001b[31m <U+009B>"}
    tool_result gr^[[2Jep: success, 1 line
    "#);

    let mut logs = String::new();
    for args in [&["log"][..], &["log", "--oneline"], &["log", "--all"]] {
        let log = env.run(args).ok().to_owned();
        assert_terminal_safe("log", &log);
        logs += &format!("=== {}\n{log}", args.join(" "));
    }
    insta::assert_snapshot!("log_escapes_a_hostile_title", logs);

    let diff = env.run(&["diff", "HEAD~3", "HEAD"]).ok().to_owned();
    assert_terminal_safe("diff", &diff);
    insta::assert_snapshot!(diff, @r#"
    --- 01KDVDQ4K00000000000000001 HEAD~3
    +++ 01KDVDQ4K00000000000000001 HEAD
    @@ -0,0 +1,11 @@
    +
    +── turn 0 ── 2026-01-01 00:02:00
    +user
    +    hello ^[[31mred^[[0m^Mover^? <U+009B>2J <U+2066>iso
    +    line two	tab
    +tool_call gr^[[2Jep c1
    +    {
    +      "q": "\u001b[31m <U+009B>"
    +    }
    +tool_result gr^[[2Jep c1 success
    +    out^[[1m^G
    "#);

    // With colour, removing convo's own codes leaves exactly the plain output.
    for args in [&["list"][..], &["show"], &["log"], &["diff", "HEAD~3", "HEAD"]] {
        let plain = env.run(args).ok().to_owned();
        let colour = env.run(&[&["--color", "always"], args].concat()).ok().to_owned();
        assert_ne!(colour, plain, "{args:?}: no colour");
        let mut stripped = String::new();
        let mut rest = colour.as_str();
        while let Some(at) = rest.find("\x1b[") {
            stripped += &rest[..at];
            let code = &rest[at + 2..];
            let end = code.find('m').expect("an SGR code");
            assert!(code[..end].chars().all(|c| c.is_ascii_digit() || c == ';'), "{args:?}: {code:?}");
            rest = &code[end + 1..];
        }
        stripped += rest;
        assert_eq!(stripped, plain, "{args:?}");
    }

    // An ambiguous title: the error quotes it and lists both, escaped, one line each.
    let other = env.new_conversation(HOSTILE);
    let err = env.run(&["show", HOSTILE]).fails_with(4).to_owned();
    assert_terminal_safe("an error", &err);
    assert_eq!(
        err,
        format!(
            "error: `{HOSTILE_SHOWN}` is ambiguous: 2 conversations match\n\
             hint: candidates: {id} \"{HOSTILE_SHOWN}\", {other} \"{HOSTILE_SHOWN}\"\n"
        )
    );
}

/// JSON output needs no escaping of ours: serde_json writes C0 controls as `\u00XX`.
#[test]
fn json_output_escapes_c0_controls_itself() {
    let env = TestEnv::new();
    env.new_conversation(HOSTILE);
    env.run(&["append", "--user", "a\x1b[31mb\x07"]).ok();
    let mut outputs = String::new();
    for args in [&["list", "--format", "json"][..], &["show", "--format", "jsonl"], &["log", "--format", "json"]] {
        let out = env.run(args).ok().to_owned();
        assert!(!out.bytes().any(|b| b < 0x20 && b != b'\n' && b != b' '), "{args:?}: {out:?}");
        outputs += &format!("=== {}\n{out}", args.join(" "));
    }
    // C1 controls and bidi overrides are valid JSON string content and stay raw; they are
    // named here only so the snapshot file is readable.
    let outputs = outputs.replace('\u{9b}', "[raw U+009B]").replace('\u{202e}', "[raw U+202E]");
    insta::assert_snapshot!("json_escapes_a_hostile_title", outputs);
}

/// Issue 12: flags that cannot both apply are refused, not silently ignored.
#[test]
fn conflicting_output_flags_are_refused() {
    let env = TestEnv::new();
    env.new_conversation("t");
    env.run(&["append", "--user", "hi"]).ok();
    let mut said = String::new();
    for args in [vec!["log", "--oneline", "--format", "json"], vec!["show", "--brief", "--format", "jsonl"]] {
        let out = env.run(&args);
        said += &format!("$ convo {}\n{}\n", args.join(" "), env.transcript(&out));
    }
    insta::assert_snapshot!(said, @"
    $ convo log --oneline --format json
    exit 2
    --- stderr
    error: the argument '--oneline' cannot be used with '--format <FORMAT>'

    Usage: convo log --oneline [ID]

    For more information, try '--help'.

    $ convo show --brief --format jsonl
    exit 2
    --- stderr
    error: the argument '--brief' cannot be used with '--format <FORMAT>'

    Usage: convo show --brief [ID]

    For more information, try '--help'.
    ");
}

/// Issue 12: a provider body without a model is printed, with a warning that it is incomplete.
#[test]
fn a_provider_body_without_a_model_says_so() {
    let env = TestEnv::new();
    env.new_conversation("t");
    env.run(&["append", "--user", "hi"]).ok();
    let out = env.run(&["export", "--format", "openai"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stdout
    {
      "messages": [
        {
          "role": "user",
          "content": "hi"
        }
      ],
      "max_tokens": 4096,
      "stream": true,
      "stream_options": {
        "include_usage": true
      }
    }
    --- stderr
    warning: the body names no model: --model or llm.model sets one
    "#);
}

/// `show --turn N`, `--turns A..B` and `--event ID` show part of a conversation, turns
/// numbered as `show` heads them (a range from turn 0 keeps the system prompt before it);
/// an event is named by its id or a unique prefix, and a part that starts inside a turn is
/// headed by it. The compacted view is cut the same way: a `[no reply]` placeholder is in
/// the turn it answers. What the conversation does not hold is one line and a hint.
#[test]
fn show_turn_turns_and_event_show_part_of_a_conversation() {
    let env = TestEnv::new();
    let id = record_sample(&env);
    let stored = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    let ids: Vec<String> = stored
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].as_str().unwrap().to_owned())
        .collect();
    let result = stored.lines().position(|l| l.contains("\"tool_result\"")).unwrap();
    let unique = (1..=ids[result].len())
        .map(|n| &ids[result][..n])
        .find(|p| ids.iter().filter(|id| id.starts_with(p)).count() == 1)
        .unwrap();
    let shared = &ids[0][..2];
    let mut all = String::new();
    for args in [
        vec!["show", "--turn", "1"],
        vec!["show", "--turns", "0..0", "--brief"],
        vec!["show", "--turns", "1.."],
        vec!["show", "--event", unique],
        vec!["show", "--format", "jsonl", "--turn", "1"],
        vec!["show", "--turn", "2"],
        vec!["show", "--turns", "1..0"],
        vec!["show", "--turns", "one"],
        vec!["show", "--event", shared],
        vec!["show", "--event", "nothing-like-it"],
        vec!["show", "--format", "openai", "--turn", "0"],
    ] {
        let run = env.run(&args);
        all += &format!("$ convo {}\n{}\n", args.join(" "), env.transcript(&run));
    }
    env.new_conversation("no reply");
    let lines = [
        r#"{"type":"user","content":"first"}"#,
        r#"{"type":"tool_call","call_id":"c1","name":"ls","arguments":{}}"#,
        r#"{"type":"tool_result","call_id":"c1","content":"a b"}"#,
        r#"{"type":"user","content":"second"}"#,
        r#"{"type":"assistant","content":"done"}"#,
    ];
    env.run_stdin(&["append"], &(lines.join("\n") + "\n")).ok();
    env.run(&["compact", "--to", "0", "--tools", "omit"]).ok();
    for args in [vec!["show", "--compacted", "--turn", "0"], vec!["show", "--compacted", "--turn", "1", &id]] {
        let run = env.run(&args);
        all += &format!("$ convo {}\n{}\n", args.join(" "), env.transcript(&run));
    }
    insta::assert_snapshot!("show_part", all);
}

/// `show --turns N` is turn N, as `--turn N` says it.
#[test]
fn show_turns_takes_one_turn_as_turn_does() {
    let env = TestEnv::new();
    record_sample(&env);
    let one = env.run(&["show", "--turn", "0", "--format", "jsonl"]).ok().to_owned();
    assert_eq!(env.run(&["show", "--turns", "0", "--format", "jsonl"]).ok(), one);
    let bad = env.run(&["show", "--turns", "x"]);
    assert!(bad.fails_with(3).contains("--turns x: not a range of turns"), "{}", bad.stderr);
}

/// An event names its conversation: `show --event ID` finds it without an active
/// conversation (a fresh clone has none) or when another one is active.
#[test]
fn show_event_finds_the_conversation_that_holds_it() {
    let env = TestEnv::new();
    let id = record_sample(&env);
    let event = env.run(&["show", "--format", "jsonl"]).ok().lines().nth(1).unwrap().to_owned();
    let event_id: serde_json::Value = serde_json::from_str(&event).unwrap();
    let event_id = event_id["id"].as_str().unwrap().to_owned();
    env.new_conversation("another");
    let shown = env.run(&["show", "--event", &event_id, "--format", "jsonl"]).ok().to_owned();
    assert_eq!(shown, format!("{event}\n"));
    // No active conversation at all.
    std::fs::remove_file(env.store.join(".git/convo/active")).unwrap();
    assert_eq!(env.run(&["show", "--event", &event_id, "--format", "jsonl"]).ok(), shown);
    // Named by a conversation, it is looked for there only.
    let elsewhere = env.run(&["show", "another", "--event", &event_id]);
    assert!(elsewhere.fails_with(4).contains(&format!("no event {event_id}")), "{}", elsewhere.stderr);
    assert!(env.run(&["show", &id, "--event", &event_id]).ok().contains("The login form rejects"));
}

/// Two flags that each say where a compaction's range ends are refused with the reason, the
/// store as it was.
#[test]
fn two_ends_of_a_compaction_range_are_refused_with_the_reason() {
    let env = TestEnv::new();
    record_sample(&env);
    let before = env.snapshot();
    let out = env.run(&["compact", "--keep-last", "1", "--keep-recent-tools", "2"]);
    insta::assert_snapshot!(env.transcript(&out), @"
    exit 3
    --- stderr
    error: --keep-last and --keep-recent-tools both say where the range ends: give one
    hint: --to names the last turn compacted; --keep-last N and --keep-recent-tools N, the turns or tool calls left after it
    ");
    assert!(env.snapshot() == before);
}
