// The observation noun: what `p:observe(f, options)` returns: `active`, `keys`, `:cancel()`.
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// Observation handles: "<observation of progress 3 of 10: fraction, paused>".
  static var observationNoun: LuaNoun<ProgressObservation> {
    LuaNoun(
      kind: .observation, name: "observation", variable: "h",
      object: { host, id in host.progressHandles.observations[id] },
      title: { _ in "observation" },
      fields: [
        LuaField("active") { _, o, s in s.push(o.active) },
        LuaField("every") { _, o, s in s.push(o.every) },
        LuaField("keys") { _, o, s in
          guard let keys = o.keys else { return s.pushNil() }
          s.newTable(array: Int32(keys.count))
          for (i, key) in keys.enumerated() {
            s.push(key)
            s.rawSet(-2, i + 1)
          }
        },
        LuaField("progress") { host, o, s in host.pushHandle(.progress, id: host.progressID(o.node), on: s) }
      ],
      methods: [
        LuaMethod("cancel") { host, o, _ in
          host.unobserve(o)
          return 0
        }
      ], luaMethods: [],
      describe: { o in
        "<observation of progress \(o.node.completed) of \(o.node.total): "
          + (o.keys?.joined(separator: ", ") ?? "any change") + (o.active ? "" : ", cancelled") + ">"
      },
      refuse: { _, key in ScriptError("observation: '\(key)' cannot be set (cancel it with :cancel())") })
  }
}
