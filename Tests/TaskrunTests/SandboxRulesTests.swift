// --sandbox's rules: it fails closed on a kernel without what it needs, widens only as the command line allows, refuses Slurm, and says what each operation may do.
import Foundation
import TestSupport
import Testing

/// A program that runs its arguments with a seccomp filter making one system call fail with
/// ENOSYS (or EPERM): a kernel without Landlock, or one that forbids namespaces.
enum Crippled {
  static let source = """
    #include <errno.h>
    #include <linux/filter.h>
    #include <linux/seccomp.h>
    #include <stddef.h>
    #include <stdlib.h>
    #include <sys/prctl.h>
    #include <unistd.h>
    int main(int argc, char **argv) {
      int call = atoi(argv[1]), error = atoi(argv[2]);
      struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, call, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | error),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      };
      struct sock_fprog p = { 4, f };
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p)) return 120;
      execv(argv[3], argv + 3);
      return 121;
    }
    """
  static let program: URL? = {
    let dir = Scratch.root.appendingPathComponent("crippled-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    let c = dir.appendingPathComponent("crippled.c"), binary = dir.appendingPathComponent("crippled")
    guard (try? source.write(to: c, atomically: true, encoding: .utf8)) != nil,
      (try? Child(["sh", "-c", "$(command -v cc || command -v clang) \"$0\" -o \"$1\"", c.path, binary.path]).wait())
        == 0
    else { return nil }
    return binary
  }()
}

@Suite struct SandboxRulesTests {
  /// Runs taskrun --sandbox with `call` failing with `error`; the command must not run.
  func withoutSyscall(_ call: Int, _ error: Int32, options: [String] = ["--sandbox"]) throws -> (Run, Bool) {
    let jail = try Jail()
    let program = try #require(Crippled.program, "cc could not build the seccomp wrapper")
    try "operation { name = \"a\", sh = \"touch ran\" }\n".write(
      to: jail.workflow.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let started = try Binary.start(
      ["\(call)", "\(error)", Binary.url.path, "--progress", "plain"] + options + ["w.lua"], in: jail.workflow,
      program: program.path)
    let run = Binary.finish(started, timeout: 30)
    return (run, jail.exists(jail.workflow.appendingPathComponent("ran")))
  }

  @Test func withoutLandlockItRefusesToRun() throws {
    let (run, ran) = try withoutSyscall(444, ENOSYS)  // landlock_create_ruleset
    #expect(run.status == 2 && !ran, "\(run.stdout)\(run.stderr)")
    #expect(
      run.stderr.contains("--sandbox cannot confine commands here, so nothing runs: the kernel has no Landlock"),
      "\(run.stderr)")
    #expect(run.stderr.contains("--sandbox=lua"))
    // --sandbox=lua asks for the Lua part only: it runs
    let (lua, ranLua) = try withoutSyscall(444, ENOSYS, options: ["--sandbox=lua"])
    #expect(lua.status == 0 && ranLua, "\(lua.stderr)")
  }

  @Test func withoutNamespacesItRefusesToRun() throws {
    let (run, ran) = try withoutSyscall(272, EPERM)  // unshare
    #expect(run.status == 2 && !ran, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains("cannot make") && run.stderr.contains("namespaces"), "\(run.stderr)")
  }

  @Test func aWideningIsRefusedUnlessTheCommandLineAllowsIt() throws {
    let jail = try Jail()
    let target = jail.outside.appendingPathComponent("granted")
    let script = """
      operation { name = "a", sh = "echo x > \(target.path)", sandbox = { write = "\(jail.outside.path)" } }
      """
    let refused = try jail.run(script, ["--sandbox"])
    #expect(refused.status == 2, "\(refused.stderr)")
    #expect(
      refused.stderr.contains(
        "w.lua:1: operation 'a' asks the sandbox for writing \(jail.outside.path), which this run does not allow: run with --sandbox-allow write to allow it"
      ), "\(refused.stderr)")
    #expect(!jail.exists(target))
    let allowed = try jail.run(script, ["--sandbox", "--sandbox-allow", "write"])
    #expect(allowed.status == 0 && jail.exists(target), "\(allowed.stderr)")
    // a wider grant than asked for is not a wider sandbox: the home stays closed
    let home = try jail.run(
      "operation { name = \"a\", sh = \"cat $HOME/.ssh/id_rsa\", sandbox = { write = \"\(jail.outside.path)\" } }",
      ["--sandbox", "--sandbox-allow", "write,read,network"])
    #expect(home.status == 1 && !home.stdout.contains(Jail.secret), "\(home.stdout)")
  }

