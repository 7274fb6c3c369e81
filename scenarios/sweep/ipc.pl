# boundary's sweep: the kernel's shared objects (see ipc.py). Modes: plant, search, remove.
use strict; use warnings; use Fcntl; use Socket; use POSIX ();
use IPC::SysV qw(IPC_CREAT IPC_EXCL IPC_NOWAIT IPC_RMID);
my ($mode, $status, $done, $hold, @h) = @ARGV; my @held; my @K = qw(sysv_shm sysv_msg posix_mqueue abstract_socket);
my $sys = eval { require "syscall.ph"; 1 }; my $PAT = qr/BOUNDARY-[0-9a-f]{20}/;
sub out { my $l = "boundary-ipc-@_"; $l =~ s/\s+/ /g; print "$l\n";
  if ($status ne "-" and open(my $f, ">>", $status)) { print $f "$l\n"; close $f } }
sub tok { "BOUNDARY-" . $_[0] } sub nm { "boundary-ipc-" . $_[0] }
sub key { 0x40000000 | hex(substr($_[0], 0, 7)) }
sub mark { $_[0] =~ /^sysv/ ? sprintf("key=0x%08x", key($_[1])) : nm($_[1]) }
sub found { join(",", $_[0] =~ /$PAT/g) || "-" }
sub peek { my ($id) = @_; my $all = "";  # MSG_COPY: copies, the queue left as it was
  for my $i (0..15) { my $b; msgrcv($id, $b, 8192, $i, IPC_NOWAIT | 040000) or last; $all .= " $b" } $all }
sub mq { my ($x, $fl) = @_; return (-1, "perl's syscall.ph is missing") unless $sys; my $n = nm($x);
  my $fd = syscall(SYS_mq_open(), $n, $fl, 0600, 0); ($fd, "$!") }
sub sock { socket(my $s, AF_UNIX, SOCK_STREAM, 0) or return (undef, "socket: $!");
  ($s, pack_sockaddr_un("\0" . nm($_[0]))) }
sub make { my ($k, $x) = @_; my $t = tok($x);  # "" once made and read back; else what failed
  if ($k eq "sysv_shm") {
    my $id = shmget(key($x), 4096, IPC_CREAT | IPC_EXCL | 0600); defined $id or return "shmget: $!";
    shmwrite($id, $t, 0, length $t) or return "shmwrite: $!"; my $b = ""; shmread($id, $b, 0, length $t);
    return $b eq $t ? "" : "shm read back: $b" }
  if ($k eq "sysv_msg") {
    my $id = msgget(key($x), IPC_CREAT | IPC_EXCL | 0600); defined $id or return "msgget: $!";
    msgsnd($id, pack("l! a*", 1, $t), IPC_NOWAIT) or return "msgsnd: $!";
    return found(peek($id)) eq $t ? "" : "msg read back: $!" }
  if ($k eq "posix_mqueue") {
    my ($fd, $e) = mq($x, O_CREAT | O_EXCL | O_RDWR); $fd >= 0 or return "mq_open: $e"; POSIX::close($fd);
    ($fd, $e) = mq($x, O_RDONLY); $fd >= 0 or return "mq_open read back: $e"; POSIX::close($fd); return "" }
  my ($s, $a) = sock($x); $s or return $a; bind($s, $a) or return "bind: $!";
  listen($s, 8) or return "listen: $!"; push @held, $s;
  my ($c) = sock($x); connect($c, $a) or return "connect read back: $!"; close $c; "" }
sub probe { my ($k, $x) = @_; my ($r, $e) = (0, "");  # found DETAIL | absent | exists ERROR | error ERROR
  if ($k eq "sysv_shm") { my $id = shmget(key($x), 0, 0); my $b = "";
    return "found id=$id " . (shmread($id, $b, 0, 64) ? found($b) : "unreadable: $!") if defined $id }
  elsif ($k eq "sysv_msg") { my $id = msgget(key($x), 0); return "found id=$id " . found(peek($id)) if defined $id }
  elsif ($k eq "posix_mqueue") { ($r, $e) = mq($x, O_RDONLY); $! = 0 unless $sys;
    if ($r >= 0) { POSIX::close($r); return "found" } }
  else { my ($s, $a) = sock($x); return "error $a" unless $s; return "found" if connect($s, $a);
    return $!{ECONNREFUSED} ? "absent" : "error $!" }
  $e ||= "$!"; $!{ENOENT} ? "absent" : $!{EACCES} ? "exists $e" : "error $e" }
sub rows { my ($f) = @_; open(my $h, "<", $f) or do { out("nolist $f: $!"); return () }; <$h>;
  my @r = map { [split] } <$h>; @r[0 .. ($#r < 499 ? $#r : 499)] }
sub listing {
  for my $r (rows("/proc/sysvipc/shm")) { my $b = ""; shmread($r->[1], $b, 0, $r->[3] < 256 ? $r->[3] : 256);
    out(sprintf("seen sysv_shm key=0x%08x id=%d %s", $r->[0] & 0xffffffff, $r->[1], found($b // ""))) }
  for my $r (rows("/proc/sysvipc/msg")) {
    out(sprintf("seen sysv_msg key=0x%08x id=%d %s", $r->[0] & 0xffffffff, $r->[1], found(peek($r->[1])))) }
  if (opendir(my $d, "/dev/mqueue")) { out("seen posix_mqueue /dev/mqueue/$_") for grep { !/^\./ } readdir $d }
  else { out("nolist /dev/mqueue: $!") }
  my %once; for my $r (rows("/proc/net/unix")) { my $n = $r->[-1] // "";  # a name once, however many connections
    out("seen abstract_socket $n") if $n =~ /^@.*(boundary-ipc-|$PAT)/ and !$once{$n}++ } }
sub remove { my @x = @_;  # one job's four: the socket went with its holder
  my $id = shmget(key($x[0]), 0, 0); shmctl($id, IPC_RMID, 0) if defined $id;
  $id = msgget(key($x[1]), 0); msgctl($id, IPC_RMID, 0) if defined $id;
  if ($sys) { my $n = nm($x[2]); syscall(SYS_mq_unlink(), $n) } }
sub plant { my ($who, @x) = @_; for my $i (0..3) { my $e = make($K[$i], $x[$i]);
  out($e eq "" ? "${who}wrote $K[$i] " . mark($K[$i], $x[$i]) : "${who}refused $K[$i] $e") } }
if ($mode eq "plant") { plant("", @h); out("planted"); exit 0 if $done eq "-"; $0 = "boundary-ipc-holder $h[0]";
  my $until = time + $hold; select(undef, undef, undef, 0.2) until -e $done or time > $until;
  out("gave-up after $hold s") unless -e $done; remove(@h); out("released") }
elsif ($mode eq "search") { my @own = @h[4..7]; plant("own-", @own) if defined $own[0]; listing();
  for my $x ([@h[0..3]], defined $own[0] ? [@own] : ()) {
    out("direct $K[$_] " . mark($K[$_], $x->[$_]) . " " . probe($K[$_], $x->[$_])) for 0..3 }
  remove(@own) if defined $own[0]; out("search-end") }
else { remove(@h[$_ * 4 .. $_ * 4 + 3]) for 0 .. @h / 4 - 1; out("removed") }
