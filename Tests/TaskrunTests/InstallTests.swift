// scripts/install into a temporary prefix, an example run with the installed binary, and
// scripts/uninstall leaving nothing behind. It builds a release binary (minutes), so it runs
// only when TASKRUN_INSTALL_TEST=1: scripts/test runs it on its own, after the other tests.
import Foundation
import TestSupport
import Testing

@Suite struct InstallTests {
  static let enabled = ProcessInfo.processInfo.environment["TASKRUN_INSTALL_TEST"] == "1"

  func files(under folder: URL) -> [String] {
    (FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String] ?? []).sorted()
  }

  @Test(.enabled(if: enabled, "TASKRUN_INSTALL_TEST=1 runs it (scripts/test does)"), .timeLimit(.minutes(20)))
  func installRunUninstall() throws {
    let root = Binary.packageRoot
    let prefix = Scratch.root.appendingPathComponent("taskrun-prefix-\(UUID().uuidString)")
    let install = Binary.finish(
      try Binary.start([prefix.path], in: root, program: root.appendingPathComponent("scripts/install").path),
      timeout: 1200)
    #expect(install.status == 0, "\(install.stdout)\(install.stderr)")
    let installed = files(under: prefix)
    for file in [
      "bin/taskrun", "share/man/man1/taskrun.1", "share/taskrun/types/taskrun.lua",
      "share/doc/taskrun/events.schema.json", "share/bash-completion/completions/taskrun",
      "share/zsh/site-functions/_taskrun", "share/fish/vendor_completions.d/taskrun.fish",
      "share/taskrun/install-manifest"
    ] {
      #expect(installed.contains(file), "\(file) in \(installed)")
    }
    let binary = prefix.appendingPathComponent("bin/taskrun").path
    let version = Binary.finish(try Binary.start(["--version"], in: root, program: binary))
    #expect(version.stdout.hasPrefix("taskrun "), "\(version.stdout)\(version.stderr)")
    let example = Binary.finish(
      try Binary.start(["--progress", "plain", "examples/app-launch.lua"], in: root, program: binary), timeout: 120)
    #expect(example.status == 0, "the installed binary runs an example: \(example.stdout)\(example.stderr)")
    let ldd = Binary.finish(try Binary.start([binary], in: root, program: "/usr/bin/ldd"))
    #expect(!ldd.stdout.contains("libswiftCore"), "the Swift runtime is linked in: \(ldd.stdout)")
    #expect(!ldd.stdout.contains("libstdc++"), "the C++ runtime is linked in (scripts/build-static): \(ldd.stdout)")

    let uninstall = Binary.finish(
      try Binary.start([prefix.path], in: root, program: root.appendingPathComponent("scripts/uninstall").path))
    #expect(uninstall.status == 0, "\(uninstall.stdout)\(uninstall.stderr)")
    #expect(
      !FileManager.default.fileExists(atPath: prefix.path),
      "nothing is left, not even the folders it made: \(files(under: prefix))")
  }
}
