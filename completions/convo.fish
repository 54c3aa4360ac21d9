# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_convo_global_optspecs
    string join \n C/store= color= no-pager q/quiet config= h/help V/version
end

function __fish_convo_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_convo_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_convo_using_subcommand
    set -l cmd (__fish_convo_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c convo -n "__fish_convo_needs_command" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_needs_command" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_needs_command" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_needs_command" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_needs_command" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_needs_command" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_needs_command" -f -a "init" -d 'Create a store (a git repository for conversations)'
complete -c convo -n "__fish_convo_needs_command" -f -a "new" -d 'Start a conversation and make it the active one'
complete -c convo -n "__fish_convo_needs_command" -f -a "list" -d 'List conversations: id, title, turns, events, estimated tokens, last update'
complete -c convo -n "__fish_convo_needs_command" -f -a "switch" -d 'Make another conversation the active one'
complete -c convo -n "__fish_convo_needs_command" -f -a "append" -d 'Append events to a conversation, as one commit'
complete -c convo -n "__fish_convo_needs_command" -f -a "show" -d 'Print a conversation: its raw events, or with --compacted what an LLM is sent'
complete -c convo -n "__fish_convo_needs_command" -f -a "log" -d 'Show the history of a conversation, newest first'
complete -c convo -n "__fish_convo_needs_command" -f -a "fsck" -d 'Check the store\'s integrity'
complete -c convo -n "__fish_convo_needs_command" -f -a "compact" -d 'Compact a conversation: append an overlay that shrinks what an LLM is sent'
complete -c convo -n "__fish_convo_needs_command" -f -a "diff" -d 'Show what compaction changes, or how a conversation changed between two commits'
complete -c convo -n "__fish_convo_needs_command" -f -a "fork" -d 'Start a new conversation from (part of) another, and make it active'
complete -c convo -n "__fish_convo_needs_command" -f -a "config" -d 'Read and set configuration'
complete -c convo -n "__fish_convo_needs_command" -f -a "query" -d 'Send a message with the conversation to an LLM and record both sides'
complete -c convo -n "__fish_convo_needs_command" -f -a "remote" -d 'Manage the git remotes conversations are shared through'
complete -c convo -n "__fish_convo_needs_command" -f -a "clone" -d 'Clone a store from a git remote'
complete -c convo -n "__fish_convo_needs_command" -f -a "fetch" -d 'Download a remote\'s commits without changing any conversation'
complete -c convo -n "__fish_convo_needs_command" -f -a "pull" -d 'Fetch a remote and bring its conversations in, losing nothing'
complete -c convo -n "__fish_convo_needs_command" -f -a "push" -d 'Send this store\'s conversations to a remote'
complete -c convo -n "__fish_convo_needs_command" -f -a "import" -d 'Import a session from another tool as a new conversation'
complete -c convo -n "__fish_convo_needs_command" -f -a "export" -d 'Write a conversation in another format'
complete -c convo -n "__fish_convo_needs_command" -f -a "generate-docs" -d 'Write man pages and shell completions from the command definitions'
complete -c convo -n "__fish_convo_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c convo -n "__fish_convo_using_subcommand init" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand init" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand init" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand init" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand init" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand init" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand new" -s t -l title -d 'A title to name it by (ids are generated)' -r
complete -c convo -n "__fish_convo_using_subcommand new" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand new" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand new" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand new" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand new" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand new" -s h -l help -d 'Print help'
complete -c convo -n "__fish_convo_using_subcommand new" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand list" -l format -d 'Output format; `json` is an array of objects for scripts' -r -f -a "text\t''
json\t''"
complete -c convo -n "__fish_convo_using_subcommand list" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand list" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand list" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand list" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand list" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand list" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand switch" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand switch" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand switch" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand switch" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand switch" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand switch" -s h -l help -d 'Print help'
complete -c convo -n "__fish_convo_using_subcommand switch" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand append" -s f -l file -d 'Read JSONL events from FILE instead of stdin' -r -F
complete -c convo -n "__fish_convo_using_subcommand append" -l user -d 'A user message (starts a new turn)' -r
complete -c convo -n "__fish_convo_using_subcommand append" -l assistant -d 'An assistant message' -r
complete -c convo -n "__fish_convo_using_subcommand append" -l reasoning -d 'The model\'s reasoning' -r
complete -c convo -n "__fish_convo_using_subcommand append" -l system -d 'A system prompt' -r
complete -c convo -n "__fish_convo_using_subcommand append" -l tool-call -d 'A tool call to the tool NAME (with --args)' -r
complete -c convo -n "__fish_convo_using_subcommand append" -l args -d 'The tool call\'s arguments, as JSON' -r
complete -c convo -n "__fish_convo_using_subcommand append" -l call-id -d 'The tool call\'s id (default: generated)' -r
complete -c convo -n "__fish_convo_using_subcommand append" -l tool-result -d 'A tool result answering the call CALL_ID (with --content)' -r
complete -c convo -n "__fish_convo_using_subcommand append" -l content -d 'The tool result\'s output' -r
complete -c convo -n "__fish_convo_using_subcommand append" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand append" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand append" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand append" -l error -d 'Mark the tool result as an error'
complete -c convo -n "__fish_convo_using_subcommand append" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand append" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand append" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand append" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand show" -l format -r -f -a "text\t'For reading: turn headers, roles, indented content'
jsonl\t'The stored events, one per line; `convo append` reads it back'
openai\t'The OpenAI Chat Completions request body for the compacted view'
anthropic\t'The Anthropic Messages request body for the compacted view'"
complete -c convo -n "__fish_convo_using_subcommand show" -s m -l model -d 'With --format openai|anthropic: the model named in the body [default: llm.model]' -r
complete -c convo -n "__fish_convo_using_subcommand show" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand show" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand show" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand show" -l brief -d 'Fold each tool call and tool result to one line'
complete -c convo -n "__fish_convo_using_subcommand show" -l compacted -d 'The projected view: compactions applied, stripped and made-up events marked'
complete -c convo -n "__fish_convo_using_subcommand show" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand show" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand show" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand log" -s n -l max-count -d 'Show at most N commits' -r
complete -c convo -n "__fish_convo_using_subcommand log" -l format -d 'Output format; `json` is an array of commits for scripts' -r -f -a "text\t''
json\t''"
complete -c convo -n "__fish_convo_using_subcommand log" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand log" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand log" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand log" -l oneline -d 'One line per commit'
complete -c convo -n "__fish_convo_using_subcommand log" -l all -d 'Every commit of the store, all conversations'
complete -c convo -n "__fish_convo_using_subcommand log" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand log" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand log" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand log" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand fsck" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand fsck" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand fsck" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand fsck" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand fsck" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand fsck" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand fsck" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand compact" -s p -l profile -d 'Profile to apply (default: compaction.default_profile)' -r
complete -c convo -n "__fish_convo_using_subcommand compact" -l from -d 'First turn to compact; alone it means `last` [default: 0]' -r
complete -c convo -n "__fish_convo_using_subcommand compact" -l to -d 'Last turn to compact [default: -N, N = compaction.keep_last]' -r
complete -c convo -n "__fish_convo_using_subcommand compact" -l keep-last -d 'Leave the last N turns as they are (--to -N)' -r
complete -c convo -n "__fish_convo_using_subcommand compact" -l keep-recent-tools -d 'Leave the last N tool calls and their results whole; all before them is in range' -r
complete -c convo -n "__fish_convo_using_subcommand compact" -l keep-first -d 'Leave the first N turns (the task statement) as they are [profile key: keep_first]' -r
complete -c convo -n "__fish_convo_using_subcommand compact" -l min-bytes -d 'Only strip or truncate tool requests and results over B bytes [profile key: min_bytes]' -r
complete -c convo -n "__fish_convo_using_subcommand compact" -l budget -d 'Choose the least compaction that brings the view under TOKENS (see below)' -r
complete -c convo -n "__fish_convo_using_subcommand compact" -l max-lines -d 'Cut tool results left in place to N lines, first and last kept [profile key: max_lines]' -r
complete -c convo -n "__fish_convo_using_subcommand compact" -l reasoning -d 'What to do with reasoning, over the profile' -r -f -a "strip\t'Leave reasoning out of the view'"
complete -c convo -n "__fish_convo_using_subcommand compact" -l tools -d 'What to do with tool calls, over the profile' -r -f -a "strip\t'Empty requests and replace responses with a status line'
strip-requests\t'Empty requests only'
strip-responses\t'Replace responses with a status line only'
omit\t'Leave calls and results out'"
complete -c convo -n "__fish_convo_using_subcommand compact" -l summary -d 'Replace the range with this summary' -r
complete -c convo -n "__fish_convo_using_subcommand compact" -l summary-file -d 'Replace the range with the summary in FILE' -r -F
complete -c convo -n "__fish_convo_using_subcommand compact" -s m -l model -d 'The model that summarizes, as provider/model [default: the profile\'s summary.model, then llm.model]' -r
complete -c convo -n "__fish_convo_using_subcommand compact" -l focus -d 'Something the summary must pay particular attention to' -r
complete -c convo -n "__fish_convo_using_subcommand compact" -l undo -d 'Withdraw a compaction (default: the latest in force) by appending its revocation' -r
complete -c convo -n "__fish_convo_using_subcommand compact" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand compact" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand compact" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand compact" -l summarize -d 'Have a model summarize the range (from its raw events)'
complete -c convo -n "__fish_convo_using_subcommand compact" -l digest -d 'Replace the range with a digest convo writes, one line per turn (no model)'
complete -c convo -n "__fish_convo_using_subcommand compact" -s y -l yes -d 'Do not ask before sending a large range to the model (compaction.confirm_above_tokens)'
complete -c convo -n "__fish_convo_using_subcommand compact" -l force -d 'Apply a model summary even when it is estimated no smaller than the range it replaces'
complete -c convo -n "__fish_convo_using_subcommand compact" -s n -l dry-run -d 'Print the range, policies and token estimates; write nothing'
complete -c convo -n "__fish_convo_using_subcommand compact" -s v -l verbose -d 'With --dry-run, list every turn of a long range and print its projected view'
complete -c convo -n "__fish_convo_using_subcommand compact" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand compact" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand compact" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand compact" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand diff" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand diff" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand diff" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand diff" -l compacted -d 'The compacted view: against the raw one, or at two revisions'
complete -c convo -n "__fish_convo_using_subcommand diff" -l stat -d 'Per-turn estimated tokens, before -> after, and the totals'
complete -c convo -n "__fish_convo_using_subcommand diff" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand diff" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand diff" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand diff" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand fork" -l last -d 'Take the last N turns' -r
complete -c convo -n "__fish_convo_using_subcommand fork" -l from -d 'First turn to take: 5, -3, 5h, 2days [default: 0]' -r
complete -c convo -n "__fish_convo_using_subcommand fork" -l to -d 'Last turn to take, same forms [default: the last turn]' -r
complete -c convo -n "__fish_convo_using_subcommand fork" -l compact -d 'Compact the fork afterwards, with PROFILE or compaction.default_profile' -r
complete -c convo -n "__fish_convo_using_subcommand fork" -s t -l title -d 'Title of the fork [default: the source\'s title with " (fork)"]' -r
complete -c convo -n "__fish_convo_using_subcommand fork" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand fork" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand fork" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand fork" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand fork" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand fork" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand fork" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand config; and not __fish_seen_subcommand_from get set list trust help" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand config; and not __fish_seen_subcommand_from get set list trust help" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand config; and not __fish_seen_subcommand_from get set list trust help" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand config; and not __fish_seen_subcommand_from get set list trust help" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand config; and not __fish_seen_subcommand_from get set list trust help" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand config; and not __fish_seen_subcommand_from get set list trust help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand config; and not __fish_seen_subcommand_from get set list trust help" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand config; and not __fish_seen_subcommand_from get set list trust help" -f -a "get" -d 'Print the value of KEY in force'
complete -c convo -n "__fish_convo_using_subcommand config; and not __fish_seen_subcommand_from get set list trust help" -f -a "set" -d 'Set KEY to VALUE (TOML: 5, true, "strip") in one layer [default: the store\'s]'
complete -c convo -n "__fish_convo_using_subcommand config; and not __fish_seen_subcommand_from get set list trust help" -f -a "list" -d 'Print every key in force, with the layer it comes from, and the keys ignored'
complete -c convo -n "__fish_convo_using_subcommand config; and not __fish_seen_subcommand_from get set list trust help" -f -a "trust" -d 'Trust a store\'s own config (convo.toml, config events) to name providers'
complete -c convo -n "__fish_convo_using_subcommand config; and not __fish_seen_subcommand_from get set list trust help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from get" -l id -d 'Conversation whose config events count (default: the active one, if any)' -r
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from get" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from get" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from get" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from get" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from get" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from get" -s h -l help -d 'Print help'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from get" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from set" -l layer -d 'The layer to write' -r -f -a "user\t'$XDG_CONFIG_HOME/convo/config.toml, yours alone'
store\t'The store\'s convo.toml, committed and shared through remotes'
conversation\t'A `config` event in the conversation, from here on'"
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from set" -l id -d 'Conversation whose config events count (default: the active one, if any)' -r
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from set" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from set" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from set" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from set" -l user -d 'Same as --layer user'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from set" -l conversation -d 'Same as --layer conversation'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from set" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from set" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from set" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from list" -l id -d 'Conversation whose config events count (default: the active one, if any)' -r
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from list" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from list" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from list" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from list" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from trust" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from trust" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from trust" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from trust" -l remove -d 'Stop trusting the store'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from trust" -l list -d 'Print the stores you trust, one a line'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from trust" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from trust" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from trust" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from trust" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "get" -d 'Print the value of KEY in force'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "set" -d 'Set KEY to VALUE (TOML: 5, true, "strip") in one layer [default: the store\'s]'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "list" -d 'Print every key in force, with the layer it comes from, and the keys ignored'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "trust" -d 'Trust a store\'s own config (convo.toml, config events) to name providers'
complete -c convo -n "__fish_convo_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c convo -n "__fish_convo_using_subcommand query" -l compact -d 'Compact before sending, with PROFILE or compaction.default_profile' -r
complete -c convo -n "__fish_convo_using_subcommand query" -s m -l model -d 'The model, as provider/model [default: llm.model]' -r
complete -c convo -n "__fish_convo_using_subcommand query" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand query" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand query" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand query" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand query" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand query" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand query" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand remote; and not __fish_seen_subcommand_from add remove set-url list help" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand remote; and not __fish_seen_subcommand_from add remove set-url list help" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand remote; and not __fish_seen_subcommand_from add remove set-url list help" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand remote; and not __fish_seen_subcommand_from add remove set-url list help" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand remote; and not __fish_seen_subcommand_from add remove set-url list help" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand remote; and not __fish_seen_subcommand_from add remove set-url list help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand remote; and not __fish_seen_subcommand_from add remove set-url list help" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand remote; and not __fish_seen_subcommand_from add remove set-url list help" -f -a "add" -d 'Add a remote'
complete -c convo -n "__fish_convo_using_subcommand remote; and not __fish_seen_subcommand_from add remove set-url list help" -f -a "remove" -d 'Remove a remote (the conversations stay)'
complete -c convo -n "__fish_convo_using_subcommand remote; and not __fish_seen_subcommand_from add remove set-url list help" -f -a "set-url" -d 'Change a remote\'s URL'
complete -c convo -n "__fish_convo_using_subcommand remote; and not __fish_seen_subcommand_from add remove set-url list help" -f -a "list" -d 'List remotes with their URLs (the default)'
complete -c convo -n "__fish_convo_using_subcommand remote; and not __fish_seen_subcommand_from add remove set-url list help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from add" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from add" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from add" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from add" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from add" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from remove" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from remove" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from remove" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from remove" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from remove" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from remove" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from set-url" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from set-url" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from set-url" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from set-url" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from set-url" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from set-url" -s h -l help -d 'Print help'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from set-url" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from list" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from list" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from list" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from list" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add a remote'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove a remote (the conversations stay)'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from help" -f -a "set-url" -d 'Change a remote\'s URL'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from help" -f -a "list" -d 'List remotes with their URLs (the default)'
complete -c convo -n "__fish_convo_using_subcommand remote; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c convo -n "__fish_convo_using_subcommand clone" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand clone" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand clone" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand clone" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand clone" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand clone" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand clone" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand fetch" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand fetch" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand fetch" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand fetch" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand fetch" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand fetch" -s h -l help -d 'Print help'
complete -c convo -n "__fish_convo_using_subcommand fetch" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand pull" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand pull" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand pull" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand pull" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand pull" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand pull" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand pull" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand push" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand push" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand push" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand push" -l force-with-lease -d 'Overwrite the remote\'s branch if it is still where this store last saw it'
complete -c convo -n "__fish_convo_using_subcommand push" -l allow-secrets -d 'Push even if secret-like strings were found'
complete -c convo -n "__fish_convo_using_subcommand push" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand push" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand push" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand push" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand import" -s f -l format -d 'The format [default: detected]' -r -f -a "claude-code\t''
codex\t''
openai\t''
anthropic\t''
openhands\t''
jsonl\t''"
complete -c convo -n "__fish_convo_using_subcommand import" -s t -l title -d 'Title of the new conversation [default: from the session, else the file name]' -r
complete -c convo -n "__fish_convo_using_subcommand import" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand import" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand import" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand import" -l again -d 'Import a file again although a conversation already holds it'
complete -c convo -n "__fish_convo_using_subcommand import" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand import" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand import" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand import" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand export" -s f -l format -r -f -a "jsonl\t'convo\'s JSONL; `convo import` reads it back losslessly'
openai\t'The OpenAI Chat Completions request body (always the compacted view)'
anthropic\t'The Anthropic Messages request body (always the compacted view)'
markdown\t'A readable transcript, tool calls folded into <details>'
html\t'One self-contained HTML page, compacted ranges shaded'"
complete -c convo -n "__fish_convo_using_subcommand export" -s o -l output -d 'Write to FILE instead of stdout' -r -F
complete -c convo -n "__fish_convo_using_subcommand export" -s m -l model -d 'With --format openai|anthropic: the model named in the body [default: llm.model]' -r
complete -c convo -n "__fish_convo_using_subcommand export" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand export" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand export" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand export" -l compacted -d 'The compacted view instead of the raw events'
complete -c convo -n "__fish_convo_using_subcommand export" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand export" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand export" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand generate-docs" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand generate-docs" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand generate-docs" -l config -d 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5' -r
complete -c convo -n "__fish_convo_using_subcommand generate-docs" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand generate-docs" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand generate-docs" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand generate-docs" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "init" -d 'Create a store (a git repository for conversations)'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "new" -d 'Start a conversation and make it the active one'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "list" -d 'List conversations: id, title, turns, events, estimated tokens, last update'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "switch" -d 'Make another conversation the active one'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "append" -d 'Append events to a conversation, as one commit'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "show" -d 'Print a conversation: its raw events, or with --compacted what an LLM is sent'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "log" -d 'Show the history of a conversation, newest first'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "fsck" -d 'Check the store\'s integrity'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "compact" -d 'Compact a conversation: append an overlay that shrinks what an LLM is sent'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "diff" -d 'Show what compaction changes, or how a conversation changed between two commits'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "fork" -d 'Start a new conversation from (part of) another, and make it active'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "config" -d 'Read and set configuration'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "query" -d 'Send a message with the conversation to an LLM and record both sides'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "remote" -d 'Manage the git remotes conversations are shared through'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "clone" -d 'Clone a store from a git remote'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "fetch" -d 'Download a remote\'s commits without changing any conversation'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "pull" -d 'Fetch a remote and bring its conversations in, losing nothing'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "push" -d 'Send this store\'s conversations to a remote'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "import" -d 'Import a session from another tool as a new conversation'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "export" -d 'Write a conversation in another format'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "generate-docs" -d 'Write man pages and shell completions from the command definitions'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck compact diff fork config query remote clone fetch pull push import export generate-docs help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c convo -n "__fish_convo_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "get" -d 'Print the value of KEY in force'
complete -c convo -n "__fish_convo_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "set" -d 'Set KEY to VALUE (TOML: 5, true, "strip") in one layer [default: the store\'s]'
complete -c convo -n "__fish_convo_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "list" -d 'Print every key in force, with the layer it comes from, and the keys ignored'
complete -c convo -n "__fish_convo_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "trust" -d 'Trust a store\'s own config (convo.toml, config events) to name providers'
complete -c convo -n "__fish_convo_using_subcommand help; and __fish_seen_subcommand_from remote" -f -a "add" -d 'Add a remote'
complete -c convo -n "__fish_convo_using_subcommand help; and __fish_seen_subcommand_from remote" -f -a "remove" -d 'Remove a remote (the conversations stay)'
complete -c convo -n "__fish_convo_using_subcommand help; and __fish_seen_subcommand_from remote" -f -a "set-url" -d 'Change a remote\'s URL'
complete -c convo -n "__fish_convo_using_subcommand help; and __fish_seen_subcommand_from remote" -f -a "list" -d 'List remotes with their URLs (the default)'
