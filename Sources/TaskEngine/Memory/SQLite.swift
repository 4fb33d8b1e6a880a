// SQLite: the few calls of SQLite's C API the run store makes, with errors that say what failed.
import CSQLite

/// A failure of the store: what was being done and SQLite's own message.
public struct StoreError: Error, CustomStringConvertible, Sendable {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// An open database connection (one per run; used on the scheduler's thread only).
final class SQLiteDatabase {
  let handle: OpaquePointer

  init(path: String, readOnly: Bool) throws(StoreError) {
    var db: OpaquePointer?
    let flags =
      (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
      | SQLITE_OPEN_NOFOLLOW
    let status = sqlite3_open_v2(path, &db, flags, nil)
    guard status == SQLITE_OK, let db else {
      let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
      if let db { sqlite3_close_v2(db) }
      throw StoreError("cannot open \(path): \(message)")
    }
    handle = db
    sqlite3_extended_result_codes(db, 1)
  }

  deinit { sqlite3_close_v2(handle) }

  var message: String { String(cString: sqlite3_errmsg(handle)) }

  /// Runs statements that return no rows.
  func execute(_ sql: String) throws(StoreError) {
    var error: UnsafeMutablePointer<CChar>?
    guard sqlite3_exec(handle, sql, nil, nil, &error) == SQLITE_OK else {
      let text = error.map { String(cString: $0) } ?? message
      sqlite3_free(error)
      throw StoreError(text)
    }
  }

  func prepare(_ sql: String) throws(StoreError) -> SQLiteStatement {
    var statement: OpaquePointer?
    guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
      let statement
    else { throw StoreError(message) }
    return SQLiteStatement(statement, database: self)
  }

  /// The first column of the first row of `sql` as text (nil: no row, or NULL).
  func text(_ sql: String) throws(StoreError) -> String? {
    let statement = try prepare(sql)
    return try statement.step() ? statement.text(0) : nil
  }

  var lastInsertedRow: Int64 { sqlite3_last_insert_rowid(handle) }
}

/// A prepared statement, reset and bound again for each use.
final class SQLiteStatement {
  let handle: OpaquePointer
  unowned let database: SQLiteDatabase

  init(_ handle: OpaquePointer, database: SQLiteDatabase) {
    self.handle = handle
    self.database = database
  }

  deinit { sqlite3_finalize(handle) }

  /// SQLite copies what is bound (the Swift value does not outlive the call).
  private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

  @discardableResult
  func reset() -> SQLiteStatement {
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
    return self
  }

  func bind(_ index: Int32, _ value: Int64?) {
    if let value { sqlite3_bind_int64(handle, index, value) } else { sqlite3_bind_null(handle, index) }
  }
  func bind(_ index: Int32, _ value: Int?) { bind(index, value.map(Int64.init)) }
  func bind(_ index: Int32, _ value: Double?) {
    if let value, value.isFinite { sqlite3_bind_double(handle, index, value) } else { sqlite3_bind_null(handle, index) }
  }
  func bind(_ index: Int32, _ value: String?) {
    if let value {
      sqlite3_bind_text(handle, index, value, -1, Self.transient)
    } else {
      sqlite3_bind_null(handle, index)
    }
  }
  func bind(_ index: Int32, _ value: [UInt8]?) {
    guard let value else {
      sqlite3_bind_null(handle, index)
      return
    }
    value.withUnsafeBytes { _ = sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), Self.transient) }
  }

  /// Steps once: true for a row, false when done.
  func step() throws(StoreError) -> Bool {
    switch sqlite3_step(handle) {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    default: throw StoreError(database.message)
    }
  }

  /// Steps a statement that returns no rows, then resets it.
  func run() throws(StoreError) {
    defer { reset() }
    _ = try step()
  }

  func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
  func int(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
  func optionalInt(_ column: Int32) -> Int64? { isNull(column) ? nil : int(column) }
  func double(_ column: Int32) -> Double? { isNull(column) ? nil : sqlite3_column_double(handle, column) }
  func text(_ column: Int32) -> String? {
    guard let text = sqlite3_column_text(handle, column) else { return nil }
    let count = Int(sqlite3_column_bytes(handle, column))
    return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
  }
  /// A 16-byte blob as a digest, read in place (nil: another size).
  func digest(_ column: Int32) -> Digest? {
    guard sqlite3_column_bytes(handle, column) == 16, let raw = sqlite3_column_blob(handle, column) else { return nil }
    return Digest(
      high: UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)),
      low: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
  }
  /// A blob of little-endian doubles, read in place.
  func doubles(_ column: Int32) -> [Double] {
    let count = Int(sqlite3_column_bytes(handle, column)) / 8
    guard count > 0, let raw = sqlite3_column_blob(handle, column) else { return [] }
    return (0..<count).map {
      Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8 * $0, as: UInt64.self)))
    }
  }
  func blob(_ column: Int32) -> [UInt8] {
    let count = Int(sqlite3_column_bytes(handle, column))
    guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return [] }
    return Array(UnsafeRawBufferPointer(start: bytes, count: count))
  }
}
