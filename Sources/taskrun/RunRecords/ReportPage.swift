// ReportPage: one run as a self-contained HTML page (inline CSS, SVG and a little JS; nothing fetched): timeline, critical path, slowest, failures, history.
import TaskEngine

/// The page `taskrun report` writes. Everything from the store is escaped (HTMLText); no value
/// from it is put in the script. The timeline is one SVG: the first `maxHoverBars` attempts
/// (failures and the critical path first, then the longest) are a `<rect>` each with a
/// hover title; the others are drawn too, as one `<path>` per outcome, without a title, so
/// that a run of 100,000 operations still opens at once.
struct ReportPage {
  var run: RunRecord
  var outcome: String
  var recorded: RecordedSummary?
  var bars: [TimelineBar]
  /// Successful durations of each operation in earlier kept runs (newest first).
  var history: [String: [Double]]

  static let maxHoverBars = 2000
  static let width = 1100.0, laneHeight = 16.0, left = 10.0, top = 24.0

  static func median(_ list: [Double]) -> Double? {
    guard !list.isEmpty else { return nil }
    let s = list.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
  }

  /// The 90th percentile (nil: fewer than 3), as the live view's "slower than usual".
  static func p90(_ list: [Double]) -> Double? {
    guard list.count >= 3 else { return nil }
    let s = list.sorted()
    return s[min(s.count - 1, Int((Double(s.count) * 0.9).rounded(.up)) - 1)]
  }

  func render() -> String {
    var bars = self.bars
    let critical = Set(recorded?.summary.criticalPath.map(\.name) ?? [])
    for i in bars.indices where critical.contains(bars[i].name) { bars[i].critical = true }
    let lanes = TimelineLanes.assign(&bars)
    var h = ""
    h.reserveCapacity(4096 + bars.count * 200)
    let e = { (text: String) in HTMLText.escaped(text) }
    let nonce = Self.nonce()
    h += """
      <!DOCTYPE html>
      <html lang="en"><head><meta charset="utf-8">
      <meta http-equiv="Content-Security-Policy" content="\(Self.policy(nonce: nonce))">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <title>taskrun run \(run.id)</title>
      <style nonce="\(nonce)">\(Self.style)</style>
      </head>
      <body data-ready="0">
      <div id="errors" hidden></div>

      """
    h += "<h1>Run \(run.id): <span class=\"outcome \(e(outcome))\">\(e(outcome))</span></h1>\n"
    h += "<p class=\"meta\">Started \(e(StoreCommands.date(run.started)))"
    if let d = RunRecords.duration(run) { h += ", took \(e(formatSeconds(d)))" }
    h += ". Targets: <code>\(e(RunsCommand.targets(run)))</code>. Command: <code>\(e(run.command))</code></p>\n"
    if let s = recorded?.summary {
      var text = s.counts + " in " + formatFixed(s.elapsed, 2) + " s"
      if s.interrupted { text += " (interrupted)" } else if let ended = s.ended { text += " (\(ended))" }
      h += "<p class=\"counts\" id=\"counts\">\(e(text))</p>\n"
    } else {
      h += "<p class=\"counts\">No summary was recorded for this run.</p>\n"
    }
    if let note = RunRecords.errorNote(run) { h += "<p class=\"error-note\" id=\"error-note\">\(e(note))</p>\n" }
    timeline(&h, bars, lanes: lanes)
    criticalPath(&h)
    slowest(&h)
    failures(&h)
    againstHistory(&h)
    h += "<script nonce=\"\(nonce)\">\(Self.script)</script>\n</body></html>\n"
    return h
  }

