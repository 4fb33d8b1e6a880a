// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "taskrun",
  products: [
    .executable(name: "taskrun", targets: ["taskrun"]),
    .library(name: "TaskEngine", targets: ["TaskEngine"]),
    .library(name: "LuaHost", targets: ["LuaHost"])
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-collections", from: "1.1.0")
  ],
  targets: [
    // The Lua C API, from the system (Debian: liblua5.4-dev).
    .systemLibrary(
      name: "CLua", pkgConfig: "lua5.4",
      providers: [.apt(["liblua5.4-dev"]), .brew(["lua"])]),
    // The only code that calls lua_error / lua_yield / hooks: C trampolines around Swift.
    .target(name: "CLuaShim", dependencies: ["CLua"]),
    // The run store (`.taskrun/`): SQLite from the system (Debian: libsqlite3-dev), in WAL mode.
    .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
    // Content hashes of inputs and outputs: XXH3-128 from the system (Debian: libxxhash-dev).
    .systemLibrary(name: "CXXHash", pkgConfig: "libxxhash", providers: [.apt(["libxxhash-dev"])]),
    // Operations, queues, scheduler, processes, clock, events. Pure Swift, no Lua.
    // posix_spawn with a process group and pidfd_open: what Glibc's Swift overlay lacks.
    .target(name: "CSpawn"),
    .target(
      name: "TaskEngine",
      dependencies: [
        "CSpawn", "CSQLite", "CXXHash", .product(name: "HeapModule", package: "swift-collections")
      ]),
    // The host's own Lua (prelude, sandbox, the busted runner) as .lua files, compiled in
    // with clang's #embed so they can be read, highlighted and linted as Lua.
    .target(name: "LuaSources", exclude: ["lua"]),
    // The Lua state, value conversion, coroutine driver and the Lua API.
    .target(name: "LuaHost", dependencies: ["TaskEngine", "CLuaShim", "CLua", "CSpawn", "LuaSources"]),
    // Line editing, history and completion for the REPL: the system's libedit (BSD-licensed;
    // Debian libedit2), opened with dlopen when the REPL starts, not linked, so a run does
    // not load it.
    .target(name: "CEditLine", linkerSettings: [.linkedLibrary("dl")]),
    // Terminal width and restoring the cursor on a crash, for the live view.
    .target(name: "CTerminal"),
    // Command line and reporters. mimalloc (Debian libmimalloc-dev) replaces malloc for the
    // whole process: every operation allocates Lua and Swift objects, and glibc's malloc was
    // a quarter of the time of a run of no-op operations.
    .executableTarget(
      name: "taskrun",
      dependencies: [
        "TaskEngine", "LuaHost", "CTerminal", "CEditLine",
        .product(name: "ArgumentParser", package: "swift-argument-parser")
      ],
      linkerSettings: [.linkedLibrary("mimalloc")]),
    // The seeded random numbers the randomized tests share.
    .target(name: "TestSupport", path: "Tests/TestSupport"),
    .testTarget(name: "TaskEngineTests", dependencies: ["TaskEngine", "TestSupport"]),
    .testTarget(name: "LuaHostTests", dependencies: ["LuaHost", "TaskEngine"]),
    .testTarget(
      name: "TaskrunTests", dependencies: ["taskrun", "TestSupport"],
      exclude: [], resources: [])
  ],
  swiftLanguageModes: [.v6]
)
