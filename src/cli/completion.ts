/**
 * `dsh completion bash|zsh|fish`: a completion script generated from the command tree itself, so
 * it can never list a command or option the CLI does not have (a test walks the same tree).
 *
 * Every shell gets the same data: for each command path ("dsh", "dsh log", "dsh log check") its
 * subcommands, its options, which options take a value (so the walk skips that value) and whether
 * its positional arguments are files. The walk over the words typed so far is done by the shell:
 * a word that names a subcommand of the current path descends, an option that takes a value skips
 * the next word, anything else is an argument.
 */
import { Argument, type Command, type Option } from 'commander';
import type { Io } from './output.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export interface CompletionOption {
  short?: string;
  long?: string;
  description: string;
  /** The option takes a value (the next word, or after `=`). */
  valued: boolean;
  /** What its value is: a file or directory path, one of a list, or free text. */
  value?: { kind: 'path' } | { kind: 'choices'; choices: readonly string[] };
}

export interface CompletionNode {
  /** Space-joined words from `dsh`, e.g. `dsh log check`. */
  path: string;
  description: string;
  subcommands: { name: string; description: string }[];
  options: CompletionOption[];
  /** Positional arguments are paths (a log file, a directory): the shell completes file names. */
  files: boolean;
  /** The first positional argument is one of these words (`dsh completion <shell>`). */
  choices: readonly string[];
}

/** Names of values that are paths: `<file>`, `<dir>`, `[log]`, `<logs...>`, `FILE`… */
const PATH_VALUE = /^(file|files|dir|directory|path|paths|log|logs|out|output|cwd)s?$/i;

function valueName(flags: string): string | undefined {
  const m = /[<[]([^>\]]+?)(?:\.\.\.)?[>\]]/.exec(flags);
  return m?.[1];
}

function optionOf(o: Option): CompletionOption {
  const valued = o.required || o.optional;
  const name = valueName(o.flags);
  const choices = o.argChoices;
  const value: CompletionOption['value'] =
    choices && choices.length > 0
      ? { kind: 'choices', choices }
      : name !== undefined && PATH_VALUE.test(name.split(/[|\s]/)[0] ?? '')
        ? { kind: 'path' }
        : undefined;
  return {
    ...(o.short ? { short: o.short } : {}),
    ...(o.long ? { long: o.long } : {}),
    description: o.description,
    valued,
    ...(valued && value ? { value } : {}),
  };
}

function argIsPath(a: Argument): boolean {
  return PATH_VALUE.test(a.name().split(/[|\s]/)[0] ?? '') || /file|log|dir|path/i.test(a.name());
}

/** Every visible command of the tree, depth first, with the help option every command has. */
export function completionTree(program: Command): CompletionNode[] {
  const out: CompletionNode[] = [];
  const visit = (c: Command, path: string): void => {
    const visible = c.commands.filter((s) => !(s as unknown as { _hidden?: boolean })._hidden);
    const options = c.options.filter((o) => !o.hidden).map(optionOf);
    options.push({ short: '-h', long: '--help', description: 'print help', valued: false });
    out.push({
      path,
      description: c.description(),
      subcommands: visible.map((s) => ({ name: s.name(), description: s.description() })),
      options,
      files: c.registeredArguments.some(argIsPath),
      choices: c.registeredArguments[0]?.argChoices ?? [],
    });
    for (const s of visible) visit(s, `${path} ${s.name()}`);
  };
  visit(program, program.name());
  return out;
}

const flagsOf = (o: CompletionOption): string[] => [o.short, o.long].filter((f): f is string => f !== undefined);