  private func timeline(_ h: inout String, _ bars: [TimelineBar], lanes: Int) {
    h += "<h2>Timeline</h2>\n"
    guard !bars.isEmpty else {
      h += "<p>No operation ran in this run (up to date ones are not drawn).</p>\n"
      return
    }
    let span = max(0.001, bars.reduce(0) { max($0, $1.start + $1.duration) })
    let height = Self.top + Double(lanes) * Self.laneHeight + 8
    let scale = Self.width / span
    h += """
      <p class="legend"><label><input type="checkbox" id="only-critical"> critical path only</label>
      <span class="key succeeded"></span> succeeded <span class="key failed"></span> failed
      <span class="key cancelled"></span> cancelled <span class="key reused"></span> reused
      <span class="key crit"></span> critical path · \(bars.count) attempts on \(lanes) lane\(lanes == 1 ? "" : "s")
      <span id="drawn"></span></p>
      <div class="scroll"><svg id="timeline" width="\(Int(Self.width + 2 * Self.left))" height="\(Int(height))">

      """
    // The time axis: about ten ticks at 1, 2 or 5 times a power of ten seconds.
    let raw = span / 10
    var power = 1.0
    while power * 10 <= raw { power *= 10 }
    while power > raw { power /= 10 }
    let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= raw } ?? raw
    // Labels with the decimals the step needs (0.005 s steps are not all "0.01 s").
    var digits = 0
    while digits < 3 && (step * pow10(digits)).rounded() != step * pow10(digits) { digits += 1 }
    var k = 0.0
    while k * step <= span * 1.0001 {
      let t = k * step
      let x = formatFixed(Self.left + t * scale, 1)
      h += "<line class=\"tick\" x1=\"\(x)\" x2=\"\(x)\" y1=\"14\" y2=\"\(Int(height))\"/>"
      h +=
        "<text class=\"tick\" x=\"\(x)\" y=\"11\">\(step >= 1 ? formatSeconds(t) : formatFixed(t, digits) + " s")</text>\n"
      k += 1
    }
    // The bars with a title: failures and the critical path first, then the longest.
    let order = bars.indices.sorted {
      let (a, b) = (bars[$0], bars[$1])
      let (ra, rb) = (a.outcome != "succeeded" || a.critical, b.outcome != "succeeded" || b.critical)
      return ra != rb ? ra : a.duration > b.duration
    }
    let titled = Set(order.prefix(Self.maxHoverBars))
    var paths: [String: String] = [:]
    for (i, bar) in bars.enumerated() {
      let x = Self.left + bar.start * scale
      let w = max(0.5, bar.duration * scale)
      let y = Self.top + Double(bar.lane) * Self.laneHeight
      let kind = Self.kind(bar)
      if titled.contains(i) {
        var title = "\(bar.name) — \(formatSeconds(bar.duration)), \(Self.word(bar))"
        if bar.attempt > 1 { title += " (attempt \(bar.attempt))" }
        if let why = bar.why { title += "\nwhy: \(why)" }
        if let error = bar.error { title += "\nerror: \(error.prefix(300))" }
        h +=
          "<rect class=\"bar \(kind)\(bar.critical ? " crit" : "")\" data-op=\"\(HTMLText.escaped(bar.name))\" x=\"\(formatFixed(x, 2))\" y=\"\(formatFixed(y, 1))\" width=\"\(formatFixed(w, 2))\" height=\"\(Int(Self.laneHeight - 3))\"><title>\(HTMLText.escaped(title, keepingLines: true))</title></rect>\n"
      } else {
        paths[kind, default: ""] +=
          "M\(formatFixed(x, 2)) \(formatFixed(y, 1))h\(formatFixed(w, 2))v\(Int(Self.laneHeight - 3))h-\(formatFixed(w, 2))z"
      }
    }
    for (kind, d) in paths.sorted(by: { $0.key < $1.key }) { h += "<path class=\"bars \(kind)\" d=\"\(d)\"/>\n" }
    h += "</svg></div>\n"
    if bars.count > Self.maxHoverBars {
      h +=
        "<p class=\"note\">\(bars.count - Self.maxHoverBars) shorter successful attempts are drawn without a hover title (the first \(Self.maxHoverBars) have one).</p>\n"
    }
  }

  private func pow10(_ n: Int) -> Double { [1, 10, 100, 1000][min(3, n)] }

  /// The bar's colour class.
  static func kind(_ bar: TimelineBar) -> String {
    if bar.attempt == 0 { return "reused" }
    switch bar.outcome {
    case "succeeded": return "succeeded"
    case "failed": return "failed"
    case "cancelled": return "cancelled"
    default: return "other"
    }
  }

  static func word(_ bar: TimelineBar) -> String { bar.attempt == 0 ? "reused" : bar.outcome }

  private func criticalPath(_ h: inout String) {
    guard let recorded, !recorded.summary.criticalPath.isEmpty else { return }
    let path = recorded.summary.criticalPath
    h += "<h2>Critical path</h2>\n<ol class=\"path\" id=\"critical-path\">\n"
    for (i, step) in path.enumerated() {
      if i == path.count / 2, recorded.omittedSteps > 0 {
        h +=
          "<li class=\"omitted\">… \(recorded.omittedSteps) more steps (\(formatFixed(recorded.omittedSeconds, 2)) s) …</li>\n"
      }
      var how = ""
      if i > 0, let reason = step.reason, reason.kind != "dependency" {
        how =
          " <span class=\"why\">[\(HTMLText.escaped(reason.kind))\(reason.detail.map { " '" + HTMLText.escaped($0) + "'" } ?? "")]</span>"
      }
      h += "<li>\(HTMLText.escaped(step.name)) (\(formatFixed(step.duration, 2)) s)\(how)</li>\n"
    }
    h += "</ol>\n"
  }

  private func slowest(_ h: inout String) {
    let ran = bars.filter { $0.attempt > 0 }.sorted { $0.duration > $1.duration }.prefix(20)
    guard !ran.isEmpty else { return }
    h +=
      "<h2>Slowest</h2>\n<table id=\"slowest\"><tr><th>operation</th><th>duration</th><th>outcome</th><th>why it ran</th></tr>\n"
    for bar in ran {
      h +=
        "<tr><td>\(HTMLText.escaped(bar.name))</td><td class=\"n\">\(formatSeconds(bar.duration))</td><td>\(HTMLText.escaped(Self.word(bar)))</td><td>\(HTMLText.escaped(bar.why ?? ""))</td></tr>\n"
    }
    h += "</table>\n"
  }

  private func failures(_ h: inout String) {
    let failed = recorded?.summary.failures.filter { $0.outcome == .failed && $0.cause == nil } ?? []
    let attempts = bars.filter { $0.outcome == "failed" }
    guard !failed.isEmpty || !attempts.isEmpty else { return }
    h += "<h2>Failures</h2>\n<div id=\"failures\">\n"
    if failed.isEmpty {  // no summary: the attempts' errors
      for bar in attempts.prefix(200) {
        h +=
          "<div class=\"failure\"><h3>\(HTMLText.escaped(bar.name))</h3><p>\(HTMLText.escaped(bar.error ?? "failed", keepingLines: true))</p></div>\n"
      }
    }
    for failure in failed.prefix(200) {
      h += "<div class=\"failure\"><h3>\(HTMLText.escaped(failure.name))</h3>"
      h += "<p>\(HTMLText.escaped(failure.error, keepingLines: true))</p>"
      if !failure.output.isEmpty { h += "<pre>\(HTMLText.escaped(failure.output, keepingLines: true))</pre>" }
      h += "</div>\n"
    }
    if failed.count > 200 { h += "<p class=\"note\">\(failed.count - 200) more failures are not shown.</p>\n" }
    h += "</div>\n"
  }

  private func againstHistory(_ h: inout String) {
    var rows: [(bar: TimelineBar, median: Double, p90: Double?)] = []
    for bar in bars where bar.attempt > 0 && bar.outcome == "succeeded" && bar.duration >= 0.01 {
      guard let list = history[bar.name], let median = Self.median(list) else { continue }
      rows.append((bar, median, Self.p90(list)))
    }
    h += "<h2>Against history</h2>\n"
    guard !rows.isEmpty else {
      h += "<p>No earlier kept run has durations of these operations (10 ms and longer).</p>\n"
      return
    }
    // Slower than usual first, then the longest.
    let slower = { (row: (bar: TimelineBar, median: Double, p90: Double?)) in
      row.p90.map { row.bar.duration > $0 } ?? false
    }
    rows.sort { a, b in slower(a) != slower(b) ? slower(a) : a.bar.duration > b.bar.duration }
    h +=
      "<p>Successful durations of earlier kept runs (at most the 20 before this one): the median, and the 90th percentile (from 3 runs).</p>\n"
    h += "<table id=\"history\"><tr><th>operation</th><th>this run</th><th>median</th><th>p90</th><th></th></tr>\n"
    for row in rows.prefix(200) {
      let slow = row.p90.map { row.bar.duration > $0 } ?? false
      h +=
        "<tr\(slow ? " class=\"slow\"" : "")><td>\(HTMLText.escaped(row.bar.name))</td><td class=\"n\">\(formatSeconds(row.bar.duration))</td><td class=\"n\">\(formatSeconds(row.median))</td><td class=\"n\">\(row.p90.map(formatSeconds) ?? "-")</td><td>\(slow ? "slower than usual" : "")</td></tr>\n"
    }
    h += "</table>\n"
  }

  /// The page's Content-Security-Policy: nothing may be fetched, and only its own style and
  /// script (those carrying the page's `nonce`) apply and run: an inline `<script>` or
  /// `<style>` that got into the page any other way would not, nor would an `on…=` attribute
  /// or a `style=` one.
  static func policy(nonce: String) -> String {
    "default-src 'none'; style-src 'nonce-\(nonce)'; script-src 'nonce-\(nonce)'; base-uri 'none'; form-action 'none'"
  }

  /// 128 random bits (the system's generator: getrandom), as 32 hex digits: what no text the
  /// store holds can guess.
  static func nonce() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<2).map { _ in
      let word = String(generator.next() as UInt64, radix: 16)
      return String(repeating: "0", count: 16 - word.count) + word
    }.joined()
  }

  static let style = """
    body{font:14px system-ui,sans-serif;margin:16px;color:#222;background:#fff}
    h1{font-size:20px}h2{font-size:16px;margin-top:24px}h3{font-size:14px;margin:8px 0 4px}
    code{font:12px monospace;background:#f3f3f3;padding:1px 3px}
    .outcome.succeeded{color:#2e7d32}.outcome.failed,.outcome.killed{color:#c62828}
    .counts{font-weight:bold}.note,.meta{color:#555}
    #errors{background:#fdd;color:#900;padding:8px;white-space:pre-wrap}
    .scroll{overflow-x:auto;border:1px solid #ddd}
    svg text.tick{font:10px sans-serif;fill:#666}svg line.tick{stroke:#eee}
    .succeeded{fill:#66bb6a}.failed{fill:#e53935}.cancelled{fill:#9e9e9e}.reused{fill:#64b5f6}.other{fill:#ffb74d}
    rect.crit{stroke:#ff6f00;stroke-width:2}
    svg.only-critical .bar:not(.crit),svg.only-critical .bars{opacity:.15}
    .key{display:inline-block;width:12px;height:10px;margin-left:8px}.key.crit{border:2px solid #ff6f00}
    .key.succeeded{background:#66bb6a}.key.failed{background:#e53935}.key.cancelled{background:#9e9e9e}
    .key.reused{background:#64b5f6}
    table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}
    td.n{text-align:right;font-variant-numeric:tabular-nums}tr.slow td{background:#fff3e0}
    pre{background:#f6f6f6;padding:6px;max-height:20em;overflow:auto;font-size:12px}
    .failure{border-left:3px solid #e53935;padding-left:8px;margin:8px 0}.why{color:#777}
    .error-note{color:#c62828;font-weight:bold}
    """

  /// The page's only script: errors are shown (and leave `data-ready` at 0), else the
  /// critical-path switch is wired and `data-ready` becomes 1.
  static let script = """
    (function(){
    function fail(m){var e=document.getElementById('errors');e.hidden=false;e.textContent+='script error: '+m+'\\n';document.body.setAttribute('data-ready','error');}
    window.onerror=function(m){fail(m);return false;};
    try{
    var svg=document.getElementById('timeline');
    var box=document.getElementById('only-critical');
    if(svg&&box){box.addEventListener('change',function(){svg.classList.toggle('only-critical',box.checked);});}
    var drawn=document.getElementById('drawn');
    if(drawn){drawn.textContent='('+document.querySelectorAll('rect.bar').length+' with a hover title)';}
    document.body.setAttribute('data-ready','1');
    }catch(x){fail(x&&x.message?x.message:String(x));}
    })();
    """
}
