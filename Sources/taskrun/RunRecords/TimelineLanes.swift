// TimelineLanes: the report's lanes, assigned greedily from each attempt's start and duration as the trace shows parallelism.

/// One bar of the timeline: an attempt, its start (seconds after the run's) and duration.
struct TimelineBar {
  var name: String
  var attempt: Int
  var outcome: String
  var start: Double
  var duration: Double
  var why: String?
  var error: String?
  var lane = 0
  var critical = false
}

enum TimelineLanes {
  /// At most this many lanes are drawn; what would need more shares the last one.
  static let maxLanes = 128

  /// Each bar on the first lane free at its start (bars in start order); returns how many
  /// lanes were used.
  static func assign(_ bars: inout [TimelineBar]) -> Int {
    bars.sort { $0.start < $1.start || ($0.start == $1.start && $0.duration > $1.duration) }
    var ends: [Double] = []
    for i in bars.indices {
      let start = bars[i].start
      // A small tolerance: an operation that starts as its dependency ends reuses its lane.
      if let free = ends.firstIndex(where: { $0 <= start + 1e-6 }) {
        bars[i].lane = free
        ends[free] = start + bars[i].duration
      } else if ends.count < maxLanes {
        bars[i].lane = ends.count
        ends.append(start + bars[i].duration)
      } else {
        bars[i].lane = maxLanes - 1
        ends[maxLanes - 1] = max(ends[maxLanes - 1], start + bars[i].duration)
      }
    }
    return ends.count
  }
}
