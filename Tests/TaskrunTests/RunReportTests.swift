// taskrun report through the binary: hostile names escaped, no network, 10,000 operations, and the page in a real headless Chromium.
import Foundation
import TestSupport
import Testing

@testable import taskrun

@Suite struct RunReportTests {
  /// Debian's chromium (scripts/setup installs it); the browser tests skip without it.
  static let chromium: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
    FileManager.default.isExecutableFile(atPath: $0)
  }

  /// Parallel lanes, a critical chain, one failure with output, a hostile name.
  static let script = """
    operation { name = "fetch", sh = "sleep 0.2" }
    operation { name = "gen", sh = "sleep 0.1", after = "fetch" }
    operation { name = "compile", sh = "sleep 0.3", after = "gen" }
    operation { name = "docs", sh = "sleep 0.15", after = "fetch" }
    operation { name = "lint", sh = "echo 'lint: 3 problems' >&2; sleep 0.05; exit 1" }
    operation { name = "<script>alert(1)</script>\\"'&", sh = "printf '<img src=x onerror=alert(2)>\\\\n'; exit 3" }
    operation { name = "link", sh = "sleep 0.05", after = { "compile", "docs" } }
    """

  static func reported(_ script: String = script, runs: Int = 1) throws -> (dir: URL, html: String) {
    let dir = try Scratch.folder("report", ["workflow.lua": script])
    for _ in 0..<runs {
      let run = try Binary.run(["--progress", "plain", "-k"], in: dir)
      #expect(run.status <= 1, "\(run.stderr)")
    }
    let report = try Binary.run(["report", "-o", "run.html"], in: dir)
    #expect(
      report.status == 0 && report.stdout.contains("Wrote the report of run \(runs) to run.html"), "\(report.stderr)")
    let html = try String(contentsOf: dir.appendingPathComponent("run.html"), encoding: .utf8)
    return (dir, html)
  }

  @Test func everythingFromTheStoreIsEscapedAndNothingIsFetched() throws {
    let (_, html) = try Self.reported()
    #expect(html.components(separatedBy: "<script").count == 2, "only the page's own script")
    #expect(!html.contains("<img"), "a command's output is text")
    #expect(html.contains("data-op=\"&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;\""))
    #expect(html.contains("&lt;img src=x onerror=alert(2)&gt;"))
    #expect(!html.contains("http://") && !html.contains("https://") && !html.contains("//fonts"))
    #expect(html.contains("default-src 'none'"), "the page may fetch nothing")
    #expect(!html.contains("unsafe-inline"), "only the page's own style and script apply, by their nonce")
    // The policy names one random nonce, which the page's own <style> and <script> carry.
    let nonce = try #require(
      html.range(of: #"script-src 'nonce-([0-9a-f]{32})'"#, options: .regularExpression).map {
        String(html[$0].dropFirst("script-src 'nonce-".count).prefix(32))
      })
    #expect(html.contains("style-src 'nonce-\(nonce)'"))
    #expect(html.contains("<style nonce=\"\(nonce)\">") && html.contains("<script nonce=\"\(nonce)\">"))
    let (_, again) = try Self.reported()
    #expect(!again.contains(nonce), "each page has a nonce of its own")
    for name in ["fetch", "gen", "compile", "docs", "lint", "link"] {
      #expect(html.contains("<rect class=\"bar ") && html.contains("data-op=\"\(name)\""), "\(name)")
    }
    #expect(html.contains("<rect class=\"bar failed\" data-op=\"lint\""))
    #expect(html.contains("<ol class=\"path\" id=\"critical-path\">\n<li>fetch ("), "the critical path")
    #expect(html.contains("lint: 3 problems"), "the failure's output tail")
  }

  @Test func controlCharactersAndInvalidUTF8AreShownNotPassedOn() throws {
    let (dir, _) = try Self.reported()
    let db = dir.appendingPathComponent(".taskrun/workflow.lua.db").path
    let changed = try Child.output([
      "sqlite3", db, "UPDATE runs SET command = CAST(X'3C62FF3E1B5B33316D0007' AS TEXT), started = 'NaN'"
    ])
    #expect(changed.status == 0)
    let report = try Binary.run(["report", "last", "-o", "-"], in: dir)
    #expect(report.status == 0, "\(report.stderr)")
    #expect(
      report.stdout.contains("&lt;b\u{FFFD}&gt;") && !report.stdout.contains("\u{1B}") && !report.stdout.contains("\0"))
  }

  @Test func theReportNeverReplacesTheScript() throws {
    let (dir, _) = try Self.reported()
    let before = try String(contentsOf: dir.appendingPathComponent("workflow.lua"), encoding: .utf8)
    let run = try Binary.run(["report", "-o", "./workflow.lua"], in: dir)
    #expect(run.status == 2 && run.stderr.contains("-o './workflow.lua' is the script"), "\(run.stderr)")
    #expect(try String(contentsOf: dir.appendingPathComponent("workflow.lua"), encoding: .utf8) == before)
  }

  @Test func theReportNeverReplacesTheRunStore() throws {
    let (dir, _) = try Self.reported()
    let fm = FileManager.default
    let db = dir.appendingPathComponent(".taskrun/workflow.lua.db")
    let before = try Data(contentsOf: db)
    try fm.createDirectory(at: dir.appendingPathComponent("sub"), withIntermediateDirectories: true)
    try fm.createSymbolicLink(atPath: dir.appendingPathComponent("store.html").path, withDestinationPath: db.path)
    try fm.createSymbolicLink(atPath: dir.appendingPathComponent("box").path, withDestinationPath: ".taskrun")
    for output in [
      ".taskrun/workflow.lua.db", "./sub/../.taskrun/workflow.lua.db", ".taskrun", ".taskrun/new.html", "store.html",
      "box/x.html", db.path
    ] {
      let run = try Binary.run(["report", "-o", output], in: dir)
      #expect(
        run.status == 2 && run.stderr.contains("is in the run store's folder"),
        "\(output): \(run.status) \(run.stdout)\(run.stderr)")
    }
    // From inside .taskrun/, the default file would be there too.
    let inside = try Binary.run(["report", "-f", "../workflow.lua"], in: dir.appendingPathComponent(".taskrun"))
    #expect(inside.status == 2 && inside.stderr.contains("is in the run store's folder"), "\(inside.stderr)")
    #expect(try Data(contentsOf: db) == before, "the store is as it was")
    #expect(!fm.fileExists(atPath: dir.appendingPathComponent(".taskrun/new.html").path))
    let runs = try Binary.run(["runs"], in: dir)
    #expect(runs.status == 0 && runs.stdout.contains("\n1 "), "\(runs.stdout)\(runs.stderr)")
  }

  @Test func aLinkAtTheOutputIsReplacedNeverWrittenThrough() throws {
    let (dir, _) = try Self.reported()
    let fm = FileManager.default
    let victim = dir.appendingPathComponent("victim.txt")
    try "secret\n".write(to: victim, atomically: true, encoding: .utf8)
    let planted = ["link.html": victim.path, "taskrun-report-1.html": victim.path, "dangling.html": "made.txt"]
    for (name, target) in planted {
      try fm.createSymbolicLink(atPath: dir.appendingPathComponent(name).path, withDestinationPath: target)
    }
    for arguments in [["report", "-o", "link.html"], ["report"], ["report", "-o", "dangling.html"]] {
      let run = try Binary.run(arguments, in: dir)
      #expect(run.status == 0 && run.stdout.contains("Wrote the report of run 1"), "\(arguments): \(run.stderr)")
    }
    #expect(try String(contentsOf: victim, encoding: .utf8) == "secret\n", "the link's target is untouched")
    #expect(!fm.fileExists(atPath: dir.appendingPathComponent("made.txt").path), "a dangling link makes nothing")
    for name in planted.keys {
      let path = dir.appendingPathComponent(name).path
      let attributes = try fm.attributesOfItem(atPath: path)
      #expect(attributes[.type] as? FileAttributeType == .typeRegular, "\(name) is a file of its own now")
      let mode = (attributes[.posixPermissions] as? Int) ?? 0
      #expect(mode & 0o600 == 0o600 && mode & 0o133 == 0, "\(name): mode \(String(mode, radix: 8))")
      #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("<!DOCTYPE html>"), "\(name)")
    }
    let leftovers = try fm.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".tmp") }
    #expect(leftovers.isEmpty, "\(leftovers)")
    // A device (or a link to one) is written in place, not replaced: /dev/stdout stays a link
    // and /dev/null a device, even for root.
    let stdout = try Binary.run(["report", "-o", "/dev/stdout"], in: dir)
    #expect(stdout.status == 0 && stdout.stdout.hasPrefix("<!DOCTYPE html>"), "\(stdout.stderr)")
    let null = try Binary.run(["report", "-o", "/dev/null"], in: dir)
    #expect(null.status == 0, "\(null.stderr)")
    #expect(try fm.attributesOfItem(atPath: "/dev/stdout")[.type] as? FileAttributeType == .typeSymbolicLink)
    #expect(try fm.attributesOfItem(atPath: "/dev/null")[.type] as? FileAttributeType == .typeCharacterSpecial)
  }

  @Test func historyMarksWhatRanSlowerThanUsual() throws {
    let dir = try Scratch.folder(
      "report-history", ["workflow.lua": #"operation { name = "s", sh = "sleep $(cat d)" }"#, "d": "0.02"])
    for _ in 0..<3 { #expect(try Binary.run(["--progress", "plain"], in: dir).status == 0) }
    try "2".write(to: dir.appendingPathComponent("d"), atomically: true, encoding: .utf8)
    #expect(try Binary.run(["--progress", "plain"], in: dir).status == 0)
    let report = try Binary.run(["report", "-o", "-"], in: dir)
    #expect(report.stdout.contains("<tr class=\"slow\"><td>s</td>"), "\(report.stdout)")
    #expect(report.stdout.contains("slower than usual"))
  }

  static let many = """
    for i = 1, 10000 do operation { name = "op" .. i, run = function() end } end
    """

  @Test func tenThousandOperationsMakeAPageThatStaysSmall() throws {
    let started = Date()
    let (_, html) = try Self.reported(Self.many)
    #expect(Date().timeIntervalSince(started) < 60)
    #expect(html.utf8.count < 4 << 20, "\(html.utf8.count) bytes")
    #expect(html.components(separatedBy: "<rect class=\"bar ").count - 1 == 2000, "at most 2,000 bars with a title")
    #expect(html.contains("<path class=\"bars succeeded\" d=\"M"), "the others in one path")
    #expect(html.contains("8000 shorter successful attempts are drawn without a hover title"))
  }

  /// Runs chromium on the page with every name resolving nowhere (no network) and the page's
  /// console on standard error; its output.
  static func browse(_ page: URL, _ extra: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    let folder = page.deletingLastPathComponent()
    let (out, err) = (folder.appendingPathComponent("chromium.out"), folder.appendingPathComponent("chromium.err"))
    let child = try Child(
      [
        chromium!, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--enable-logging=stderr",
        "--v=0", "--host-resolver-rules=MAP * ~NOTFOUND", "--user-data-dir=" + folder.path + "/chromium"
      ] + extra + [page.absoluteString], stdout: out.path, stderr: err.path)
    var status = child.wait(timeout: 120)
    if status == nil {  // a browser that hangs is ended, and the test fails
      kill(child.pid, SIGKILL)
      status = child.wait()
    }
    return (
      status ?? -1, (try? String(contentsOf: out, encoding: .utf8)) ?? "",
      (try? String(contentsOf: err, encoding: .utf8)) ?? ""
    )
  }

  @Test(.enabled(if: chromium != nil, "no chromium (scripts/setup installs Debian's chromium)"))
  func thePageLoadsInAHeadlessBrowserWithoutErrorsAndDrawsTheBars() throws {
    let (dir, _) = try Self.reported()
    let page = dir.appendingPathComponent("run.html")
    let dom = try Self.browse(page, ["--dump-dom"])
    #expect(dom.status == 0)
    #expect(dom.stdout.contains("<body data-ready=\"1\">"), "the script ran to its end: \(dom.stdout.prefix(2000))")
    #expect(dom.stdout.contains("<div id=\"errors\" hidden=\"\"></div>"), "no script error")
    #expect(dom.stdout.contains("(7 with a hover title)"), "the script counted the bars")
    #expect(!dom.stderr.contains(":CONSOLE"), "nothing on the page's console: \(dom.stderr)")
    for name in ["fetch", "gen", "compile", "docs", "lint", "link"] {
      #expect(dom.stdout.contains("data-op=\"\(name)\""), "\(name)")
    }
    #expect(!dom.stdout.contains("<img"), "the hostile output stayed text")
    // An inline script or style that got into the page some other way neither runs nor applies:
    // the policy allows the page's own by their hash only.
    let injected = dir.appendingPathComponent("injected.html")
    let page0 = try String(contentsOf: page, encoding: .utf8)
    try page0.replacingOccurrences(
      of: "<div id=\"errors\" hidden></div>",
      with: "<div id=\"errors\" hidden></div><script>document.body.setAttribute('data-injected','1')</script>"
        + "<img src=x onerror=\"document.body.setAttribute('data-handler','1')\">"
    ).write(to: injected, atomically: true, encoding: .utf8)
    let blocked = try Self.browse(injected, ["--dump-dom"])
    #expect(blocked.stdout.contains("data-ready=\"1\""), "the page's own script ran: \(blocked.stdout.prefix(500))")
    #expect(!blocked.stdout.contains("data-injected=\"1\""), "an injected inline script did not run")
    #expect(!blocked.stdout.contains("data-handler=\"1\""), "nor an injected event handler")
    let shot = dir.appendingPathComponent("shot.png")
    let screenshot = try Self.browse(page, ["--screenshot=" + shot.path, "--window-size=1200,800", "--hide-scrollbars"])
    #expect(screenshot.status == 0)
    let png = try Data(contentsOf: shot)
    #expect(png.count > 1000 && png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
    #expect(try Self.colours(shot) > 8, "not one flat colour")
  }

  @Test(.enabled(if: chromium != nil, "no chromium (scripts/setup installs Debian's chromium)"))
  func aPageOfTenThousandOperationsLoads() throws {
    let (dir, _) = try Self.reported(Self.many)
    let started = Date()
    let dom = try Self.browse(dir.appendingPathComponent("run.html"), ["--dump-dom"])
    #expect(dom.stdout.contains("<body data-ready=\"1\">"))
    #expect(Date().timeIntervalSince(started) < 60)
  }

  /// How many distinct pixels the PNG has (python3's zlib: no imaging library needed).
  static func colours(_ png: URL) throws -> Int {
    let program = """
      import sys, zlib, struct
      data = open(sys.argv[1], 'rb').read()
      pos, idat, width, height, channels = 8, b'', 0, 0, 4
      while pos < len(data):
          length, kind = struct.unpack('>I4s', data[pos:pos + 8])
          body = data[pos + 8:pos + 8 + length]
          if kind == b'IHDR':
              width, height, depth, colour = struct.unpack('>IIBB', body[:10])
              channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour, 4)
          elif kind == b'IDAT':
              idat += body
          pos += 12 + length
      raw = zlib.decompress(idat)
      stride = width * channels
      prev = bytearray(stride)
      seen = set()
      for y in range(height):
          f = raw[y * (stride + 1)]
          line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
          for x in range(stride):
              a = line[x - channels] if x >= channels else 0
              b = prev[x]
              c = prev[x - channels] if x >= channels else 0
              if f == 1: line[x] = (line[x] + a) & 255
              elif f == 2: line[x] = (line[x] + b) & 255
              elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
              elif f == 4:
                  p = a + b - c
                  pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                  line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
          for x in range(0, stride, channels * 7):
              seen.add(bytes(line[x:x + channels]))
          prev = line
      print(len(seen))
      """
    let out = try Child.output(["python3", "-c", program, png.path])
    return Int(out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
  }
}
