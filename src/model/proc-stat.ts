/**
 * The fields of a Linux `/proc/<pid>/stat` line, numbered as proc(5) numbers them: [1] the pid,
 * [2] the command name, [3] the state, [5] the process group, [22] the start time, [50] and [51]
 * the environment block's bounds. The command name is in parentheses and may itself hold spaces,
 * parentheses and newlines (a process names itself), so the fields after it are counted from the
 * last ')', never by splitting the whole line. Undefined for text that is not such a line.
 */
export function procStatFields(stat: string): string[] | undefined {
  const open = stat.indexOf(' (');
  const close = stat.lastIndexOf(')');
  if (open < 0 || close < open || stat[close + 1] !== ' ') return undefined;
  const rest = stat.slice(close + 2).replace(/\n$/, '');
  if (rest === '') return undefined;
  // Index 0 is unused, so that fields[n] is field n.
  return ['', stat.slice(0, open), stat.slice(open + 2, close), ...rest.split(' ')];
}