  /// A widened path that a command turns into a link during the run is refused, not
  /// followed; one that was a link already is shown (and granted) as where it leads.
  @Test func aWidenedPathThatBecomesALinkIsRefused() throws {
    let jail = try Jail()
    let target = jail.outside.appendingPathComponent("pwned")
    for kind in ["write", "read"] {
      let run = try jail.run(
        """
        operation { name = "prep", sh = { "ln", "-sfn", "\(jail.outside.path)", "out" } }
        operation { name = "x", after = { "prep" }, sandbox = { \(kind) = { "out" } }, sh = "touch out/pwned; ls out" }
        """, ["--sandbox", "--sandbox-allow", kind])
      #expect(run.status == 1 && !jail.exists(target), "\(kind): \(run.stdout)\(run.stderr)")
      #expect(
        run.stderr.contains(
          "sandbox: cannot let the sandbox \(kind) '\(jail.workflow.path)/out': it is a link, or under one"),
        "\(run.stderr)")
      try FileManager.default.removeItem(at: jail.workflow.appendingPathComponent("out"))
    }
    // planted before the run: the listing says where it leads
    try FileManager.default.createSymbolicLink(
      atPath: jail.workflow.appendingPathComponent("out").path, withDestinationPath: jail.outside.path)
    let list = try jail.run(
      "operation { name = \"x\", sandbox = { write = { \"out\" } }, sh = \"true\" }",
      ["--list", "--sandbox", "--sandbox-allow", "write"])
    #expect(list.stdout.contains("[sandbox: write \(jail.outside.path)]"), "\(list.stdout)")
  }

  @Test func readAndNetworkWideningsWork() throws {
    let jail = try Jail()
    let listener = LoopbackListener()
    let run = try jail.run(
      """
      operation { name = "key", sh = "cat $HOME/.ssh/id_rsa", sandbox = { read = { "\(jail.home.path)/.ssh" } } }
      operation { name = "net", run = function() sh("exec bash -c 'echo hi > /dev/tcp/127.0.0.1/\(listener.port)'") end, sandbox = { network = true } }
      """, ["--sandbox", "--sandbox-allow", "read,network"])
    #expect(run.status == 0 && run.stdout.contains(Jail.secret), "\(run.stdout)\(run.stderr)")
    #expect(accepted(listener))
  }

  @Test func badSandboxFieldsAreErrorsAtTheirLine() throws {
    let jail = try Jail()
    for (field, message) in [
      (
        "sandbox = 3",
        "w.lua:2: operation 'a': field 'sandbox' must be a table { read =, write =, network = } (got number)"
      ),
      ("sandbox = { net = true }", "w.lua:2: operation 'a': sandbox: unknown field 'net'"),
      (
        "sandbox = { write = { 1 } }",
        "w.lua:2: operation 'a': sandbox.write: a path must be a non-empty string (got number)"
      ),
      (
        "sandbox = { network = 'yes' }",
        "w.lua:2: operation 'a': sandbox: field 'network' must be a boolean (got string)"
      ),
      ("sandbox = { read = '' }", "w.lua:2: operation 'a': sandbox.read: a path must be a non-empty string")
    ] {
      let run = try jail.run("\noperation { name = 'a', sh = 'true', \(field) }\n", ["--sandbox"])
      #expect(run.status == 2 && run.stderr.contains(message), "\(field): \(run.stderr)")
    }
  }

  @Test func opSandboxSaysWhatItsCommandsMayDo() throws {
    let jail = try Jail()
    let script = """
      local a = operation { name = "a", sh = "true", sandbox = { write = "\(jail.outside.path)", network = true } }
      local b = operation { name = "b", sh = "true" }
      local s = a.sandbox
      if s == nil then print("unconfined") else
        print("a network=" .. tostring(s.network) .. " write=" .. table.concat(s.write, ","))
        print("b network=" .. tostring(b.sandbox.network) .. " write=" .. #b.sandbox.write .. " read=" .. #b.sandbox.read)
      end
      """
    let open = try jail.run(script)
    #expect(open.stdout.contains("unconfined"), "\(open.stdout)")
    let confined = try jail.run(script, ["--sandbox", "--sandbox-allow", "write,network"])
    #expect(
      confined.stdout.contains("a network=true write=\(jail.outside.path)\n"), "\(confined.stdout)\(confined.stderr)")
    #expect(confined.stdout.contains("b network=false write=0 read=0"), "\(confined.stdout)")
    // --list shows the widening
    let list = try jail.run(script, ["--list", "--sandbox", "--sandbox-allow", "write,network"])
    #expect(list.stdout.contains("a  [sandbox: network, write \(jail.outside.path)]"), "\(list.stdout)")
    // without --sandbox a widening means nothing: nothing shows it
    let plain = try jail.run(script, ["--list"])
    #expect(!plain.stdout.contains("sandbox") && plain.status == 0, "\(plain.stdout)")
  }

  /// Each different set of writable folders keeps namespaces open: past the bound, a command
  /// fails with a message, taskrun does not run out of descriptors or processes.
  @Test func manyDifferentWideningsAreBounded() throws {
    let jail = try Jail()
    for i in 1...70 {
      try FileManager.default.createDirectory(
        at: jail.outside.appendingPathComponent("d\(i)"), withIntermediateDirectories: true)
    }
    let run = try jail.run(
      """
      for i = 1, 70 do
        operation { name = "w" .. i, sh = "true", sandbox = { write = "\(jail.outside.path)/d" .. i } }
      end
      """, ["--sandbox", "--sandbox-allow", "write", "-j1"])
    #expect(run.status == 1, "\(run.stderr)")
    #expect(
      run.stderr.contains("64 succeeded, 6 failed") || run.stdout.contains("64 succeeded, 6 failed"),
      "\(run.stdout)\(run.stderr)")
    #expect(
      run.stderr.contains("sandbox: the operations ask for more than 64 different sets of folders to write"),
      "\(run.stderr)")
  }

  /// `taskrun graph --sandbox` loads an untrusted script confined, and draws its widenings.
  @Test func theGraphOfAnUntrustedScript() throws {
    let jail = try Jail()
    try """
    print(io == nil and "no io" or "io")
    operation { name = "a", sh = "true", sandbox = { network = true } }
    """.write(to: jail.workflow.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let graph = try Binary.run(
      ["graph", "--format", "json", "--sandbox", "--sandbox-allow", "network", "w.lua"], in: jail.workflow)
    #expect(graph.status == 0 && graph.stderr.contains("no io"), "\(graph.stderr)")
    #expect(graph.stdout.contains(#""sandbox":{"network":true,"read":[],"write":[]}"#), "\(graph.stdout)")
    let dot = try Binary.run(["graph", "--sandbox", "--sandbox-allow", "network", "w.lua"], in: jail.workflow)
    #expect(dot.stdout.contains("sandbox: network"), "\(dot.stdout)")
    let refused = try Binary.run(["graph", "--sandbox", "w.lua"], in: jail.workflow)
    #expect(refused.status == 2 && refused.stderr.contains("--sandbox-allow network"), "\(refused.stderr)")
    let plain = try Binary.run(["graph", "--format", "json", "w.lua"], in: jail.workflow)
    #expect(plain.stderr.contains("io\n") && plain.stdout.contains(#""sandbox":null"#), "\(plain.stdout)")
  }

  @Test func slurmIsRefusedUnderTheSandbox() throws {
    let jail = try Jail()
    let run = try jail.run("queue { name = \"q\", executor = \"slurm\" }", ["--sandbox"])
    #expect(run.status == 2, "\(run.stderr)")
    #expect(run.stderr.contains("--sandbox cannot confine commands run on Slurm"), "\(run.stderr)")
    let option = try jail.run("operation { name = \"a\", sh = \"true\" }", ["--sandbox", "--executor", "slurm"])
    #expect(
      option.status == 2 && option.stderr.contains("--sandbox cannot confine commands run on Slurm"), "\(option.stderr)"
    )
    let allow = try jail.run("operation { name = \"a\", sh = \"true\" }", ["--sandbox-allow", "write"])
    #expect(allow.status == 2 && allow.stderr.contains("--sandbox-allow needs --sandbox"), "\(allow.stderr)")
    let lua = try jail.run("operation { name = \"a\", sh = \"true\" }", ["--sandbox=lua", "--sandbox-allow", "write"])
    #expect(
      lua.status == 2 && lua.stderr.contains("--sandbox=lua confines no command, so there is nothing to widen"),
      "\(lua.stderr)")
    let value = try jail.run("operation { name = \"a\", sh = \"true\" }", ["--sandbox=all"])
    #expect(
      value.status == 2
        && value.stderr.contains("--sandbox takes no value but lua (--sandbox=lua), and 'all' was specified"),
      "\(value.stderr)")
    // before a subcommand that takes it, as after it
    let repl = try Binary.start(["--sandbox", "repl"], in: jail.workflow, input: "print(io)\n")
    let replRun = Binary.finish(repl, timeout: 30)
    #expect(replRun.status == 0 && replRun.stdout.contains("nil"), "\(replRun.stderr)")
  }

  @Test func anotherUserIsConfinedThroughAUserNamespace() throws {
    guard geteuid() == 0 else { return }  // the same path taskrun takes for any user but root
    let jail = try Jail()
    try "operation { name = \"a\", sh = \"id -u; echo x > f && cat f; echo y > \(jail.outside.path)/no\" }\n".write(
      to: jail.workflow.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    for dir in [jail.root, jail.workflow, jail.outside] { chown(dir.path, 65534, 65534) }
    chown(jail.workflow.appendingPathComponent("w.lua").path, 65534, 65534)
    chmod(Scratch.root.path, 0o755)
    let started = try Binary.start(
      [
        "--reuid=65534", "--regid=65534", "--clear-groups", Binary.url.path, "--progress", "plain", "-v", "--sandbox",
        "w.lua"
      ],
      in: jail.workflow, environment: ["HOME": jail.home.path], program: "/usr/bin/setpriv")
    let run = Binary.finish(started, timeout: 30)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("[a] 65534") && run.stdout.contains("[a] x"), "\(run.stdout)")
    #expect(!jail.exists(jail.outside.appendingPathComponent("no")))
  }
}
