# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_convo_global_optspecs
    string join \n C/store= color= no-pager q/quiet h/help V/version
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
complete -c convo -n "__fish_convo_needs_command" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_needs_command" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_needs_command" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_needs_command" -f -a "init" -d 'Create a store (a git repository for conversations)'
complete -c convo -n "__fish_convo_needs_command" -f -a "new" -d 'Start a conversation and make it the active one'
complete -c convo -n "__fish_convo_needs_command" -f -a "list" -d 'List conversations: id, title, turns, events, estimated tokens, last update'
complete -c convo -n "__fish_convo_needs_command" -f -a "switch" -d 'Make another conversation the active one'
complete -c convo -n "__fish_convo_needs_command" -f -a "append" -d 'Append events to a conversation, as one commit'
complete -c convo -n "__fish_convo_needs_command" -f -a "show" -d 'Print a conversation\'s raw events'
complete -c convo -n "__fish_convo_needs_command" -f -a "log" -d 'Show the history of a conversation, newest first'
complete -c convo -n "__fish_convo_needs_command" -f -a "fsck" -d 'Check the store\'s integrity'
complete -c convo -n "__fish_convo_needs_command" -f -a "generate-docs" -d 'Write man pages and shell completions from the command definitions'
complete -c convo -n "__fish_convo_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c convo -n "__fish_convo_using_subcommand init" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand init" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand init" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand init" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand init" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand new" -s t -l title -d 'A title to name it by (ids are generated)' -r
complete -c convo -n "__fish_convo_using_subcommand new" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand new" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
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
complete -c convo -n "__fish_convo_using_subcommand list" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand list" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand list" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand switch" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand switch" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
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
complete -c convo -n "__fish_convo_using_subcommand append" -l error -d 'Mark the tool result as an error'
complete -c convo -n "__fish_convo_using_subcommand append" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand append" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand append" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand append" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand show" -l format -r -f -a "text\t'For reading: turn headers, roles, indented content'
jsonl\t'The stored events, one per line; `convo append` reads it back'"
complete -c convo -n "__fish_convo_using_subcommand show" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand show" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand show" -l brief -d 'Fold each tool call and tool result to one line'
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
complete -c convo -n "__fish_convo_using_subcommand fsck" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand fsck" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand fsck" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand fsck" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand generate-docs" -s C -l store -d 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)' -r -F
complete -c convo -n "__fish_convo_using_subcommand generate-docs" -l color -d 'When to colour output (NO_COLOR is honoured by `auto`)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c convo -n "__fish_convo_using_subcommand generate-docs" -l no-pager -d 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
complete -c convo -n "__fish_convo_using_subcommand generate-docs" -s q -l quiet -d 'Print nothing but data and errors'
complete -c convo -n "__fish_convo_using_subcommand generate-docs" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c convo -n "__fish_convo_using_subcommand generate-docs" -s V -l version -d 'Print version'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck generate-docs help" -f -a "init" -d 'Create a store (a git repository for conversations)'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck generate-docs help" -f -a "new" -d 'Start a conversation and make it the active one'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck generate-docs help" -f -a "list" -d 'List conversations: id, title, turns, events, estimated tokens, last update'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck generate-docs help" -f -a "switch" -d 'Make another conversation the active one'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck generate-docs help" -f -a "append" -d 'Append events to a conversation, as one commit'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck generate-docs help" -f -a "show" -d 'Print a conversation\'s raw events'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck generate-docs help" -f -a "log" -d 'Show the history of a conversation, newest first'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck generate-docs help" -f -a "fsck" -d 'Check the store\'s integrity'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck generate-docs help" -f -a "generate-docs" -d 'Write man pages and shell completions from the command definitions'
complete -c convo -n "__fish_convo_using_subcommand help; and not __fish_seen_subcommand_from init new list switch append show log fsck generate-docs help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
