// types/taskrun.lua (for lua-language-server) names exactly what the host defines.
import Foundation
import TaskEngine
import Testing

@testable import LuaHost

@Suite struct TypeDefinitionTests {
  static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("types/taskrun.lua")

  /// What the file declares: global functions and values, and each class's fields and methods.
  struct Declared {
    var globals: Set<String> = []
    var fields: [String: Set<String>] = [:]
    var methods: [String: Set<String>] = [:]
  }

  static func declared() throws -> Declared {
    var declared = Declared()
    var currentClass: String?
    let locals = [
      "Operation": "Operation", "Queue": "Queue", "Progress": "Progress", "ProgressModule": "ProgressModule",
      "Observation": "Observation"
    ]
    for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init) {
      if let match = line.firstMatch(of: /^---@class taskrun\.(\w+)/) { currentClass = String(match.1); continue }
      if let match = line.firstMatch(of: /^---@field (\w+)/), let currentClass {
        declared.fields[currentClass, default: []].insert(String(match.1))
      } else if let match = line.firstMatch(of: /^function (\w+)[:.](\w+)\(/), let owner = locals[String(match.1)] {
        declared.methods[owner, default: []].insert(String(match.2))
      } else if let match = line.firstMatch(of: /^function (\w+)\(/) {
        declared.globals.insert(String(match.1))
      } else if let match = line.firstMatch(of: /^(\w+) = nil$/) {
        declared.globals.insert(String(match.1))
      }
    }
    return declared
  }

  @Test func everyGlobalTheHostDefinesIsDeclaredAndNothingMore() throws {
    let declared = try Self.declared()
    let host = ScriptHost(scheduler: Scheduler(clock: ManualClock(), jobs: 1))
    let names = declared.globals.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
    // Lua's own globals are the base library and the standard modules (print is replaced).
    try host.execute(
      source: """
        local std = {}
        for _, n in ipairs { "assert", "collectgarbage", "dofile", "error", "getmetatable", "ipairs", "load",
          "loadfile", "next", "pairs", "pcall", "print", "rawequal", "rawget", "rawlen", "rawset", "require",
          "select", "setmetatable", "tonumber", "tostring", "type", "xpcall", "_G", "_VERSION", "warn",
          "coroutine", "debug", "io", "math", "os", "package", "string", "table", "utf8", "arg" } do std[n] = true end
        local declared, missing, extra = {}, {}, {}
        for _, n in ipairs { \(names) } do declared[n] = true end
        for n in pairs(_G) do if not std[n] and not declared[n] then missing[#missing + 1] = n end end
        for n in pairs(declared) do if rawget(_G, n) == nil then extra[#extra + 1] = n end end
        table.sort(missing) table.sort(extra)
        if #missing + #extra > 0 then
          error("not declared: " .. table.concat(missing, ", ") .. "; declared but not defined: " .. table.concat(extra, ", "), 0)
        end
        """, name: "=types")
  }

  @Test func handlesAndSpecsMatchTheHost() throws {
    let declared = try Self.declared()
    let host = ScriptHost(scheduler: Scheduler(clock: ManualClock(), jobs: 1))
    #expect(declared.fields["Operation"] == Set(host.noun(.operation).readable))
    #expect(declared.methods["Operation"] == Set(host.noun(.operation).methodNames))
    #expect(declared.methods["Operation"]?.contains("wait") == true)
    #expect(declared.fields["Queue"] == Set(host.noun(.queue).readable))
    #expect(declared.methods["Queue"] == Set(host.noun(.queue).methodNames))
    #expect(declared.methods["Queue"]?.contains("wait") == true)
    #expect(declared.fields["Progress"] == Set(host.noun(.progress).readable))
    #expect(declared.methods["Progress"] == Set(host.noun(.progress).methodNames))
    #expect(declared.fields["Observation"] == Set(host.noun(.observation).readable))
    #expect(declared.methods["Observation"] == Set(host.noun(.observation).methodNames))
    #expect(declared.fields["OperationSpec"] == Set(SpecField.allCases.map(\.key)))
    #expect(declared.methods["ProgressModule"] == ["current"])
  }
}