/** Quote for a single-quoted shell word (bash, zsh and fish all accept `'…'` with `'\''` inside). */
function sq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Quote for fish: single quotes, where `\` and `'` are escaped with a backslash. */
function fishQ(s: string): string {
  return `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}

/** Descriptions are one line, at most 100 characters, without control characters. */
function desc(s: string): string {
  const flat = s.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length > 100 ? `${flat.slice(0, 99)}…` : flat;
}

function caseTable(nodes: readonly CompletionNode[], value: (n: CompletionNode) => string, indent: string): string {
  return nodes.map((n) => `${indent}${sq(n.path)}) ${value(n)} ;;`).join('\n');
}

/** How the bash and zsh scripts name an option's value kind. */
function valueWord(v: NonNullable<CompletionOption['value']>): string {
  return v.kind === 'path' ? 'path' : `choices ${v.choices.join(' ')}`;
}

/** The shell-neutral part of bash and zsh: the path walk and the lookup tables. */
function posixTables(nodes: readonly CompletionNode[]): string {
  // printf, not echo: a word list may begin with -n or -e, which echo would take as its options.
  const words = (ws: string[]): string => `printf '%s\\n' ${sq(ws.join(' '))}`;
  return `_dsh_subs() {
  case "$1" in
${caseTable(nodes, (n) => words(n.subcommands.map((s) => s.name)), '    ')}
  esac
}
_dsh_args() {
  case "$1" in
${caseTable(nodes, (n) => words([...n.choices]), '    ')}
  esac
}
_dsh_opts() {
  case "$1" in
${caseTable(nodes, (n) => words(n.options.flatMap(flagsOf)), '    ')}
  esac
}
_dsh_valued() {
  case "$1" in
${caseTable(nodes, (n) => words(n.options.filter((o) => o.valued).flatMap(flagsOf)), '    ')}
  esac
}
# What the value of option $2 under path $1 is: "path", "choices A B…", or nothing.
_dsh_value() {
  case "$1|$2" in
${nodes
  .flatMap((n) =>
    n.options.flatMap((o) =>
      o.value === undefined ? [] : flagsOf(o).map((f) => `    ${sq(`${n.path}|${f}`)}) printf '%s\\n' ${sq(valueWord(o.value!))} ;;`),
    ),
  )
  .join('\n')}
  esac
}
_dsh_files() {
  case "$1" in
${nodes
  .filter((n) => n.files)
  .map((n) => `    ${sq(n.path)}) return 0 ;;`)
  .join('\n')}
  esac
  return 1
}
# The command path named by words 2..N-1 of "$@" (the last word is the one being completed),
# and the option whose value is being typed, if any: sets _dsh_path and _dsh_pending.
_dsh_walk() {
  _dsh_path=dsh
  _dsh_pending=
  local w
  shift
  while (($# > 1)); do
    w=$1
    shift
    if [[ -n $_dsh_pending ]]; then
      _dsh_pending=
      continue
    fi
    case $w in
      --) ;;
      -*=*) ;;
      -*) [[ " $(_dsh_valued "$_dsh_path") " == *" $w "* ]] && _dsh_pending=$w ;;
      *) [[ " $(_dsh_subs "$_dsh_path") " == *" $w "* ]] && _dsh_path="$_dsh_path $w" ;;
    esac
  done
}`;
}

function bashScript(nodes: readonly CompletionNode[]): string {
  return `# bash completion for dsh. Generated by \`dsh completion bash\` from dsh's own command tree.
