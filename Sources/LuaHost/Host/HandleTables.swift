// HandleTables: per handle kind, the registry tables and the noun that make its handles.
import CLua
import CLuaShim

/// What the host keeps per kind of handle (operation, queue, progress): its metatable (and
/// that table's address, which marks a handle), the cache of handles by id (one value per
/// object, so `==` holds), the table of its methods, and its noun.
struct HandleTables {
  var metatables = PerKind()
  var metatableAddresses = [UnsafeRawPointer?](repeating: nil, count: HandleKind.allCases.count)
  var caches = PerKind()
  var methods = PerKind()
  /// By kind (`HandleKind.rawValue`), bound on first use (see `ScriptHost.noun`).
  var nouns = [NounBinding?](repeating: nil, count: HandleKind.allCases.count)
  /// The private key under which a progress handle (a table) keeps its id.
  let progressKey = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
}
