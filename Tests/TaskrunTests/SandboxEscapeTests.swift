// --sandbox confines commands: each escape fails under it and works without it; legitimate work still runs.
import Foundation
import TestSupport
import Testing

/// A workflow folder with neighbours to escape to: a folder beside it, a fake HOME with a
/// key in it, and the environment taskrun runs with (a secret in it).
struct Jail {
  let root: URL
  var workflow: URL { root.appendingPathComponent("wf") }
  var outside: URL { root.appendingPathComponent("outside") }
  var home: URL { root.appendingPathComponent("home") }
  static let secret = "s3cret-\(UUID().uuidString.prefix(8))"

  init() throws {
    root = Scratch.root.appendingPathComponent("taskrun-jail-\(UUID().uuidString)")
    for dir in [workflow, outside, home.appendingPathComponent(".ssh")] {
      try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    try "PRIVATE KEY \(Jail.secret)\n".write(
      to: home.appendingPathComponent(".ssh/id_rsa"), atomically: true, encoding: .utf8)
  }

  /// Runs `script` as wf/w.lua with `options`, HOME and a secret variable set for taskrun.
  func run(_ script: String, _ options: [String] = [], timeout: Double = 60) throws -> Run {
    try script.write(to: workflow.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let started = try Binary.start(
      ["--progress", "plain", "-v", "-k"] + options + ["w.lua"], in: workflow,
      environment: ["HOME": home.path, "TASKRUN_TEST_SECRET": Jail.secret])
    return Binary.finish(started, timeout: timeout)
  }

  /// `command` as an operation's `sh`, run without and with --sandbox.
  func both(_ command: String) throws -> (open: Run, confined: Run) {
    let script = "operation { name = \"attempt\", sh = [==[\(command)]==] }\n"
    return (try run(script), try run(script, ["--sandbox"]))
  }

  func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }
}

/// A socket of `type` bound to 127.0.0.1 on a port the kernel picks: its descriptor and port.
func loopbackSocket(_ type: Int32) -> (fd: Int32, port: Int) {
  let fd = socket(AF_INET, type, 0)
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
  _ = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
  }
  return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

/// A UDP socket on 127.0.0.1 that a datagram may reach.
final class DatagramSink {
  let fd: Int32
  let port: Int
  init() {
    (fd, port) = loopbackSocket(Int32(SOCK_DGRAM.rawValue))
    _ = fcntl(fd, F_SETFL, O_NONBLOCK)
  }
  /// Whether a datagram came since the last look.
  func received() -> Bool {
    var buffer = [UInt8](repeating: 0, count: 512)
    var any = false
    while recv(fd, &buffer, buffer.count, 0) > 0 { any = true }
    return any
  }
  deinit { close(fd) }
}

/// A TCP listener on 127.0.0.1.
final class LoopbackListener {
  let fd: Int32
  let port: Int
  init() {
    (fd, port) = loopbackSocket(Int32(SOCK_STREAM.rawValue))
    listen(fd, 4)
  }
  deinit { close(fd) }
}

/// A Unix socket of `type` bound at `path` (for the test to hold outside the workflow folder).
func unixSocket(_ type: Int32, at path: String) -> Int32 {
  let fd = socket(AF_UNIX, type, 0)
  var address = sockaddr_un()
  address.sun_family = sa_family_t(AF_UNIX)
  withUnsafeMutableBytes(of: &address.sun_path) { raw in
    for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
  }
  let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
  }
  return bound == 0 ? fd : -1
}

/// Whether a connection waits on the listener (taken if so).
func accepted(_ listener: LoopbackListener) -> Bool {
  var poll = pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)
  guard Glibc.poll(&poll, 1, 0) == 1 else { return false }
  let fd = accept(listener.fd, nil, nil)
  if fd >= 0 { close(fd) }
  return fd >= 0
}

