# boundary's sweep: the compressed files among those listed (NUL-separated) on stdin (see compressed.py). Each whose
# first bytes are gzip's or zlib's magic: under MAX bytes, shipped whole for the harness to inflate (`COMPRESSED PATH
# BASE64`); larger, inflated here as it streams, member after member, each canary in it `INFLATED PATH:CANARY`; one
# not read to its end `UNSEARCHED PATH (WHY)`. Statuses are zlib's numbers (Z_OK 0, Z_STREAM_END 1, Z_BUF_ERROR -5):
# Compress::Raw::Zlib may be missing from the job's view, so it is loaded at run time, its constants unused.
use MIME::Base64;
$/ = "\0";
my $z = eval { require Compress::Raw::Zlib; 1 };
my $magic = qr/\A(?:\x1f\x8b|\x78[\x01\x5e\x9c\xda])/;
while (my $path = <STDIN>) {
  chomp $path; open(my $f, "<:raw", $path) or next; my $in;
  read($f, $in, 2) == 2 && $in =~ $magic or next;
  if (-s $f < MAX) { local $/; my $rest = <$f> // ""; print "COMPRESSED $path ", encode_base64($in . $rest, ""), "\n" }
  elsif (!$z) { print "UNSEARCHED $path (NO_ZLIB)\n" }
  elsif (defined(my $why = inflate_all($f, $path, $in))) { print "UNSEARCHED $path ($why)\n" }
}
exit 0;

# Every member of the file inflated, each canary in it printed once: why it was not read to its end (undef: it was).
sub inflate_all { my ($f, $path, $in) = @_; my ($tail, $i, $got, %seen) = ("", undef, 0);
  while (1) {
    if (!$i) {  # a member starts where the last one ended, with the magic; what else follows is no stream
      length($in) > 1 or read($f, $in, 1 << 16, length $in); $in =~ $magic or return;
      $i = Compress::Raw::Zlib::Inflate->new(-WindowBits => 47);  # 47: either header
    }
    my $out; my $s = $i->inflate($in, $out); $tail .= $out // ""; $got += length($out // "");
    while ($tail =~ /(PATTERN)/g) { print "INFLATED $path:$1\n" unless $seen{$1}++ }
    $tail = substr($tail, -28) if length($tail) > 28;  # a canary across two chunks is whole in the next
    if ($s == 1) { undef $i; next }
    return if $s != 0 && $s != -5 && !$got;  # nothing inflated before the damage: no stream (text that starts "x^")
    return $i->msg || "$s" if $s != 0 && $s != -5;  # damaged, or its check failed: what inflated was searched
    if ($in ne "") { return "inflate stalled" if $s != 0; next }
    my $n = read($f, $in, 1 << 16); defined $n or return "read: $!"; $n or return;  # cut short: all it holds read
  }
}
