// What the host keeps for each object a script makes, charged to the Lua heap's cap.
import CLua
import CLuaShim

/// Bytes taskrun allocates outside the Lua heap for each object a script makes: the engine's
/// node, its place in the engine's lists, its handle's cache entry. Measured as the peak
/// resident size less the Lua heap over 1,000,000 of each (`benchmarks/host-memory.lua`:
/// operation 354, group 282, queue 290, resource 64, progress 492, observer 190), then half
/// as much again for the address space a growing array holds twice while it copies; a name
/// adds its bytes. Charged against the Lua heap's cap, so a script that makes them without
/// end fails with Lua's `not enough memory` while the host still has room, as plain Lua data
/// does, instead of the process dying in an allocation Swift cannot refuse.
enum HostCharge {
  static let operation = 560
  static let group = 440
  static let queue = 440
  static let condition = 100
  static let progress = 740
  static let observer = 290
}

/// A charge the cap refused: the host function raises Lua's memory error.
struct HostMemoryRefused: Error {}

extension ScriptHost {
  /// Charges `bytes` for an object about to be made, or throws (raising Lua's memory error).
  func charge(_ bytes: Int, on s: LuaStack) throws {
    guard tl_charge_heap(heap.account, bytes) != 0 else { throw HostMemoryRefused() }
  }

  /// Gives back a charge for an object that was not made after all.
  func uncharge(_ bytes: Int, on s: LuaStack) { _ = tl_charge_heap(heap.account, -bytes) }

  /// Runs `make` with `bytes` (and the length of the string `nameAt` names: a field of the
  /// table at 1, or argument 1 itself when `nameAt` is nil and it is a string) charged first;
  /// the charge is given back if `make` throws (nothing was made).
  func charged(_ bytes: Int, _ s: LuaStack, field: String? = "name", _ make: () throws -> Int32) throws -> Int32 {
    var total = bytes
    if let field {
      if s.type(1) == LUA_TTABLE {
        if s.rawGet(1, field) == LUA_TSTRING { total += s.rawLength(-1) }
        s.pop()
      }
    } else if s.type(1) == LUA_TSTRING {
      total += s.rawLength(1)
    }
    try charge(total, on: s)
    do { return try make() } catch {
      uncharge(total, on: s)
      throw error
    }
  }
}