@Suite struct SandboxEscapeTests {
  @Test func aWriteOutsideTheWorkflowFolderFails() throws {
    let jail = try Jail()
    let target = jail.outside.appendingPathComponent("written")
    let (open, confined) = try jail.both("echo pwned > \(target.path)")
    #expect(open.status == 0 && jail.exists(target), "\(open.stdout)\(open.stderr)")
    try FileManager.default.removeItem(at: target)
    #expect(confined.status == 1 && !jail.exists(target), "\(confined.stdout)")
    // taskrun names the rule and how to widen it
    #expect(
      (confined.stdout + confined.stderr).contains(
        "sandbox: commands may write only under \(jail.workflow.resolvingSymlinksInPath().path)"))
    #expect(confined.stderr.contains("--sandbox-allow write"), "\(confined.stderr)")
  }

  @Test func aWriteToHomeOrTmpFails() throws {
    let jail = try Jail()
    let name = "taskrun-escape-\(UUID().uuidString)"
    let (open, confined) = try jail.both("echo x > $HOME/\(name) || exit 1; echo y > /tmp/\(name)")
    #expect(open.status == 0, "\(open.stdout)")
    #expect(jail.exists(jail.home.appendingPathComponent(name)))
    try? FileManager.default.removeItem(atPath: "/tmp/\(name)")
    try FileManager.default.removeItem(at: jail.home.appendingPathComponent(name))
    #expect(confined.status == 1, "\(confined.stdout)")
    #expect(
      !jail.exists(jail.home.appendingPathComponent(name)) && !FileManager.default.fileExists(atPath: "/tmp/\(name)"))
  }

  @Test func aKeyUnderHomeCannotBeRead() throws {
    let jail = try Jail()
    let (open, confined) = try jail.both("cat $HOME/.ssh/id_rsa")
    #expect(open.status == 0 && open.stdout.contains(Jail.secret), "\(open.stdout)")
    #expect(confined.status == 1 && !confined.stdout.contains(Jail.secret), "\(confined.stdout)")
    #expect(confined.stderr.contains("--sandbox-allow read"), "\(confined.stderr)")
  }

  /// /etc is readable, but not what only its owner may read (a root command keeps its
  /// owner's rights): /etc/shadow shows as empty.
  @Test func whatOnlyRootMayReadInEtcStaysClosed() throws {
    guard geteuid() == 0 else { return }
    let jail = try Jail()
    let (open, confined) = try jail.both("cat /etc/shadow | head -1; ls /etc/passwd")
    #expect(open.stdout.contains("[attempt] root:"), "\(open.stdout)")
    #expect(
      !confined.stdout.contains("[attempt] root:") && confined.stdout.contains("[attempt] /etc/passwd"),
      "\(confined.stdout)")
  }

  @Test func aTCPConnectionToLoopbackFails() throws {
    let jail = try Jail()
    let listener = LoopbackListener()
    let (open, confined) = try jail.both("exec bash -c 'echo hi > /dev/tcp/127.0.0.1/\(listener.port)'")
    #expect(open.status == 0, "\(open.stdout)")
    #expect(accepted(listener))
    #expect(confined.status == 1, "\(confined.stdout)")
    #expect(!accepted(listener))
    #expect(confined.stderr.contains("sandbox: commands have no network"), "\(confined.stderr)")
  }

  @Test func aUDPDatagramToLoopbackIsNotDelivered() throws {
    let jail = try Jail()
    let sink = DatagramSink()
    let (open, confined) = try jail.both("exec bash -c 'echo hi > /dev/udp/127.0.0.1/\(sink.port)'")
    #expect(open.status == 0, "\(open.stdout)")
    #expect(sink.received())
    usleep(50_000)
    #expect(!sink.received(), "\(confined.stdout)")
    #expect(confined.status == 1, "\(confined.stdout)")
  }

  @Test func aUnixSocketOutsideCannotBeReached() throws {
    let jail = try Jail()
    let path = jail.outside.appendingPathComponent("s.sock").path
    let fd = unixSocket(Int32(SOCK_STREAM.rawValue), at: path)
    defer { close(fd) }
    #expect(fd >= 0)
    listen(fd, 4)
    let connect =
      "perl -MSocket -e 'socket(S, PF_UNIX, SOCK_STREAM, 0) or die \"socket: $!\\n\"; "
      + "connect(S, pack_sockaddr_un(\"\(path)\")) or die \"connect: $!\\n\"; print \"connected\\n\"'"
    let (open, confined) = try jail.both(connect)
    #expect(open.status == 0 && open.stdout.contains("connected"), "\(open.stdout)")
    #expect(confined.status == 1 && !confined.stdout.contains("[attempt] connected"), "\(confined.stdout)")
  }

  /// A socketpair's datagram sent to a path would reach any Unix socket by its name.
  @Test func aDatagramToAUnixSocketOutsideIsNotDelivered() throws {
    let jail = try Jail()
    let path = jail.outside.appendingPathComponent("d.sock").path
    let fd = unixSocket(Int32(SOCK_DGRAM.rawValue), at: path)
    defer { close(fd) }
    #expect(fd >= 0)
    _ = fcntl(fd, F_SETFL, O_NONBLOCK)
    func received() -> Bool {
      var buffer = [UInt8](repeating: 0, count: 64)
      return recv(fd, &buffer, buffer.count, 0) > 0
    }
    let send =
      "perl -MSocket -e 'socketpair(my $a, my $b, AF_UNIX, SOCK_DGRAM, 0) or die \"socketpair: $!\\n\"; "
      + "send($a, \"escape\", 0, pack_sockaddr_un(\"\(path)\")) or die \"send: $!\\n\"; "
      + "connect($a, pack_sockaddr_un(\"\(path)\")) or die \"connect: $!\\n\"'"
    let (open, confined) = try jail.both(send)
    #expect(open.status == 0 && received(), "\(open.stdout)\(open.stderr)")
    while received() {}
    #expect(confined.status == 1 && !received(), "\(confined.stdout)")
    #expect(confined.stdout.contains("send: Permission denied"), "\(confined.stdout)")
  }

  /// What a root command makes is root's: it must not be made set-uid or set-gid, which would
  /// outlive the run as a way to root for whoever can reach the folder.
  @Test func noSetUIDFileIsMade() throws {
    guard geteuid() == 0 else { return }
    let jail = try Jail()
    let attempts = [
      "cp /bin/true t1 && chmod 4755 t1",
      "cp /bin/true t2 && chmod g+s t2",
      "perl -e 'sysopen(F, \"t3\", 0101, 04755) or die \"sysopen: $!\\n\"'",
      "install -m 4755 /bin/true t4"
    ]
    for attempt in attempts {
      let run = try jail.run("operation { name = \"attempt\", sh = [==[\(attempt)]==] }", ["--sandbox"])
      #expect(run.status == 1, "\(attempt): \(run.stdout)")
    }
    let files = try FileManager.default.contentsOfDirectory(atPath: jail.workflow.path)
    for name in files {
      var info = stat()
      stat(jail.workflow.appendingPathComponent(name).path, &info)
      #expect(info.st_mode & (S_ISUID | S_ISGID) == 0, "\(name) is set-uid or set-gid")
    }
    // ordinary modes still work
    let plain = try jail.run(
      "operation { name = \"a\", sh = \"cp /bin/true t5 && chmod 755 t5 && mkdir -m 700 d && ./t5\" }", ["--sandbox"])
    #expect(plain.status == 0, "\(plain.stdout)")
  }

  /// The folder a script given by a link really is in is the writable one, not the link's.
  @Test func aScriptGivenByALinkWritesWhereItIs() throws {
    let jail = try Jail()
    try "operation { name = \"a\", sh = \"touch here\" }\n".write(
      to: jail.workflow.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    try FileManager.default.createSymbolicLink(
      atPath: jail.outside.appendingPathComponent("link.lua").path,
      withDestinationPath: jail.workflow.appendingPathComponent("w.lua").path)
    let inOutside = try Binary.run(["--sandbox", "-q", "link.lua"], in: jail.outside)
    #expect(inOutside.status == 1 && !jail.exists(jail.outside.appendingPathComponent("here")), "\(inOutside.stderr)")
    let started = try Binary.start(["--sandbox", "-q", "-C", jail.workflow.path, "w.lua"], in: jail.outside)
    let inWorkflow = Binary.finish(started)
    #expect(inWorkflow.status == 0 && jail.exists(jail.workflow.appendingPathComponent("here")), "\(inWorkflow.stderr)")
  }

  @Test func aProcessTheTestStartedCannotBeKilled() throws {
    let jail = try Jail()
    let victim = try Child(["sleep", "60"])
    defer {
      kill(victim.pid, SIGKILL)
      _ = victim.wait()
    }
    let confined = try jail.run("operation { name = \"attempt\", sh = \"kill -9 \(victim.pid)\" }", ["--sandbox"])
    #expect(confined.status == 1, "\(confined.stdout)")
    #expect(victim.wait(timeout: 0.2) == nil, "the sandboxed command killed a process outside")
    #expect(
      confined.stderr.contains("sandbox: a command may signal only the processes it started"), "\(confined.stderr)")
    let open = try jail.run("operation { name = \"attempt\", sh = \"kill -9 \(victim.pid)\" }")
    #expect(open.status == 0 && victim.wait(timeout: 5) == 128 + SIGKILL, "\(open.stdout)")
  }

  @Test func aDaemonIsGoneAfterTheRun() throws {
    let jail = try Jail()
    let seconds = 3000 + Int.random(in: 0..<900)
    let run = try jail.run(
      "operation { name = \"attempt\", sh = \"setsid sh -c 'sleep \(seconds) &' & sh -c 'sleep \(seconds) &'; echo started\" }",
      ["--sandbox"])
    #expect(run.status == 0, "\(run.stdout)")
    let deadline = Date().addingTimeInterval(5)
    var left = sleepers(seconds)
    while !left.isEmpty && Date() < deadline {
      usleep(20_000)
      left = sleepers(seconds)
    }
    for pid in left { kill(pid, SIGKILL) }
    #expect(left.isEmpty, "left behind: \(left)")
  }

  /// Live processes running `sleep seconds`.
  func sleepers(_ seconds: Int) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { pid_t($0) }.filter { pid in
      guard let line = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
        let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        stat.split(separator: ")").last?.split(separator: " ").first != "Z"
      else { return false }
      return String(decoding: line, as: UTF8.self) == "sleep\0\(seconds)\0"
    }
  }

  @Test func taskrunsEnvironmentIsNotPassedOn() throws {
    let jail = try Jail()
    let (open, confined) = try jail.both("echo \"secret=${TASKRUN_TEST_SECRET:-absent} home=$HOME\"")
    #expect(open.stdout.contains("secret=\(Jail.secret)"), "\(open.stdout)")
    #expect(
      confined.status == 0 && confined.stdout.contains("secret=absent home=\(jail.home.path)"), "\(confined.stdout)")
    // nor to the Lua code, which could pass it on in a command's words; getenv's errors are its own
    let lua = """
      print("lua secret=" .. tostring(os.getenv("TASKRUN_TEST_SECRET")) .. " tmp=" .. tostring(os.getenv("TMPDIR")))
      print(select(2, pcall(os.getenv)))
      """
    let (plainLua, confinedLua) = (try jail.run(lua), try jail.run(lua, ["--sandbox"]))
    #expect(plainLua.stdout.contains("lua secret=\(Jail.secret)"), "\(plainLua.stdout)")
    #expect(
      confinedLua.stdout.contains("lua secret=nil tmp=/") && confinedLua.stdout.contains("taskrun-sandbox-"),
      "\(confinedLua.stdout)")
    let error = "bad argument #1 to 'os.getenv' (string expected, got no value)"
    #expect(plainLua.stdout.contains(error) && confinedLua.stdout.contains(error), "\(confinedLua.stdout)")
    // what the script sets for the command is passed
    let set = try jail.run("operation { name = \"a\", sh = \"echo v=$V\", env = { V = \"given\" } }", ["--sandbox"])
    #expect(set.stdout.contains("v=given"), "\(set.stdout)")
  }

  @Test func privilegesCannotBeGained() throws {
    let jail = try Jail()
    let target = jail.outside.appendingPathComponent("tool")
    try "#!/bin/sh\n".write(to: target, atomically: true, encoding: .utf8)
    let (open, confined) = try jail.both(
      "grep -E '^(NoNewPrivs|CapEff)' /proc/self/status; chmod u+s \(target.path) && echo chmodded")
    #expect(open.stdout.contains("NoNewPrivs:\t0") && open.stdout.contains("chmodded"), "\(open.stdout)")
    #expect(confined.stdout.contains("NoNewPrivs:\t1"), "\(confined.stdout)")
    #expect(!confined.stdout.contains("[attempt] chmodded"), "\(confined.stdout)")
    // CAP_SYS_ADMIN (bit 21) is never kept
    let capEff = confined.stdout.split(separator: "\n").first { $0.contains("CapEff:") }
    let mask = capEff.flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) } ?? .max
    #expect(mask & (1 << 21) == 0, "\(confined.stdout)")
  }

  @Test func linksDotDotAndProcSelfCwdDoNotLeadOut() throws {
    let jail = try Jail()
    let tricks = [
      "ln -s \(jail.outside.path) link && echo x > link/a",
      "echo x > ../outside/b",
      "cd \(jail.outside.path) && echo x > /proc/self/cwd/c",
      "ln \(jail.home.path)/.ssh/id_rsa hard && cat hard"
    ]
    for trick in tricks {
      let run = try jail.run("operation { name = \"attempt\", sh = [==[\(trick)]==] }", ["--sandbox"])
      #expect(run.status == 1 && !run.stdout.contains(Jail.secret), "\(trick): \(run.stdout)")
    }
    let left = try FileManager.default.contentsOfDirectory(atPath: jail.outside.path)
    #expect(left.isEmpty, "\(left)")
  }

  @Test func shInABodyAndAtTheTopLevelIsConfinedToo() throws {
    let jail = try Jail()
    let target = jail.outside.appendingPathComponent("from-lua")
    let run = try jail.run(
      """
      local top = sh("echo x > \(target.path)", { check = false })
      print("top status " .. top.status)
      operation { name = "body", run = function() sh("echo y > \(target.path)") end }
      """, ["--sandbox"])
    #expect(run.stdout.contains("top status 2"), "\(run.stdout)")
    #expect(run.status == 1 && run.stderr.contains("FAILED    body"), "\(run.stderr)")
    #expect(!jail.exists(target))
  }

  @Test func theReplsCommandsAreConfined() throws {
    let jail = try Jail()
    let target = jail.outside.appendingPathComponent("from-repl")
    let started = try Binary.start(
      ["repl", "--sandbox"], in: jail.workflow, environment: ["HOME": jail.home.path],
      input: "print(sh(\"echo x > \(target.path)\", { check = false }).status)\nprint(io)\n")
    let run = Binary.finish(started, timeout: 30)
    #expect(run.status == 0 && run.stdout.contains("2\nnil"), "\(run.stdout)\(run.stderr)")
    #expect(!jail.exists(target))
  }

  /// A descriptor taskrun was started with (a file outside) does not reach a confined command.
  @Test func aDescriptorTaskrunInheritedDoesNotReachTheCommand() throws {
    let jail = try Jail()
    let file = jail.outside.appendingPathComponent("fd-target")
    try "operation { name = \"attempt\", sh = \"echo leaked >&7\" }\n".write(
      to: jail.workflow.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    for (options, leaks) in [([String](), true), (["--sandbox"], false)] {
      let started = try Binary.start(
        ["-c", "exec \"$0\" \"$@\" 7>>\(file.path)", Binary.url.path, "--progress", "plain"] + options + ["w.lua"],
        in: jail.workflow, program: "/bin/sh")
      let run = Binary.finish(started, timeout: 30)
      let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
      #expect(text.contains("leaked") == leaks && (run.status == 0) == leaks, "\(options): \(run.stderr)")
      try? FileManager.default.removeItem(at: file)
    }
  }

  /// A folder of PATH that is a link to `/` (or to the home) opens nothing.
  @Test func aPathFolderLinkedToTheRootOpensNothing() throws {
    let jail = try Jail()
    let link = jail.workflow.appendingPathComponent("bin")
    try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/")
    let home = jail.workflow.appendingPathComponent("homebin")
    try FileManager.default.createSymbolicLink(atPath: home.path, withDestinationPath: jail.home.path)
    try "operation { name = \"attempt\", sh = \"cat \(jail.home.path)/.ssh/id_rsa\" }\n".write(
      to: jail.workflow.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let started = try Binary.start(
      ["--progress", "plain", "-v", "--sandbox", "w.lua"], in: jail.workflow,
      environment: ["HOME": jail.home.path, "PATH": "\(link.path):\(home.path):/usr/bin:/bin"])
    let run = Binary.finish(started, timeout: 30)
    #expect(run.status == 1 && !run.stdout.contains(Jail.secret), "\(run.stdout)")
  }

  @Test func legitimateWorkStillRuns() throws {
    let jail = try Jail()
    try "int main(void) { return 0; }\n".write(
      to: jail.workflow.appendingPathComponent("hello.c"), atomically: true, encoding: .utf8)
    let run = try jail.run(
      """
      operation { name = "build", sh = "CC=$(command -v cc || command -v clang) && $CC -c hello.c -o hello.o && $CC hello.o -o hello && ./hello && echo built" }
      operation { name = "pack", sh = "tar -cf $TMPDIR/a.tar hello.c && mkdir $TMPDIR/x && tar -xf $TMPDIR/a.tar -C $TMPDIR/x && ls $TMPDIR/x && echo $TMPDIR > tmpdir.txt" }
      operation { name = "share", sh = "ls /usr/share | head -1 >/dev/null && cat /etc/passwd > /dev/null && echo read" }
      """, ["--sandbox"])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(
      run.stdout.contains("[build] built") && run.stdout.contains("[pack] hello.c")
        && run.stdout.contains("[share] read"))
    // the private temporary folder is gone after the run
    let tmp = try String(contentsOf: jail.workflow.appendingPathComponent("tmpdir.txt"), encoding: .utf8)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(tmp.contains("taskrun-sandbox-") && !FileManager.default.fileExists(atPath: tmp), "\(tmp)")
  }
}
