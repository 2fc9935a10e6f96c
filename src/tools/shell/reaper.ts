/**
 * The reaper: what ends a tool's processes with dsh where no PID namespace can (bubblewrap
 * absent or disabled). A tiny Perl program (perl-base is part of every Debian-family system) sits
 * between dsh and the command:
 *
 * - it asks the kernel for a parent-death signal (`PR_SET_PDEATHSIG`), so it hears of dsh's death
 *   even by SIGKILL, and makes itself a child subreaper (`PR_SET_CHILD_SUBREAPER`), so every
 *   process the command leaves behind, however it double-forks or `setsid`s, is re-parented to it
 *   instead of init;
 * - when dsh dies, it SIGKILLs every descendant until none is left, then exits;
 * - when the command exits, it does the same (what dsh already promises: nothing a command
 *   starts outlives it; background work is a background job), then exits with the command's
 *   status, re-raising a fatal signal so the caller sees the same `signal`;
 * - SIGTERM/SIGINT/SIGHUP (a timeout, a cancel, `job_kill`) are passed to every descendant, and
 *   any still alive 2 s later are killed (its exit then says the command was killed: SIGKILL);
 * - SIGUSR1 (the parent-death signal, and how dsh ends a grace: `killGroup`) kills every
 *   descendant at once, then exits as the command ended (SIGKILL when it had to be killed);
 * - those signals, and the parent-death one, are blocked while it starts the command: one that
 *   arrives then waits for the handlers, where it used to kill the reaper by default and leave
 *   whatever the command had already `setsid`ed to init.
 *
 * `prctl` is called through Perl's `syscall` with the number for this architecture (from Node's
 * `process.arch`); on an architecture we have no number for, or off Linux, no reaper is used.
 */
import { spawnSync } from 'node:child_process';

/** `prctl` syscall numbers by `process.arch` (Linux). */
const PRCTL: Partial<Record<NodeJS.Architecture, number>> = {
  x64: 157,
  arm64: 167,
  riscv64: 167,
  loong64: 167,
  ia32: 172,
  arm: 172,
  ppc64: 171,
  ppc: 171,
  s390x: 172,
};

const SCRIPT = String.raw`
use strict; use POSIX ();
my ($nr, @cmd) = @ARGV;
my $parent = getppid();
syscall($nr, 36, 1, 0, 0, 0) == 0 or die "dsh-reaper: PR_SET_CHILD_SUBREAPER: $!\n";
syscall($nr, 1, 10, 0, 0, 0) == 0 or die "dsh-reaper: PR_SET_PDEATHSIG: $!\n";
exit 137 if getppid() != $parent;
sub descendants {
  my %kids;
  opendir(my $d, '/proc') or return ();
  for my $p (grep { /^\d+$/ } readdir $d) {
    open(my $f, '<', "/proc/$p/stat") or next;
    my $s = <$f>; close $f; next unless defined $s;
    $s =~ s/^.*\)\s+//s; my (undef, $pp) = split /\s+/, $s;
    push @{$kids{$pp}}, $p;
  }
  closedir $d;
  my @out; my @todo = ($$);
  while (@todo) { my $x = shift @todo; for my $c (@{$kids{$x} || []}) { push @out, $c; push @todo, $c; } }
  return @out;
}
my ($child, $status);
sub reap_all { while ((my $w = waitpid(-1, POSIX::WNOHANG())) > 0) { $status = $? if $w == $child; } }
sub kill_all {
  for (1 .. 1000) { my @d = descendants(); last unless @d; kill 'KILL', @d; reap_all(); select(undef, undef, undef, 0.005); }
}
my $held = POSIX::SigSet->new(POSIX::SIGTERM(), POSIX::SIGINT(), POSIX::SIGHUP(), POSIX::SIGUSR1());
my $mask = POSIX::SigSet->new();
POSIX::sigprocmask(POSIX::SIG_BLOCK(), $held, $mask) or die "dsh-reaper: sigprocmask: $!\n";
$child = fork() // die "dsh-reaper: fork: $!\n";
if ($child == 0) {
  POSIX::sigprocmask(POSIX::SIG_SETMASK(), $mask);
  exec { $cmd[0] } @cmd; print STDERR "dsh-reaper: cannot run $cmd[0]: $!\n"; POSIX::_exit(127);
}
sub finish {
  kill_all();
  $status //= 0;
  if ($status & 127) { my $s = $status & 127; $SIG{$_} = 'DEFAULT' for qw(TERM INT HUP USR1 ALRM); kill $s, $$; POSIX::_exit(128 + $s); }
  POSIX::_exit($status >> 8);
}
$SIG{USR1} = \&finish;
for my $sig (qw(TERM INT HUP)) {
  $SIG{$sig} = sub { kill $sig, descendants(); alarm 2; };
}
$SIG{ALRM} = sub { kill_all(); };
POSIX::sigprocmask(POSIX::SIG_SETMASK(), $mask) or die "dsh-reaper: sigprocmask: $!\n";
while (1) {
  my $w = waitpid(-1, 0);
  if ($w == $child) { $status = $?; last; }
  last if $w == -1;
}
finish();
`;

let usable: boolean | undefined;
/** Whether the reaper can run here (Linux, a known architecture, `perl` on PATH): probed once. */
export function reaperAvailable(): boolean {
  if (usable === undefined) {
    const nr = PRCTL[process.arch];
    usable =
      process.platform === 'linux' &&
      nr !== undefined &&
      spawnSync('perl', ['-e', SCRIPT, String(nr), 'true'], { stdio: 'ignore', timeout: 10_000 }).status === 0;
  }
  return usable;
}

/** `file args` run under the reaper (call only when `reaperAvailable()`). */
export function underReaper(file: string, args: readonly string[]): { file: string; args: string[] } {
  return { file: 'perl', args: ['-e', SCRIPT, String(PRCTL[process.arch]), file, ...args] };
}