# Install: dsh completion bash > ~/.local/share/bash-completion/completions/dsh
#      or: echo 'eval "$(dsh completion bash)"' >> ~/.bashrc
${posixTables(nodes)}
_dsh_complete() {
  local cur=\${COMP_WORDS[COMP_CWORD]}
  _dsh_walk "\${COMP_WORDS[@]:0:COMP_CWORD+1}"
  COMPREPLY=()
  if [[ -n $_dsh_pending ]]; then
    local v
    v=$(_dsh_value "$_dsh_path" "$_dsh_pending")
    case $v in
      path) COMPREPLY=($(compgen -f -- "$cur")) ;;
      choices\\ *) COMPREPLY=($(compgen -W "\${v#choices }" -- "$cur")) ;;
    esac
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_dsh_opts "$_dsh_path")" -- "$cur"))
    return 0
  fi
  COMPREPLY=($(compgen -W "$(_dsh_subs "$_dsh_path") $(_dsh_args "$_dsh_path")" -- "$cur"))
  if ((\${#COMPREPLY[@]} == 0)) && _dsh_files "$_dsh_path"; then
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
  return 0
}
complete -o filenames -o bashdefault -F _dsh_complete dsh
`;
}

function zshScript(nodes: readonly CompletionNode[]): string {
  const described = (pairs: [string, string][]): string => pairs.map(([w, d]) => sq(`${w.replace(/:/g, '\\:')}:${desc(d)}`)).join(' ');
  return `#compdef dsh
# zsh completion for dsh. Generated by \`dsh completion zsh\` from dsh's own command tree.
# Install: dsh completion zsh > "\${fpath[1]}/_dsh"   (then start a new shell)
#      or: echo 'source <(dsh completion zsh)' >> ~/.zshrc   (after compinit)
${posixTables(nodes)}
_dsh_described() {
  case "$1" in
${nodes
  .map(
    (n) =>
      `    ${sq(n.path)}) reply=(${described([
        ...n.subcommands.map((s): [string, string] => [s.name, s.description]),
        ...n.choices.map((c): [string, string] => [c, c]),
        ...n.options.flatMap((o) => flagsOf(o).map((f): [string, string] => [f, o.description])),
      ])}) ;;`,
  )
  .join('\n')}
  esac
}
# Candidates for the word being completed, one per line ("FILES" asks for file names): plain
# shell, so tests can call it without the completion system.
_dsh_candidates() {
  local cur=\${@[-1]} v w
  _dsh_walk "$@"
  if [[ -n $_dsh_pending ]]; then
    v=$(_dsh_value "$_dsh_path" "$_dsh_pending")
    case $v in
      path) print -r -- FILES ;;
      choices\\ *) for w in \${=v#choices }; do [[ $w == "$cur"* ]] && print -r -- "$w"; done ;;
    esac
    return 0
  fi
  if [[ $cur == -* ]]; then
    for w in \${=$(_dsh_opts "$_dsh_path")}; do [[ $w == "$cur"* ]] && print -r -- "$w"; done
    return 0
  fi
  local found=0
  for w in \${=$(_dsh_subs "$_dsh_path")} \${=$(_dsh_args "$_dsh_path")}; do [[ $w == "$cur"* ]] && { print -r -- "$w"; found=1; }; done
  ((found == 0)) && _dsh_files "$_dsh_path" && print -r -- FILES
  return 0
}
_dsh() {
  local -a cands reply described expl
  cands=("\${(@f)$(_dsh_candidates "\${(@)words[1,CURRENT]}")}")
  cands=(\${cands:#})
  if [[ \${cands[1]} == FILES ]]; then
    _files
    return
  fi
  _dsh_walk "\${(@)words[1,CURRENT]}"
  if [[ -n $_dsh_pending ]]; then
    # The value of an option with a fixed list (--approval, --sandbox…): the words themselves,
    # from the same _dsh_value table bash reads.
    ((\${#cands})) || return 1
    _description values expl "value of $_dsh_pending"
    compadd "\${expl[@]}" -a cands
    return
  fi
  _dsh_described "$_dsh_path"
  local c d
  for c in $cands; do
    for d in $reply; do [[ \${d%%:*} == $c ]] && described+=("$d"); done
  done
  ((\${#described})) && _describe -t dsh 'dsh' described
}
# Autoloaded from $fpath (compinit read "#compdef dsh" above), this file is the first call of
# _dsh: it has just defined the real _dsh, which must now complete the word, or the first Tab of
# every shell would do nothing. Sourced (source <(dsh completion zsh)), it registers _dsh instead.
if [[ \${zsh_eval_context[-1]} == loadautofunc ]]; then
  _dsh "$@"
elif (( $+functions[compdef] )); then
  compdef _dsh dsh
else
  print -u2 'dsh completion: compdef is not defined; run "autoload -U compinit && compinit" before sourcing this script'
fi
`;
}

function fishScript(nodes: readonly CompletionNode[]): string {
  const lines: string[] = [];
  for (const n of nodes) {
    const cond = `-n ${fishQ(`__dsh_at ${fishQ(n.path)}`)}`;
    for (const s of n.subcommands) lines.push(`complete -c dsh ${cond} -f -a ${fishQ(s.name)} -d ${fishQ(desc(s.description))}`);
    for (const o of n.options) {
      const f = [o.short ? `-s ${o.short.slice(1)}` : '', o.long ? `-l ${o.long.slice(2)}` : ''].filter(Boolean).join(' ');
      const value = !o.valued
        ? ''
        : o.value?.kind === 'path'
          ? ' -r -F'
          : o.value?.kind === 'choices'
            ? ` -x -a ${fishQ(o.value.choices.join(' '))}`
            : ' -x';
      lines.push(`complete -c dsh ${cond} ${f}${value} -d ${fishQ(desc(o.description))}`);
    }
    if (n.choices.length > 0) lines.push(`complete -c dsh ${cond} -f -a ${fishQ(n.choices.join(' '))}`);
    if (n.files && n.subcommands.length === 0) lines.push(`complete -c dsh ${cond} -F`);
  }
  const switchOf = (value: (n: CompletionNode) => string[]): string =>
    nodes.map((n) => `    case ${fishQ(n.path)}\n      printf '%s\\n' ${value(n).map(fishQ).join(' ')}`).join('\n');
  return `# fish completion for dsh. Generated by \`dsh completion fish\` from dsh's own command tree.
# Install: dsh completion fish > ~/.config/fish/completions/dsh.fish
function __dsh_subs
  switch $argv[1]
${switchOf((n) => n.subcommands.map((s) => s.name))}
  end
end
function __dsh_valued
  switch $argv[1]
${switchOf((n) => n.options.filter((o) => o.valued).flatMap(flagsOf))}
  end
end
# The command path named by the words before the cursor.
function __dsh_path
  set -l path dsh
  set -l skip 0
  for w in (commandline -opc)[2..-1]
    if test $skip = 1
      set skip 0
      continue
    end
    switch $w
      case '--' '-*=*'
      case '-*'
        if contains -- $w (__dsh_valued $path)
          set skip 1
        end
      case '*'
        if contains -- $w (__dsh_subs $path)
          set path "$path $w"
        end
    end
  end
  echo $path
end
function __dsh_at
  test (__dsh_path) = $argv[1]
end
complete -c dsh -f
${lines.join('\n')}
`;
}

/** The completion script for one shell. */
export function completionScript(shell: Shell, program: Command): string {
  const nodes = completionTree(program);
  if (shell === 'bash') return bashScript(nodes);
  if (shell === 'zsh') return zshScript(nodes);
  return fishScript(nodes);
}

/** `dsh completion <shell>`: prints the script on stdout. */
export function registerCompletion(program: Command, io: Io): void {
  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish) for dsh')
    .addArgument(new Argument('<shell>', 'the shell to complete in').choices(SHELLS))
    .addHelpText(
      'after',
      `
Install:
  bash  dsh completion bash > ~/.local/share/bash-completion/completions/dsh
  zsh   dsh completion zsh > "\${fpath[1]}/_dsh"   (or: source <(dsh completion zsh) after compinit)
  fish  dsh completion fish > ~/.config/fish/completions/dsh.fish
Commands, subcommands and options complete from dsh's own command tree; file arguments and
options that take a path complete file names.`,
    )
    .action((shell: Shell) => {
      io.out.write(completionScript(shell, program));
    });
}
